// A pi extension for zot's tests of pi's session and provider members:
// ctx.compact, ctx.reload, ctx.switchSession, ctx.shutdown and
// pi.registerProvider / unregisterProvider with its own streamSimple.
// What it sees is told with ctx.ui.notify ("lc …") so the test reads it
// from the front's notifications.
import { createAssistantMessageEventStream, type AssistantMessage, type Context, type Model, type SimpleStreamOptions } from "@mariozechner/pi-ai";
import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Type } from "@sinclair/typebox";

const loadedAt = Date.now(); // tells a reloaded runtime from the old one

export default function lifecycle(pi: ExtensionAPI) {
	let last: ExtensionContext | undefined;
	let refuseSwitch = false;

	// The provider's answer depends on the conversation: a tool result
	// is answered in words; "fail" is an error; "wait" streams a first
	// piece, then waits for the abort; anything else thinks, then asks for
	// the lc_echo tool.
	function streamLc(model: Model<any>, context: Context, options?: SimpleStreamOptions) {
		const stream = createAssistantMessageEventStream();
		const output: AssistantMessage = {
			role: "assistant",
			content: [],
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
			stopReason: "stop",
			timestamp: Date.now(),
		} as AssistantMessage;
		const text = (s: string) => {
			output.content.push({ type: "text", text: "" });
			const i = output.content.length - 1;
			stream.push({ type: "text_start", contentIndex: i, partial: output });
			for (const piece of s.match(/.{1,6}/g) || []) {
				(output.content[i] as any).text += piece;
				stream.push({ type: "text_delta", contentIndex: i, delta: piece, partial: output });
			}
			stream.push({ type: "text_end", contentIndex: i, content: (output.content[i] as any).text, partial: output });
		};
		(async () => {
			stream.push({ type: "start", partial: output });
			const lastMsg: any = context.messages[context.messages.length - 1];
			const prompt = lastMsg && lastMsg.role === "user" ? JSON.stringify(lastMsg.content) : "";
			if (lastMsg && lastMsg.role === "toolResult") {
				text(`tool said: ${lastMsg.content.map((c: any) => c.text).join("")} (system ${context.systemPrompt ? "given" : "missing"})`);
			} else if (prompt.includes("fail")) {
				output.stopReason = "error";
				output.errorMessage = "lc upstream is down";
				stream.push({ type: "error", reason: "error", error: output });
				stream.end();
				return;
			} else if (prompt.includes("wait")) {
				text("waiting");
				await new Promise<void>((resolve) => {
					if (options?.signal?.aborted) resolve();
					options?.signal?.addEventListener("abort", () => resolve(), { once: true });
				});
				last?.ui.notify("lc provider: aborted", "info");
				output.stopReason = "aborted";
				output.errorMessage = "aborted";
				stream.push({ type: "error", reason: "aborted", error: output });
				stream.end();
				return;
			} else {
				output.content.push({ type: "thinking", thinking: "" } as any);
				stream.push({ type: "thinking_start", contentIndex: 0, partial: output });
				stream.push({ type: "thinking_delta", contentIndex: 0, delta: "pondering", partial: output });
				stream.push({ type: "thinking_end", contentIndex: 0, content: "pondering", partial: output });
				text("let me echo");
				const call = { type: "toolCall", id: "lc-call-1", name: "lc_echo", arguments: {} as any };
				output.content.push(call as any);
				const i = output.content.length - 1;
				stream.push({ type: "toolcall_start", contentIndex: i, partial: output });
				for (const piece of ['{"text":', '"from lc"}']) stream.push({ type: "toolcall_delta", contentIndex: i, delta: piece, partial: output });
				call.arguments = { text: "from lc" };
				stream.push({ type: "toolcall_end", contentIndex: i, toolCall: call as any, partial: output });
				output.stopReason = "toolUse";
			}
			output.usage.input = 11;
			output.usage.output = 4;
			output.usage.cacheRead = 2;
			stream.push({ type: "done", reason: output.stopReason as any, message: output });
			stream.end();
		})();
		return stream;
	}

	pi.registerProvider("lc", {
		baseUrl: "http://unused.invalid",
		apiKey: "LC_KEY",
		api: "lc-api",
		models: [{ id: "lc-1", name: "LC One", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 }],
		streamSimple: streamLc,
	});
	// pi's api/baseUrl form, without code: not offered (logged).
	pi.registerProvider("lc-plain", { baseUrl: "http://unused.invalid", apiKey: "x", api: "openai-completions", models: [{ id: "p-1" }] as any });

	pi.registerTool({
		name: "lc_echo",
		label: "LC echo",
		description: "echoes its text",
		parameters: Type.Object({ text: Type.String() }),
		async execute(_id, params) {
			return { content: [{ type: "text", text: `echoed ${params.text}` }], details: {} };
		},
	});

	pi.on("session_start", async (_e, ctx) => {
		last = ctx;
		ctx.ui.notify(`lc started ${loadedAt}`, "info");
	});
	pi.on("agent_start", async (_e, ctx) => {
		last = ctx;
	});
	pi.on("session_before_switch", async (e: any) => {
		if (e.reason === "resume" && refuseSwitch) return { cancel: true };
	});
	pi.on("session_switch", async (e: any, ctx) => {
		ctx.ui.notify(`lc switched: reason=${e.reason} entries=${ctx.sessionManager.getEntries().length}`, "info");
	});
	pi.on("session_compact", async (e: any, ctx) => {
		ctx.ui.notify(`lc session_compact fromExtension=${e.fromExtension}`, "info");
	});
	pi.on("session_shutdown", async () => {
		const out = process.env.LC_SHUTDOWN_FILE;
		if (out) require("node:fs").writeFileSync(out, "session_shutdown\n");
	});

	pi.registerCommand("lc-compact", {
		description: "compact with instructions",
		handler: async (args, ctx) => {
			ctx.compact({
				customInstructions: args || undefined,
				onComplete: (r) => ctx.ui.notify(`lc compacted: ${r.summary}`, "info"),
				onError: (err) => ctx.ui.notify(`lc compact error: ${err.message}`, "info"),
			});
		},
	});
	pi.registerCommand("lc-loaded", {
		description: "when this runtime loaded",
		handler: async (_args, ctx) => {
			ctx.ui.notify(`lc loaded ${loadedAt}`, "info");
		},
	});
	pi.registerCommand("lc-reload", {
		description: "reload the extensions",
		handler: async (_args, ctx) => {
			await ctx.reload();
			ctx.ui.notify(`lc reload resolved in ${loadedAt}`, "info");
		},
	});
	pi.registerCommand("lc-switch", {
		description: "switch to a session file",
		handler: async (args, ctx) => {
			try {
				const r = await ctx.switchSession(args.trim());
				ctx.ui.notify(`lc switch: cancelled=${r.cancelled}`, "info");
			} catch (err: any) {
				ctx.ui.notify(`lc switch error: ${err.message}`, "info");
			}
		},
	});
	pi.registerCommand("lc-refuse", {
		description: "refuse session switches (on|off)",
		handler: async (args, ctx) => {
			refuseSwitch = args.trim() === "on";
			ctx.ui.notify(`lc refuse=${refuseSwitch}`, "info");
		},
	});
	pi.registerCommand("lc-shutdown", {
		description: "end the session",
		handler: async (_args, ctx) => {
			ctx.shutdown();
			ctx.ui.notify("lc shutdown asked", "info");
		},
	});
	pi.registerCommand("lc-use", {
		description: "select the lc model from the registry",
		handler: async (_args, ctx) => {
			const ok = await pi.setModel(ctx.modelRegistry.find("lc", "lc-1") as any);
			ctx.ui.notify(`lc model: ok=${ok} ${ctx.model?.provider}/${ctx.model?.id} ${ctx.model?.name}`, "info");
		},
	});
	pi.registerCommand("lc-unprovide", {
		description: "unregister the lc provider",
		handler: async (_args, ctx) => {
			pi.unregisterProvider("lc");
			ctx.ui.notify("lc unregistered", "info");
		},
	});
}
