// /tools: pick which tools are enabled; the choice is kept in the session
// (a custom entry) and restored on the next session start.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";

export default function tools(pi: ExtensionAPI) {
	let enabled = new Set<string>();

	const save = () => pi.appendEntry("tools-config", { enabledTools: [...enabled] });

	const restore = (ctx: ExtensionContext) => {
		const known = pi.getAllTools().map((t) => t.name);
		let saved: string[] | undefined;
		for (const e of ctx.sessionManager.getBranch()) {
			if (e.type === "custom" && e.customType === "tools-config") saved = (e.data as { enabledTools: string[] }).enabledTools;
		}
		if (saved) {
			enabled = new Set(saved.filter((n) => known.includes(n)));
			pi.setActiveTools([...enabled]);
		} else {
			enabled = new Set(pi.getActiveTools());
		}
	};
	pi.on("session_start", async (_e, ctx) => restore(ctx));

	pi.registerCommand("tools", {
		description: "Enable/disable tools",
		handler: async (args, ctx) => {
			// `/tools name` toggles one; without a name, a picker.
			let name = args.trim();
			if (!name) {
				const picked = await ctx.ui.select(
					"Toggle a tool",
					pi.getAllTools().map((t) => `${enabled.has(t.name) ? "[x]" : "[ ]"} ${t.name}`),
				);
				if (!picked) return;
				name = picked.slice(4);
			}
			if (enabled.has(name)) enabled.delete(name);
			else enabled.add(name);
			pi.setActiveTools([...enabled]);
			save();
			ctx.ui.notify(`${name} ${enabled.has(name) ? "enabled" : "disabled"}`, "info");
		},
	});
}
