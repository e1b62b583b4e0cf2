// A chat in an editor tab (Zot: New Chat in Editor Tab): a chat of its own
// beside the side panel's, with its own zot lsp — its own session, run,
// queue, permission mode and model. Closing the tab stops its zot; the
// session stays on disk for Zot: Resume Session.

import * as vscode from "vscode";
import { ChatContext, type ChatShared } from "./chatContext";
import { DraftStore, type DraftMemento } from "./draft";

/** A draft kept for the tab's life only (the side panel's chat keeps its own across reloads). */
class MemoryMemento implements DraftMemento {
    private readonly values = new Map<string, unknown>();
    get<T>(key: string): T | undefined {
        return this.values.get(key) as T | undefined;
    }
    update(key: string, value: unknown): Thenable<void> {
        this.values.set(key, value);
        return Promise.resolve();
    }
}

export class ChatTab extends ChatContext {
    readonly panel: vscode.WebviewPanel;
    private readonly title: string;
    private disposed = false;

    constructor(shared: ChatShared, n: number, onClosed: () => void) {
        super(shared, new DraftStore(undefined, new MemoryMemento()));
        this.title = `zot chat ${n + 1}`;
        const dist = vscode.Uri.joinPath(shared.extensionUri, "dist");
        this.panel = vscode.window.createWebviewPanel("zot.chatTab", this.title, vscode.ViewColumn.Active, {
            enableScripts: true,
            retainContextWhenHidden: true,
            localResourceRoots: [dist],
        });
        this.panel.iconPath = vscode.Uri.joinPath(shared.extensionUri, "media", "zot.svg");
        this.chat.attachPanel(this.panel);
        this.disposables.push(
            this.panel.onDidDispose(() => {
                onClosed();
                this.dispose();
            }),
        );
    }

    /** The tab's title says whether its run is going (the status bar is the side panel's chat's). */
    updateStatusBar(): void {
        if (!this.disposed) {
            this.panel.title = this.state.running ? `${this.title} ●` : this.title;
        }
    }

    dispose(): void {
        if (this.disposed) {
            return;
        }
        this.disposed = true;
        super.dispose();
        this.panel.dispose();
    }
}
