// A pi extension that takes over some of the user's own commands (pi's
// user_bash event): "remote …" it runs itself and answers with pi's
// BashResult; "sandboxed …" it would run through its own operations.
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.on("user_bash", async (event) => {
		if (event.command.startsWith("remote ")) {
			const where = event.excludeFromContext ? "private" : "shared";
			return { result: { output: `ran on the remote (${where}, in ${event.cwd}): ${event.command.slice(7)}`, exitCode: 0, cancelled: false, truncated: false } };
		}
		if (event.command.startsWith("sandboxed ")) {
			return { operations: { exec: async () => ({ exitCode: 0 }) } };
		}
		return undefined;
	});
}
