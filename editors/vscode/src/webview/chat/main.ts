// The chat webview's entry: DOM wiring only. State lives in state.ts,
// HTML in render.ts; renders are coalesced on animation frames.

import type { AtItem, ChatAction, ChatMcp, ChatToHost, ChatWidget, HostToChat, PendingChip } from "../protocol";
import type { Attachment } from "../../lsp_ext";
import { atQueryAt, chipIcon } from "./context";
import { escapeHtml } from "./markdown";
import { KnownFiles } from "./files";
import type { CommandCompletion, CommandInfo } from "../../lsp_ext";
import * as st from "./state";
import { ItemRenderer, mcpNeedsAttention, mcpSummary, renderCompletions, renderMcpServer, renderWidgets, setRetry, statusText, usageTitle } from "./render";
import { argQuery, completions } from "./slash";
import { browserFrame, FrameScheduler } from "../scheduler";

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; getState(): unknown; setState(s: unknown): void };

const vscode = acquireVsCodeApi();
const post = (m: ChatToHost) => vscode.postMessage(m);

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const transcript = $<HTMLDivElement>("transcript");
const empty = $<HTMLDivElement>("empty");
const input = $<HTMLTextAreaElement>("input");
const sendBtn = $<HTMLButtonElement>("send");
const stopBtn = $<HTMLButtonElement>("stop");
const statusEl = $<HTMLDivElement>("status");
const modelSel = $<HTMLSelectElement>("model");
const modeSel = $<HTMLSelectElement>("mode");
const banner = $<HTMLDivElement>("banner");
const complEl = $<HTMLDivElement>("completions");
const chipsEl = $<HTMLDivElement>("chips");
const editingEl = $<HTMLDivElement>("editing");
const cancelEditBtn = $<HTMLButtonElement>("cancel-edit");
const widgetsEl = $<HTMLDivElement>("widgets");
const mcpEl = $<HTMLDetailsElement>("mcp");
const mcpSummaryEl = $<HTMLElement>("mcp-summary");
const mcpServersEl = $<HTMLDivElement>("mcp-servers");

const state = st.createState();
const files = new KnownFiles((paths) => post({ type: "resolveFiles", paths }));
const renderer = new ItemRenderer(files);
const elements = new Map<string, HTMLElement>();
const scheduler = new FrameScheduler(browserFrame(window), flush);

// ------------------------------------------------------------ rendering

function atBottom(): boolean {
    return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
}

function flush(): void {
    const stick = atBottom();
    // Retry belongs to the last answer, or to the error that ended the last
    // run, when nothing runs.
    const retryable = st.isRunning(state) ? undefined : st.retryItem(state);
    if (retryable !== renderer.retryable) {
        // An answer's button moves in the DOM (drawing its markdown again
        // is a whole answer's work at Enter); a notice, small, is drawn
        // again, as is an item without an action row or drawn anyway.
        for (const [id, on] of [[renderer.retryable, false], [retryable, true]] as const) {
            const el = id ? elements.get(id) : undefined;
            if (id && (!el || !el.classList.contains("assistant") || state.dirty.has(id) || !setRetry(el, on))) {
                state.dirty.add(id);
            }
        }
        renderer.retryable = retryable;
    }
    const { reset, redraw, dirty, status } = st.takeDirty(state);
    if (redraw) {
        renderer.reset();
    }
    if (reset) {
        transcript.textContent = "";
        elements.clear();
        renderer.reset();
    }
    const toRender = reset ? state.items : dirty;
    for (const it of toRender) {
        let el = elements.get(it.id);
        if (!el) {
            el = document.createElement("div");
            el.dataset.id = it.id;
            elements.set(it.id, el);
            transcript.appendChild(el);
        }
        // Keep the user's open/closed <details> across re-renders.
        const open = new Map<string, boolean>();
        el.querySelectorAll("details[data-key]").forEach((d) => open.set((d as HTMLElement).dataset.key!, (d as HTMLDetailsElement).open));
        el.className = renderer.className(it);
        el.innerHTML = renderer.html(it);
        if (open.size) {
            el.querySelectorAll("details[data-key]").forEach((d) => {
                const o = open.get((d as HTMLElement).dataset.key!);
                if (o !== undefined) {
                    (d as HTMLDetailsElement).open = o;
                }
            });
        }
    }
    empty.hidden = state.items.length > 0;
    if (status || reset) {
        renderStatus();
    }
    if (stick) {
        transcript.scrollTop = transcript.scrollHeight;
    }
}

function renderStatus(): void {
    const running = st.isRunning(state);
    const s = state.status;
    stopBtn.hidden = !running;
    sendBtn.hidden = running;
    document.body.classList.toggle("running", running);
    statusEl.textContent = statusText(s, running, state.models.find((m) => m.id === s.model)?.context_window);
    statusEl.title = usageTitle(s.usage);
    if (s.message && s.connection !== "starting") {
        showBanner(s.message, s.actions ?? []);
    } else {
        banner.hidden = true;
    }
    if (s.model && !state.models.some((m) => m.id === s.model)) {
        ensureModelOption(s.model);
    }
    if (s.model) {
        modelSel.value = s.model;
    }
    if (s.permissionMode) {
        modeSel.value = s.permissionMode;
    }
}

/** The one place a problem shows: its text and the buttons that fix it. */
function showBanner(message: string, actions: ChatAction[]): void {
    banner.hidden = false;
    banner.textContent = "";
    const text = document.createElement("div");
    text.className = "banner-text";
    text.textContent = message;
    banner.appendChild(text);
    if (actions.length) {
        const row = document.createElement("div");
        row.className = "banner-actions";
        for (const a of actions) {
            const b = document.createElement("button");
            b.className = "primary";
            b.textContent = a.label;
            b.addEventListener("click", () => post({ type: "action", action: a }));
            row.appendChild(b);
        }
        banner.appendChild(row);
    }
}

/** Draws the eye to the banner again (a send failed for its reason). */
function flashBanner(): void {
    banner.classList.remove("flash");
    void banner.offsetWidth; // restart the animation
    banner.classList.add("flash");
}

function ensureModelOption(id: string): void {
    for (const o of Array.from(modelSel.options)) {
        if (o.value === id) {
            return;
        }
    }
    const o = document.createElement("option");
    o.value = o.textContent = id;
    modelSel.appendChild(o);
}

function setModels(models: { id: string; provider: string }[], current: string): void {
    modelSel.textContent = "";
    for (const m of models) {
        const o = document.createElement("option");
        o.value = m.id;
        o.textContent = m.id;
        o.title = m.provider;
        modelSel.appendChild(o);
    }
    if (current) {
        ensureModelOption(current);
        modelSel.value = current;
    }
}

/** The extensions' widgets, above the input (the host coalesces updates). */
function setWidgets(widgets: ChatWidget[]): void {
    const stick = atBottom();
    widgetsEl.innerHTML = renderWidgets(widgets);
    widgetsEl.hidden = widgetsEl.childElementCount === 0;
    if (stick) {
        transcript.scrollTop = transcript.scrollHeight;
    }
}

/** The MCP servers' lines under the header; opens by itself when one needs attention. */
function setMcp(m: ChatMcp): void {
    const summary = mcpSummary(m);
    mcpEl.hidden = summary === "";
    mcpSummaryEl.textContent = summary;
    mcpServersEl.innerHTML = m.disabled ? "" : m.servers.map(renderMcpServer).join("");
    const attention = mcpNeedsAttention(m);
    mcpEl.classList.toggle("attention", attention);
    if (attention) {
        mcpEl.open = true;
    }
}

mcpServersEl.addEventListener("click", (e) => {
    const b = (e.target as HTMLElement).closest<HTMLButtonElement>("button.mcp-restart");
    if (b?.dataset.name) {
        b.disabled = true;
        post({ type: "mcpRestart", name: b.dataset.name });
    }
});

// ------------------------------------------------------------ messages from the host

/** The user changed the input since this webview loaded (the host's draft no longer applies). */
let typedSinceLoad = false;

window.addEventListener("message", (e: MessageEvent<HostToChat>) => {
    const m = e.data;
    switch (m.type) {
        case "events":
            for (const ev of m.events) {
                st.applyEvent(state, ev);
            }
            if (m.firstDelta) {
                // An answer's first token: drawn now; what follows, per frame.
                scheduler.flushNow();
                return;
            }
            break;
        case "history":
            st.loadHistory(state, m.messages);
            break;
        case "clear":
            st.clear(state);
            break;
        case "status":
            st.setStatus(state, m.status);
            break;
        case "commands":
            state.commands = m.commands;
            updateCompletions();
            break;
        case "models":
            state.models = m.models;
            setModels(m.models, m.current);
            renderStatus(); // the context window's size is the model's
            break;
        case "runStarted":
            st.runStarted(state, m.runId, m.queued, m.ahead);
            break;
        case "notice":
            st.addNotice(state, m.level, m.text, m.source);
            break;
        case "insert":
            input.value = m.text;
            input.focus();
            autosize();
            updateCompletions();
            break;
        case "setInput":
            // Not focused: the user may be typing elsewhere. The host
            // keeps the result as the draft (what zot/input/get answers).
            if (m.paste) {
                input.setRangeText(m.text, input.selectionStart, input.selectionEnd, "end");
            } else {
                input.value = m.text;
                input.setSelectionRange(input.value.length, input.value.length);
            }
            autosize();
            updateCompletions();
            saveDraft();
            break;
        case "focusInput":
            input.focus();
            break;
        case "draft":
            // The host's draft is the one kept (written as it changed); the
            // webview's own state, restored at load, can be older (VS Code
            // persists it later). What the user typed since load wins.
            if (!typedSinceLoad && input.value !== m.text) {
                input.value = m.text;
                autosize();
                vscode.setState({ draft: input.value });
            }
            break;
        case "files":
            if (files.resolved(m.exists)) {
                st.rerenderAll(state); // names that are files become links
            }
            break;
        case "atItems":
            if (at && m.query === at.query) {
                atItems = m.items;
                renderAtList();
            }
            break;
        case "argItems":
            if (arg && m.name === arg.name && m.args === arg.args) {
                argItems = m.completions;
                renderArgList();
            }
            break;
        case "addChip":
            addChip(m.chip);
            break;
        case "activeFile":
            activeChip = m.chip;
            renderChipBar();
            break;
        case "truncate":
            st.truncate(state, m.messageIndex);
            break;
        case "untruncate":
            st.untruncate(state);
            break;
        case "review":
            st.setReviewing(state, m.toolCallId, m.pending);
            break;
        case "widgets":
            setWidgets(m.widgets);
            break;
        case "mcp":
            setMcp(m);
            break;
        case "sendFailed":
            // The message was not sent: its text is back in the input (before
            // anything typed since), the error shown once; so are its chips.
            for (const c of lastSentChips) {
                addChip(c);
            }
            lastSentChips = [];
            input.value = input.value ? m.text + "\n" + input.value : m.text;
            autosize();
            saveDraft();
            input.focus();
            if (m.error) {
                st.addNotice(state, "error", m.error);
            } else if (!banner.hidden) {
                flashBanner();
            }
            break;
    }
    scheduler.schedule();
});

// ------------------------------------------------------------ input

let compl: CommandInfo[] = [];
let complSel = 0;

// ------------------------------------------------------------ attachments (chips)

/** The chips above the input, sent with the next message. */
let chips: PendingChip[] = [];
/** The chips of the message last sent (back on sendFailed). */
let lastSentChips: PendingChip[] = [];
/** The active editor's file, offered as a chip the user toggles. */
let activeChip: PendingChip | undefined;
/** Files whose active-editor chip the user switched off. */
const activeOff = new Set<string>();
/** Editing an earlier message: its index (zot/resend). */
let resendIndex: number | undefined;
/** The `@` word being typed, and its completion list. */
let at: { start: number; query: string } | undefined;
let atItems: AtItem[] = [];
/** The slash command whose argument is being typed, and zot's completions of it. */
let arg: { name: string; args: string } | undefined;
let argItems: CommandCompletion[] = [];

function chipKey(a: Attachment): string {
    return JSON.stringify([a.kind, a.uri ?? "", a.server ?? "", a.range ?? null, a.kind === "terminal" ? a.text : ""]);
}

function addChip(c: PendingChip): void {
    if (!chips.some((x) => chipKey(x.attachment) === chipKey(c.attachment))) {
        chips.push(c);
    }
    renderChipBar();
}

function activeOn(): boolean {
    return !!activeChip && !activeOff.has(activeChip.attachment.uri ?? "") && !chips.some((c) => chipKey(c.attachment) === chipKey(activeChip!.attachment));
}

function chipHtml(c: PendingChip, extra: string, button: string): string {
    return `<span class="chip chip-${escapeHtml(c.attachment.kind)}${extra}" title="${escapeHtml(c.title ?? c.label)}"><span class="codicon codicon-${chipIcon(
        c.attachment.kind,
    )}" aria-hidden="true"></span><span class="chip-label">${escapeHtml(c.label)}</span>${button}</span>`;
}

function renderChipBar(): void {
    let html = "";
    if (activeChip && !chips.some((c) => chipKey(c.attachment) === chipKey(activeChip!.attachment))) {
        const on = activeOn();
        html += chipHtml(
            { ...activeChip, title: `${activeChip.title ?? activeChip.label} (the current file: ${on ? "sent with the message; click to leave it out" : "left out; click to send it"})` },
            " chip-active" + (on ? "" : " chip-off"),
            `<button class="chip-toggle" data-toggle="1" aria-label="${on ? "Leave out" : "Attach"} the current file"><span class="codicon codicon-${on ? "eye" : "eye-closed"}"></span></button>`,
        );
    }
    chips.forEach((c, i) => {
        html += chipHtml(c, "", `<button class="chip-remove" data-remove="${i}" aria-label="Remove ${escapeHtml(c.label)}"><span class="codicon codicon-close"></span></button>`);
    });
    chipsEl.innerHTML = html;
}

chipsEl.addEventListener("click", (e) => {
    const t = e.target as HTMLElement;
    const rm = t.closest<HTMLElement>("[data-remove]");
    if (rm) {
        chips.splice(Number(rm.dataset.remove), 1);
    } else if (t.closest("[data-toggle]") && activeChip) {
        const u = activeChip.attachment.uri ?? "";
        if (activeOff.has(u)) {
            activeOff.delete(u);
        } else {
            activeOff.add(u);
        }
    } else {
        return;
    }
    renderChipBar();
    input.focus();
});

function atIcon(kind: string): string {
    return chipIcon(kind);
}

function renderArgList(): void {
    if (!arg || argItems.length === 0) {
        complEl.hidden = true;
        complEl.textContent = "";
        return;
    }
    complSel = Math.min(complSel, argItems.length - 1);
    complEl.innerHTML = argItems
        .map(
            (c, i) =>
                `<div class="completion arg-item${i === complSel ? " selected" : ""}" role="option" data-index="${i}" aria-selected="${i === complSel}"><span class="completion-name">${escapeHtml(
                    c.value,
                )}</span>${c.description ? `<span class="completion-desc">${escapeHtml(c.description)}</span>` : ""}</div>`,
        )
        .join("");
    complEl.hidden = false;
    complEl.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
}

/** Puts a completion of the argument in the input: "/name value". */
function acceptArg(i: number): void {
    const c = argItems[i];
    if (!arg || !c) {
        return;
    }
    input.value = "/" + arg.name + " " + c.value;
    complSel = 0;
    updateCompletions();
    autosize();
    saveDraft();
    input.focus();
}

function renderAtList(): void {
    if (!at || atItems.length === 0) {
        complEl.hidden = true;
        complEl.textContent = "";
        return;
    }
    complSel = Math.min(complSel, atItems.length - 1);
    complEl.innerHTML = atItems
        .map(
            (it, i) =>
                `<div class="completion at-item${i === complSel ? " selected" : ""}" role="option" data-index="${i}" aria-selected="${i === complSel}"><span class="codicon codicon-${atIcon(
                    it.kind,
                )}" aria-hidden="true"></span><span class="completion-name">${escapeHtml(it.label)}</span>${
                    it.detail ? `<span class="completion-desc">${escapeHtml(it.detail)}</span>` : ""
                }</div>`,
        )
        .join("");
    complEl.hidden = false;
    complEl.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
}

function acceptAt(i: number): void {
    const it = atItems[i];
    if (!it || !at) {
        return;
    }
    const cursor = input.selectionStart ?? input.value.length;
    input.value = input.value.slice(0, at.start) + input.value.slice(cursor);
    input.setSelectionRange(at.start, at.start);
    at = undefined;
    atItems = [];
    complSel = 0;
    renderAtList();
    autosize();
    saveDraft();
    post({ type: "pickAt", item: it });
    input.focus();
}

function setEditing(index: number | undefined): void {
    resendIndex = index;
    editingEl.hidden = index === undefined;
}

cancelEditBtn.addEventListener("click", () => {
    setEditing(undefined);
    input.value = "";
    chips = [];
    renderChipBar();
    autosize();
    saveDraft();
});

function updateCompletions(): void {
    const q = atQueryAt(input.value, input.selectionStart ?? input.value.length);
    if (q) {
        compl = [];
        if (!at || at.query !== q.query) {
            post({ type: "atQuery", query: q.query });
        }
        at = q;
        renderAtList();
        return;
    }
    at = undefined;
    atItems = [];
    const aq = argQuery(input.value, state.commands);
    if (aq) {
        compl = [];
        if (!arg || arg.name !== aq.name || arg.args !== aq.args) {
            argItems = [];
            post({ type: "argQuery", name: aq.name, args: aq.args });
        }
        arg = aq;
        renderArgList();
        return;
    }
    arg = undefined;
    argItems = [];
    compl = completions(input.value, state.commands);
    if (compl.length === 0) {
        complEl.hidden = true;
        complEl.textContent = "";
        return;
    }
    complSel = Math.min(complSel, compl.length - 1);
    complEl.innerHTML = renderCompletions(compl, complSel);
    complEl.hidden = false;
    complEl.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
}

function acceptCompletion(i: number): void {
    const c = compl[i];
    if (!c) {
        return;
    }
    input.value = "/" + c.name + " ";
    complSel = 0;
    updateCompletions();
    input.focus();
}

const MAX_INPUT_HEIGHT = 240;

/** Grows the input with its text; a scrollbar only past the maximum. The
 * height is the border box: scrollHeight plus the borders. */
function autosize(): void {
    input.style.height = "auto";
    const borders = input.offsetHeight - input.clientHeight;
    const want = input.scrollHeight + borders;
    input.style.height = Math.min(want, MAX_INPUT_HEIGHT) + "px";
    input.style.overflowY = want > MAX_INPUT_HEIGHT ? "auto" : "hidden";
}

/** Keeps the draft: in the webview's state, and with the host, which
 * keeps it across window reloads (workspaceState; VS Code batches its writes). */
function saveDraft(): void {
    vscode.setState({ draft: input.value });
    post({ type: "draft", text: input.value });
}

function send(): void {
    const text = input.value;
    const sent = activeOn() && activeChip ? [activeChip, ...chips] : [...chips];
    if (!text.trim() && sent.length === 0) {
        return;
    }
    post({ type: "send", text, attachments: sent.length ? sent.map((c) => c.attachment) : undefined, resendIndex });
    lastSentChips = chips;
    chips = [];
    setEditing(undefined);
    renderChipBar();
    input.value = "";
    complSel = 0;
    updateCompletions();
    autosize();
    // The host empties the draft it keeps when the message arrives: one
    // message to it for the send, not two.
    vscode.setState({ draft: "" });
}

input.addEventListener("keydown", (e) => {
    if (e.isComposing) {
        return;
    }
    if (at && !complEl.hidden && atItems.length > 0) {
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            complSel = (complSel + (e.key === "ArrowDown" ? 1 : atItems.length - 1)) % atItems.length;
            renderAtList();
            return;
        }
        if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey)) {
            e.preventDefault();
            acceptAt(complSel);
            return;
        }
        if (e.key === "Escape") {
            e.preventDefault();
            complEl.hidden = true;
            at = undefined;
            atItems = [];
            return;
        }
    }
    if (arg && !complEl.hidden && argItems.length > 0) {
        if (e.key === "ArrowDown" || e.key === "ArrowUp") {
            e.preventDefault();
            complSel = (complSel + (e.key === "ArrowDown" ? 1 : argItems.length - 1)) % argItems.length;
            renderArgList();
            return;
        }
        // Enter takes the selected completion unless it is what is typed
        // already (then it sends).
        if (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey && argItems[complSel].value !== arg.args)) {
            e.preventDefault();
            acceptArg(complSel);
            return;
        }
        if (e.key === "Escape") {
            e.preventDefault();
            complEl.hidden = true;
            return;
        }
    }
    if (e.key === "Escape" && resendIndex !== undefined) {
        e.preventDefault();
        cancelEditBtn.click();
        return;
    }
    const open = !complEl.hidden && compl.length > 0;
    if (open && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
        e.preventDefault();
        complSel = (complSel + (e.key === "ArrowDown" ? 1 : compl.length - 1)) % compl.length;
        updateCompletions();
        return;
    }
    if (open && e.key === "Tab") {
        e.preventDefault();
        acceptCompletion(complSel);
        return;
    }
    if (open && e.key === "Escape") {
        e.preventDefault();
        complEl.hidden = true;
        compl = [];
        return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.altKey && !e.ctrlKey && !e.metaKey) {
        e.preventDefault();
        if (open && input.value.trim() !== "/" + compl[complSel].name) {
            acceptCompletion(complSel);
            return;
        }
        send();
    }
});

input.addEventListener("click", () => updateCompletions());
input.addEventListener("input", () => {
    typedSinceLoad = true;
    complSel = 0;
    updateCompletions();
    autosize();
    saveDraft();
});

complEl.addEventListener("mousedown", (e) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>(".completion");
    if (el) {
        e.preventDefault();
        if (el.classList.contains("at-item")) {
            acceptAt(Number(el.dataset.index));
        } else if (el.classList.contains("arg-item")) {
            acceptArg(Number(el.dataset.index));
        } else {
            acceptCompletion(Number(el.dataset.index));
        }
    }
});

/** Chips of a sent message that can be attached again when it is edited. */
function reattach(c: { kind: string; label: string; uri?: string; lines?: string; server?: string }): PendingChip | undefined {
    if (!c.uri) {
        return undefined;
    }
    if (c.kind === "file") {
        return { label: c.label, attachment: { kind: "file", uri: c.uri } };
    }
    if (c.kind === "mcpResource" && c.server) {
        return { label: c.label, attachment: { kind: "mcpResource", uri: c.uri, server: c.server } };
    }
    const m = c.lines ? /^(\d+)-(\d+)$/.exec(c.lines) : null;
    if (c.kind === "selection" && m) {
        return { label: c.label, attachment: { kind: "selection", uri: c.uri, range: { start: { line: Number(m[1]) - 1, character: 0 }, end: { line: Number(m[2]), character: 0 } } } };
    }
    return undefined;
}

// Actions on messages and tool cards.
transcript.addEventListener("click", (e) => {
    const target = e.target as HTMLElement;
    const itemEl = target.closest<HTMLElement>("[data-id]");
    const item = itemEl ? state.byId.get(itemEl.dataset.id ?? "") : undefined;
    const msg = target.closest<HTMLElement>(".msg-action");
    if (msg && item && (item.kind === "user" || item.kind === "assistant" || (item.kind === "notice" && msg.dataset.action === "retry"))) {
        e.preventDefault();
        switch (msg.dataset.action) {
            case "copy":
                post({ type: "codeAction", action: "copy", code: item.text });
                break;
            case "retry":
                post({ type: "retry" });
                break;
            case "checkpoint":
                if (item.kind === "user" && item.index !== undefined) {
                    post({ type: "restoreCheckpoint", messageIndex: item.index });
                }
                break;
            case "edit":
                if (item.kind === "user" && item.index !== undefined) {
                    setEditing(item.index);
                    input.value = item.text;
                    chips = item.chips.map(reattach).filter((c): c is PendingChip => !!c);
                    renderChipBar();
                    autosize();
                    saveDraft();
                    input.focus();
                }
                break;
        }
        return;
    }
    const act = target.closest<HTMLElement>(".tool-action");
    if (act && item && item.kind === "tool") {
        e.preventDefault();
        const a = act.dataset.action;
        if (a === "accept" || a === "reject") {
            post({ type: "reviewDecision", toolCallId: item.callId, decision: a });
        } else if (a === "diff") {
            post({ type: "openDiff", toolCallId: item.callId, name: item.name, args: item.args });
        }
    }
});

// A code block's Copy / Insert: the code as written (its text, not the highlighting).
transcript.addEventListener("click", (e) => {
    const btn = (e.target as HTMLElement).closest<HTMLElement>(".code-action");
    const code = btn?.closest(".code-wrap")?.querySelector("pre code")?.textContent;
    if (btn && code !== undefined && code !== null) {
        e.preventDefault();
        const action = btn.dataset.action === "insert" ? "insert" : btn.dataset.action === "apply" ? "apply" : "copy";
        post({ type: "codeAction", action, code, lang: btn.closest<HTMLElement>(".code-wrap")?.dataset.lang || undefined });
    }
});

sendBtn.addEventListener("click", send);
stopBtn.addEventListener("click", () => post({ type: "abort" }));
modelSel.addEventListener("change", () => post({ type: "setModel", model: modelSel.value }));
modeSel.addEventListener("change", () => post({ type: "setMode", mode: modeSel.value as "auto" | "ask" | "readonly" }));

const saved = vscode.getState() as { draft?: string } | undefined;
if (saved?.draft) {
    input.value = saved.draft;
    autosize();
}
scheduler.schedule();
post({ type: "ready" });
