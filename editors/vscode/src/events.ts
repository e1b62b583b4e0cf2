// What zot lsp sends the editor: the handlers installed on each (re)started
// language client for zot/event, zot/notify, zot/panel/*, zot/ui/*,
// zot/input/* (the chat's input box),
// zot/extensions/changed, zot/reviewEdit, zot/save and
// window/showMessageRequest (approvals, shown whole: approval.ts).

import * as vscode from "vscode";
import type * as lc from "vscode-languageclient/node";
import * as ext from "./lsp_ext";
import { errorMessage } from "./errors";
import type { Ctx } from "./ctx";
import { showMessageRequest } from "./approval";
import { ExtensionUI } from "./extui";
import { userProblem } from "./problems";
import { RebasedWrites } from "./rebased";
import { MessageType, ShowMessageNotification, type ShowMessageParams } from "vscode-languageclient";

/** Handlers installed on each language client before it starts. */
export function installHandlers(c: Pick<lc.LanguageClient, "onNotification" | "onRequest">, ctx: Ctx): vscode.Disposable[] {
    // Extension dialogs and status items live as long as this client:
    // they go away with it.
    const ui = new ExtensionUI(ctx.chat);
    const rebased = new RebasedWrites();
    return [
        ui,
        rebased,
        c.onRequest(ext.uiRequest, (p, token) => ui.request(p, token)),
        c.onNotification(ext.uiStatus, (p) => ui.status(p)),
        c.onNotification(ext.uiWidget, (p) => ui.widget(p)),
        c.onNotification(ext.inputSet, (p) => ctx.chatInput?.set(p.text, p.mode === "paste" ? "paste" : "replace")),
        c.onRequest(ext.inputGet, () => ({ text: ctx.chatInput?.get() ?? "" })),
        c.onNotification(ext.event, (ev) => onEvent(ctx, ev)),
        c.onNotification(ext.notify, (p) => onNotify(ctx, p)),
        c.onNotification(ext.panelOpen, (p) => ctx.panels.open(p)),
        c.onNotification(ext.panelRender, (p) => ctx.panels.render(p)),
        c.onNotification(ext.panelClose, (p) => ctx.panels.close(p)),
        c.onNotification(ext.extensionsChanged, (r) => ctx.setCommands(r.commands)),
        c.onNotification(ext.mcpChanged, (r) => onMcpChanged(ctx, r)),
        c.onNotification(ext.sessionChanged, (p) => void onSessionChanged(ctx, p)),
        c.onRequest(ext.reviewEdit, (p, token) => ctx.reviews.review(p, token)),
        c.onRequest(ext.save, (p) => saveDocuments(p, rebased)),
        c.onRequest(showMessageRequest, (p) => ctx.approvals.ask(p)),
        c.onNotification(ShowMessageNotification.type, (p) => onShowMessage(ctx, p)),
    ];
}

/**
 * zot/session/changed: an extension forked the conversation or moved it in
 * the session tree. The chat draws the conversation it is in now; a
 * navigation back to a prompt puts that prompt in the input, as pi does.
 */
export async function onSessionChanged(ctx: Ctx, p: ext.SessionChangedParams): Promise<void> {
    try {
        await ctx.refresh(true);
    } catch (e) {
        ctx.chat.notice("error", `The conversation changed, but could not be shown: ${errorMessage(e)}`);
        return;
    }
    const what =
        p.reason === "fork"
            ? "forked the conversation into a new session"
            : p.reason === "new"
              ? "started a new session"
              : p.reason === "resume"
                ? "resumed a stored session"
                : "moved the conversation in the session tree";
    ctx.chat.notice("info", `An extension ${what} (session ${p.sessionId}, ${p.messageCount} messages).`);
    if (p.editorText) {
        ctx.chat.post({ type: "insert", text: p.editorText });
    }
}

/**
 * window/showMessage, as the language client would show it, except zot's
 * own "cannot start" problem: the chat shows that (its banner, with the
 * fix) and the status bar; a toast only when the chat is not in view, in
 * the user's terms and with the same buttons.
 */
export function onShowMessage(ctx: Ctx, p: ShowMessageParams): void {
    if (/^zot cannot start:/.test(p.message)) {
        if (!ctx.chat.visible) {
            const problem = userProblem(p.message);
            void vscode.window.showErrorMessage(problem.text, ...problem.actions.map((a) => a.label)).then((label) => {
                const a = problem.actions.find((x) => x.label === label);
                if (a) {
                    void vscode.commands.executeCommand(a.command, ...(a.args ?? []));
                }
            });
        }
        return;
    }
    const show = p.type === MessageType.Error ? vscode.window.showErrorMessage : p.type === MessageType.Warning ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
    void show(p.message);
}

/** zot/event: to the chat, and the run bookkeeping behind the status bar. */
export function onEvent(ctx: Ctx, ev: ext.ZotEvent): void {
    ctx.chat.event(ev);
    const { changed, idle } = ctx.state.onEvent(ev);
    if (changed) {
        ctx.updateStatusBar();
    }
    if (idle) {
        // The session now exists on disk: remember it (resume after a crash).
        void ctx.refresh(false).catch(() => undefined);
    }
}

/** What each ctx was last told about each MCP server's trouble (one notice per change). */
const mcpTold = new WeakMap<object, Map<string, string>>();

/** zot/mcp/changed: the Zot view's MCP lines; a server that failed, is untrusted or invalid says so in the chat, once per reason. */
export function onMcpChanged(ctx: Ctx, r: ext.MCPResult): void {
    ctx.chat.post({ type: "mcp", servers: r.servers, disabled: r.disabled });
    let told = mcpTold.get(ctx);
    if (!told) {
        told = new Map();
        mcpTold.set(ctx, told);
    }
    for (const s of r.servers) {
        if (s.state !== "failed" && s.state !== "untrusted" && s.state !== "invalid") {
            told.delete(s.name);
            continue;
        }
        const line = `MCP server ${s.name}: ${s.state}${s.lastError ? ` — ${s.lastError}` : ""}`;
        if (told.get(s.name) !== line) {
            told.set(s.name, line);
            ctx.chat.notice(s.state === "untrusted" ? "info" : "warn", line, "mcp");
        }
    }
}

/** zot/notify: an extension's message, in the chat (and info as a toast). */
export function onNotify(ctx: Ctx, p: ext.NotifyParams): void {
    const level = p.level === "error" ? "error" : p.level === "warn" || p.level === "warning" ? "warn" : "info";
    ctx.chat.notice(level, p.message, p.extension);
    // warn and error also arrive as window/showMessage (the language
    // client shows those); info only comes here.
    if (level === "info") {
        void vscode.window.showInformationMessage(p.extension ? `[${p.extension}] ${p.message}` : p.message);
    }
}

/**
 * zot/save: save the documents zot changed (through applyEdit) that hold
 * only its changes; for those that also hold the user's unsaved changes
 * (rebased), write zot's text to the file and keep the buffer dirty.
 */
export async function saveDocuments(p: ext.SaveParams, rebased?: RebasedWrites): Promise<ext.SaveResult> {
    const saved: string[] = [];
    const failed: ext.SaveFailed[] = [];
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
    const written: string[] = [];
    for (const r of rebased ? (p.rebased ?? []) : []) {
        try {
            await rebased?.write(vscode.Uri.parse(r.uri), r.text);
            written.push(r.uri);
        } catch (e) {
            failed.push({ uri: r.uri, reason: errorMessage(e) });
        }
    }
    const res: ext.SaveResult = { saved };
    if (written.length) {
        res.written = written;
    }
    if (failed.length) {
        res.failed = failed;
    }
    return res;
}
