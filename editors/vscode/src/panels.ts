// Extension panels (zot/panel/open|render|close) as webview panels: the
// extension's lines in monospace with its footer, re-rendered in place; key
// presses go back as zot/panel/key, closing sends zot/panel/closed.

import * as vscode from "vscode";
import * as ext from "./lsp_ext";
import type { HostToPanel, PanelToHost } from "./webview/protocol";
import { panelHtml } from "./html";

interface Open {
    panel: vscode.WebviewPanel;
    latest: ext.Panel;
    ready: boolean;
    /** Closed by the server (zot/panel/close): don't report it back. */
    closedByServer: boolean;
}

export interface PanelSink {
    key(p: ext.PanelKeyParams): void;
    closed(p: ext.PanelCloseParams): void;
}

export class PanelManager implements vscode.Disposable {
    private panels = new Map<string, Open>();

    constructor(
        private readonly extensionUri: vscode.Uri,
        private readonly sink: () => PanelSink | undefined,
    ) {}

    /** Open panels' ids (for tests and commands). */
    get ids(): string[] {
        return [...this.panels.keys()];
    }

    open(p: ext.Panel): void {
        const existing = this.panels.get(p.panelId);
        if (existing) {
            existing.panel.reveal(existing.panel.viewColumn, false);
            this.render(p);
            return;
        }
        const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
        const title = p.title || p.extension || "zot panel";
        const panel = vscode.window.createWebviewPanel(
            "zot.panel",
            title,
            { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
            { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [dist] },
        );
        panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "zot.svg");
        const entry: Open = { panel, latest: p, ready: false, closedByServer: false };
        this.panels.set(p.panelId, entry);
        panel.webview.html = panelHtml(panel.webview, dist, title);
        panel.webview.onDidReceiveMessage((m: PanelToHost) => {
            if (m.type === "ready") {
                entry.ready = true;
                this.post(entry, { type: "render", panel: entry.latest });
            } else if (m.type === "key") {
                this.sink()?.key({ panelId: entry.latest.panelId, key: m.key, text: m.text });
            }
        });
        panel.onDidDispose(() => {
            if (this.panels.get(p.panelId) === entry) {
                this.panels.delete(p.panelId);
            }
            if (!entry.closedByServer) {
                this.sink()?.closed({ panelId: entry.latest.panelId, extension: entry.latest.extension || undefined });
            }
        });
    }

    render(p: ext.Panel): void {
        const e = this.panels.get(p.panelId);
        if (!e) {
            return; // closed meanwhile (or never opened): nothing to draw into
        }
        e.latest = { ...e.latest, ...p, extension: p.extension || e.latest.extension, title: p.title || e.latest.title };
        if (e.latest.title && e.panel.title !== e.latest.title) {
            e.panel.title = e.latest.title;
        }
        if (e.ready) {
            this.post(e, { type: "render", panel: e.latest });
        }
    }

    close(p: ext.PanelCloseParams): void {
        const e = this.panels.get(p.panelId);
        if (!e) {
            return;
        }
        e.closedByServer = true;
        this.panels.delete(p.panelId);
        e.panel.dispose();
    }

    /** The server went away: its panels cannot answer keys any more. */
    closeAll(): void {
        for (const e of this.panels.values()) {
            e.closedByServer = true;
            e.panel.dispose();
        }
        this.panels.clear();
    }

    private post(e: Open, m: HostToPanel): void {
        void e.panel.webview.postMessage(m);
    }

    dispose(): void {
        this.closeAll();
    }
}
