// Plan mode: read-only exploration. While on, only read-only tools are
// active, bash runs only commands that change nothing, the status says so,
// and the numbered steps of the model's "Plan:" show as a widget. On with
// --flag plan, /plan or the ctrl+alt+p shortcut; kept in the session.
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Key } from "@mariozechner/pi-tui";

const READ_ONLY = ["read", "bash", "grep", "find", "ls"];
const FULL = ["read", "bash", "edit", "write"];
const SAFE = /^\s*(cat|head|tail|less|ls|pwd|echo|grep|rg|find|wc|sort|uniq|diff|file|stat|tree|which|git\s+(status|log|diff|show|branch))\b/;
const UNSAFE = /[;&|]|>|\brm\b|\bmv\b|\bcp\b|\bmkdir\b|\btouch\b|\bchmod\b|\bsudo\b|\bgit\s+(commit|push|reset|checkout|merge|rebase)\b/;

export default function planMode(pi: ExtensionAPI) {
	let planning = false;
	let steps: { text: string; done: boolean }[] = [];

	pi.registerFlag("plan", { description: "Start in plan mode (read-only exploration)", type: "boolean", default: false });

	const show = (ctx: ExtensionContext) => {
		ctx.ui.setStatus("plan-mode", planning ? ctx.ui.theme.fg("warning", "⏸ plan") : undefined);
		ctx.ui.setWidget("plan-todos", steps.length ? steps.map((s, i) => `${s.done ? "☑" : "☐"} ${i + 1}. ${s.text}`) : undefined);
	};
	const keep = () => pi.appendEntry("plan-mode", { enabled: planning, todos: steps });
	const toggle = (ctx: ExtensionContext) => {
		planning = !planning;
		pi.setActiveTools(planning ? READ_ONLY : FULL);
		ctx.ui.notify(planning ? `Plan mode enabled. Tools: ${READ_ONLY.join(", ")}` : "Plan mode disabled. Full access restored.");
		show(ctx);
		keep();
	};

	pi.registerCommand("plan", { description: "Toggle plan mode (read-only exploration)", handler: async (_a, ctx) => toggle(ctx) });
	pi.registerShortcut(Key.ctrlAlt("p"), { description: "Toggle plan mode", handler: async (ctx) => toggle(ctx) });

	pi.on("tool_call", async (event) => {
		if (!planning || event.toolName !== "bash") return;
		const command = String((event.input as { command?: unknown }).command ?? "");
		if (SAFE.test(command) && !UNSAFE.test(command)) return;
		return { block: true, reason: `Plan mode: command blocked (not allowlisted). Use /plan to disable plan mode first.\nCommand: ${command}` };
	});

	pi.on("before_agent_start", async () => {
		if (!planning) return;
		return {
			message: {
				customType: "plan-mode-context",
				content: "[PLAN MODE ACTIVE] You are in plan mode: explore with read-only tools, change nothing, and end with a numbered list under a \"Plan:\" header.",
				display: false,
			},
		};
	});

	pi.on("message_end", async (event, ctx) => {
		if (!planning) return;
		const text = (event.message.content as { type: string; text?: string }[]).filter((c) => c.type === "text").map((c) => c.text).join("\n");
		const at = text.search(/^\s*\**Plan:?\**\s*$/im);
		if (at < 0) return;
		const found = [...text.slice(at).matchAll(/^\s*\d+[.)]\s+(.+)$/gm)].map((m) => ({ text: m[1].trim(), done: false }));
		if (found.length) {
			steps = found;
			show(ctx);
			keep();
		}
	});

	pi.on("session_start", async (_e, ctx) => {
		const saved = ctx.sessionManager.getEntries().filter((e) => e.type === "custom" && e.customType === "plan-mode").pop() as
			| { data?: { enabled: boolean; todos?: typeof steps } }
			| undefined;
		if (saved?.data) {
			planning = saved.data.enabled;
			steps = saved.data.todos ?? [];
		}
		if (pi.getFlag("plan") === true) planning = true;
		if (planning) pi.setActiveTools(READ_ONLY);
		show(ctx);
	});
}
