// A pi extension written for zot's tests: one tool (TypeBox parameters,
// progress through onUpdate, details) and a tool_call guard that blocks
// `rm -rf` without asking.
import { Type } from "@sinclair/typebox";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "shout",
		label: "Shout",
		description: "Says a phrase loudly",
		parameters: Type.Object({ phrase: Type.String({ description: "what to say" }) }),
		async execute(_id, params: { phrase: string }, _signal, onUpdate) {
			onUpdate?.({ content: [{ type: "text", text: "warming up" }], details: undefined });
			return { content: [{ type: "text", text: `${params.phrase.toUpperCase()}!` }], details: { said: params.phrase } };
		},
	});

	pi.on("tool_call", async (event) => {
		if (event.toolName === "bash" && /\brm\s+-rf\b/.test(String(event.input.command))) {
			return { block: true, reason: "gate: rm -rf is not allowed here" };
		}
		return undefined;
	});
}
