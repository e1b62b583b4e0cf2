// A pi extension for zot's tests that uses every ExtensionAPI and
// ExtensionContext member. What it sees is appended to $PIEXT_OUT as JSON
// lines ({"what": …}), so a test waits for a line instead of sleeping.
import { appendFileSync } from "node:fs";
import { StringEnum } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Container, Text } from "@mariozechner/pi-tui";
import { Type } from "@sinclair/typebox";
import { z } from "zod";

const out = process.env.PIEXT_OUT;
const note = (what: string, data: Record<string, unknown> = {}) => {
	if (out) appendFileSync(out, JSON.stringify({ what, ...data }) + "\n");
};

export default function members(pi: ExtensionAPI) {
	let dialog: AbortController | undefined;

	pi.registerFlag("greeting", { description: "what /m-flags says", type: "string", default: "hello" });
	pi.registerFlag("loud", { description: "shout it", type: "boolean", default: false });

	for (const ev of [
		"session_start",
		"session_switch",
		"session_shutdown",
		"agent_start",
		"agent_end",
		"turn_start",
		"turn_end",
		"message_end",
		"tool_execution_start",
		"tool_execution_end",
		"model_select",
		"session_before_compact",
		"session_compact",
	] as const) {
		pi.on(ev, async (e: any) => {
			const data: Record<string, unknown> = {};
			if (ev === "turn_start") data.turnIndex = e.turnIndex;
			if (ev === "tool_execution_start") Object.assign(data, { toolName: e.toolName, args: e.args });
			if (ev === "tool_execution_end") Object.assign(data, { toolName: e.toolName, isError: e.isError });
			if (ev === "message_end") data.text = e.message.content.map((c: any) => c.text).join("");
			if (ev === "model_select") Object.assign(data, { model: e.model?.id, previous: e.previousModel?.id });
			note(ev, data);
		});
	}

	pi.on("input", async (e) => {
		note("input", { text: e.text });
		if (e.text.startsWith("shh ")) return { action: "transform", text: e.text.slice(4) };
		if (e.text === "swallow") return { action: "handled" };
		return { action: "continue" };
	});
	pi.on("before_agent_start", async (e) => {
		note("before_agent_start", { prompt: e.prompt, hasSystemPrompt: e.systemPrompt.length > 0 });
		return { message: { customType: "members-ctx", content: "MEMBERS-CONTEXT", display: false }, systemPrompt: e.systemPrompt + "\nMEMBERS-SYSTEM" };
	});
	pi.on("context", async (e) => {
		note("context", { count: e.messages.length });
	});
	pi.on("tool_result", async (e) => {
		note("tool_result", { toolName: e.toolName, text: e.content.map((c: any) => c.text).join("") });
		if (e.toolName === "read") return { content: [{ type: "text", text: "READ-REPLACED" }] };
	});

	// TypeBox parameters, progress, details, an AbortSignal.
	pi.registerTool({
		name: "m_wait",
		label: "Wait",
		description: "Waits until aborted",
		parameters: Type.Object({ mode: StringEnum(["forever"] as const) }),
		async execute(id, _params, signal, onUpdate) {
			onUpdate?.({ content: [{ type: "text", text: "waiting" }], details: undefined });
			note("m_wait started", { id });
			await new Promise<void>((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
			note("m_wait aborted", { id });
			return { content: [{ type: "text", text: "stopped" }], details: undefined };
		},
	});
	// Standard Schema (zod 4) parameters, and renderers.
	pi.registerTool({
		name: "m_add",
		label: "Add",
		description: "Adds two numbers",
		parameters: z.object({ a: z.number(), b: z.number().max(100) }) as any,
		async execute(_id, p: { a: number; b: number }) {
			return { content: [{ type: "text", text: `sum=${p.a + p.b}` }], details: { a: p.a, b: p.b } };
		},
		renderResult(result: any) {
			const c = new Container();
			c.addChild(new Text(`rendered: ${result.details.a} + ${result.details.b}`));
			return c;
		},
	});
	pi.registerMessageRenderer("m-note", (message: any) => new Text(`[m-note] ${message.content}`));

	pi.registerCommand("m-ui", {
		description: "every dialog",
		handler: async (_args, ctx) => {
			const ok = await ctx.ui.confirm("M confirm", "Proceed with members?");
			const pick = await ctx.ui.select("M select", ["alpha", "beta"]);
			const typed = await ctx.ui.input("M input", "type here");
			const edited = await ctx.ui.editor("M editor", "prefilled");
			ctx.ui.notify(`ui: confirm=${ok} select=${pick} input=${typed} editor=${edited} hasUI=${ctx.hasUI}`, "info");
		},
	});
	pi.registerCommand("m-views", {
		description: "status, widgets, title, working message",
		handler: async (_args, ctx) => {
			ctx.ui.setStatus("m", "members ok");
			ctx.ui.setWidget("m-lines", ["line one", "line two"]);
			ctx.ui.setWidget("m-comp", () => new Text("from a component"));
			ctx.ui.setTitle("M title");
			ctx.ui.setWorkingMessage("M working");
			// Terminal-only: accepted, no effect, never a throw.
			ctx.ui.setFooter(() => new Text("footer"));
			ctx.ui.setHeader(() => new Text("header"));
			ctx.ui.setEditorComponent(undefined);
			const themed = ctx.ui.setTheme("dark");
			ctx.ui.setEditorText("draft");
			ctx.ui.notify(`views: editor=${ctx.ui.getEditorText()} theme=${themed.success} fg=${ctx.ui.theme.fg("accent", "x")}`, "info");
		},
	});
	pi.registerCommand("m-ask", {
		description: "a dialog the extension dismisses",
		handler: async (_args, ctx) => {
			dialog = new AbortController();
			const v = await ctx.ui.select("M dismissable", ["one", "two"], { signal: dialog.signal });
			ctx.ui.notify(`dismissed: ${v === undefined}`, "info");
		},
	});
	pi.registerCommand("m-dismiss", {
		description: "dismiss the open dialog",
		handler: async () => {
			dialog?.abort();
		},
	});
	pi.registerCommand("m-flags", {
		description: "the flags",
		handler: async (_args, ctx) => {
			ctx.ui.notify(`flags: greeting=${pi.getFlag("greeting")} loud=${pi.getFlag("loud")} unknown=${pi.getFlag("nope")}`, "info");
		},
	});
	pi.registerCommand("m-session", {
		description: "session, model, tools, entries",
		handler: async (_args, ctx: ExtensionContext) => {
			pi.appendEntry("m-entry", { n: 1 });
			pi.setSessionName("members session");
			const active = pi.getActiveTools();
			const all = pi.getAllTools().map((t) => t.name);
			const branch = ctx.sessionManager.getBranch().map((e: any) => (e.type === "message" ? e.message.role : e.type));
			ctx.ui.notify(
				`session: name=${pi.getSessionName()} model=${ctx.model?.id} idle=${ctx.isIdle()} pending=${ctx.hasPendingMessages()} ` +
					`active=${active.includes("m_add")} all=${all.includes("m_wait")} commands=${pi.getCommands().length} cwd=${ctx.cwd === process.cwd() || ctx.cwd.length > 0} ` +
					`branch=${branch.join(",")} thinking=${pi.getThinkingLevel()}`,
				"info",
			);
		},
	});
	pi.registerCommand("m-only", {
		description: "setActiveTools",
		handler: async (args) => {
			pi.setActiveTools(args.split(",").filter(Boolean));
		},
	});
	pi.registerCommand("m-send", {
		description: "sendMessage / sendUserMessage",
		handler: async (args) => {
			if (args === "user") pi.sendUserMessage("from members");
			else pi.sendMessage({ customType: "m-note", content: "noted", display: true }, { triggerTurn: true });
		},
	});
	pi.registerCommand("m-exec", {
		description: "exec",
		handler: async (_args, ctx) => {
			const r = await pi.exec("sh", ["-c", "echo out; echo err >&2; exit 3"], {});
			ctx.ui.notify(`exec: stdout=${r.stdout.trim()} stderr=${r.stderr.trim()} code=${r.code}`, "info");
		},
	});
	pi.registerCommand("m-exec-rm", {
		description: "exec a command a guard stops",
		handler: async (_args, ctx) => {
			const r = await pi.exec("rm", ["-rf", "build"], {});
			ctx.ui.notify(`exec-rm: code=${r.code} stderr=${r.stderr.trim()}`, "info");
		},
	});
	pi.registerCommand("m-bus", {
		description: "events bus",
		handler: async () => {
			pi.events.emit("members:ping", { from: "members" });
		},
	});
	pi.events.on("members:pong", (data: any) => note("pong", { data }));
	pi.registerShortcut("ctrl+shift+m", {
		description: "members shortcut",
		handler: async (ctx) => ctx.ui.notify("shortcut ran", "info"),
	});
}
