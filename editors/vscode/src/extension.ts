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
import { errorMessage } from "./errors";
import { CHAT_VIEW_ID } from "./chatView";
import { ReviewManager } from "./review";
import { Approvals } from "./approval";
import { restartSettings } from "./config";
import * as commands from "./commands";
import { DraftStore } from "./draft";
import { EDITOR_CANCEL, EDITOR_DONE, finishEditorDialog } from "./extui";
import { registerCheckpointContent } from "./checkpoints";
import { ChatContext } from "./chatContext";
import { ChatTab } from "./chatTab";
import { applyStatusBar, type StatusBarView } from "./state";

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

/** The running extension; activate() returns it (tests may use it). It is
 * the side panel's chat, and opens the editor-tab chats (chatTab.ts). */
export class Zot extends ChatContext {
    private readonly statusItem: vscode.StatusBarItem;
    /** What statusItem shows (applyStatusBar skips identical updates). */
    private statusShown?: StatusBarView;
    /** The editor-tab chats open now. */
    readonly tabs = new Set<ChatTab>();
    private tabCount = 0;

    constructor(private readonly context: vscode.ExtensionContext) {
        const output = vscode.window.createOutputChannel("zot", { log: true });
        const storage = context.storageUri?.scheme === "file" ? context.storageUri.fsPath : undefined;
        const version = (context.extension?.packageJSON as { version?: unknown } | undefined)?.version;
        const reviews = new ReviewManager((s) => output.appendLine(s));
        super(
            {
                extensionUri: context.extensionUri,
                output,
                pkg: { extensionPath: context.extensionPath, version: typeof version === "string" ? version : "unknown" },
                secretApiKey: () => context.secrets.get(SECRET_API_KEY),
                reviews,
                approvals: new Approvals(),
            },
            new DraftStore(storage, context.workspaceState, (s) => output.appendLine(s)),
        );
        // A review's card is in the chat whose run it is: each chat's
        // webview marks the cards it has.
        this.reviews.onReviewing = (toolCallId, pending) => {
            this.chat.post({ type: "review", toolCallId, pending });
            for (const t of this.tabs) {
                t.chat.post({ type: "review", toolCallId, pending });
            }
        };
        this.statusItem = vscode.window.createStatusBarItem("zot.status", vscode.StatusBarAlignment.Right, 100);
        this.statusItem.name = "zot";
        this.statusItem.command = "zot.focusChat";
        this.statusItem.show();

        this.disposables.push(
            registerCheckpointContent(),
            this.output,
            this.reviews,
            this.approvals,
            this.statusItem,
            vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.chat, { webviewOptions: { retainContextWhenHidden: true } }),
            vscode.workspace.onDidChangeConfiguration((e) => this.onConfig(e)),
            ...commands.registerCommands(this),
            vscode.commands.registerCommand("zot.setApiKey", () => setApiKey(context, this)),
            // The editor's context menu names the extension ("Zot: Prompt…").
            vscode.commands.registerCommand("zot.promptFromEditor", () => vscode.commands.executeCommand("zot.prompt")),
            vscode.commands.registerCommand("zot.newChatTab", () => this.newChatTab()),
            vscode.commands.registerCommand(EDITOR_DONE, () => finishEditorDialog(true)),
            vscode.commands.registerCommand(EDITOR_CANCEL, () => finishEditorDialog(false)),
            { dispose: () => this.tabs.forEach((t) => t.dispose()) },
        );
        this.updateStatusBar();
    }

    /** Zot: New Chat in Editor Tab: a chat of its own, beside this one. */
    newChatTab(): ChatTab {
        const t = new ChatTab(this.shared, ++this.tabCount, () => this.tabs.delete(t));
        this.tabs.add(t);
        void t.client.start();
        return t;
    }

    updateStatusBar(): void {
        this.statusShown = applyStatusBar(this.statusItem, this.state.statusBar(this.client.connection), this.statusShown, (name) => new vscode.ThemeColor(name));
    }

    /**
     * After a window reload (a new zot lsp, a new empty session) the last
     * conversation of this workspace comes back: zot resumes it. Nothing
     * happens when it is gone or the new session already has messages.
     */
    protected async beforeFirstSnapshot(): Promise<void> {
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
            this.pendingNotice = `Restored the last conversation (session ${r.sessionId}, ${r.messageCount} messages).`;
        } catch (e) {
            this.output.appendLine(`[session] the last conversation (${last}) could not be restored: ${errorMessage(e)}`);
        }
    }

    /** Remembers the session for the next window (see beforeFirstSnapshot). */
    rememberSession(id: string | undefined): void {
        if (id && this.context.workspaceState.get<string>(LAST_SESSION) !== id) {
            void this.context.workspaceState.update(LAST_SESSION, id);
        }
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
                    for (const t of this.tabs) {
                        void t.client.restart();
                    }
                }
            });
        }
    }
}
