// Refuses write and edit calls that touch secrets or generated trees.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const guarded = [".env", ".git/", "node_modules/"];

export default function protectedPaths(pi: ExtensionAPI) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "write" && event.toolName !== "edit") return;
		const target = String((event.input as { path?: unknown }).path ?? "");
		if (!guarded.some((g) => target.includes(g))) return;
		if (ctx.hasUI) ctx.ui.notify(`Blocked write to protected path: ${target}`, "warning");
		return { block: true, reason: `Path "${target}" is protected` };
	});
}
