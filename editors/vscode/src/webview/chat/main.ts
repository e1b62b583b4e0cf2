// The chat webview's entry: DOM wiring only. State lives in state.ts,
// HTML in render.ts; renders are coalesced on animation frames.

import type { ChatAction, ChatMcp, ChatToHost, ChatWidget, HostToChat } from "../protocol";
import { KnownFiles } from "./files";
import type { CommandInfo } from "../../lsp_ext";
import * as st from "./state";
import { ItemRenderer, mcpNeedsAttention, mcpSummary, renderCompletions, renderMcpServer, renderWidgets, statusText, usageTitle } from "./render";
import { completions } from "./slash";
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
    statusEl.textContent = statusText(s, running);
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

window.addEventListener("message", (e: MessageEvent<HostToChat>) => {
    const m = e.data;
    switch (m.type) {
        case "events":
            for (const ev of m.events) {
                st.applyEvent(state, ev);
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
        case "focusInput":
            input.focus();
            break;
        case "draft":
            if (!input.value && m.text) {
                input.value = m.text;
                autosize();
            }
            break;
        case "files":
            if (files.resolved(m.exists)) {
                st.rerenderAll(state); // names that are files become links
            }
            break;
        case "widgets":
            setWidgets(m.widgets);
            break;
        case "mcp":
            setMcp(m);
            break;
        case "sendFailed":
            // The message was not sent: its text is back in the input (before
            // anything typed since), the error shown once.
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

function updateCompletions(): void {
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
    if (!text.trim()) {
        return;
    }
    post({ type: "send", text });
    input.value = "";
    complSel = 0;
    updateCompletions();
    autosize();
    saveDraft();
}

input.addEventListener("keydown", (e) => {
    if (e.isComposing) {
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

input.addEventListener("input", () => {
    complSel = 0;
    updateCompletions();
    autosize();
    saveDraft();
});

complEl.addEventListener("mousedown", (e) => {
    const el = (e.target as HTMLElement).closest<HTMLElement>(".completion");
    if (el) {
        e.preventDefault();
        acceptCompletion(Number(el.dataset.index));
    }
});

// A code block's Copy / Insert: the code as written (its text, not the highlighting).
transcript.addEventListener("click", (e) => {
    const btn = (e.target as HTMLElement).closest<HTMLElement>(".code-action");
    const code = btn?.closest(".code-wrap")?.querySelector("pre code")?.textContent;
    if (btn && code !== undefined && code !== null) {
        e.preventDefault();
        post({ type: "codeAction", action: btn.dataset.action === "insert" ? "insert" : "copy", code });
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
