// The smallest custom tool: a greeting.
import { Type } from "@mariozechner/pi-ai";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function hello(pi: ExtensionAPI) {
	pi.registerTool({
		name: "hello",
		label: "Hello",
		description: "A simple greeting tool",
		parameters: Type.Object({ name: Type.String({ description: "Name to greet" }) }),
		async execute(_id, params: { name: string }) {
			return { content: [{ type: "text", text: `Hello, ${params.name}!` }], details: { greeted: params.name } };
		},
	});
}
