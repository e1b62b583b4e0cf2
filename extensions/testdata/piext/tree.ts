// A pi extension for zot's tests of the session tree members: ctx.fork,
// ctx.navigateTree, ctx.newSession, sessionManager's ids, and the
// session_before_fork / session_fork / session_before_tree / session_tree /
// session_before_switch / session_switch events. What it sees
// is appended to $PIEXT_OUT as JSON lines ({"what": …}).
import { appendFileSync } from "node:fs";
import type { ExtensionAPI, ExtensionCommandContext } from "@mariozechner/pi-coding-agent";

const out = process.env.PIEXT_OUT;
const note = (what: string, data: Record<string, unknown> = {}) => {
	if (out) appendFileSync(out, JSON.stringify({ what, ...data }) + "\n");
};

export default function tree(pi: ExtensionAPI) {
	let refuse = false; // /t-refuse on|off: session_before_* cancel

	pi.registerCommand("t-refuse", {
		description: "refuse forks and navigations (on|off)",
		handler: async (args, ctx) => {
			refuse = args.trim() === "on";
			ctx.ui.notify(`refuse=${refuse}`, "info");
		},
	});

	// The user prompts of the branch, oldest first.
	const prompts = (ctx: ExtensionCommandContext) =>
		ctx.sessionManager.getBranch().filter((e: any) => e.type === "message" && e.message.role === "user");

	pi.registerCommand("t-ids", {
		description: "the session's ids",
		handler: async (_args, ctx) => {
			const ids = ctx.sessionManager.getBranch().map((e: any) => e.id);
			note("ids", { session: ctx.sessionManager.getSessionId(), leaf: ctx.sessionManager.getLeafId(), ids });
			ctx.ui.notify(`ids: ${ids.join(",")} leaf=${ctx.sessionManager.getLeafId()}`, "info");
		},
	});

	// /t-fork N: fork from the Nth prompt (0-based) of the branch.
	pi.registerCommand("t-fork", {
		description: "fork from a prompt",
		handler: async (args, ctx) => {
			const p = prompts(ctx)[Number(args) || 0];
			try {
				const r = await ctx.fork(p ? p.id : "none");
				ctx.ui.notify(`fork: cancelled=${r.cancelled} from=${p && p.id}`, "info");
			} catch (err: any) {
				ctx.ui.notify(`fork: error ${err.message}`, "info");
			}
		},
	});

	// /t-nav N: navigate to the Nth prompt (0-based) of the branch.
	pi.registerCommand("t-nav", {
		description: "navigate to a prompt",
		handler: async (args, ctx) => {
			const p = prompts(ctx)[Number(args) || 0];
			try {
				const r = await ctx.navigateTree(p ? p.id : "none", { label: "t-nav" });
				ctx.ui.notify(`nav: cancelled=${r.cancelled} editor=${ctx.ui.getEditorText()}`, "info");
			} catch (err: any) {
				ctx.ui.notify(`nav: error ${err.message}`, "info");
			}
		},
	});

	// /t-new: a new session.
	pi.registerCommand("t-new", {
		description: "start a new session",
		handler: async (_args, ctx) => {
			try {
				const r = await ctx.newSession();
				ctx.ui.notify(`new: cancelled=${r.cancelled} session=${ctx.sessionManager.getSessionId()} entries=${ctx.sessionManager.getEntries().length}`, "info");
			} catch (err: any) {
				ctx.ui.notify(`new: error ${err.message}`, "info");
			}
		},
	});

	pi.on("session_before_fork", async (e: any) => {
		note("session_before_fork", { entryId: e.entryId, refuse });
		if (refuse) return { cancel: true };
	});
	pi.on("session_before_switch", async (e: any) => {
		note("session_before_switch", { reason: e.reason, targetSessionFile: e.targetSessionFile, targetSessionId: e.targetSessionId, refuse });
		if (refuse) return { cancel: true };
	});
	pi.on("session_fork", async (e: any, ctx) => {
		note("session_fork", { previousSessionFile: e.previousSessionFile, entryId: e.entryId, sessionId: ctx.sessionManager.getSessionId() });
	});
	pi.on("session_before_tree", async (e: any) => {
		const p = e.preparation;
		note("session_before_tree", {
			targetId: p.targetId,
			oldLeafId: p.oldLeafId,
			commonAncestorId: p.commonAncestorId,
			toSummarize: p.entriesToSummarize.map((x: any) => x.id),
			label: p.label,
			hasSignal: e.signal instanceof AbortSignal,
			refuse,
		});
		if (refuse) return { cancel: true };
	});
	pi.on("session_tree", async (e: any) => {
		note("session_tree", { newLeafId: e.newLeafId, oldLeafId: e.oldLeafId });
	});
	pi.on("session_switch", async (e: any) => note("session_switch", { reason: e.reason }));
	pi.on("session_start", async () => note("session_start"));
}
