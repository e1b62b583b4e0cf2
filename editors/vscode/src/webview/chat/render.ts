// HTML of the chat's items and status, as strings. Pure (no DOM), so the
// rendering is tested in plain Node.

import type { CommandInfo, MCPServerStatus, Usage } from "../../lsp_ext";
import type { ChatMcp, ChatStatus, ChatWidget } from "../protocol";
import type { AssistantItem, Item, NoticeItem, ToolItem, UserItem } from "./state";
import { escapeHtml, renderMarkdown, StreamingMarkdown, type FileLinks } from "./markdown";
import { chipIcon, type Chip } from "./context";

/** A one-line summary of a tool call's arguments. */
export function summarizeArgs(name: string, args: unknown): string {
    if (args === null || typeof args !== "object") {
        return args === undefined || args === null ? "" : typeof args === "string" ? args : JSON.stringify(args);
    }
    const a = args as Record<string, unknown>;
    const pick = (k: string) => (typeof a[k] === "string" ? a[k] : undefined);
    let s: string | undefined;
    switch (name) {
        case "bash":
            s = pick("command");
            break;
        case "read":
        case "write":
        case "edit":
        case "ls":
            s = pick("path");
            if (name === "edit" && Array.isArray(a.edits)) {
                s = `${s ?? ""} (${a.edits.length} edit${a.edits.length === 1 ? "" : "s"})`;
            }
            break;
        case "grep":
        case "find":
            s = [pick("pattern"), pick("path")].filter(Boolean).join(" in ");
            break;
    }
    if (s === undefined) {
        const parts: string[] = [];
        for (const [k, v] of Object.entries(a)) {
            const vs = typeof v === "string" ? v : JSON.stringify(v);
            parts.push(`${k}=${vs}`);
        }
        s = parts.join(" ");
    }
    s = s.replace(/\s+/g, " ").trim();
    return s.length > 120 ? s.slice(0, 119) + "…" : s;
}

const toolIcons: Record<string, string> = {
    bash: "terminal",
    // The user's own commands (`!cmd`, `!!cmd`): their card is a tool card.
    "!": "terminal",
    "!!": "terminal",
    read: "file",
    write: "new-file",
    edit: "edit",
    ls: "list-tree",
    grep: "search",
    find: "search",
};

function codicon(name: string, extra = ""): string {
    return `<span class="codicon codicon-${name}${extra ? " " + extra : ""}" aria-hidden="true"></span>`;
}

/** The most diff lines a card shows (the rest is in Open diff). */
export const MAX_DIFF_LINES = 60;

function splitLines(s: string): string[] {
    const lines = s.split("\n");
    if (lines.length > 1 && lines[lines.length - 1] === "") {
        lines.pop();
    }
    return lines;
}

/**
 * The coloured diff of a write or edit call, from its arguments: each
 * edit's old lines removed, its new lines added (a write adds its content).
 * "" for other tools.
 */
export function renderToolDiff(name: string, args: unknown): string {
    if (args === null || typeof args !== "object") {
        return "";
    }
    const a = args as Record<string, unknown>;
    const rows: string[] = [];
    let shown = 0;
    let more = 0;
    const push = (cls: string, sign: string, line: string) => {
        if (shown >= MAX_DIFF_LINES) {
            more++;
            return;
        }
        shown++;
        rows.push(`<div class="diff-line diff-${cls}"><span class="diff-sign">${sign}</span>${escapeHtml(line) || " "}</div>`);
    };
    if (name === "edit" && Array.isArray(a.edits)) {
        a.edits.forEach((e: unknown, i: number) => {
            const ed = (e ?? {}) as Record<string, unknown>;
            if (i > 0) {
                push("sep", " ", "⋯");
            }
            for (const l of splitLines(typeof ed.oldText === "string" ? ed.oldText : "")) {
                push("del", "−", l);
            }
            for (const l of splitLines(typeof ed.newText === "string" ? ed.newText : "")) {
                push("add", "+", l);
            }
        });
    } else if (name === "write" && typeof a.content === "string") {
        for (const l of splitLines(a.content)) {
            push("add", "+", l);
        }
    } else {
        return "";
    }
    if (more) {
        rows.push(`<div class="diff-line diff-more">… ${more} more line${more === 1 ? "" : "s"} (Open diff shows all)</div>`);
    }
    return `<div class="tool-diff">${rows.join("")}</div>`;
}

/** Buttons of a write or edit card: Open diff, and Accept / Reject while its review waits. */
function toolActions(t: ToolItem): string {
    if (t.name !== "edit" && t.name !== "write") {
        return "";
    }
    let html = `<div class="tool-actions">`;
    if (t.reviewing) {
        html +=
            `<button class="tool-action primary" data-action="accept" title="Apply zot's change (as edited in the diff)">${codicon("check")} Accept</button>` +
            `<button class="tool-action" data-action="reject" title="Reject zot's change (you can say why)">${codicon("close")} Reject</button>`;
    }
    html += `<button class="tool-action" data-action="diff" title="Show the change in a diff editor">${codicon("diff")} Open diff</button></div>`;
    return html;
}

export function renderChips(chips: readonly Chip[]): string {
    if (!chips.length) {
        return "";
    }
    return (
        `<div class="msg-chips">` +
        chips
            .map(
                (c) =>
                    `<span class="chip chip-${escapeHtml(c.kind)}" title="${escapeHtml([c.kind, c.path ?? c.uri ?? "", c.lines ? "lines " + c.lines : ""].filter(Boolean).join(" · "))}">${codicon(
                        chipIcon(c.kind),
                    )}<span class="chip-label">${escapeHtml(c.label)}</span></span>`,
            )
            .join("") +
        `</div>`
    );
}

function msgAction(action: string, icon: string, label: string): string {
    return `<button class="msg-action" data-action="${action}" title="${escapeHtml(label)}" aria-label="${escapeHtml(label)}">${codicon(icon)}<span class="msg-action-label">${escapeHtml(label)}</span></button>`;
}

export function renderUser(u: UserItem, files?: FileLinks): string {
    const actions =
        `<div class="msg-actions">` +
        msgAction("copy", "copy", "Copy") +
        (u.index !== undefined ? msgAction("edit", "edit", "Edit") : "") +
        (u.index !== undefined ? msgAction("checkpoint", "history", "Restore checkpoint…") : "") +
        `</div>`;
    return renderChips(u.chips) + (u.text ? `<div class="md">${renderMarkdown(u.text, files)}</div>` : "") + actions;
}

export function renderTool(t: ToolItem): string {
    const icon = toolIcons[t.name] ?? "tools";
    const state =
        t.status === "running"
            ? codicon("loading", "codicon-modifier-spin")
            : t.status === "pending"
              ? codicon("clock")
              : t.status === "error"
              ? codicon("error")
              : codicon("check");
    const summary = summarizeArgs(t.name, t.args);
    let body = renderToolDiff(t.name, t.args) + toolActions(t);
    if (t.progress && t.status === "running") {
        body += `<pre class="tool-progress">${escapeHtml(t.progress)}</pre>`;
    }
    if (t.result !== undefined) {
        body += `<details class="tool-result-details" data-key="result"${t.status === "error" ? " open" : ""}><summary>${
            t.status === "error" ? "Error" : "Result"
        }</summary><pre class="tool-result">${escapeHtml(t.result)}</pre></details>`;
    }
    return (
        `<div class="tool-head">${codicon(icon)}<span class="tool-name">${escapeHtml(t.name)}</span>` +
        `<span class="tool-args" title="${escapeHtml(summary)}">${escapeHtml(summary)}</span>` +
        `<span class="tool-state">${state}</span></div>${body}`
    );
}

/**
 * The model's reasoning as a collapsed section above the answer. Its
 * data-key keeps it open across re-renders once the user opens it, so it
 * streams while open. "Thinking…" while the model still thinks (no answer
 * yet), "Thinking" after.
 */
export function renderThinking(it: AssistantItem): string {
    if (!it.thinking) {
        return "";
    }
    const active = it.streaming && !it.text;
    const label = active ? "Thinking…" : "Thinking";
    return (
        `<details class="thinking${active ? " thinking-active" : ""}" data-key="thinking"><summary>${codicon("lightbulb")}` +
        `<span class="thinking-label">${label}</span></summary><div class="thinking-text">${escapeHtml(it.thinking)}</div></details>`
    );
}

/** The element of an item as setRetry needs it (a DOM element in the view). */
export interface RetryHost {
    querySelector(selector: string): { remove(): void; insertAdjacentHTML(where: "beforeend", html: string): void } | null;
}

/**
 * Gives the drawn item el Retry, or takes it away, without drawing the item
 * again (a new prompt takes Retry from the previous answer: re-rendering
 * that answer's markdown cost the renderer a whole answer's work at Enter).
 * False when el has no action row to put it in: draw the item.
 */
export function setRetry(el: RetryHost, on: boolean): boolean {
    const btn = el.querySelector(':scope > .msg-actions > [data-action="retry"]');
    if (!on) {
        btn?.remove();
        return true;
    }
    if (btn) {
        return true;
    }
    const actions = el.querySelector(":scope > .msg-actions");
    if (!actions) {
        return false;
    }
    actions.insertAdjacentHTML("beforeend", msgAction("retry", "refresh", "Retry"));
    return true;
}

export function renderNotice(n: NoticeItem, files?: FileLinks, retry?: boolean): string {
    const icon = n.level === "error" ? "error" : n.level === "warn" ? "warning" : n.level === "display" ? "terminal" : "info";
    const src = n.source ? `<span class="notice-source">${escapeHtml(n.source)}</span> ` : "";
    const text = n.level === "display" ? `<pre>${escapeHtml(n.text)}</pre>` : `<div class="md">${renderMarkdown(n.text, files)}</div>`;
    const actions = retry ? `<div class="msg-actions">${msgAction("retry", "refresh", "Retry")}</div>` : "";
    return `${codicon(icon)}<div class="notice-body">${src}${text}${actions}</div>`;
}

/** Renders items; keeps a streaming renderer per assistant item. */
export class ItemRenderer {
    private streams = new Map<string, StreamingMarkdown>();

    /** files: which file names become links (none without it). */
    constructor(private readonly files?: FileLinks) {}

    /** The class attribute of an item's element. */
    className(it: Item): string {
        switch (it.kind) {
            case "user":
                return "item user";
            case "assistant":
                return "item assistant" + (it.streaming ? " streaming" : "");
            case "tool":
                return `item tool tool-${it.status}`;
            case "notice":
                return `item notice notice-${it.level}`;
        }
    }

    html(it: Item): string {
        switch (it.kind) {
            case "user":
                return renderUser(it, this.files);
            case "assistant":
                return this.assistant(it);
            case "tool":
                return renderTool(it);
            case "notice":
                return renderNotice(it, this.files, this.retryable === it.id);
        }
    }

    /** The last answer, or the error that ended the last run, gets Retry (set by the view before rendering). */
    retryable?: string;

    private assistant(it: AssistantItem): string {
        let actions = "";
        if (!it.streaming && it.text) {
            actions = `<div class="msg-actions">` + msgAction("copy", "copy", "Copy") + (this.retryable === it.id ? msgAction("retry", "refresh", "Retry") : "") + `</div>`;
        }
        return renderThinking(it) + `<div class="md">${this.answer(it)}</div>` + actions;
    }

    private answer(it: AssistantItem): string {
        let html: string;
        if (it.streaming) {
            let s = this.streams.get(it.id);
            if (!s) {
                s = new StreamingMarkdown(this.files);
                this.streams.set(it.id, s);
            }
            html = s.render(it.text);
        } else {
            this.streams.delete(it.id);
            html = renderMarkdown(it.text, this.files);
        }
        return html;
    }

    reset(): void {
        this.streams.clear();
    }
}

function compact(n: number): string {
    if (n >= 1_000_000) {
        return (n / 1_000_000).toFixed(1) + "M";
    }
    if (n >= 10_000) {
        return Math.round(n / 1000) + "k";
    }
    if (n >= 1000) {
        return (n / 1000).toFixed(1) + "k";
    }
    return String(n);
}

/** "↑ 1.2k ↓ 345 · $0.0123": tokens in and out, and the cost. */
export function formatUsage(u: Usage | undefined): string {
    if (!u) {
        return "";
    }
    const input = u.input + u.cache_read + u.cache_write;
    if (input === 0 && u.output === 0) {
        return "";
    }
    const cost = u.cost_usd >= 1 ? u.cost_usd.toFixed(2) : u.cost_usd.toFixed(4);
    return `↑ ${compact(input)} ↓ ${compact(u.output)} · $${cost}`;
}

export function usageTitle(u: Usage | undefined): string {
    if (!u) {
        return "";
    }
    return `input ${u.input}, output ${u.output}, cache read ${u.cache_read}, cache write ${u.cache_write}, cost $${u.cost_usd.toFixed(6)}`;
}

/** How full the model's context window is: "ctx 12% of 200k" (empty when unknown). */
export function formatContext(used: number | undefined, window: number | undefined): string {
    if (!used || !window) {
        return "";
    }
    return `ctx ${Math.min(100, Math.round((used / window) * 100))}% of ${compact(window)}`;
}

/** The status line under the input; window: the current model's context window. */
export function statusText(st: ChatStatus, running: boolean, window?: number): string {
    const parts: string[] = [];
    if (st.connection === "starting") {
        parts.push("starting zot…");
    } else if (st.connection === "stopped") {
        parts.push("zot stopped");
    } else if (st.connection === "error") {
        parts.push("zot error");
    } else if (running) {
        parts.push("working…");
    }
    if (st.permissionMode && st.permissionMode !== "auto") {
        parts.push(`mode: ${st.permissionMode}`);
    }
    const u = formatUsage(st.usage);
    if (u) {
        parts.push(u);
    }
    const c = formatContext(st.contextUsed, window);
    if (c) {
        parts.push(c);
    }
    return parts.join(" · ");
}

/** The slash-completion list's HTML. */
export function renderCompletions(items: CommandInfo[], selected: number): string {
    return items
        .map(
            (c, i) =>
                `<div class="completion${i === selected ? " selected" : ""}" role="option" data-index="${i}" aria-selected="${
                    i === selected
                }"><span class="completion-name">/${escapeHtml(c.name)}</span><span class="completion-desc">${escapeHtml(
                    c.description,
                )}${c.source === "extension" ? ` <span class="completion-src">${escapeHtml(c.extension ?? "extension")}</span>` : ""}</span></div>`,
        )
        .join("");
}

/** The extensions' widgets (zot/ui/widget) above the input: a block of lines per (extension, key). */
export function renderWidgets(widgets: ChatWidget[]): string {
    return widgets
        .filter((w) => w.lines.length > 0)
        .map(
            (w) =>
                `<div class="widget" data-extension="${escapeHtml(w.extension)}" data-key="${escapeHtml(w.key)}" title="${escapeHtml(w.extension)}">` +
                w.lines.map((l) => `<div class="widget-line">${escapeHtml(l) || "&nbsp;"}</div>`).join("") +
                `</div>`,
        )
        .join("");
}

const MCP_ICONS: Record<string, string> = { ready: "pass", starting: "loading", restarting: "loading", failed: "error", invalid: "error" };

/** One MCP server's line in the Zot view: name, state, tool count, last error, a restart button. */
export function renderMcpServer(s: MCPServerStatus): string {
    const icon = MCP_ICONS[s.state] ?? "circle-slash";
    const spin = s.state === "starting" || s.state === "restarting" ? "codicon-modifier-spin" : "";
    const n = s.tools.length;
    const err = s.lastError && s.state !== "ready" ? `<span class="mcp-error" title="${escapeHtml(s.lastError)}">${escapeHtml(s.lastError)}</span>` : "";
    return (
        `<div class="mcp-server mcp-${escapeHtml(s.state)}" role="listitem" data-name="${escapeHtml(s.name)}">` +
        `${codicon(icon, spin)}<span class="mcp-name">${escapeHtml(s.name)}</span>` +
        `<span class="mcp-state">${escapeHtml(s.state)} · ${n} tool${n === 1 ? "" : "s"}</span>${err}` +
        `<button class="icon mcp-restart" data-name="${escapeHtml(s.name)}" title="Restart ${escapeHtml(s.name)}" aria-label="Restart ${escapeHtml(s.name)}">${codicon("debug-restart")}</button>` +
        `</div>`
    );
}

/** The summary line of the MCP section ("" when there is nothing to show). */
export function mcpSummary(m: ChatMcp): string {
    if (m.disabled || m.servers.length === 0) {
        return "";
    }
    const by = new Map<string, number>();
    for (const s of m.servers) {
        by.set(s.state, (by.get(s.state) ?? 0) + 1);
    }
    const order = ["ready", "starting", "restarting", "failed", "invalid", "untrusted", "stopped"];
    const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
    const states = [...by.keys()].sort((a, b) => rank(a) - rank(b));
    return `MCP: ${states.map((k) => `${by.get(k)} ${k}`).join(", ")}`;
}

/** Whether the MCP section should be open: a server needs attention. */
export function mcpNeedsAttention(m: ChatMcp): boolean {
    return m.servers.some((s) => s.state === "failed" || s.state === "invalid" || s.state === "untrusted");
}
