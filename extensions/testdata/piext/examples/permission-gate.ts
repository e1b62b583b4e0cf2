// Asks before bash commands that look destructive (recursive rm, sudo,
// chmod/chown 777); blocks them outright where nobody can be asked.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

const risky: RegExp[] = [/\brm\s+(-[a-z]*r[a-z]*f?|--recursive)\b/i, /\bsudo\b/i, /\b(chmod|chown)\b[^\n]*\b777\b/i];

export default function permissionGate(pi: ExtensionAPI) {
	pi.on("tool_call", async (event, ctx) => {
		if (event.toolName !== "bash") return;
		const command = String((event.input as { command?: unknown }).command ?? "");
		if (!risky.some((re) => re.test(command))) return;
		if (!ctx.hasUI) {
			return { block: true, reason: "Dangerous command blocked (no UI for confirmation)" };
		}
		const answer = await ctx.ui.select(`⚠️ Dangerous command:\n\n  ${command}\n\nAllow?`, ["Yes", "No"]);
		if (answer === "Yes") return;
		return { block: true, reason: "Blocked by user" };
	});
}
