// The chat's state: the transcript as a list of items, built from zot/event
// notifications and zot/messages, plus the run and status. Pure: no DOM,
// no 'vscode'. The view renders the items marked dirty on the next frame.

import type { CommandInfo, Model, Usage, UserBashEnd, WireContent, WireMessage, ZotEvent } from "../../lsp_ext";
import type { ChatStatus, NoticeLevel } from "../protocol";
import { splitUserContent, type Chip } from "./context";

export interface UserItem {
    kind: "user";
    id: string;
    text: string;
    /** The attachments sent with it, shown as chips. */
    chips: Chip[];
    /** Its index in zot's transcript (zot/resend); undefined when unknown. */
    index?: number;
}
export interface AssistantItem {
    kind: "assistant";
    id: string;
    text: string;
    /** The model's reasoning before (and between) its answer; "" for none. */
    thinking: string;
    streaming: boolean;
}
/** pending: announced, waiting for the calls before it (zot announces
 * every call of an answer before the first runs). */
export type ToolStatus = "pending" | "running" | "done" | "error";
export interface ToolItem {
    kind: "tool";
    id: string;
    callId: string;
    name: string;
    args: unknown;
    /** Live output (tool_progress), the tail only. */
    progress: string;
    result?: string;
    status: ToolStatus;
    /** Its edit waits for the user's review (Accept / Reject in the card). */
    reviewing?: boolean;
}
export interface NoticeItem {
    kind: "notice";
    id: string;
    level: NoticeLevel;
    text: string;
    source?: string;
    /** The error that ended a run (it offers Retry while it is the last thing said). */
    run?: boolean;
}
export type Item = UserItem | AssistantItem | ToolItem | NoticeItem;

/** The most tool output a card keeps (its tail). */
export const MAX_PROGRESS = 8000;
/** The most result text a card keeps. */
export const MAX_RESULT = 20000;

export interface ChatState {
    items: Item[];
    byId: Map<string, Item>;
    /** Items changed since the last render. */
    dirty: Set<string>;
    /** The list itself changed beyond appends (clear, history). */
    reset: boolean;
    /** Cached renders are stale (rerenderAll). */
    redraw: boolean;
    /** Runs accepted and not done yet (the current one first). */
    runs: string[];
    /** Runs already done: their zot/prompt answer may arrive after their events. */
    finished: Set<string>;
    /** The streaming assistant item of the current turn. */
    current?: AssistantItem;
    /** What the last truncate dropped and where, until its run is accepted (untruncate). */
    cut?: { at: number; items: Item[] };
    status: ChatStatus;
    statusDirty: boolean;
    commands: CommandInfo[];
    models: Model[];
    usage: Usage;
    seq: number;
}

export function emptyUsage(): Usage {
    return { input: 0, output: 0, cache_read: 0, cache_write: 0, cost_usd: 0 };
}

export function createState(): ChatState {
    return {
        items: [],
        byId: new Map(),
        dirty: new Set(),
        reset: true,
        redraw: false,
        runs: [],
        finished: new Set(),
        status: {},
        statusDirty: true,
        commands: [],
        models: [],
        usage: emptyUsage(),
        seq: 0,
    };
}

export function isRunning(s: ChatState): boolean {
    return s.runs.length > 0;
}

function nextId(s: ChatState, prefix: string): string {
    s.seq++;
    return `${prefix}-${s.seq}`;
}

function add<T extends Item>(s: ChatState, item: T): T {
    s.items.push(item);
    s.byId.set(item.id, item);
    s.dirty.add(item.id);
    return item;
}

function touch(s: ChatState, item: Item): void {
    s.dirty.add(item.id);
}

export function addNotice(s: ChatState, level: NoticeLevel, text: string, source?: string): NoticeItem {
    return add(s, { kind: "notice", id: nextId(s, "n"), level, text, source });
}

export function addUser(s: ChatState, text: string, chips: Chip[] = [], index?: number): UserItem {
    return add(s, { kind: "user", id: nextId(s, "u"), text, chips, index });
}

/** The last item the user sent. */
export function lastUser(s: ChatState): UserItem | undefined {
    for (let i = s.items.length - 1; i >= 0; i--) {
        const it = s.items[i];
        if (it.kind === "user") {
            return it;
        }
    }
    return undefined;
}

/** The last answer (what Retry replaces), if it follows the last prompt. */
export function lastAssistant(s: ChatState): AssistantItem | undefined {
    for (let i = s.items.length - 1; i >= 0; i--) {
        const it = s.items[i];
        if (it.kind === "assistant") {
            return it;
        }
        if (it.kind === "user") {
            return undefined;
        }
    }
    return undefined;
}

/**
 * The item that offers Retry: the error that ended the last run (a
 * provider unreachable, a rate limit), else the last answer; none once the
 * user wrote again.
 */
export function retryItem(s: ChatState): string | undefined {
    for (let i = s.items.length - 1; i >= 0; i--) {
        const it = s.items[i];
        if ((it.kind === "notice" && it.run) || it.kind === "assistant") {
            return it.id;
        }
        if (it.kind === "user") {
            return undefined;
        }
    }
    return undefined;
}

/**
 * A retry or resend is being sent: the user message of that index (the last
 * one without it) and everything after it leave the transcript; the run's
 * user_message shows the prompt again. Kept until the run is accepted, in
 * case zot refuses (untruncate).
 */
export function truncate(s: ChatState, messageIndex?: number): boolean {
    let at = -1;
    for (let i = s.items.length - 1; i >= 0; i--) {
        const it = s.items[i];
        if (it.kind === "user" && (messageIndex === undefined || it.index === messageIndex)) {
            at = i;
            break;
        }
    }
    if (at < 0) {
        return false;
    }
    const dropped = s.items.slice(at);
    for (const it of dropped) {
        s.byId.delete(it.id);
    }
    s.items = s.items.slice(0, at);
    s.cut = { at, items: dropped };
    s.current = undefined;
    s.reset = true;
    return true;
}

/** zot refused the retry or resend: what the last truncate dropped is back where it was. */
export function untruncate(s: ChatState): void {
    const cut = s.cut;
    if (!cut) {
        return;
    }
    s.cut = undefined;
    const at = Math.min(cut.at, s.items.length);
    s.items = [...s.items.slice(0, at), ...cut.items, ...s.items.slice(at)];
    for (const it of cut.items) {
        s.byId.set(it.id, it);
    }
    s.reset = true;
}

/** A review of a tool call's edit started (pending) or ended. */
export function setReviewing(s: ChatState, callId: string, pending: boolean): void {
    const t = toolItem(s, callId);
    if (t && !!t.reviewing !== pending) {
        t.reviewing = pending;
        touch(s, t);
    }
}

export function clear(s: ChatState): void {
    s.cut = undefined;
    s.items = [];
    s.byId.clear();
    s.dirty.clear();
    s.reset = true;
    s.current = undefined;
}

/** Every item is drawn again, in place (which names are links changed). */
export function rerenderAll(s: ChatState): void {
    for (const it of s.items) {
        s.dirty.add(it.id);
    }
    s.redraw = true;
}

export function setStatus(s: ChatState, st: ChatStatus): void {
    s.status = { ...s.status, ...st };
    if (st.usage) {
        s.usage = st.usage;
    }
    if (st.connection && st.connection !== "running" && s.runs.length > 0) {
        // zot is gone (crashed or stopped): none of its runs will send
        // "done". After a restart the snapshot re-announces a live run.
        endStreaming(s);
        s.runs = [];
        markRunningToolsStopped(s);
    }
    s.statusDirty = true;
}

export function runStarted(s: ChatState, runId: string, queued: boolean, ahead?: number): void {
    s.cut = undefined; // a truncate's run was accepted: its cut stays
    if (s.finished.has(runId)) {
        return; // its events (done included) came before the answer
    }
    if (!s.runs.includes(runId)) {
        s.runs.push(runId);
    }
    if (queued) {
        addNotice(s, "info", `Queued: starts after ${ahead ?? 1} other run${(ahead ?? 1) === 1 ? "" : "s"}.`);
    }
    s.statusDirty = true;
}

/** The thinking of content blocks (redacted ones are counted, not shown). */
export function thinkingOf(content: WireContent[] | undefined): string {
    const parts: string[] = [];
    for (const c of content ?? []) {
        if (c.type === "thinking") {
            parts.push(c.redacted ? "(redacted by the provider)" : c.text ?? "");
        }
    }
    return parts.filter(Boolean).join("\n\n");
}

/** The text of content blocks. */
export function textOf(content: WireContent[] | undefined): string {
    if (!content) {
        return "";
    }
    const parts: string[] = [];
    for (const c of content) {
        if (c.type === "text" && c.text) {
            parts.push(c.text);
        } else if (c.type === "image") {
            parts.push(`[image ${c.mime_type ?? ""}${c.bytes ? `, ${c.bytes} bytes` : ""}]`);
        }
    }
    return parts.join("\n");
}

function clipTail(s: string, max: number): string {
    return s.length > max ? "…" + s.slice(s.length - max) : s;
}

function clipHead(s: string, max: number): string {
    return s.length > max ? s.slice(0, max) + "\n… (" + (s.length - max) + " more characters)" : s;
}

function toolItem(s: ChatState, callId: string): ToolItem | undefined {
    const it = s.byId.get("t-" + callId);
    return it && it.kind === "tool" ? it : undefined;
}

function endStreaming(s: ChatState): void {
    if (s.current) {
        s.current.streaming = false;
        touch(s, s.current);
        s.current = undefined;
    }
}

/** Applies one zot/event. */
export function applyEvent(s: ChatState, ev: ZotEvent): void {
    if (ev.runId && ev.type !== "done" && !s.runs.includes(ev.runId) && !s.finished.has(ev.runId)) {
        s.runs.push(ev.runId);
        s.statusDirty = true;
    }
    switch (ev.type) {
        case "user_message": {
            const { text, chips } = splitUserContent(ev.content);
            addUser(s, text, chips, ev.messageIndex);
            break;
        }
        case "assistant_start":
            endStreaming(s);
            s.current = add(s, { kind: "assistant", id: nextId(s, "a"), text: "", thinking: "", streaming: true });
            break;
        case "thinking_delta":
            if (!s.current) {
                s.current = add(s, { kind: "assistant", id: nextId(s, "a"), text: "", thinking: "", streaming: true });
            }
            s.current.thinking += ev.text;
            touch(s, s.current);
            break;
        case "text_delta":
            if (!s.current) {
                s.current = add(s, { kind: "assistant", id: nextId(s, "a"), text: "", thinking: "", streaming: true });
            }
            s.current.text += ev.delta;
            touch(s, s.current);
            break;
        case "assistant_message": {
            const text = textOf(ev.content.filter((c) => c.type === "text"));
            const thinking = thinkingOf(ev.content);
            if (s.current) {
                s.current.text = text;
                s.current.thinking = thinking;
                endStreaming(s);
            } else if (text || thinking) {
                add(s, { kind: "assistant", id: nextId(s, "a"), text, thinking, streaming: false });
            }
            break;
        }
        case "tool_call":
            endStreaming(s);
            if (!toolItem(s, ev.id)) {
                // Calls run in order: one announced while another has not
                // finished waits for it.
                const waiting = s.items.some((i) => i.kind === "tool" && (i.status === "running" || i.status === "pending"));
                add(s, { kind: "tool", id: "t-" + ev.id, callId: ev.id, name: ev.name, args: ev.args, progress: "", status: waiting ? "pending" : "running" });
            }
            break;
        case "tool_progress": {
            const t = toolItem(s, ev.id);
            if (t) {
                t.progress = clipTail(t.progress + ev.text, MAX_PROGRESS);
                touch(s, t);
            }
            break;
        }
        case "tool_result": {
            let t = toolItem(s, ev.id);
            if (!t) {
                t = add(s, { kind: "tool", id: "t-" + ev.id, callId: ev.id, name: "tool", args: {}, progress: "", status: "running" });
            }
            t.result = clipHead(textOf(ev.content), MAX_RESULT);
            t.status = ev.is_error ? "error" : "done";
            t.reviewing = false;
            touch(s, t);
            // The next announced call runs now.
            const next = s.items.find((i) => i.kind === "tool" && i.status === "pending") as ToolItem | undefined;
            if (next && !s.items.some((i) => i.kind === "tool" && i.status === "running")) {
                next.status = "running";
                touch(s, next);
            }
            break;
        }
        case "usage":
            s.usage = ev.cumulative;
            s.status = { ...s.status, usage: ev.cumulative };
            s.statusDirty = true;
            break;
        case "turn_end":
            endStreaming(s);
            if (ev.stop === "aborted") {
                markRunningToolsStopped(s);
                addNotice(s, "warn", "Stopped.");
            } else if (ev.stop === "length") {
                addNotice(s, "warn", "The answer hit the model's output limit.");
            }
            break;
        case "error":
            addNotice(s, "error", ev.message).run = true;
            break;
        case "compact_done":
            // The transcript was renumbered: older messages cannot be resent.
            for (const it of s.items) {
                if (it.kind === "user" && it.index !== undefined) {
                    it.index = undefined;
                    touch(s, it);
                }
            }
            addNotice(s, "info", ev.summary ? "Compacted the conversation:\n\n" + ev.summary : "Nothing to compact.");
            break;
        case "done":
            endStreaming(s);
            markRunningToolsStopped(s);
            s.runs = s.runs.filter((r) => r !== ev.runId);
            s.finished.add(ev.runId);
            if (s.finished.size > 1000) {
                s.finished = new Set([...s.finished].slice(-500));
            }
            s.statusDirty = true;
            break;
        case "user_bash_start":
            // The user's own command's card: a tool card named as typed.
            endStreaming(s);
            add(s, { kind: "tool", id: "t-ub-" + ev.runId, callId: "ub-" + ev.runId, name: ev.exclude_from_context ? "!!" : "!", args: ev.command, progress: "", status: "running" });
            break;
        case "user_bash_output": {
            const t = toolItem(s, "ub-" + ev.runId);
            if (t) {
                t.progress = clipTail(t.progress + ev.text, MAX_PROGRESS);
                touch(s, t);
            }
            break;
        }
        case "user_bash": {
            const t = toolItem(s, "ub-" + ev.runId);
            if (t) {
                t.result = clipHead(userBashText(ev), MAX_RESULT);
                t.status = ev.blocked || ev.cancelled || ev.exit_code !== 0 ? "error" : "done";
                touch(s, t);
            }
            break;
        }
        case "turn_start":
            break;
    }
}

/** What a user's command's card shows when it ends. */
function userBashText(ev: UserBashEnd): string {
    if (ev.blocked) {
        return `blocked${ev.extension ? " by " + ev.extension : ""}: ${ev.reason ?? ""}`;
    }
    const parts = [ev.output || "(no output)"];
    if (ev.note) {
        parts.push(ev.note);
    }
    if (ev.cancelled) {
        parts.push("stopped");
    } else if (ev.exit_code !== 0) {
        parts.push(`exit code ${ev.exit_code}`);
    }
    if (ev.extension) {
        parts.push(`(run by ${ev.extension})`);
    }
    return parts.join("\n\n");
}

function markRunningToolsStopped(s: ChatState): void {
    if (isRunning(s) && s.runs.length > 1) {
        return; // another run is queued: its tools are not ours
    }
    for (const it of s.items) {
        if (it.kind === "tool" && (it.status === "running" || it.status === "pending")) {
            it.status = "error";
            it.result = it.result ?? "stopped";
            touch(s, it);
        }
    }
}

/** Replaces the transcript with messages (zot/messages). */
export function loadHistory(s: ChatState, messages: WireMessage[]): void {
    clear(s);
    for (const [index, m] of messages.entries()) {
        if (m.role === "user") {
            const { text, chips } = splitUserContent(m.content);
            if (text || chips.length) {
                addUser(s, text, chips, index);
            }
            for (const c of m.content) {
                if (c.type === "tool_result" && c.call_id) {
                    const t = toolItem(s, c.call_id);
                    if (t) {
                        t.result = clipHead(textOf(c.content), MAX_RESULT);
                        t.status = c.is_error ? "error" : "done";
                    }
                }
            }
        } else if (m.role === "assistant") {
            const text = textOf(m.content);
            const thinking = thinkingOf(m.content);
            if (text || thinking) {
                add(s, { kind: "assistant", id: nextId(s, "a"), text, thinking, streaming: false });
            }
            for (const c of m.content) {
                if (c.type === "tool_call" && c.id) {
                    add(s, { kind: "tool", id: "t-" + c.id, callId: c.id, name: c.name ?? "tool", args: c.args ?? {}, progress: "", status: "done" });
                }
            }
        }
    }
}

/** Takes the dirty set for rendering. */
export function takeDirty(s: ChatState): { reset: boolean; redraw: boolean; dirty: Item[]; status: boolean } {
    const dirty: Item[] = [];
    for (const id of s.dirty) {
        const it = s.byId.get(id);
        if (it) {
            dirty.push(it);
        }
    }
    const out = { reset: s.reset, redraw: s.redraw, dirty, status: s.statusDirty };
    s.dirty.clear();
    s.reset = false;
    s.redraw = false;
    s.statusDirty = false;
    return out;
}
