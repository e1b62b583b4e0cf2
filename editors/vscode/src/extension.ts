// zot for VS Code: starts `zot lsp` (vscode-languageclient) and wires its
// zot/* extensions (lsp_ext.ts) to the chat view, commands, review diffs,
// extension panels, the status bar and the output channel.
//
// The parts, as in rust-analyzer's client: extension.ts (activation and
// the context, ctx.ts), state.ts (what the extension knows between
// messages), events.ts (what the server sends), commands.ts (what the
// user asks), client.ts (the language client's life).

import * as vscode from "vscode";
import * as ext from "./lsp_ext";
import { ZotClient } from "./client";
import { errorMessage } from "./errors";
import { CHAT_VIEW_ID, ChatViewProvider, type ChatHost } from "./chatView";
import { PanelManager, type PanelSink } from "./panels";
import { ReviewManager } from "./review";
import { Approvals } from "./approval";
import { restartSettings } from "./config";
import { ZotState } from "./state";
import { installHandlers } from "./events";
import * as commands from "./commands";
import { codeAction, resolveFiles } from "./files";
import { Attachments } from "./attach";
import type { PendingChip } from "./webview/protocol";
import type { Ctx } from "./ctx";
import { DraftStore } from "./draft";
import { registerCheckpointContent, restoreFromMessage } from "./checkpoints";
import type { HostToChat } from "./webview/protocol";

let zot: Zot | undefined;

/** workspaceState: the session of this workspace's last conversation. */
const LAST_SESSION = "zot.lastSession";

export function activate(context: vscode.ExtensionContext): Zot {
    zot = new Zot(context);
    context.subscriptions.push(zot);
    void zot.client.start();
    void offerToMoveApiKey(context, zot);
    return zot;
}

/** Where Zot: Set API Key keeps the key (VS Code's SecretStorage). */
const SECRET_API_KEY = "zot.apiKey";

/** Zot: Set API Key: into the secret storage (empty removes it), then restart. */
async function setApiKey(context: vscode.ExtensionContext, z: Zot): Promise<void> {
    const key = await vscode.window.showInputBox({
        title: "zot: API key",
        prompt: "Kept in VS Code's secret storage, never in settings.json. Leave empty to remove the stored key.",
        password: true,
        ignoreFocusOut: true,
    });
    if (key === undefined) {
        return;
    }
    if (key.trim()) {
        await context.secrets.store(SECRET_API_KEY, key.trim());
    } else {
        await context.secrets.delete(SECRET_API_KEY);
    }
    await z.client.restart();
}

/** The plain-text zot.apiKey setting is deprecated: offer once to move it. */
async function offerToMoveApiKey(context: vscode.ExtensionContext, z: Zot): Promise<void> {
    const OFFERED = "zot.apiKeyMoveOffered";
    const inspect = vscode.workspace.getConfiguration("zot").inspect<string>("apiKey");
    const plain = (inspect?.globalValue ?? "").trim();
    if (!plain || context.globalState.get<boolean>(OFFERED)) {
        return;
    }
    await context.globalState.update(OFFERED, true);
    const a = await vscode.window.showInformationMessage(
        "zot: your API key is in settings.json as plain text (zot.apiKey). Move it to VS Code's secret storage?",
        "Move It",
        "Not Now",
    );
    if (a === "Move It") {
        await context.secrets.store(SECRET_API_KEY, plain);
        await vscode.workspace.getConfiguration("zot").update("apiKey", undefined, vscode.ConfigurationTarget.Global);
        await z.client.restart();
        void vscode.window.showInformationMessage("zot: the API key is now in VS Code's secret storage.");
    }
}

export async function deactivate(): Promise<void> {
    await zot?.client.stop();
}

/** The running extension; activate() returns it (tests may use it). */
export class Zot implements Ctx, vscode.Disposable {
    readonly output: vscode.LogOutputChannel;
    /** The chat input's draft, kept across reloads. */
    private readonly draft: DraftStore;
    readonly client: ZotClient;
    readonly chat: ChatViewProvider;
    readonly panels: PanelManager;
    readonly reviews: ReviewManager;
    readonly approvals = new Approvals();
    readonly state = new ZotState();
    readonly attachments: Attachments;
    private readonly statusItem: vscode.StatusBarItem;
    private readonly disposables: vscode.Disposable[] = [];

    constructor(private readonly context: vscode.ExtensionContext) {
        this.output = vscode.window.createOutputChannel("zot", { log: true });
        const storage = context.storageUri?.scheme === "file" ? context.storageUri.fsPath : undefined;
        this.draft = new DraftStore(storage, context.workspaceState, (s) => this.output.appendLine(s));
        const version = (context.extension?.packageJSON as { version?: unknown } | undefined)?.version;
        this.client = new ZotClient(this.output, (c) => installHandlers(c, this), undefined, undefined, {
            extensionPath: context.extensionPath,
            version: typeof version === "string" ? version : "unknown",
        });
        this.client.secretApiKey = () => context.secrets.get(SECRET_API_KEY);
        this.chat = new ChatViewProvider(context.extensionUri, this.chatHost(), (s) => this.output.appendLine(s));
        this.panels = new PanelManager(context.extensionUri, () => this.panelSink());
        this.reviews = new ReviewManager((s) => this.output.appendLine(s));
        this.reviews.onReviewing = (toolCallId, pending) => this.chat.post({ type: "review", toolCallId, pending });
        this.attachments = new Attachments(
            async () => (this.client.state === "running" ? (await this.client.running().sendRequest(ext.mcpResources)).resources : []),
            (chip) => this.chat.post({ type: "activeFile", chip }),
        );
        this.statusItem = vscode.window.createStatusBarItem("zot.status", vscode.StatusBarAlignment.Right, 100);
        this.statusItem.name = "zot";
        this.statusItem.command = "zot.focusChat";
        this.statusItem.show();

        this.disposables.push(
            registerCheckpointContent(),
            this.output,
            this.client,
            this.chat,
            this.panels,
            this.reviews,
            this.attachments,
            this.approvals,
            this.statusItem,
            vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.chat, { webviewOptions: { retainContextWhenHidden: true } }),
            this.client.onState(() => this.onClientState()),
            this.client.onStarted(() => void this.onStarted()),
            vscode.workspace.onDidChangeConfiguration((e) => this.onConfig(e)),
            ...commands.registerCommands(this),
            vscode.commands.registerCommand("zot.setApiKey", () => setApiKey(context, this)),
            // The editor's context menu names the extension ("Zot: Prompt…").
            vscode.commands.registerCommand("zot.promptFromEditor", () => vscode.commands.executeCommand("zot.prompt")),
        );
        this.updateStatusBar();
    }

    // ------------------------------------------------------------ Ctx

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

    updateStatusBar(): void {
        const v = this.state.statusBar(this.client.connection);
        this.statusItem.text = v.text;
        this.statusItem.tooltip = v.tooltip;
        this.statusItem.backgroundColor = v.background ? new vscode.ThemeColor(v.background) : undefined;
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

    private async onStarted(): Promise<void> {
        const restarted = this.client.restarts > 0;
        if (!restarted && !this.restoredOnce) {
            this.restoredOnce = true;
            await this.restoreLastSession();
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
        if (this.restoredNotice) {
            this.chat.notice("info", this.restoredNotice);
            this.restoredNotice = undefined;
        }
        if (restarted) {
            this.chat.notice(
                "warn",
                `zot lsp stopped unexpectedly and was restarted${this.client.resumedSession ? "; the session was resumed" : ""}. A run in progress was lost.`,
            );
        }
        this.updateStatusBar();
    }

    private restoredOnce = false;

    /**
     * After a window reload (a new zot lsp, a new empty session) the last
     * conversation of this workspace comes back: zot resumes it. Nothing
     * happens when it is gone or the new session already has messages.
     */
    private async restoreLastSession(): Promise<void> {
        const last = this.context.workspaceState.get<string>(LAST_SESSION);
        const c = this.client.state === "running" ? this.client.client : undefined;
        if (!last || !c) {
            return;
        }
        try {
            const s = await c.sendRequest(ext.state);
            if (s.session_id === last || s.message_count > 0) {
                return;
            }
            const r = await c.sendRequest(ext.sessionResume, { id: last });
            this.restoredNotice = `Restored the last conversation (session ${r.sessionId}, ${r.messageCount} messages).`;
        } catch (e) {
            this.output.appendLine(`[session] the last conversation (${last}) could not be restored: ${errorMessage(e)}`);
        }
    }

    private restoredNotice?: string;

    /** Remembers the session for the next window (see restoreLastSession). */
    rememberSession(id: string | undefined): void {
        if (id && this.context.workspaceState.get<string>(LAST_SESSION) !== id) {
            void this.context.workspaceState.update(LAST_SESSION, id);
        }
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
                    this.rememberSession(s.session_id);
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

    private onConfig(e: vscode.ConfigurationChangeEvent): void {
        if (!e.affectsConfiguration("zot")) {
            return;
        }
        const c = this.client.state === "running" ? this.client.client : undefined;
        const conf = vscode.workspace.getConfiguration("zot");
        if (c && e.affectsConfiguration("zot.permissionMode")) {
            const mode = conf.get<ext.PermissionMode>("permissionMode");
            if (mode) {
                void c.sendRequest(ext.setPermissionMode, { mode }).then(
                    () => this.refresh(false),
                    (err) => this.chat.notice("error", errorMessage(err)),
                );
            }
        }
        if (c && e.affectsConfiguration("zot.model")) {
            const model = conf.get<string>("model");
            if (model) {
                void commands.setModel(this, model);
            }
        }
        if (restartSettings.some((s) => e.affectsConfiguration(s))) {
            void vscode.window.showInformationMessage("zot: settings changed. Restart zot lsp to apply them?", "Restart").then((a) => {
                if (a === "Restart") {
                    void this.client.restart();
                }
            });
        }
    }

    dispose(): void {
        for (const d of this.disposables.reverse()) {
            d.dispose();
        }
    }
}
