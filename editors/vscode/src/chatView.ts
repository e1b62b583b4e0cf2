// The chat (the side panel's WebviewView, or an editor tab's WebviewPanel
// for a chat of its own: Zot: New Chat in Editor Tab): forwards zot/event
// to the webview in batches, runs what the user types (prompts and slash
// commands).

import * as vscode from "vscode";
import type { AtItem, ChatToHost, HostToChat, NoticeLevel, ChatStatus, PendingChip } from "./webview/protocol";
import type * as ext from "./lsp_ext";
import { chatHtml } from "./html";
import { CHAT_ACTIONS } from "./problems";
import { OPEN_FILE_COMMAND } from "./webview/chat/files";

export const CHAT_VIEW_ID = "zot.chat";

/** What the chat needs from the rest of the extension. */
export interface ChatHost {
    /** Sends what the user typed, with its attachments (resendIndex: edit and resend that message); on failure it has told the chat (sendFailed). */
    send(text: string, attachments?: ext.Attachment[], resendIndex?: number): Promise<unknown>;
    /** The `@` completion list. */
    atItems(query: string): Promise<AtItem[]>;
    /** Completions of a slash command's argument (zot/command/complete; none on failure). */
    completeArgs(name: string, args: string): Promise<ext.CommandCompletion[]>;
    /** The chip an `@` entry becomes, or why it cannot be attached. */
    pickAt(item: AtItem): Promise<PendingChip | string>;
    /** Retry the last answer. */
    retry(): Promise<unknown>;
    /** A user message's "Restore checkpoint…" (the message's index). */
    restoreCheckpoint(messageIndex: number): Promise<void>;
    /** Accept / reject a tool call's review from its chat card. */
    reviewDecision(toolCallId: string, decision: "accept" | "reject"): Promise<void>;
    /** Show a tool call's edit as a diff. */
    openDiff(toolCallId: string, name: string, args: unknown): Promise<void>;
    /** The input's text as typed (kept across window reloads). */
    saveDraft(text: string): void;
    /** A code block's Copy / Insert at the cursor. */
    codeAction(action: "copy" | "insert" | "apply", code: string, lang?: string): Promise<void>;
    /** Which of these names (as written in the chat) are existing files. */
    resolveFiles(paths: string[]): Promise<Record<string, boolean>>;
    abort(): Promise<void>;
    setModel(model: string): Promise<void>;
    setMode(mode: ext.PermissionMode): Promise<void>;
    /** An MCP server's restart button. */
    restartMcp(name: string): Promise<void>;
    /** State for a fresh webview: status, commands, models, transcript. */
    snapshot(): Promise<HostToChat[]>;
}

/**
 * Events wait at most this long before going to the webview — except an
 * answer's first delta, which goes at once (with what is waiting before
 * it): that is the token the user waits for after Enter. What follows is
 * batched here (each postMessage crosses processes) and drawn at most once
 * per animation frame by the webview.
 */
const BATCH_MS = 16;
/** …or go at once when this many are waiting. */
const BATCH_MAX = 2000;

/** Where a chat is shown: the side panel's view or an editor tab. */
interface ChatSurface {
    readonly webview: vscode.Webview;
    readonly visible: boolean;
    readonly onDidDispose: vscode.Event<void>;
    /** Brings it into view. */
    reveal(): Thenable<unknown> | void;
}

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
    private view?: ChatSurface;
    private ready = false;
    private queue: HostToChat[] = [];
    private events: ext.ZotEvent[] = [];
    private timer?: NodeJS.Timeout;
    /** The current answer (since its assistant_start) had a delta: later ones are batched. */
    private answerHadDelta = false;
    /** Bumped by each send and draft message: a send's emptying of the draft yields to a draft that came after it. */
    private draftSeq = 0;
    private disposables: vscode.Disposable[] = [];
    /** The last widgets and MCP state: every new webview gets them. */
    private readonly sticky = new Map<HostToChat["type"], HostToChat>();

    constructor(
        private readonly extensionUri: vscode.Uri,
        private readonly host: ChatHost,
        private readonly log: (s: string) => void,
    ) {}

    get visible(): boolean {
        return !!this.view?.visible;
    }

    /** A webview is loaded and takes messages now (not queued for a later one). */
    get live(): boolean {
        return !!this.view && this.ready;
    }

    resolveWebviewView(view: vscode.WebviewView): void {
        this.attach({
            webview: view.webview,
            get visible() {
                return view.visible;
            },
            onDidDispose: view.onDidDispose,
            reveal: () => vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`),
        });
    }

    /** Shows this chat in an editor tab (a chat of its own). */
    attachPanel(panel: vscode.WebviewPanel): void {
        this.attach({
            webview: panel.webview,
            get visible() {
                return panel.visible;
            },
            onDidDispose: panel.onDidDispose,
            reveal: () => panel.reveal(),
        });
    }

    private attach(view: ChatSurface): void {
        this.view = view;
        this.ready = false;
        const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
        // Links may run one command: opening a file the chat names. A link
        // the model writes with any other command: URI is not rendered as one.
        view.webview.options = { enableScripts: true, localResourceRoots: [dist], enableCommandUris: [OPEN_FILE_COMMAND] };
        view.webview.html = chatHtml(view.webview, dist);
        this.disposables.push(
            view.webview.onDidReceiveMessage((m: ChatToHost) => this.onMessage(m)),
            view.onDidDispose(() => {
                if (this.view === view) {
                    this.view = undefined;
                    this.ready = false;
                }
            }),
        );
    }

    private async onMessage(m: ChatToHost): Promise<void> {
        try {
            switch (m.type) {
                case "ready": {
                    // The snapshot's transcript (zot/messages) has what the
                    // events held so far would show: drop those.
                    const held = this.events.length;
                    const snap = await this.host.snapshot();
                    this.events.splice(0, held);
                    this.ready = true;
                    for (const s of snap) {
                        void this.view?.webview.postMessage(s);
                    }
                    for (const s of this.sticky.values()) {
                        void this.view?.webview.postMessage(s);
                    }
                    this.flushQueue();
                    break;
                }
                case "send": {
                    const sent = this.host.send(m.text, m.attachments, m.resendIndex);
                    // The webview emptied its input as it sent: so goes
                    // the draft kept for it, once the request is on its
                    // way (a send that fails puts the text back, and the
                    // webview its draft).
                    const seq = ++this.draftSeq;
                    setImmediate(() => seq === this.draftSeq && this.host.saveDraft(""));
                    await sent;
                    break;
                }
                case "atQuery":
                    this.post({ type: "atItems", query: m.query, items: await this.host.atItems(m.query) });
                    break;
                case "argQuery":
                    this.post({ type: "argItems", name: m.name, args: m.args, completions: await this.host.completeArgs(m.name, m.args) });
                    break;
                case "pickAt": {
                    const chip = await this.host.pickAt(m.item);
                    if (typeof chip === "string") {
                        void vscode.window.showInformationMessage(`zot: cannot attach ${m.item.label}: ${chip}.`);
                    } else {
                        this.post({ type: "addChip", chip });
                    }
                    break;
                }
                case "retry":
                    await this.host.retry();
                    break;
                case "restoreCheckpoint":
                    await this.host.restoreCheckpoint(m.messageIndex);
                    break;
                case "reviewDecision":
                    await this.host.reviewDecision(m.toolCallId, m.decision);
                    break;
                case "openDiff":
                    await this.host.openDiff(m.toolCallId, m.name, m.args);
                    break;
                case "draft":
                    this.draftSeq++; // typed after a send: this one stays
                    this.host.saveDraft(m.text);
                    break;
                case "codeAction":
                    await this.host.codeAction(m.action, m.code, m.lang);
                    break;
                case "resolveFiles":
                    this.post({ type: "files", exists: await this.host.resolveFiles(m.paths.slice(0, 500)) });
                    break;
                case "action":
                    // Only the fixes the chat offers, whatever the webview asks.
                    if (CHAT_ACTIONS.has(m.action.command)) {
                        await vscode.commands.executeCommand(m.action.command, ...(m.action.args ?? []));
                    }
                    break;
                case "abort":
                    await this.host.abort();
                    break;
                case "setModel":
                    await this.host.setModel(m.model);
                    break;
                case "setMode":
                    await this.host.setMode(m.mode);
                    break;
                case "mcpRestart":
                    await this.host.restartMcp(m.name);
                    break;
            }
        } catch (e) {
            this.notice("error", e instanceof Error ? e.message : String(e));
        }
    }

    /** Sends a message to the webview (queued until it is ready). */
    post(m: HostToChat): void {
        if (m.type === "widgets" || m.type === "mcp") {
            // State, not history: the latest replaces the last, and a
            // webview made later gets it when ready.
            this.sticky.set(m.type, m);
            if (!this.view || !this.ready) {
                return;
            }
        }
        if (m.type !== "events") {
            this.flushEvents();
        }
        if (!this.view || !this.ready) {
            // Only the latest status matters; keep the queue bounded.
            if (m.type === "status" || m.type === "commands" || m.type === "models") {
                this.queue = this.queue.filter((q) => q.type !== m.type);
            }
            if (this.queue.length < 5000) {
                this.queue.push(m);
            }
            return;
        }
        void this.view.webview.postMessage(m);
    }

    private flushQueue(): void {
        const q = this.queue;
        this.queue = [];
        for (const m of q) {
            void this.view?.webview.postMessage(m);
        }
        this.flushEvents();
    }

    /** Forwards one zot/event; an answer's first delta at once, later ones batched (BATCH_MS). */
    event(ev: ext.ZotEvent): void {
        this.events.push(ev);
        if (ev.type === "assistant_start") {
            this.answerHadDelta = false;
        }
        if ((ev.type === "text_delta" || ev.type === "thinking_delta") && !this.answerHadDelta) {
            this.answerHadDelta = true;
            this.flushEvents(true);
        } else if (this.events.length >= BATCH_MAX) {
            this.flushEvents();
        } else if (!this.timer) {
            this.timer = setTimeout(() => this.flushEvents(), BATCH_MS);
        }
    }

    /** Posts the events waiting; firstDelta: they end with an answer's first delta (the webview draws them at once). */
    private flushEvents(firstDelta = false): void {
        if (this.timer) {
            clearTimeout(this.timer);
            this.timer = undefined;
        }
        if (this.events.length === 0) {
            return;
        }
        if (!this.view || !this.ready) {
            // Not shown yet: the transcript is fetched when it is (zot/messages);
            // keep only the current run's events.
            const lastDone = this.events.map((e) => e.type).lastIndexOf("done");
            this.events = lastDone >= 0 ? this.events.slice(lastDone + 1) : this.events;
            if (this.events.length > 50000) {
                this.events = this.events.slice(-50000);
            }
            return;
        }
        const batch = this.events;
        this.events = [];
        void this.view.webview.postMessage((firstDelta ? { type: "events", events: batch, firstDelta } : { type: "events", events: batch }) satisfies HostToChat);
    }

    /** Drops events held for a webview not shown yet (its snapshot has them). */
    dropHeldEvents(): void {
        if (!this.ready) {
            this.events = [];
        }
    }

    notice(level: NoticeLevel, text: string, source?: string): void {
        this.post({ type: "notice", level, text, source });
    }

    status(status: ChatStatus): void {
        this.post({ type: "status", status });
    }

    async reveal(focusInput = false): Promise<void> {
        await (this.view ? this.view.reveal() : vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`));
        if (focusInput) {
            this.post({ type: "focusInput" });
        }
    }

    dispose(): void {
        if (this.timer) {
            clearTimeout(this.timer);
        }
        for (const d of this.disposables) {
            d.dispose();
        }
    }
}
