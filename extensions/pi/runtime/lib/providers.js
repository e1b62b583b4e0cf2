"use strict";
// pi.registerProvider / unregisterProvider on zot's provider frames
// (docs/extensions.md, "pi extensions"): a provider with its own
// streamSimple is registered with register_provider (its models become
// NAME/ID in every front), and each provider_complete of the host runs
// streamSimple(model, context, {signal, apiKey, headers}), its events
// streamed back as provider_delta pieces and the final message as
// provider_result. tool_cancel {id} aborts the call's AbortSignal.
//
// A provider without streamSimple (pi's api + baseUrl: its own clients
// for anthropic-messages, openai-*) is not registered: zot does not give
// an extension its provider clients. That is logged, once per provider.

function makeProviders(wire, log) {
	const providers = new Map(); // name → {config, models: pi Model[]}
	const calls = new Map(); // provider_complete id → AbortController
	let started = false;

	function piModel(name, config, m) {
		return {
			id: String(m.id),
			name: m.name || String(m.id),
			api: m.api || config.api || name,
			provider: name,
			baseUrl: m.baseUrl || config.baseUrl || "",
			reasoning: !!m.reasoning,
			input: m.input || ["text"],
			cost: m.cost || { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
			contextWindow: m.contextWindow || 0,
			maxTokens: m.maxTokens || 0,
			headers: m.headers || config.headers,
		};
	}

	function sendRegistration(name, p) {
		wire.send({
			type: "register_provider",
			name,
			models: p.models.map((m) => {
				const w = { id: m.id };
				if (m.name && m.name !== m.id) w.display_name = m.name;
				if (m.contextWindow) w.context_window = m.contextWindow;
				if (m.maxTokens) w.max_output = m.maxTokens;
				return w;
			}),
		});
	}

	function register(name, config) {
		name = String(name || "");
		const c = config || {};
		if (!name) {
			log("registerProvider: a provider needs a name");
			return;
		}
		if (typeof c.streamSimple !== "function") {
			log(
				`registerProvider(${name}): only a provider with its own streamSimple is offered; ` +
					`zot keeps its provider clients (and their keys) to itself, so pi's api/baseUrl form (${c.api || "no api"}${c.baseUrl ? " at " + c.baseUrl : ""}) is not registered`,
			);
			return;
		}
		if (!Array.isArray(c.models) || c.models.length === 0) {
			log(`registerProvider(${name}): no models; give models: [{id, …}]`);
			return;
		}
		if (c.oauth) log(`registerProvider(${name}): oauth (pi's /login) is not offered; apiKey is used`);
		const p = { config: c, models: c.models.map((m) => piModel(name, c, m)) };
		providers.set(name, p);
		if (started) sendRegistration(name, p);
	}

	function unregister(name) {
		name = String(name || "");
		if (!providers.delete(name)) return;
		if (started) wire.send({ type: "unregister_provider", name });
	}

	// start sends what the factory registered (after hello_ack).
	function start() {
		started = true;
		for (const [name, p] of providers) sendRegistration(name, p);
	}

	// apiKey: pi takes an environment variable's name or the key itself.
	function resolveKey(k) {
		if (!k) return undefined;
		const s = String(k);
		return /^[A-Z][A-Z0-9_]*$/.test(s) && process.env[s] !== undefined ? process.env[s] : s;
	}

	async function complete(f) {
		const p = providers.get(f.name);
		const result = (r) => wire.send({ type: "provider_result", id: f.id, ...r });
		if (!p) {
			result({ error: `provider ${f.name} is not registered (unregisterProvider removed it?)` });
			return;
		}
		const model = p.models.find((m) => m.id === f.model);
		if (!model) {
			result({ error: `provider ${f.name} has no model ${f.model}; it has ${p.models.map((m) => m.id).join(", ")}` });
			return;
		}
		const ac = new AbortController();
		calls.set(f.id, ac);
		const delta = (d) => wire.send({ type: "provider_delta", id: f.id, delta: d });
		try {
			const stream = await p.config.streamSimple(model, piContext(f.messages, f.tool_specs), {
				signal: ac.signal,
				apiKey: resolveKey(p.config.apiKey),
				headers: p.config.headers,
				maxTokens: model.maxTokens || undefined,
			});
			let final = null;
			let failed = null;
			for await (const ev of stream) {
				switch (ev && ev.type) {
					case "text_delta":
						if (ev.delta) delta({ type: "Delta", content: String(ev.delta) });
						break;
					case "thinking_delta":
						if (ev.delta) delta({ type: "Reasoning", content: String(ev.delta) });
						break;
					case "toolcall_start": {
						const b = (ev.partial && ev.partial.content && ev.partial.content[ev.contentIndex]) || {};
						delta({ type: "ToolCallStart", index: ev.contentIndex, id: b.id || "", name: b.name || "" });
						break;
					}
					case "toolcall_delta":
						if (ev.delta) delta({ type: "ToolCallArgumentsDelta", index: ev.contentIndex, arguments_chunk: String(ev.delta) });
						break;
					case "done":
						final = ev.message;
						break;
					case "error":
						failed = ev.error || {};
						break;
				}
				if (final || failed) break;
			}
			if (failed) {
				result({ error: failed.errorMessage || `the provider's stream ended with ${failed.stopReason || "an error"}` });
				return;
			}
			// A stream that ended without done: its final message if it
			// has one (ours keeps it), else an error (never a wait).
			if (!final && stream && stream.final && !stream.final.errorMessage) final = stream.final;
			if (!final) {
				result({ error: "the provider's stream ended without a done event" });
				return;
			}
			result(zotResult(final));
		} catch (err) {
			log(`provider ${f.name}: streamSimple threw: ${err && err.stack ? err.stack : err}`);
			result({ error: `provider ${f.name} failed: ${err && err.message ? err.message : err}` });
		} finally {
			calls.delete(f.id);
		}
	}

	function cancel(id) {
		const ac = calls.get(id);
		if (!ac) return false;
		ac.abort();
		return true;
	}

	// model: a registered model (pi's Model object), or undefined.
	function model(provider, id) {
		const p = providers.get(provider);
		return p && p.models.find((m) => m.id === id);
	}

	function models() {
		return [...providers.values()].flatMap((p) => p.models);
	}

	return { register, unregister, start, complete, cancel, model, models };
}

// piContext: zot's messages (a leading system message carries the system
// prompt) as pi-ai's Context {systemPrompt, messages, tools}. A zot
// message's tool results are pi's toolResult messages.
function piContext(rawMessages, rawTools) {
	const msgs = parse(rawMessages, []);
	const names = new Map();
	const ctx = { systemPrompt: undefined, messages: [], tools: [] };
	for (const m of msgs) {
		const ts = Date.parse(m.time) || Date.now();
		const content = m.content || [];
		if (m.role === "system") {
			ctx.systemPrompt = content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
			continue;
		}
		if (m.role === "assistant") {
			const out = [];
			for (const c of content) {
				if (c.type === "text") out.push({ type: "text", text: c.text });
				else if (c.type === "thinking") out.push({ type: "thinking", thinking: c.text || "" });
				else if (c.type === "tool_call") {
					names.set(c.id, c.name);
					out.push({ type: "toolCall", id: c.id, name: c.name, arguments: parse(c.args, {}) });
				}
			}
			ctx.messages.push({ role: "assistant", content: out, stopReason: "stop", timestamp: ts });
			continue;
		}
		const user = [];
		for (const c of content) {
			if (c.type === "tool_result") {
				ctx.messages.push({ role: "toolResult", toolCallId: c.call_id, toolName: names.get(c.call_id) || "", content: blocks(c.content), isError: !!c.is_error, timestamp: ts });
			} else if (c.type === "text" || c.type === "image") user.push(...blocks([c]));
		}
		if (user.length) ctx.messages.push({ role: "user", content: user, timestamp: ts });
	}
	for (const t of parse(rawTools, []) || []) ctx.tools.push({ name: t.name, description: t.description || "", parameters: t.schema || { type: "object" } });
	return ctx;
}

function blocks(cs) {
	return (cs || []).map((c) => (c.type === "image" ? { type: "image", mimeType: c.mime_type, data: c.data } : { type: "text", text: c.text || "" }));
}

// zotResult: pi's final AssistantMessage as provider_result.
function zotResult(m) {
	const text = [];
	const calls = [];
	for (const b of m.content || []) {
		if (b.type === "text") text.push(b.text || "");
		else if (b.type === "toolCall") calls.push({ id: String(b.id || ""), name: String(b.name || ""), arguments: b.arguments && typeof b.arguments === "object" ? b.arguments : parse(b.arguments, {}) });
	}
	const stop = { toolUse: "tool_calls", length: "length", stop: "stop" }[m.stopReason] || (calls.length ? "tool_calls" : "stop");
	const r = { text: text.join(""), tool_calls: calls, stop };
	const u = m.usage;
	if (u) r.usage = { prompt_tokens: (u.input || 0) + (u.cacheRead || 0), completion_tokens: u.output || 0, cached_tokens: u.cacheRead || 0 };
	return r;
}

function parse(raw, dflt) {
	if (raw == null) return dflt;
	if (typeof raw === "object") return raw;
	try {
		return JSON.parse(raw);
	} catch {
		return dflt;
	}
}

module.exports = { makeProviders, piContext };
