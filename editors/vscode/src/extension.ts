// zot for VS Code: starts `zot lsp` (vscode-languageclient) and wires its
// zot/* extensions (lsp_ext.ts) to the chat view, commands, review diffs,
// extension panels, the status bar and the output channel.

import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";
import * as ext from "./lsp_ext";
import { ZotClient, errorMessage } from "./client";
import { CHAT_VIEW_ID, ChatViewProvider, type ChatHost } from "./chatView";
import { PanelManager } from "./panels";
import { ReviewManager } from "./review";
import { restartSettings } from "./config";
import { parseSlash, promptText } from "./webview/chat/slash";
import type { HostToChat } from "./webview/protocol";

let zot: Zot | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<Zot> {
    zot = new Zot(context);
    context.subscriptions.push(zot);
    void zot.client.start();
    return zot;
}

export async function deactivate(): Promise<void> {
    await zot?.client.stop();
}

/** The running extension; activate() returns it (tests may use it). */
export class Zot implements vscode.Disposable {
    readonly output: vscode.LogOutputChannel;
    readonly client: ZotClient;
    readonly chat: ChatViewProvider;
    readonly panels: PanelManager;
    readonly reviews: ReviewManager;
    private readonly statusItem: vscode.StatusBarItem;
    private readonly disposables: vscode.Disposable[] = [];

    /** Runs accepted and not done. */
    private runs = new Set<string>();
    /** Runs done (a zot/prompt answer may come after the run's events). */
    private finished = new Set<string>();
    private commands: ext.CommandInfo[] = [];
    private model = "";
    private provider = "";
    private mode: ext.PermissionMode = "auto";
    private usage?: ext.Usage;

    constructor(private readonly context: vscode.ExtensionContext) {
        this.output = vscode.window.createOutputChannel("zot", { log: true });
        this.client = new ZotClient(this.output, (c) => this.install(c));
        this.chat = new ChatViewProvider(context.extensionUri, this.chatHost(), (s) => this.output.appendLine(s));
        this.panels = new PanelManager(context.extensionUri, () => this.panelSink());
        this.reviews = new ReviewManager((s) => this.output.appendLine(s));
        this.statusItem = vscode.window.createStatusBarItem("zot.status", vscode.StatusBarAlignment.Right, 100);
        this.statusItem.name = "zot";
        this.statusItem.command = "zot.focusChat";
        this.statusItem.show();

        this.disposables.push(
            this.output,
            this.client,
            this.chat,
            this.panels,
            this.reviews,
            this.statusItem,
            vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, this.chat, { webviewOptions: { retainContextWhenHidden: true } }),
            this.client.onState((s) => this.onClientState(s)),
            this.client.onStarted(() => void this.onStarted()),
            vscode.workspace.onDidChangeConfiguration((e) => this.onConfig(e)),
            ...this.registerCommands(),
        );
        this.updateStatusBar();
    }

    // ------------------------------------------------------------ the client

    /** Handlers installed on each language client before it starts. */
    private install(c: lc.LanguageClient): vscode.Disposable[] {
        return [
            c.onNotification(ext.event, (ev) => this.onEvent(ev)),
            c.onNotification(ext.notify, (p) => this.onNotify(p)),
            c.onNotification(ext.panelOpen, (p) => this.panels.open(p)),
            c.onNotification(ext.panelRender, (p) => this.panels.render(p)),
            c.onNotification(ext.panelClose, (p) => this.panels.close(p)),
            c.onNotification(ext.extensionsChanged, (r) => this.setCommands(r.commands)),
            c.onRequest(ext.reviewEdit, (p, token) => this.reviews.review(p, token)),
            c.onRequest(ext.save, (p) => this.save(p)),
        ];
    }

    private panelSink() {
        const c = this.client.client;
        if (!c || this.client.state !== "running") {
            return undefined;
        }
        return {
            key: (p: ext.PanelKeyParams) => void c.sendNotification(ext.panelKey, p).catch((e) => this.output.appendLine(`[panel] key: ${errorMessage(e)}`)),
            closed: (p: ext.PanelCloseParams) => void c.sendNotification(ext.panelClosed, p).catch(() => undefined),
        };
    }

    private onClientState(s: string): void {
        if (s !== "running") {
            this.runs.clear();
            this.panels.closeAll();
            this.reviews.rejectAll();
        }
        this.chat.status({ connection: this.client.state, message: this.client.problem });
        this.updateStatusBar();
    }

    private async onStarted(): Promise<void> {
        const restarted = this.client.restarts > 0;
        const info = this.client.info;
        if (info) {
            this.model = info.model;
            this.provider = info.provider;
            this.mode = info.permissionMode;
            this.setCommands(info.commands ?? []);
        }
        this.runs.clear();
        this.chat.dropHeldEvents();
        for (const m of await this.snapshot()) {
            this.chat.post(m);
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
            const [state, models, messages, commands] = await Promise.allSettled([
                c.sendRequest(ext.state),
                c.sendRequest(ext.models),
                c.sendRequest(ext.messages),
                c.sendRequest(ext.commands),
            ]);
            if (state.status === "fulfilled") {
                const s = state.value;
                this.client.resumeSession = s.session_id || undefined;
                this.model = s.model;
                this.provider = s.provider;
                this.mode = s.permissionMode;
                this.usage = s.usage;
                if (s.runId) {
                    this.addRun(s.runId);
                }
            }
            if (commands.status === "fulfilled") {
                this.commands = commands.value.commands;
            }
            if (models.status === "fulfilled") {
                out.push({ type: "models", models: models.value.models, current: models.value.current });
            }
            out.push({ type: "history", messages: messages.status === "fulfilled" ? messages.value.messages : [] });
            if (state.status === "fulfilled" && state.value.runId) {
                out.push({ type: "runStarted", runId: state.value.runId, queued: false });
            }
        }
        out.push({ type: "commands", commands: this.commands });
        out.push({ type: "status", status: this.chatStatus() });
        return out;
    }

    private chatStatus() {
        return {
            connection: this.client.state,
            message: this.client.problem,
            provider: this.provider,
            model: this.model,
            permissionMode: this.mode,
            usage: this.usage,
            version: this.client.info?.version,
        };
    }

    private setCommands(cmds: ext.CommandInfo[]): void {
        this.commands = cmds;
        this.chat.post({ type: "commands", commands: cmds });
    }

    private onEvent(ev: ext.ZotEvent): void {
        this.chat.event(ev);
        const before = this.runs.size;
        if (ev.type === "done") {
            this.runs.delete(ev.runId);
            this.finished.add(ev.runId);
            if (this.finished.size > 1000) {
                this.finished = new Set([...this.finished].slice(-500));
            }
        } else if (ev.runId && !this.runs.has(ev.runId) && !this.finished.has(ev.runId)) {
            this.runs.add(ev.runId);
        }
        if (ev.type === "usage") {
            this.usage = ev.cumulative;
            this.updateStatusBar();
        }
        if (before !== this.runs.size) {
            this.updateStatusBar();
        }
        if (ev.type === "done" && this.runs.size === 0) {
            // The session now exists on disk: remember it (resume after a crash).
            void this.refresh(false).catch(() => undefined);
        }
    }

    private addRun(runId: string): void {
        if (!this.finished.has(runId)) {
            this.runs.add(runId);
            this.updateStatusBar();
        }
    }

    private onNotify(p: ext.NotifyParams): void {
        const level = p.level === "error" ? "error" : p.level === "warn" || p.level === "warning" ? "warn" : "info";
        this.chat.notice(level, p.message, p.extension);
        // warn and error also arrive as window/showMessage (the language
        // client shows those); info only comes here.
        if (level === "info") {
            void vscode.window.showInformationMessage(p.extension ? `[${p.extension}] ${p.message}` : p.message);
        }
    }

    /** zot/save: save the documents zot changed (through applyEdit). */
    private async save(p: ext.SaveParams): Promise<ext.SaveResult> {
        const saved: string[] = [];
        const failed: { uri: string; reason: string }[] = [];
        for (const u of p.uris) {
            try {
                const uri = vscode.Uri.parse(u);
                let doc = vscode.workspace.textDocuments.find((d) => d.uri.scheme === uri.scheme && d.uri.fsPath === uri.fsPath);
                if (!doc) {
                    doc = await vscode.workspace.openTextDocument(uri);
                }
                if (!doc.isDirty || (await doc.save())) {
                    saved.push(u);
                } else {
                    failed.push({ uri: u, reason: "the editor did not save it" });
                }
            } catch (e) {
                failed.push({ uri: u, reason: errorMessage(e) });
            }
        }
        return failed.length ? { saved, failed } : { saved };
    }

    private updateStatusBar(): void {
        const s = this.statusItem;
        const running = this.runs.size > 0;
        const model = this.model || "zot";
        switch (this.client.state) {
            case "starting":
                s.text = `$(loading~spin) zot`;
                s.tooltip = "zot: starting…";
                s.backgroundColor = undefined;
                break;
            case "stopped":
            case "error":
                s.text = `$(error) zot`;
                s.tooltip = `zot: ${this.client.problem ?? "stopped"}`;
                s.backgroundColor = new vscode.ThemeColor("statusBarItem.errorBackground");
                break;
            default: {
                s.text = running ? `$(loading~spin) zot: ${model}` : `$(sparkle) zot: ${model}`;
                const cost = this.usage ? ` · $${this.usage.cost_usd.toFixed(4)}` : "";
                s.tooltip = `zot ${this.client.info?.version ?? ""} — ${this.provider}/${model}, ${this.mode} mode${cost}${running ? " — working (click to open the chat)" : ""}${this.client.problem ? "\n" + this.client.problem : ""}`;
                s.backgroundColor = this.client.problem ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
            }
        }
    }

    // ------------------------------------------------------------ what the chat and commands do

    private req(): lc.LanguageClient {
        return this.client.running();
    }

    private chatHost(): ChatHost {
        return {
            send: (text) => this.send(text),
            abort: () => this.abort(),
            setModel: (m) => this.setModel(m),
            setMode: (m) => this.setMode(m),
            snapshot: () => this.snapshot(),
        };
    }

    /** What the user typed in the chat: a slash command or a prompt. */
    async send(text: string, context?: ext.PromptContext): Promise<void> {
        const slash = context ? undefined : parseSlash(text);
        if (slash) {
            await this.runCommand(slash.name, slash.args);
            return;
        }
        await this.prompt(promptText(text), context);
    }

    async prompt(text: string, context?: ext.PromptContext): Promise<void> {
        try {
            const r = await this.req().sendRequest(ext.prompt, { text, context });
            this.addRun(r.runId);
            this.updateStatusBar();
            this.chat.post({ type: "runStarted", runId: r.runId, queued: r.queued, ahead: r.ahead });
        } catch (e) {
            this.chat.notice("error", errorMessage(e));
        }
    }

    async runCommand(name: string, args: string): Promise<void> {
        let r: ext.CommandResult;
        try {
            r = await this.req().sendRequest(ext.command, { name, args });
        } catch (e) {
            this.chat.notice("error", `/${name}: ${errorMessage(e)}`);
            return;
        }
        if (r.error) {
            this.chat.notice("error", `/${name}: ${r.error}`);
            if (!this.chat.visible) {
                void vscode.window.showErrorMessage(`zot /${name}: ${r.error}`);
            }
        }
        if (r.runId) {
            this.addRun(r.runId);
            this.chat.post({ type: "runStarted", runId: r.runId, queued: !!r.queued });
        }
        switch (r.action) {
            case "insert":
                this.chat.post({ type: "insert", text: r.insert ?? "" });
                break;
            case "display":
                this.chat.notice("display", r.display ?? "");
                if (!this.chat.visible) {
                    void vscode.window.showInformationMessage(r.display ?? "");
                }
                break;
        }
        if (["new", "clear"].includes(name)) {
            this.chat.post({ type: "clear" });
            if (r.display) {
                this.chat.notice("display", r.display);
            }
        }
        if (["new", "clear", "resume", "model", "mode"].includes(name)) {
            await this.refresh(name === "resume");
        }
    }

    /** Re-reads state (model, mode, usage) and optionally the transcript. */
    private async refresh(history: boolean): Promise<void> {
        const c = this.req();
        const s = await c.sendRequest(ext.state);
        this.client.resumeSession = s.session_id || undefined;
        this.model = s.model;
        this.provider = s.provider;
        this.mode = s.permissionMode;
        this.usage = s.usage;
        if (history) {
            const m = await c.sendRequest(ext.messages);
            this.chat.post({ type: "history", messages: m.messages });
        }
        this.chat.status(this.chatStatus());
        this.updateStatusBar();
    }

    async abort(): Promise<void> {
        const r = await this.req().sendRequest(ext.abort, { clearQueue: true });
        if (!r.aborted && r.dropped.length === 0) {
            this.chat.notice("info", "Nothing is running.");
        }
    }

    async setModel(model: string): Promise<void> {
        try {
            const r = await this.req().sendRequest(ext.setModel, { model });
            this.model = r.model;
        } catch (e) {
            this.chat.notice("error", errorMessage(e));
        }
        await this.refresh(false);
    }

    async newSession(): Promise<void> {
        const r = await this.req().sendRequest(ext.sessionNew);
        this.chat.post({ type: "clear" });
        this.chat.notice("info", `New session${r.sessionId ? ` (${r.sessionId})` : ""}.`);
        await this.refresh(false);
    }

    async resumeSession(): Promise<void> {
        const c = this.req();
        const { sessions, current } = await c.sendRequest(ext.sessions);
        if (sessions.length === 0) {
            void vscode.window.showInformationMessage("zot: no saved sessions for this workspace.");
            return;
        }
        const pick = await vscode.window.showQuickPick(
            sessions.map((s) => ({
                label: s.title || "(untitled)",
                description: `${new Date(s.modified).toLocaleString()} · ${s.messages} messages${s.id === current ? " · current" : ""}`,
                detail: s.id,
                id: s.id,
            })),
            { title: "zot: resume a session", placeHolder: "Pick a session of this workspace", matchOnDetail: true },
        );
        if (!pick) {
            return;
        }
        const r = await c.sendRequest(ext.sessionResume, { id: pick.id });
        await this.refresh(true);
        this.chat.notice("info", `Resumed session ${r.sessionId} (${r.messageCount} messages).`);
    }

    // ------------------------------------------------------------ commands

    private registerCommands(): vscode.Disposable[] {
        const cmd = (id: string, f: (...a: any[]) => unknown) =>
            vscode.commands.registerCommand(id, async (...a: any[]) => {
                try {
                    await f(...a);
                } catch (e) {
                    void vscode.window.showErrorMessage(`zot: ${errorMessage(e)}`);
                }
            });
        return [
            cmd("zot.focusChat", () => this.chat.reveal(true)),
            cmd("zot.prompt", () => this.promptCommand()),
            cmd("zot.abort", () => this.abort()),
            cmd("zot.newSession", () => this.newSession()),
            cmd("zot.resumeSession", () => this.resumeSession()),
            cmd("zot.selectModel", () => this.selectModel()),
            cmd("zot.runCommand", () => this.runCommandPicker()),
            cmd("zot.reloadExtensions", () => this.reloadExtensions()),
            cmd("zot.showExtensions", () => this.showExtensions()),
            cmd("zot.setPermissionMode", () => this.pickPermissionMode()),
            cmd("zot.restartServer", () => this.client.restart()),
            cmd("zot.showOutput", () => this.output.show(true)),
            cmd("zot.review.accept", (uri?: vscode.Uri) => this.reviews.accept(uri instanceof vscode.Uri ? uri : undefined)),
            cmd("zot.review.reject", (uri?: vscode.Uri) => this.reviews.reject(uri instanceof vscode.Uri ? uri : undefined, "the user rejected the change")),
        ];
    }

    /** Zot: Prompt — asks with the editor's file and selection as context. */
    private async promptCommand(): Promise<void> {
        const ed = vscode.window.activeTextEditor;
        let context: ext.PromptContext | undefined;
        let where = "";
        if (ed && ed.document.uri.scheme === "file") {
            const sel = ed.selection;
            const rel = vscode.workspace.asRelativePath(ed.document.uri, false);
            context = {
                uri: ed.document.uri.toString(),
                range: { start: { line: sel.start.line, character: sel.start.character }, end: { line: sel.end.line, character: sel.end.character } },
            };
            if (!sel.isEmpty) {
                context.selectionText = ed.document.getText(sel);
                where = ` about ${rel}:${sel.start.line + 1}-${sel.end.line + 1}`;
            } else {
                where = ` about ${rel}`;
            }
        }
        const text = await vscode.window.showInputBox({
            title: `Ask zot${where}`,
            prompt: context ? "The file (and selection) go along as context." : undefined,
            placeHolder: "What should zot do?",
            ignoreFocusOut: true,
        });
        if (!text?.trim()) {
            return;
        }
        await this.chat.reveal();
        await this.send(text, context);
    }

    private async selectModel(): Promise<void> {
        const { models, current } = await this.req().sendRequest(ext.models);
        const pick = await vscode.window.showQuickPick(
            models.map((m) => ({
                label: m.id,
                description: `${m.provider}${m.id === current ? " · current" : ""}`,
                detail: [m.context_window ? `${m.context_window.toLocaleString()} tokens context` : "", m.input_price ? `$${m.input_price}/M in, $${m.output_price ?? 0}/M out` : ""]
                    .filter(Boolean)
                    .join(" · "),
            })),
            { title: "zot: select a model", placeHolder: current },
        );
        if (pick) {
            await this.setModel(pick.label);
        }
    }

    private async runCommandPicker(): Promise<void> {
        const { commands } = await this.req().sendRequest(ext.commands);
        const pick = await vscode.window.showQuickPick(
            commands.map((c) => ({ label: "/" + c.name, description: c.source === "extension" ? c.extension ?? "extension" : "", detail: c.description, name: c.name })),
            { title: "zot: run a slash command", matchOnDetail: true },
        );
        if (!pick) {
            return;
        }
        const args = await vscode.window.showInputBox({ title: `/${pick.name}`, prompt: `Arguments for /${pick.name} (optional)`, placeHolder: pick.detail });
        if (args === undefined) {
            return;
        }
        await this.chat.reveal();
        await this.runCommand(pick.name, args);
    }

    private async reloadExtensions(): Promise<void> {
        const r = await this.req().sendRequest(ext.extensionsReload);
        this.setCommands(r.commands);
        const loaded = r.extensions.filter((e) => e.state === "loaded").length;
        void vscode.window.showInformationMessage(`zot: reloaded extensions: ${loaded} loaded of ${r.extensions.length}.`);
    }

    private async showExtensions(): Promise<void> {
        const r = await this.req().sendRequest(ext.extensions);
        if (r.extensions.length === 0) {
            void vscode.window.showInformationMessage(
                r.loading ? "zot: extensions are still starting." : r.error ? `zot: extensions could not start: ${r.error}` : "zot: no extensions are installed.",
            );
            return;
        }
        const icon = (s: string) => (s === "loaded" ? "$(pass)" : s === "starting" ? "$(loading~spin)" : s === "failed" ? "$(error)" : "$(circle-slash)");
        const pick = await vscode.window.showQuickPick(
            r.extensions.map((e) => ({
                label: `${icon(e.state)} ${e.name}${e.version ? " " + e.version : ""}`,
                description: `${e.state} · ${e.source}${e.reason ? " · " + e.reason : ""}`,
                detail: [e.commands.length ? "commands: " + e.commands.map((c) => "/" + c).join(" ") : "", e.tools.length ? "tools: " + e.tools.join(" ") : "", e.dir]
                    .filter(Boolean)
                    .join(" · "),
                e,
            })),
            { title: "zot: extensions", placeHolder: "Pick one to see it in the output", matchOnDescription: true },
        );
        if (pick) {
            this.output.appendLine(`[extensions] ${JSON.stringify(pick.e, null, 2)}`);
            this.output.show(true);
        }
    }

    async setMode(mode: ext.PermissionMode): Promise<void> {
        try {
            const r = await this.req().sendRequest(ext.setPermissionMode, { mode });
            this.mode = r.mode;
        } catch (e) {
            this.chat.notice("error", errorMessage(e));
        }
        await this.refresh(false);
    }

    private async pickPermissionMode(): Promise<void> {
        const items: { label: ext.PermissionMode; detail: string }[] = [
            { label: "auto", detail: "Edits and commands run without asking" },
            { label: "ask", detail: "Review every edit in a diff; approve every shell command" },
            { label: "readonly", detail: "zot may read but not write or run commands" },
        ];
        const pick = await vscode.window.showQuickPick(items, { title: "zot: permission mode", placeHolder: `now: ${this.mode}` });
        if (pick) {
            await this.setMode(pick.label);
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
                void c.sendRequest(ext.setPermissionMode, { mode }).then(() => this.refresh(false), (err) => this.chat.notice("error", errorMessage(err)));
            }
        }
        if (c && e.affectsConfiguration("zot.model")) {
            const model = conf.get<string>("model");
            if (model) {
                void this.setModel(model);
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
