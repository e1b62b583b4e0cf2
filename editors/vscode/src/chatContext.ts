// One chat and the zot lsp behind it: the side panel's chat (extension.ts)
// and each editor-tab chat (chatTab.ts) are one of these. Each has its own
// zot lsp process, so its own session, run, queue, permission mode and
// model: a run in one never waits for another (docs/decisions.md, "Several
// chats").

import * as vscode from "vscode";
import * as ext from "./lsp_ext";
import { ZotClient, type ExtensionPackage } from "./client";
import { errorMessage } from "./errors";
import { ChatViewProvider, type ChatHost } from "./chatView";
import { PanelManager, type PanelSink } from "./panels";
import type { ReviewManager } from "./review";
import type { Approvals } from "./approval";
import { ZotState } from "./state";
import { installHandlers } from "./events";
import * as commands from "./commands";
import { codeAction, resolveFiles } from "./files";
import { Attachments } from "./attach";
import type { HostToChat, PendingChip } from "./webview/protocol";
import type { ChatInput, Ctx } from "./ctx";
import type { DraftStore } from "./draft";
import { restoreFromMessage } from "./checkpoints";

/** What every chat of the window shares. */
export interface ChatShared {
    readonly extensionUri: vscode.Uri;
    readonly output: vscode.LogOutputChannel;
    readonly pkg: ExtensionPackage;
    /** The API key from VS Code's secret storage. */
    readonly secretApiKey: () => Thenable<string | undefined>;
    /** Reviews and approvals: one diff editor and one question at a time for the window. */
    readonly reviews: ReviewManager;
    readonly approvals: Approvals;
}

export abstract class ChatContext implements Ctx, vscode.Disposable {
    readonly output: vscode.LogOutputChannel;
    readonly client: ZotClient;
    readonly chat: ChatViewProvider;
    readonly panels: PanelManager;
    readonly reviews: ReviewManager;
    readonly approvals: Approvals;
    readonly state = new ZotState();
    readonly attachments: Attachments;
    protected readonly disposables: vscode.Disposable[] = [];

    constructor(
        protected readonly shared: ChatShared,
        /** The chat input's draft. */
        protected readonly draft: DraftStore,
    ) {
        this.output = shared.output;
        this.reviews = shared.reviews;
        this.approvals = shared.approvals;
        this.client = new ZotClient(this.output, (c) => installHandlers(c, this), undefined, undefined, shared.pkg);
        this.client.secretApiKey = shared.secretApiKey;
        this.chat = new ChatViewProvider(shared.extensionUri, this.chatHost(), (s) => this.output.appendLine(s));
        this.panels = new PanelManager(shared.extensionUri, () => this.panelSink());
        this.attachments = new Attachments(
            async () => (this.client.state === "running" ? (await this.client.running().sendRequest(ext.mcpResources)).resources : []),
            (chip) => this.chat.post({ type: "activeFile", chip }),
        );
        this.disposables.push(
            this.client,
            this.chat,
            this.panels,
            this.attachments,
            this.client.onState(() => this.onClientState()),
            this.client.onStarted(() => void this.onStarted()),
        );
    }

    // ------------------------------------------------------------ Ctx

    /**
     * The chat's input box for extensions: the draft is its text (the
     * webview sends each change). A loaded webview changes its input (a
     * paste at its cursor) and sends the new draft; without one the draft
     * changes, and the webview shows it when it loads.
     */
    readonly chatInput: ChatInput = {
        get: () => this.draft.get(),
        set: (text, mode) => {
            if (this.chat.live) {
                if (mode === "replace") {
                    this.draft.set(text); // read back at once, before the webview's draft message
                }
                this.chat.post({ type: "setInput", text, paste: mode === "paste" });
                return;
            }
            this.draft.set(mode === "paste" ? this.draft.get() + text : text);
        },
    };

    abstract updateStatusBar(): void;

    /** A session with messages: the one to restore after a window reload (the side panel's chat). */
    rememberSession?(id: string | undefined): void;

    /** Runs once, after the first start, before the chat is filled. */
    protected async beforeFirstSnapshot(): Promise<void> {}

    selectionChip(): PendingChip | undefined {
        return this.attachments.selectionChip();
    }

    setCommands(cmds: ext.CommandInfo[]): void {
        this.state.commands = cmds;
        this.chat.post({ type: "commands", commands: cmds });
    }

    refresh(history: boolean): Promise<void> {
        return commands.refresh(this, history);
    }

    focusChat(): Promise<void> {
        return this.chat.reveal(true);
    }

    showOutput(): void {
        this.output.show(true);
    }

    // ------------------------------------------------------------ the client

    private panelSink(): PanelSink | undefined {
        const c = this.client.client;
        if (!c || this.client.state !== "running") {
            return undefined;
        }
        return {
            key: (p: ext.PanelKeyParams) => void c.sendNotification(ext.panelKey, p).catch((e) => this.output.appendLine(`[panel] key: ${errorMessage(e)}`)),
            closed: (p: ext.PanelCloseParams) => void c.sendNotification(ext.panelClosed, p).catch(() => undefined),
        };
    }

    private onClientState(): void {
        if (this.client.state !== "running") {
            this.state.clearRuns();
            this.panels.closeAll();
            this.reviews.abandonAll();
        }
        this.chat.status({ connection: this.client.state, message: this.client.problem });
        this.updateStatusBar();
    }

    private firstStart = true;

    /** Notices to show once the chat is filled (the side panel's restored conversation). */
    protected pendingNotice?: string;

    private async onStarted(): Promise<void> {
        const restarted = this.client.restarts > 0;
        if (!restarted && this.firstStart) {
            this.firstStart = false;
            await this.beforeFirstSnapshot();
        }
        const info = this.client.info;
        if (info) {
            this.state.fromServerInfo(info);
            this.setCommands(this.state.commands);
        }
        this.state.clearRuns();
        this.chat.dropHeldEvents();
        for (const m of await this.snapshot()) {
            this.chat.post(m);
        }
        if (this.pendingNotice) {
            this.chat.notice("info", this.pendingNotice);
            this.pendingNotice = undefined;
        }
        if (restarted) {
            this.chat.notice(
                "warn",
                `zot lsp stopped unexpectedly and was restarted${this.client.resumedSession ? "; the session was resumed" : ""}. A run in progress was lost.`,
            );
        }
        this.updateStatusBar();
    }

    /** Everything a fresh chat webview needs. */
    private async snapshot(): Promise<HostToChat[]> {
        const out: HostToChat[] = [];
        const c = this.client.state === "running" ? this.client.client : undefined;
        if (c) {
            const [state, models, messages, cmds, mcp] = await Promise.allSettled([
                c.sendRequest(ext.state),
                c.sendRequest(ext.models),
                c.sendRequest(ext.messages),
                c.sendRequest(ext.commands),
                c.sendRequest(ext.mcp),
            ]);
            if (mcp.status === "fulfilled") {
                // The view keeps it (sticky): posted, not returned.
                this.chat.post({ type: "mcp", servers: mcp.value.servers, disabled: mcp.value.disabled });
            }
            if (state.status === "fulfilled") {
                const s = state.value;
                this.client.resumeSession = s.session_id || undefined;
                if (s.message_count > 0) {
                    this.rememberSession?.(s.session_id);
                }
                this.state.fromState(s);
                if (s.runId && this.state.addRun(s.runId)) {
                    this.updateStatusBar();
                }
            }
            if (cmds.status === "fulfilled") {
                this.state.commands = cmds.value.commands;
            }
            if (models.status === "fulfilled") {
                out.push({ type: "models", models: models.value.models, current: models.value.current });
            }
            out.push({ type: "history", messages: messages.status === "fulfilled" ? messages.value.messages : [] });
            if (state.status === "fulfilled" && state.value.runId) {
                out.push({ type: "runStarted", runId: state.value.runId, queued: false });
            }
        }
        out.push({ type: "commands", commands: this.state.commands });
        out.push({ type: "status", status: this.state.chatStatus(this.client.connection) });
        out.push({ type: "draft", text: this.draft.get() });
        this.attachments.announceActive();
        return out;
    }

    private chatHost(): ChatHost {
        return {
            send: (text, attachments, resendIndex) => commands.send(this, text, undefined, attachments, resendIndex),
            atItems: (q) => this.attachments.items(q),
            completeArgs: async (name, args) => {
                if (this.client.state !== "running") {
                    return [];
                }
                try {
                    return (await this.client.running().sendRequest(ext.commandComplete, { name, args })).completions;
                } catch {
                    return []; // completion is best effort (an older zot has no zot/command/complete)
                }
            },
            pickAt: (item) => this.attachments.pick(item),
            retry: () => commands.retry(this),
            restoreCheckpoint: (index) => restoreFromMessage(this, index),
            reviewDecision: (id, d) => commands.reviewDecision(this, id, d),
            openDiff: (id, name, args) => commands.openCallDiff(this, id, name, args),
            resolveFiles: (paths) => resolveFiles(paths),
            codeAction: (action, code) => (action === "apply" ? commands.applyCode(this, code) : codeAction(action, code)),
            saveDraft: (text) => this.draft.set(text),
            abort: () => commands.abort(this),
            setModel: (m) => commands.setModel(this, m),
            setMode: (m) => commands.setMode(this, m),
            restartMcp: (name) => commands.restartMcp(this, name),
            snapshot: () => this.snapshot(),
        };
    }

    dispose(): void {
        for (const d of this.disposables.reverse()) {
            d.dispose();
        }
    }
}
