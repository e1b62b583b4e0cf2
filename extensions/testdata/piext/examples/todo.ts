// A todo list the model manages through a tool. The list lives in the
// tool results' details, so the session is the state: it is rebuilt from
// the branch on every session start (a resume shows the same list).
import { StringEnum } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Text } from "@mariozechner/pi-tui";
import { Type } from "@sinclair/typebox";

type Item = { id: number; text: string; done: boolean };
type State = { action: string; todos: Item[]; nextId: number; error?: string };

export default function todo(pi: ExtensionAPI) {
	let items: Item[] = [];
	let next = 1;

	const rebuild = (ctx: ExtensionContext) => {
		items = [];
		next = 1;
		for (const entry of ctx.sessionManager.getBranch()) {
			if (entry.type !== "message") continue;
			const m = entry.message as { role: string; toolName?: string; details?: State };
			if (m.role === "toolResult" && m.toolName === "todo" && m.details) {
				items = m.details.todos;
				next = m.details.nextId;
			}
		}
	};
	for (const ev of ["session_start", "session_switch", "session_fork", "session_tree"] as const) {
		pi.on(ev, async (_e, ctx) => rebuild(ctx));
	}

	const listText = () => (items.length ? items.map((t) => `[${t.done ? "x" : " "}] #${t.id}: ${t.text}`).join("\n") : "No todos");

	pi.registerTool({
		name: "todo",
		label: "Todo",
		description: "Manage a todo list. Actions: list, add (text), toggle (id), clear",
		parameters: Type.Object({
			action: StringEnum(["list", "add", "toggle", "clear"] as const),
			text: Type.Optional(Type.String({ description: "Todo text (for add)" })),
			id: Type.Optional(Type.Number({ description: "Todo ID (for toggle)" })),
		}),
		async execute(_id, params: { action: string; text?: string; id?: number }) {
			const state = (error?: string): State => ({ action: params.action, todos: [...items], nextId: next, error });
			switch (params.action) {
				case "list":
					return { content: [{ type: "text", text: listText() }], details: state() };
				case "add": {
					if (!params.text) return { content: [{ type: "text", text: "Error: text required for add" }], details: state("text required") };
					const t = { id: next++, text: params.text, done: false };
					items.push(t);
					return { content: [{ type: "text", text: `Added todo #${t.id}: ${t.text}` }], details: state() };
				}
				case "toggle": {
					const t = items.find((x) => x.id === params.id);
					if (!t) return { content: [{ type: "text", text: `Todo #${params.id} not found` }], details: state(`#${params.id} not found`) };
					t.done = !t.done;
					return { content: [{ type: "text", text: `Todo #${t.id} ${t.done ? "completed" : "uncompleted"}` }], details: state() };
				}
				case "clear": {
					const n = items.length;
					items = [];
					next = 1;
					return { content: [{ type: "text", text: `Cleared ${n} todos` }], details: state() };
				}
			}
			return { content: [{ type: "text", text: `Unknown action: ${params.action}` }], details: state("unknown action") };
		},
		renderCall(args: { action: string; text?: string }) {
			return new Text(`todo ${args.action}${args.text ? ` "${args.text}"` : ""}`);
		},
	});

	pi.registerCommand("todos", {
		description: "Show all todos on the current branch",
		handler: async (_args, ctx) => {
			if (!ctx.hasUI) return;
			ctx.ui.notify(listText(), "info");
		},
	});
}
