// /commands lists the slash commands extensions registered.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function commands(pi: ExtensionAPI) {
	pi.registerCommand("commands", {
		description: "List the extensions' commands",
		handler: async (_args, ctx) => {
			const lines = pi.getCommands().map((c) => `/${c.name}${c.description ? ` - ${c.description}` : ""}`);
			ctx.ui.notify(lines.join("\n") || "No commands", "info");
		},
	});
}
