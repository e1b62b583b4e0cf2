"use strict";
// pi's ExtensionAPI and ExtensionContext on zot's extension protocol v1.
// Each member maps onto a frame of the host (docs/extensions.md,
// "pi extensions", has the table); what only pi's terminal has (footer,
// header, editor component, themes) is accepted, logged once, and has no
// effect.

const { AsyncLocalStorage } = require("node:async_hooks");
const { toJSONSchema, validateArgs } = require("./schema.js");
const { renderToLines, plainTheme } = require("./pi-tui.js");
const { makeProviders } = require("./providers.js");

// pi's events, by how zot delivers them: intercepts (hooks with a result),
// and one-way events (zot's event name → pi's).
const INTERCEPTS = {
	tool_call: "tool_call",
	tool_result: "tool_result",
	input: "input",
	before_agent_start: "before_agent_start",
	context: "context",
	user_bash: "user_bash",
	// the session tree: cancellable (fail-open on the host)
	session_before_fork: "session_before_fork",
	session_before_tree: "session_before_tree",
	session_before_switch: "session_before_switch",
};
// pi event → the zot events it needs.
const EVENTS = {
	session_start: ["session_start"],
	session_switch: ["session_start"],
	session_shutdown: ["session_shutdown"],
	agent_start: ["agent_start"],
	agent_end: ["agent_end"],
	turn_start: ["turn_start"],
	turn_end: ["turn_end"],
	message_end: ["assistant_message"],
	tool_execution_start: ["tool_call"],
	model_select: ["model_select"],
	session_before_compact: ["compact_start"],
	session_compact: ["compact_end"],
	session_fork: ["session_fork"],
	session_tree: ["session_tree"],
};
// Accepted, never fired: zot has no such moment (docs: what differs).
const NEVER = new Set([
	"resources_discover",
	"session_directory",
	"before_provider_request",
	"message_start",
	"message_update",
	"tool_execution_update",
]);

// zot's own providers: their model ids are bare (an extension provider's
// are "provider/id").
const ZOT_PROVIDERS = new Set(["anthropic", "openai"]);

const DETAILS_KIND = "pi:tool_result"; // a tool's result, kept for getBranch()
const NAME_KIND = "pi:session_name";
// The id of a transcript message's entry: "<session id>:<index>" (or the
// bare index without a session file); others are the runtime's own.
const MESSAGE_ID = /^([^/]*:)?\d+$/;

function makeAPI(wire, extName) {
	const handlers = new Map(); // pi event → [fn]
	const tools = new Map(); // name → definition
	const commands = new Map(); // name → {description, handler}
	const shortcuts = new Map();
	const flags = new Map(); // name → {type, default, description}
	const renderers = new Map(); // customType → renderer
	const busHandlers = new Map(); // topic → [fn]
	const toolCalls = new Map(); // tool_call id → AbortController
	const onceLogged = new Set();
	let started = false;
	let sessionStarted = false;
	let idle = true;
	let pendingMessages = 0;
	let idleWaiters = [];
	let toolCache = []; // [{name, description, source, active}]
	let commandCache = []; // [{name, description, source, extension}]
	let entries = []; // this session's entries, as pi's sessionManager shows them
	let entriesFresh = false;
	// The current session's id (get_tree), for entry ids the host takes
	// back ("<session id>:<message index>"); read again after a
	// session_start. null: not known (sessions off).
	let sessionID = null;
	let sessionIDFresh = false;
	let ack = null;
	let model;
	let editorText = "";
	let sessionName;
	let thinkingLevel = "medium";
	let lastSystemPrompt = "";
	// The command a ui.custom call belongs to ({answered, answer, panel}).
	const commandStore = new AsyncLocalStorage();
	let panelSeq = 0;
	const panels = new Map(); // panel id → {key, close}
	const panelsOffered = () => !!uiCaps().panels;

	const flagValues = parseFlagEnv(process.env.ZOT_PI_FLAGS);

	// Under pi, session_start's handlers run before any command, tool or
	// hook. Here they are frames that may cross: everything else waits
	// until the first session_start is handled (bounded, for a front that
	// never sends one).
	let markSessionReady;
	const sessionReady = new Promise((r) => (markSessionReady = r));
	// Bounded once: a front that sends no session_start holds the first
	// call 2 s, and nothing after it.
	let sessionWait = null;
	const afterSessionStart = () => {
		if (!sessionWait) {
			const bound = new Promise((r) => setTimeout(r, 2000).unref());
			sessionWait = Promise.race([sessionReady, bound]);
		}
		return sessionWait;
	};

	function logOnce(what) {
		if (onceLogged.has(what)) return;
		onceLogged.add(what);
		process.stderr.write(`[pi] ${what}: not offered by zot (docs/extensions.md, pi extensions); accepted, no effect\n`);
	}

	function log(msg) {
		process.stderr.write(`[pi] ${msg}\n`);
	}

	const providers = makeProviders(wire, log);

	// ---- what the host offers ----
	const uiCaps = () => (ack && ack.host_capabilities && ack.host_capabilities.ui) || {};
	const hasUI = () => {
		const u = uiCaps();
		return !!(u.confirm || u.select || u.input);
	};

	async function action(f) {
		const r = await wire.request(f);
		if (r.error) throw new Error(r.error);
		return r;
	}

	// Effects pi applies at once (setActiveTools, setModel, appendEntry…)
	// are requests here: a hook's answer waits for those in flight, so
	// the run it lets go on sees them (pi's session_start setting the
	// tools before the first prompt).
	const inflight = new Set();
	function effect(f) {
		const p = action(f);
		const settled = p.then(
			() => {},
			() => {},
		);
		inflight.add(settled);
		settled.then(() => inflight.delete(settled));
		return p;
	}
	const effectsSettled = () => Promise.all([...inflight]);

	async function refreshTools() {
		try {
			const [r, c] = await Promise.all([action({ type: "get_tools" }), action({ type: "get_commands" })]);
			toolCache = r.tools || [];
			commandCache = c.commands || [];
		} catch (err) {
			log(`get_tools: ${err.message}`);
		}
	}

	// entries as pi's SessionManager lists them: this extension's custom
	// entries and its tools' results (with their details), in the order
	// they were written. zot keeps them in the session file (x-entry), so
	// they come back after a resume.
	let entriesLoading = null;
	function refreshEntries() {
		// One request at a time: calls made meanwhile share its answer.
		if (!entriesLoading) entriesLoading = loadEntries().finally(() => (entriesLoading = null));
		return entriesLoading;
	}

	async function loadEntries() {
		try {
			const [er, mr] = await Promise.all([action({ type: "get_entries", kind: "" }), action({ type: "get_messages" }).catch(() => ({ messages: [] })), loadSessionID()]);
			entries = sessionEntries(mr.messages || [], er.entries || [], sessionID);
			for (const e of entries) if (e.type === "session_info") sessionName = e.name;
			entriesFresh = true;
		} catch (err) {
			// A front without actions (none to read): not again until the
			// next event says the session moved.
			entriesFresh = true;
			log(`reading the session: ${err.message}`);
		}
	}

	async function loadSessionID() {
		if (sessionIDFresh) return;
		sessionIDFresh = true;
		try {
			const r = await action({ type: "get_tree" });
			sessionID = (r.tree && r.tree.session_id) || null;
		} catch {
			sessionID = null; // no session file (zot rpc without -c): ids stay local
		}
	}

	// refreshEditorText reads the front's chat input into editorText,
	// where the front has one (the user may have typed since).
	async function refreshEditorText() {
		if (!uiCaps().editor_text) return;
		try {
			const r = await action({ type: "get_editor_text" });
			editorText = typeof r.text === "string" ? r.text : "";
		} catch (err) {
			log(`get_editor_text: ${err.message}`);
		}
	}

	// setModelFrom keeps ctx.model as pi names it: an extension
	// provider's model is zot's "provider/id", pi's {provider, id} (a
	// model this runtime registered is its own object).
	function setModelFrom(provider, id) {
		if (!id) {
			model = undefined;
			return;
		}
		const p = provider || (model && model.provider) || "";
		const bare = p && id.startsWith(p + "/") ? id.slice(p.length + 1) : id;
		model = providers.model(p, bare) || { provider: p, id: bare, name: bare, api: p };
	}

	// zotModelID is the id zot selects a pi model by: "provider/id" for an
	// extension provider's (zot's own providers' ids are bare).
	function zotModelID(m) {
		if (typeof m === "string") return m;
		const id = m && m.id ? String(m.id) : "";
		const p = m && m.provider ? String(m.provider) : "";
		if (!p || id.includes("/") || ZOT_PROVIDERS.has(p)) return id;
		return `${p}/${id}`;
	}

	// ---- ctx.ui ----
	function dialog(kind, fields, opts) {
		const f = { type: "ui_request", kind, ...fields };
		if (opts && opts.timeout > 0) f.timeout_ms = Math.round(opts.timeout);
		return wire.request(f, opts && opts.signal);
	}

	const ui = {
		async select(title, options, opts) {
			const r = await dialog("select", { title: String(title), options: (options || []).map(String) }, opts);
			if (r.cancelled || r.error || r.value === undefined) return undefined;
			return typeof r.value === "string" ? r.value : undefined;
		},
		async confirm(title, message, opts) {
			const r = await dialog("confirm", { title: String(title), message: message == null ? "" : String(message) }, opts);
			return !r.cancelled && !r.error && r.value === true;
		},
		async input(title, placeholder, opts) {
			const r = await dialog("input", { title: String(title), placeholder: placeholder == null ? "" : String(placeholder) }, opts);
			if (r.cancelled || r.error || typeof r.value !== "string") return undefined;
			return r.value;
		},
		// editor(title, prefill): a multi-line dialog (kind editor; a front
		// that shows no multi-line box asks it as a prefilled input).
		async editor(title, prefill) {
			const r = await dialog("editor", { title: String(title), default: prefill == null ? "" : String(prefill) });
			if (r.cancelled || r.error || typeof r.value !== "string") return undefined;
			return r.value;
		},
		notify(message, type) {
			const level = type === "warning" ? "warn" : type === "error" ? "error" : type === "success" ? "success" : "info";
			wire.send({ type: "notify", level, message: String(message) });
		},
		setStatus(key, text) {
			wire.send({ type: "set_status", key: String(key), text: text == null ? "" : String(text) });
		},
		setWorkingMessage(message) {
			wire.send({ type: "set_status", key: "working", text: message == null ? "" : String(message) });
		},
		setTitle(title) {
			wire.send({ type: "set_status", key: "title", text: title == null ? "" : String(title) });
		},
		setWidget(key, content, _options) {
			let lines = null;
			if (Array.isArray(content)) lines = content.map(String);
			else if (typeof content === "function") {
				try {
					lines = renderToLines(content(fakeTUI, plainTheme), 80);
				} catch (err) {
					log(`setWidget ${key}: the component threw: ${err.message}`);
					return;
				}
			}
			wire.send({ type: "set_widget", key: String(key), lines });
		},
		// custom(factory): from a command, a panel (the command answers
		// open_panel; the editor's keys reach the component's handleInput,
		// its re-renders are panel_render, done() closes it). Elsewhere, or
		// in a front without panels, the component's lines as a widget.
		async custom(factory) {
			const cmd = commandStore.getStore();
			return new Promise((resolve) => {
				const panelID = `pi-custom-${++panelSeq}`;
				let comp;
				let closed = false;
				const lines = () => renderToLines(comp, 80);
				const finish = (v, fromHost) => {
					if (closed) return;
					closed = true;
					panels.delete(panelID);
					if (cmd && cmd.panel === panelID) {
						if (!fromHost) wire.send({ type: "panel_close", panel_id: panelID });
					} else wire.send({ type: "set_widget", key: "custom", lines: null });
					if (comp && typeof comp.dispose === "function") comp.dispose();
					resolve(v);
				};
				const tui = {
					...fakeTUI,
					requestRender() {
						if (closed || !comp) return;
						if (cmd && cmd.panel === panelID) wire.send({ type: "panel_render", panel_id: panelID, lines: lines() });
						else wire.send({ type: "set_widget", key: "custom", lines: lines() });
					},
				};
				Promise.resolve(factory(tui, plainTheme, {}, (v) => finish(v, false))).then(
					(c) => {
						comp = c;
						if (closed) return;
						if (cmd && !cmd.answered && panelsOffered()) {
							cmd.panel = panelID;
							cmd.answer({ action: "open_panel", open_panel: { id: panelID, lines: lines() } });
							panels.set(panelID, {
								key(key, text) {
									if (comp && typeof comp.handleInput === "function") comp.handleInput(panelKey(key, text));
									if (typeof comp.invalidate === "function") comp.invalidate();
									tui.requestRender();
								},
								close() {
									finish(undefined, true);
								},
							});
						} else {
							wire.send({ type: "set_widget", key: "custom", lines: lines() });
						}
					},
					(err) => {
						log(`ui.custom: ${err.message}`);
						resolve(undefined);
					},
				);
			});
		},
		// The user's chat input (set_editor_text / get_editor_text). pi's
		// getEditorText is synchronous: it answers what the runtime knows —
		// what was set or pasted here, and the front's input as read
		// before each command (refreshEditorText). A front without a chat
		// input (zot -p) ignores a set; get then returns what was set.
		pasteToEditor(text) {
			editorText += String(text);
			wire.send({ type: "set_editor_text", text: String(text), paste: true });
		},
		setEditorText(text) {
			editorText = String(text);
			wire.send({ type: "set_editor_text", text: editorText });
		},
		getEditorText() {
			return editorText;
		},
		onTerminalInput() {
			logOnce("ui.onTerminalInput");
			return () => {};
		},
		setFooter() {
			logOnce("ui.setFooter");
		},
		setHeader() {
			logOnce("ui.setHeader");
		},
		setEditorComponent() {
			logOnce("ui.setEditorComponent");
		},
		get theme() {
			return plainTheme;
		},
		getAllThemes() {
			return [];
		},
		getTheme() {
			return undefined;
		},
		setTheme() {
			logOnce("ui.setTheme");
			return { success: false, error: "zot has no terminal themes" };
		},
		getToolsExpanded() {
			return false;
		},
		setToolsExpanded() {
			logOnce("ui.setToolsExpanded");
		},
	};
	const fakeTUI = { requestRender() {}, terminal: { columns: 80, rows: 24 } };

	// ---- ctx ----
	const sessionManager = {
		getEntries: () => entries.slice(),
		getBranch: () => entries.slice(),
		// The leaf is the conversation's last message (the host's leaf id:
		// navigateTree and fork take it back); custom entries hang off it.
		getLeafId: () => {
			const e = leafEntry();
			return e ? e.id : null;
		},
		getLeafEntry: () => leafEntry(),
		getEntry: (id) => entries.find((e) => e.id === id),
		getSessionName: () => sessionName,
		getSessionFile: () => undefined,
		getSessionId: () => sessionID || undefined,
		getCwd: () => (ack && ack.cwd) || process.cwd(),
		getHeader: () => undefined,
		getLabel: () => undefined,
		getTree: () => entries.map((e) => ({ entry: e, children: [] })),
	};
	function leafEntry() {
		for (let i = entries.length - 1; i >= 0; i--) if (entries[i].type === "message" && MESSAGE_ID.test(entries[i].id)) return entries[i];
		return undefined;
	}
	// What the runtime knows: the current model and the models of the
	// providers this runtime registered (zot's catalogue stays zot's).
	const knownModels = () => {
		const all = providers.models();
		if (model && !all.some((m) => m.provider === model.provider && m.id === model.id)) all.unshift(model);
		return all;
	};
	const modelRegistry = {
		getAll: knownModels,
		getAvailable: knownModels,
		find: (provider, id) => knownModels().find((m) => m.provider === provider && m.id === id) || { provider, id, name: id, api: provider },
		async getApiKey() {
			return undefined; // zot keeps its credentials from extensions
		},
	};

	function makeCtx() {
		return {
			ui,
			get hasUI() {
				return hasUI();
			},
			get cwd() {
				return (ack && ack.cwd) || process.cwd();
			},
			sessionManager,
			modelRegistry,
			get model() {
				return model;
			},
			isIdle: () => idle,
			abort() {
				action({ type: "abort" }).catch((err) => log(`abort: ${err.message}`));
			},
			hasPendingMessages: () => pendingMessages > 0,
			// shutdown(): the request_shutdown action; the front decides
			// (zot rpc exits once idle, session_shutdown first; zot -p ends
			// after its prompt anyway; zot lsp tells the editor and stays).
			shutdown() {
				action({ type: "request_shutdown" }).catch((err) => log(`shutdown: ${err.message}`));
			},
			getContextUsage: () => undefined,
			// compact(options): zot's compaction as /compact runs it (the
			// compact action), not awaited: onComplete({summary, …}) or
			// onError(Error) once it ended; refused during a run.
			compact(options) {
				const o = options || {};
				const f = { type: "compact" };
				if (o.customInstructions) f.custom_instructions = String(o.customInstructions);
				compactsAsked++;
				action(f).then(
					(r) => {
						entriesFresh = false;
						const result = { summary: r.summary || "", firstKeptEntryId: undefined, tokensBefore: undefined, details: undefined };
						if (typeof o.onComplete === "function") o.onComplete(result);
					},
					(err) => {
						if (compactsAsked > 0) compactsAsked--; // refused: no compact_end of ours comes
						log(`compact: ${err.message}`);
						if (typeof o.onError === "function") o.onError(err);
					},
				).catch((err) => log(`compact: a callback threw: ${err && err.stack ? err.stack : err}`));
			},
			// zot's system prompt as the last before_agent_start hook saw
			// it ("" until a prompt ran one).
			getSystemPrompt: () => lastSystemPrompt,
			// ExtensionCommandContext
			waitForIdle() {
				if (idle) return Promise.resolve();
				return new Promise((r) => idleWaiters.push(r));
			},
			// newSession(): the new_session action (session_switch "new"
			// follows). pi's parentSession / setup have no counterpart: zot
			// gives extensions no SessionManager to write a session with.
			async newSession(options) {
				if (options && (options.setup || options.parentSession)) logOnce("ctx.newSession setup / parentSession");
				const r = await action({ type: "new_session" });
				entriesFresh = false;
				return { cancelled: !!r.cancelled };
			},
			// fork(entryId): the conversation before that prompt goes on in
			// a new session (the fork action; session_before_fork may refuse).
			async fork(entryId) {
				const r = await action({ type: "fork", entry_id: String(entryId) });
				entriesFresh = false;
				return { cancelled: !!r.cancelled };
			},
			// navigateTree(targetId, options): the navigate_tree action; a
			// prompt as target comes back as the chat input's text, as pi
			// puts it in its editor.
			async navigateTree(targetId, options) {
				const o = options || {};
				const f = { type: "navigate_tree", target_id: String(targetId) };
				if (o.summarize) f.summarize = true;
				if (o.customInstructions) f.custom_instructions = String(o.customInstructions);
				if (o.replaceInstructions) f.replace_instructions = true;
				if (o.label) f.label = String(o.label);
				const r = await action(f);
				entriesFresh = false;
				if (!r.cancelled && typeof r.editor_text === "string" && r.editor_text) editorText = r.editor_text;
				return { cancelled: !!r.cancelled };
			},
			// switchSession(sessionPath): the switch_session action (a
			// session file, or a zot session id); session_before_switch
			// {reason: "resume"} may refuse, session_switch follows.
			async switchSession(sessionPath) {
				const r = await action({ type: "switch_session", session_file: String(sessionPath || "") });
				entriesFresh = false;
				return { cancelled: !!r.cancelled };
			},
			// reload(): every extension restarts, as /reload-ext; this
			// one too, after the Promise resolved (pi: code after it runs
			// in the old runtime; return after it).
			async reload() {
				await action({ type: "reload" });
			},
		};
	}
	const ctx = makeCtx();

	// ---- pi ----
	const pi = {
		on(event, fn) {
			if (typeof fn !== "function") return;
			if (started && !handlers.has(event)) log(`pi.on(${event}) after loading: takes effect at the next reload`);
			if (NEVER.has(event)) log(`${event}: zot has no such moment; the handler is kept and never called`);
			if (!handlers.has(event)) handlers.set(event, []);
			handlers.get(event).push(fn);
		},
		registerTool(def) {
			if (!def || !def.name) throw new Error("registerTool needs a name");
			tools.set(def.name, def);
			if (started) sendTool(def);
		},
		registerCommand(name, opts) {
			const n = String(name).replace(/^\//, "");
			commands.set(n, opts || {});
			if (started) wire.send({ type: "register_command", name: n, description: (opts && opts.description) || "" });
		},
		registerShortcut(key, opts) {
			// Exposed as a command (shortcut:KEY) a front can bind a key to.
			const n = "shortcut:" + String(key).replace(/[^A-Za-z0-9:._-]/g, "-");
			shortcuts.set(n, { key: String(key), ...(opts || {}) });
			if (started) wire.send({ type: "register_command", name: n, description: (opts && opts.description) || `shortcut ${key}` });
		},
		registerFlag(name, opts) {
			flags.set(String(name), opts || {});
		},
		getFlag(name) {
			const def = flags.get(String(name));
			if (!def) return undefined;
			if (flagValues.has(String(name))) {
				const v = flagValues.get(String(name));
				if (def.type === "boolean") return v === "" || v === "true" || v === "1" || v === "yes";
				return v;
			}
			return def.default;
		},
		registerMessageRenderer(customType, renderer) {
			renderers.set(String(customType), renderer);
		},
		sendMessage(message, options) {
			const opts = options || {};
			let text = contentText(message && message.content);
			const r = renderers.get(message && message.customType);
			if (r) {
				try {
					const lines = renderToLines(r(message, { expanded: true }, plainTheme), 80);
					if (lines.length) text = lines.join("\n");
				} catch (err) {
					log(`message renderer ${message.customType}: ${err.message}`);
				}
			}
			let deliver = { steer: "steer", followUp: "follow_up", nextTurn: "next_turn" }[opts.deliverAs] || "";
			if (!deliver) deliver = opts.triggerTurn ? (idle ? "follow_up" : "steer") : "next_turn";
			send_message(text, deliver);
		},
		sendUserMessage(content, options) {
			const opts = options || {};
			const deliver = { steer: "steer", followUp: "follow_up" }[opts.deliverAs] || (idle ? "follow_up" : "steer");
			send_message(contentText(content), deliver);
		},
		appendEntry(customType, data) {
			appendEntry(String(customType), data === undefined ? null : data);
		},
		setSessionName(name) {
			sessionName = String(name);
			appendEntry(NAME_KIND, { name: sessionName });
			wire.send({ type: "set_status", key: "session", text: sessionName });
		},
		getSessionName: () => sessionName,
		setLabel() {
			logOnce("pi.setLabel");
		},
		// exec goes through the host: the bash tool's guards and approval
		// see the command line first, and the program runs in its own
		// process group, stopped on the signal or the timeout.
		async exec(command, args, options) {
			const o = options || {};
			const f = { type: "exec", name: String(command), names: (args || []).map(String) };
			if (o.cwd) f.cwd = String(o.cwd);
			if (o.timeout > 0) f.timeout_ms = Math.round(o.timeout);
			const r = await wire.request(f, o.signal);
			if (r.aborted) return { stdout: "", stderr: "", code: 1, killed: true };
			// A guard's or the user's "no" is a failed run, as a command
			// that exits 1 (pi's exec resolves; it throws only when it
			// cannot run at all).
			if (r.error && /^blocked: /.test(r.error)) return { stdout: "", stderr: r.error, code: 1, killed: false };
			if (r.error && r.exit_code == null) throw new Error(r.error);
			return { stdout: r.stdout || "", stderr: r.stderr || "", code: r.exit_code == null ? 1 : r.exit_code, killed: !!r.killed };
		},
		getActiveTools: () => toolCache.filter((t) => t.active).map((t) => t.name),
		getAllTools: () =>
			toolCache.map((t) => ({ name: t.name, description: t.description || "", parameters: tools.get(t.name)?.parameters })),
		setActiveTools(names) {
			const want = (names || []).map(String);
			toolCache = toolCache.map((t) => ({ ...t, active: want.includes(t.name) }));
			effect({ type: "set_active_tools", names: want }).then(
				(r) => {
					if (r.tools) toolCache = r.tools;
				},
				(err) => log(`setActiveTools: ${err.message}`),
			);
		},
		getCommands: () => commandCache.map((c) => ({ name: c.name, description: c.description, source: c.source === "builtin" ? "builtin" : "extension" })),
		async setModel(m) {
			const id = zotModelID(m);
			try {
				await effect({ type: "set_model", model: id });
				setModelFrom(m && m.provider, id);
				return true;
			} catch (err) {
				log(`setModel: ${err.message}`);
				return false;
			}
		},
		getThinkingLevel: () => thinkingLevel,
		setThinkingLevel(level) {
			// pi's levels onto zot's (off, low, medium, high).
			const zl = { off: "off", minimal: "low", low: "low", medium: "medium", high: "high", xhigh: "high" }[String(level)];
			if (!zl) {
				log(`setThinkingLevel: unknown level ${level} (off, minimal, low, medium, high, xhigh)`);
				return;
			}
			thinkingLevel = String(level);
			effect({ type: "set_thinking", level: zl }).then(
				(r) => {
					if (r.level && r.level !== zl) thinkingLevel = r.level;
				},
				(err) => log(`setThinkingLevel: ${err.message}`),
			);
		},
		// A provider with its own streamSimple: its models become
		// NAME/ID in every front (lib/providers.js).
		registerProvider(name, config) {
			providers.register(name, config);
		},
		unregisterProvider(name) {
			providers.unregister(name);
		},
		events: {
			on(topic, fn) {
				if (!busHandlers.has(topic)) busHandlers.set(topic, []);
				busHandlers.get(topic).push(fn);
				return () => {
					const l = busHandlers.get(topic) || [];
					const i = l.indexOf(fn);
					if (i >= 0) l.splice(i, 1);
				};
			},
			emit(topic, data) {
				deliverBus(topic, data);
				wire.send({ type: "bus_publish", key: String(topic), data: busData(data) });
			},
		},
	};

	function send_message(text, deliver) {
		if (!text) return;
		pendingMessages++;
		action({ type: "send_message", text, deliver }).then(
			() => pendingMessages--,
			(err) => {
				pendingMessages--;
				log(`sendMessage: ${err.message}`);
			},
		);
	}

	// appendEntry is synchronous in pi: the entry is in getBranch() at
	// once (and in the session file once the host has it).
	function appendEntry(kind, data) {
		const base = { id: `a${entries.length + 1}-${Date.now()}`, parentId: entries.length ? entries[entries.length - 1].id : null, timestamp: new Date().toISOString() };
		if (kind === NAME_KIND) entries.push({ ...base, type: "session_info", name: data && data.name });
		else entries.push({ ...base, type: "custom", customType: kind, data });
		effect({ type: "append_entry", kind, data }).catch((err) => log(`appendEntry ${kind}: ${err.message}`));
	}

	function deliverBus(topic, data) {
		for (const fn of busHandlers.get(topic) || []) {
			try {
				fn(data);
			} catch (err) {
				log(`events.on(${topic}): ${err.message}`);
			}
		}
	}

	// ---- registration ----
	function sendTool(def) {
		let schema;
		try {
			schema = toJSONSchema(def.parameters);
		} catch (err) {
			log(`tool ${def.name}: ${err.message}`);
			return;
		}
		wire.send({ type: "register_tool", name: def.name, description: def.description || def.label || def.name, schema });
	}

	async function start() {
		ack = await wire.waitHello();
		setModelFrom(ack.provider, ack.model);
		started = true;
		for (const def of tools.values()) sendTool(def);
		for (const [name, c] of commands) wire.send({ type: "register_command", name, description: c.description || "" });
		for (const [name, s] of shortcuts) wire.send({ type: "register_command", name, description: s.description || `shortcut ${s.key}` });
		providers.start();
		const events = new Set(["agent_start", "agent_end", "session_start"]); // isIdle, waitForIdle; the session gate
		// input: every prompt's first hook, so a prompt waits until this
		// extension has handled session_start and applied its effects.
		const intercept = new Set(["input"]);
		for (const ev of handlers.keys()) {
			if (INTERCEPTS[ev]) intercept.add(INTERCEPTS[ev]);
			for (const z of EVENTS[ev] || []) events.add(z);
			if (ev === "tool_execution_end") intercept.add("tool_result");
		}
		wire.send({ type: "subscribe", events: [...events], intercept: [...intercept] });
		wire.send({ type: "ready" });
		wire.onFrame(onFrame);
		await refreshTools();
		action({ type: "get_thinking" }).then(
			(r) => {
				if (r.level) thinkingLevel = r.level;
			},
			() => {},
		);
	}

	// ---- frames from the host ----
	function onFrame(f) {
		switch (f.type) {
			case "tool_call":
				afterSessionStart().then(() => runTool(f));
				return;
			case "provider_complete":
				providers.complete(f);
				return;
			case "tool_cancel": {
				if (providers.cancel(f.id)) return;
				const ac = toolCalls.get(f.id);
				if (ac) ac.abort();
				return;
			}
			case "command_invoked": {
				// pi runs a command after the events before it were handled
				// (a fork's session_fork rebuilding state, …).
				const before = eventChain;
				afterSessionStart()
					.then(() => before)
					.then(() => runCommand(f));
				return;
			}
			case "event":
				// One-way events are handled in the order they came.
				eventChain = eventChain.then(() => (f.event === "session_start" ? onEvent(f) : afterSessionStart().then(() => onEvent(f)))).catch((err) => log(`event ${f.event}: ${err.message}`));
				return;
			case "event_intercept":
				afterSessionStart()
					.then(() => onIntercept(f))
					.then(async (r) => {
						await effectsSettled();
						return r;
					})
					.then(
					(r) => wire.send({ type: "event_intercept_response", id: f.id, ...r }),
					(err) => {
						log(`${f.event} handler threw: ${err && err.stack ? err.stack : err}`);
						// A guard that throws blocks, as pi does (fail closed).
						const r = f.event === "tool_call" ? { block: true, reason: `extension ${extName} failed: ${err.message}` } : {};
						wire.send({ type: "event_intercept_response", id: f.id, ...r });
					},
				);
				return;
			case "bus_event":
				deliverBus(f.key, f.data);
				return;
			case "panel_key": {
				const pnl = panels.get(f.panel_id);
				if (pnl) pnl.key(f.key, f.text);
				return;
			}
			case "panel_close": {
				const pnl = panels.get(f.panel_id);
				if (pnl) pnl.close();
				return;
			}
			case "shutdown":
				// This runtime stops (a reload, a restart, zot's end): pi's
				// session_shutdown first, unless zot's session_shutdown
				// event brought it. Entries still on their way are part of
				// the session: ack once they have landed (bounded: the host
				// kills at 2 s).
				Promise.race([emitShutdown().then(effectsSettled), new Promise((r) => setTimeout(r, 1000).unref())]).then(() => {
					wire.send({ type: "shutdown_ack" });
					setTimeout(() => wire.exit(0), 10);
				});
				return;
			case "error":
				log(`host: ${f.ref || ""} ${f.error || ""}`);
				return;
			default:
		}
	}

	// Compactions this runtime asked for whose compact_end has not come.
	let compactsAsked = 0;

	// session_shutdown reaches the handlers once per runtime.
	let shutdownEmitted = null;
	function emitShutdown() {
		if (!shutdownEmitted) shutdownEmitted = emit("session_shutdown", {});
		return shutdownEmitted;
	}

	async function emit(event, payload) {
		for (const fn of handlers.get(event) || []) {
			try {
				await fn({ type: event, ...payload }, ctx);
			} catch (err) {
				log(`${event} handler threw: ${err && err.stack ? err.stack : err}`);
			}
		}
	}

	let turnIndex = 0;
	let eventChain = Promise.resolve();
	async function onEvent(f) {
		// The transcript changed (or may have): read it again when a
		// handler next looks.
		if (f.event !== "session_shutdown") entriesFresh = false;
		switch (f.event) {
			case "session_start": {
				entriesFresh = false;
				sessionIDFresh = false;
				await Promise.all([refreshEntries(), refreshTools()]);
				if (!sessionStarted) {
					sessionStarted = true;
					await emit("session_start", {});
					markSessionReady();
				} else if (f.reason !== "fork" && f.reason !== "tree") {
					// A fork or a navigation is pi's session_fork / session_tree
					// (their own events follow), not a switch.
					await emit("session_switch", { reason: f.reason === "new" ? "new" : "resume", previousSessionFile: undefined });
				}
				return;
			}
			case "session_shutdown":
				return emitShutdown();
			case "agent_start":
				idle = false;
				turnIndex = 0;
				if (!entriesFresh) await refreshEntries();
				return emit("agent_start", {});
			case "agent_end": {
				idle = true;
				await emit("agent_end", { messages: [] });
				for (const w of idleWaiters.splice(0)) w();
				return;
			}
			case "turn_start":
				turnIndex = Math.max(0, (f.step || 1) - 1);
				return emit("turn_start", { turnIndex, timestamp: Date.now() });
			case "turn_end":
				return emit("turn_end", { turnIndex, message: { role: "assistant", content: [], stopReason: f.stop }, toolResults: [] });
			case "assistant_message":
				return emit("message_end", { message: { role: "assistant", content: [{ type: "text", text: f.text || "" }], timestamp: Date.now() } });
			case "tool_call":
				return emit("tool_execution_start", { toolCallId: f.tool_id, toolName: f.tool_name, args: parseObj(f.tool_args) });
			case "model_select": {
				const prev = model;
				setModelFrom(f.provider, f.model);
				return emit("model_select", { model, previousModel: prev, source: "set" });
			}
			case "compact_start":
				return emit("session_before_compact", { preparation: undefined, branchEntries: entries.slice(), signal: new AbortController().signal });
			case "compact_end": {
				// fromExtension: this runtime asked for it (ctx.compact).
				const fromExtension = compactsAsked > 0;
				if (fromExtension) compactsAsked--;
				return emit("session_compact", { compactionEntry: undefined, fromExtension });
			}
			case "session_fork":
				return emit("session_fork", {
					previousSessionFile: f.previous_session_file || undefined,
					entryId: f.entry_id,
					messageIndex: f.message_index,
					sessionId: f.session_id,
					sessionFile: f.session_file || undefined,
					previousSessionId: f.previous_session_id,
				});
			case "session_tree":
				return emit("session_tree", {
					newLeafId: f.new_leaf_id || null,
					oldLeafId: f.old_leaf_id || null,
					fromExtension: false,
					sessionId: f.session_id,
					sessionFile: f.session_file || undefined,
					previousSessionId: f.previous_session_id,
					previousSessionFile: f.previous_session_file || undefined,
				});
			default:
		}
	}

	// The pi events an intercept runs handlers for.
	const INTERCEPT_EVENTS = {
		tool_call: ["tool_call"],
		tool_result: ["tool_result", "tool_execution_end"],
		input: ["input"],
		before_agent_start: ["before_agent_start"],
		context: ["context"],
		user_bash: ["user_bash"],
		session_before_fork: ["session_before_fork"],
		session_before_tree: ["session_before_tree"],
		session_before_switch: ["session_before_switch"],
	};

	async function onIntercept(f) {
		if (!(INTERCEPT_EVENTS[f.event] || []).some((ev) => (handlers.get(ev) || []).length)) {
			return {}; // subscribed only to keep pi's order (input): nothing to run
		}
		if (f.event === "session_before_fork" || f.event === "session_before_tree" || f.event === "session_before_switch") return onBeforeTree(f);
		// The transcript moved on since the last look (the model answered,
		// a tool ran): handlers see it as it is now.
		entriesFresh = false;
		await refreshEntries();
		switch (f.event) {
			case "tool_call": {
				const input = parseObj(f.tool_args);
				const before = JSON.stringify(input);
				const ev = { type: "tool_call", toolCallId: f.tool_id, toolName: f.tool_name, input };
				for (const fn of handlers.get("tool_call") || []) {
					const r = await fn(ev, ctx);
					if (r && r.block) return { block: true, reason: r.reason || `blocked by ${extName}` };
				}
				// pi lets a handler change event.input in place.
				const after = JSON.stringify(ev.input);
				return after !== before && ev.input && typeof ev.input === "object" ? { modified_args: ev.input } : {};
			}
			case "tool_result": {
				const ev = {
					type: "tool_result",
					toolCallId: f.tool_id,
					toolName: f.tool_name,
					input: parseObj(f.tool_args),
					content: fromZotContent(f.content),
					isError: !!f.is_error,
					details: undefined,
				};
				let changed = false;
				for (const fn of handlers.get("tool_result") || []) {
					const r = await fn(ev, ctx);
					if (r && typeof r === "object") {
						if (r.content) {
							ev.content = r.content;
							changed = true;
						}
						if (r.isError !== undefined) {
							ev.isError = !!r.isError;
							changed = true;
						}
						if (r.details !== undefined) ev.details = r.details;
					}
				}
				await emit("tool_execution_end", { toolCallId: ev.toolCallId, toolName: ev.toolName, result: { content: ev.content, details: ev.details }, isError: ev.isError });
				return changed ? { content: toZotContent(ev.content), is_error: ev.isError } : {};
			}
			case "input": {
				let text = f.text || "";
				let changed = false;
				for (const fn of handlers.get("input") || []) {
					const r = await fn({ type: "input", text, images: [], source: "rpc" }, ctx);
					if (!r || r.action === "continue") continue;
					if (r.action === "handled") return { handled: true };
					if (r.action === "transform" && typeof r.text === "string") {
						text = r.text;
						changed = true;
					}
				}
				return changed ? { replace_text: text } : {};
			}
			case "before_agent_start": {
				const base = f.system_prompt || "";
				lastSystemPrompt = base;
				let sys = base;
				const messages = [];
				for (const fn of handlers.get("before_agent_start") || []) {
					const r = await fn({ type: "before_agent_start", prompt: f.text || f.prompt || "", images: [], systemPrompt: sys }, ctx);
					if (!r) continue;
					if (r.message) messages.push(contentText(r.message.content));
					if (typeof r.systemPrompt === "string") sys = r.systemPrompt;
				}
				const out = {};
				if (messages.length) out.messages = messages;
				// zot appends a hook's system_prompt for the run: send what
				// the extension added (all of it when it rewrote the prompt).
				if (sys !== base) out.system_prompt = sys.startsWith(base) ? sys.slice(base.length) : sys;
				return out;
			}
			case "user_bash": {
				// pi's UserBashEvent; the first handler that answers decides
				// (pi's emitUserBash). A throw is logged and the next asked,
				// as pi does.
				const ev = { type: "user_bash", command: f.command || "", excludeFromContext: !!f.exclude_from_context, cwd: f.cwd || "" };
				for (const fn of handlers.get("user_bash") || []) {
					let r;
					try {
						r = await fn(ev, ctx);
					} catch (err) {
						log(`user_bash handler threw: ${err && err.stack ? err.stack : err}`);
						continue;
					}
					if (!r) continue;
					if (r.result && typeof r.result === "object") {
						const b = r.result;
						return {
							result: {
								output: String(b.output == null ? "" : b.output),
								exit_code: typeof b.exitCode === "number" ? b.exitCode : b.cancelled ? 130 : 1,
								cancelled: !!b.cancelled,
								truncated: !!b.truncated,
							},
						};
					}
					if (r.operations) {
						// pi's operations run the command elsewhere (over SSH, in a
						// sandbox); zot cannot run it through them, and running it
						// here instead would do what the extension meant to avoid.
						return { block: true, reason: `extension ${extName} runs your commands through its own operations, which zot does not offer; the command did not run` };
					}
				}
				return {};
			}
			case "context": {
				let messages = Array.isArray(f.messages) ? f.messages : [];
				let changed = false;
				for (const fn of handlers.get("context") || []) {
					const r = await fn({ type: "context", messages }, ctx);
					if (r && Array.isArray(r.messages)) {
						messages = r.messages;
						changed = true;
					}
				}
				return changed ? { messages } : {};
			}
			default:
				return {};
		}
	}

	// session_before_fork / _tree / _switch: the first handler that
	// answers cancel refuses (pi's result). They run while the host holds
	// the session still, so they see the entries as last read (no
	// reading of the session here). A throw skips the handler (pi's
	// fail-open). pi's summary / skipConversationRestore answers have no
	// counterpart in zot: logged once.
	async function onBeforeTree(f) {
		const ac = new AbortController();
		let ev;
		if (f.event === "session_before_switch") {
			ev = { type: "session_before_switch", reason: f.reason === "resume" ? "resume" : "new", targetSessionFile: f.session_file || undefined, targetSessionId: f.session_id || undefined };
		} else if (f.event === "session_before_fork") {
			ev = { type: "session_before_fork", entryId: f.entry_id, messageIndex: f.message_index, sessionId: f.session_id, withFiles: !!f.with_files };
		} else {
			const p = f.preparation || {};
			const byId = (id) => entries.find((e) => e.id === id) || { type: "message", id, parentId: null, timestamp: new Date().toISOString() };
			ev = {
				type: "session_before_tree",
				preparation: {
					targetId: p.target_id,
					oldLeafId: p.old_leaf_id || null,
					commonAncestorId: p.common_ancestor_id || null,
					entriesToSummarize: (p.entries_to_summarize || []).map(byId),
					userWantsSummary: !!p.user_wants_summary,
					customInstructions: p.custom_instructions || undefined,
					replaceInstructions: !!p.replace_instructions,
					label: p.label || undefined,
				},
				signal: ac.signal,
			};
		}
		for (const fn of handlers.get(f.event) || []) {
			let r;
			try {
				r = await fn(ev, ctx);
			} catch (err) {
				log(`${f.event} handler threw: ${err && err.stack ? err.stack : err}`);
				continue;
			}
			if (!r || typeof r !== "object") continue;
			if (r.cancel) return { cancel: true, reason: typeof r.reason === "string" && r.reason ? r.reason : `cancelled by ${extName}` };
			if (r.skipConversationRestore) logOnce(`${f.event} skipConversationRestore`);
			if (r.summary) logOnce(`${f.event} summary`);
		}
		return {};
	}

	async function runTool(f) {
		const def = tools.get(f.name);
		if (!def) {
			wire.send({ type: "tool_result", id: f.id, content: [{ type: "text", text: `unknown tool ${f.name}` }], is_error: true });
			return;
		}
		const ac = new AbortController();
		toolCalls.set(f.id, ac);
		const args = parseObj(f.args);
		const callID = f.tool_id || f.id; // the model's id (pi's toolCallId)
		let result;
		let isError = false;
		try {
			const bad = validateArgs(def.parameters, args);
			if (bad) throw new Error(bad);
			if (!entriesFresh) await refreshEntries();
			const onUpdate = (partial) => {
				const text = contentText(partial && partial.content);
				if (text) wire.send({ type: "tool_update", id: f.id, text });
			};
			result = await def.execute(callID, args, ac.signal, onUpdate, ctx);
			isError = !!(result && result.isError);
		} catch (err) {
			result = { content: [{ type: "text", text: err && err.message ? err.message : String(err) }], details: undefined };
			isError = true;
		} finally {
			toolCalls.delete(f.id);
		}
		if (ac.signal.aborted) return; // the host answered the model already
		const content = toZotContent((result && result.content) || []);
		let shown = content;
		if (typeof def.renderResult === "function") {
			try {
				const lines = renderToLines(def.renderResult(result, { expanded: true, isPartial: false }, plainTheme), 80);
				if (lines.length) wire.send({ type: "tool_update", id: f.id, text: lines.join("\n") });
			} catch (err) {
				log(`tool ${def.name} renderResult: ${err.message}`);
			}
		}
		// The details go into the session before the result does, so state
		// rebuilt from them (pi's getBranch() pattern) survives a resume —
		// even of a zot -p that ends right after this call.
		if (result && result.details !== undefined) {
			entries.push({
				type: "message",
				id: `t-${callID}`,
				parentId: entries.length ? entries[entries.length - 1].id : null,
				timestamp: new Date().toISOString(),
				message: { role: "toolResult", toolCallId: callID, toolName: def.name, content: result.content, details: result.details, isError, timestamp: Date.now() },
			});
			await action({
				type: "append_entry",
				kind: DETAILS_KIND,
				data: { toolCallId: callID, toolName: def.name, content: result.content, details: result.details, isError },
			}).catch((err) => log(`keeping ${def.name}'s details: ${err.message}`));
		}
		wire.send({ type: "tool_result", id: f.id, content: shown, is_error: isError });
	}

	async function runCommand(f) {
		// The command answers once: at its end, or earlier when it opens
		// a panel (ui.custom) and goes on waiting for it.
		const state = {
			answered: false,
			panel: null,
			answer(extra) {
				if (this.answered) return;
				this.answered = true;
				wire.send({ type: "command_response", id: f.id, action: "noop", ...extra });
			},
		};
		const reply = (extra) => state.answer(extra);
		const sc = shortcuts.get(f.name);
		const c = commands.get(f.name);
		const handler = sc ? () => sc.handler(ctx) : c && c.handler ? () => c.handler(f.args || "", ctx) : null;
		if (!handler) {
			reply({ error: `no command ${f.name}` });
			return;
		}
		try {
			// Read the session afresh: the run's last events may still be on
			// their way when the user's command comes (rare, and cheap).
			// (A read already under way may predate the command: wait it out.)
			if (entriesLoading) await entriesLoading;
			entriesFresh = false;
			await Promise.all([refreshEntries(), refreshTools(), refreshEditorText()]);
			// Whatever the handler awaits, ui.custom knows whose it is.
			await commandStore.run(state, handler);
			reply({});
		} catch (err) {
			reply({ error: err && err.message ? err.message : String(err) });
		}
	}

	return {
		pi,
		start,
	};
}

// ---- helpers ----

// panelKey is an editor's panel key as pi's components read input: the
// names matchesKey knows (escape, enter, up, …), a rune as its text.
function panelKey(key, text) {
	if (key === "rune") return text || "";
	return { esc: "escape", pageup: "pageUp", pagedown: "pageDown" }[key] || key;
}

// sessionEntries builds pi's session entries from zot's transcript
// (get_messages) and this extension's entries (get_entries), ordered by
// time: messages as pi's user / assistant / toolResult messages (a tool
// result carries the details its tool returned, kept as a pi:tool_result
// entry), custom entries as pi's custom entries.
function sessionEntries(messages, custom, sid) {
	const details = new Map();
	const rows = [];
	for (const e of custom) {
		if (e.kind === DETAILS_KIND && e.data && e.data.toolCallId) details.set(e.data.toolCallId, e);
	}
	const toolNames = new Map();
	const seen = new Set();
	let seq = 0;
	const at = (t) => Date.parse(t) || 0;
	for (const [index, m] of messages.entries()) {
		const ts = at(m.time);
		// A message's entry id is the host's ("<session id>:<message
		// index>"): fork and navigateTree take it back. A message with
		// several tool results is several entries: the others get a
		// suffix the host does not take.
		let part = 0;
		const mid = () => {
			const base = sid ? `${sid}:${index}` : `${index}`;
			return part++ === 0 ? base : `${base}/${part - 1}`;
		};
		const text = [];
		for (const c of m.content || []) {
			if (c.type === "tool_call") toolNames.set(c.id, c.name);
			if (c.type === "tool_result") {
				const d = details.get(c.call_id);
				if (d) seen.add(c.call_id);
				rows.push({ t: ts, n: seq++, id: mid(), message: { role: "toolResult", toolCallId: c.call_id, toolName: toolNames.get(c.call_id) || (d && d.data.toolName), content: fromZotContent(c.content), details: d ? d.data.details : undefined, isError: !!c.is_error, timestamp: ts } });
			}
		}
		if (m.role === "assistant") {
			const content = [];
			for (const c of m.content || []) {
				if (c.type === "text") content.push({ type: "text", text: c.text });
				else if (c.type === "thinking") content.push({ type: "thinking", thinking: c.text });
				else if (c.type === "tool_call") content.push({ type: "toolCall", id: c.id, name: c.name, arguments: parseObj(c.args) });
			}
			rows.push({ t: ts, n: seq++, id: mid(), message: { role: "assistant", content, timestamp: ts } });
		} else {
			for (const c of m.content || []) if (c.type === "text" || c.type === "image") text.push(fromZotContent([c])[0]);
			if (text.length) rows.push({ t: ts, n: seq++, id: mid(), message: { role: "user", content: text, timestamp: ts } });
		}
	}
	const lastTime = messages.reduce((t, m) => Math.max(t, at(m.time)), 0);
	for (const e of custom) {
		const ts = at(e.time);
		if (e.kind === DETAILS_KIND) {
			// A result the transcript does not have: kept when it was
			// compacted away (older than the transcript's last message) or
			// its call is still running; a fork from before its call left
			// it behind, so it is not on this branch.
			const d = e.data || {};
			if (!seen.has(d.toolCallId) && (ts <= lastTime || toolNames.has(d.toolCallId))) rows.push({ t: ts, n: seq++, message: { role: "toolResult", toolCallId: d.toolCallId, toolName: d.toolName, content: d.content || [], details: d.details, isError: !!d.isError, timestamp: ts } });
		} else if (e.kind === NAME_KIND) rows.push({ t: ts, n: seq++, info: e.data && e.data.name });
		else rows.push({ t: ts, n: seq++, custom: e });
	}
	rows.sort((a, b) => a.t - b.t || a.n - b.n);
	const out = [];
	let local = 0;
	for (const r of rows) {
		// Entries that are not messages of the transcript: ids of their own.
		const base = { id: r.id || `x${++local}`, parentId: out.length ? out[out.length - 1].id : null, timestamp: new Date(r.t || Date.now()).toISOString() };
		if (r.message) out.push({ ...base, type: "message", message: r.message });
		else if (r.info !== undefined) out.push({ ...base, type: "session_info", name: r.info });
		else out.push({ ...base, type: "custom", customType: r.custom.kind, data: r.custom.data });
	}
	return out;
}

function parseFlagEnv(s) {
	const m = new Map();
	if (!s) return m;
	try {
		const o = JSON.parse(s);
		for (const [k, v] of Object.entries(o)) m.set(k, String(v));
	} catch {
		process.stderr.write("[pi] ZOT_PI_FLAGS is not a JSON object; flags ignored\n");
	}
	return m;
}

function parseObj(raw) {
	if (raw && typeof raw === "object") return raw;
	if (typeof raw === "string" && raw) {
		try {
			return JSON.parse(raw);
		} catch {}
	}
	return {};
}

function busData(d) {
	if (d && typeof d === "object" && !Array.isArray(d)) return d;
	return { value: d === undefined ? null : d };
}

// contentText flattens pi content (a string, or text/image blocks).
function contentText(c) {
	if (c == null) return "";
	if (typeof c === "string") return c;
	if (Array.isArray(c)) return c.filter((b) => b && b.type === "text").map((b) => b.text).join("\n");
	return String(c);
}

// pi content blocks → zot's (image: mimeType → mime_type).
function toZotContent(blocks) {
	if (typeof blocks === "string") return [{ type: "text", text: blocks }];
	return (blocks || []).map((b) => {
		if (b && b.type === "image") return { type: "image", mime_type: b.mimeType || b.mime_type, data: b.data };
		if (b && b.type === "text") return { type: "text", text: String(b.text) };
		return { type: "text", text: JSON.stringify(b) };
	});
}

function fromZotContent(blocks) {
	return (blocks || []).map((b) => (b && b.type === "image" ? { type: "image", mimeType: b.mime_type, data: b.data } : b));
}

module.exports = { makeAPI };
