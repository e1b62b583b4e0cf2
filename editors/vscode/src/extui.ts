// Extensions that ask the user and show state (docs/protocol.md, zot/ui/*):
// zot/ui/request as a Yes/No QuickPick (confirm), a QuickPick (select), an
// InputBox (input) or an untitled document to edit (editor, multi-line:
// Done / Cancel in the status bar, ctrl+enter confirms, closing it
// cancels), closed when zot cancels the request; zot/ui/status as status bar
// items, one per (extension, key); zot/ui/widget as lines above the chat's
// input, drawn at most once per WIDGET_MS however many updates arrive.

import * as vscode from "vscode";
import * as ext from "./lsp_ext";
import type { ChatWidget, HostToChat } from "./webview/protocol";

/** Widget updates within this long are drawn once. */
export const WIDGET_MS = 16;

/** Confirm choices. */
export const YES = "Yes";
export const NO = "No";

/** Commands of the open editor dialog's buttons (package.json). */
export const EDITOR_DONE = "zot.editorDialogDone";
export const EDITOR_CANCEL = "zot.editorDialogCancel";
/** Context key: an editor dialog is open (ctrl+enter confirms it). */
export const EDITOR_OPEN_CONTEXT = "zot.editorDialogOpen";

/** The open editor dialogs, newest last: each finishes with Done (true) or Cancel. */
const editorDialogs: { doc: vscode.TextDocument; finish(done: boolean): void }[] = [];

/**
 * EDITOR_DONE / EDITOR_CANCEL: finish the dialog whose document is active,
 * else the newest one.
 */
export function finishEditorDialog(done: boolean): void {
    const active = vscode.window.activeTextEditor?.document;
    const d = editorDialogs.find((x) => x.doc === active) ?? editorDialogs.at(-1);
    d?.finish(done);
}

/**
 * An extension's multi-line text (pi's ctx.ui.editor): an untitled
 * document prefilled with the text, to edit as any file; "Done" in the
 * status bar (or ctrl+enter) answers its text, "Cancel" or closing the
 * document cancels. zot cancelling the request closes it.
 */
async function editTextDialog(title: string, prefill: string, token?: vscode.CancellationToken): Promise<ext.UIRequestResult> {
    const doc = await vscode.workspace.openTextDocument({ content: prefill, language: "markdown" });
    if (token?.isCancellationRequested) {
        return { cancelled: true };
    }
    await vscode.window.showTextDocument(doc, { preview: false });
    return new Promise((resolve) => {
        const done = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 1000);
        done.name = "zot: editor dialog";
        done.text = `$(check) Done: ${title}`;
        done.tooltip = `${title}\nEdit the text, then Done (ctrl+enter) to answer it; Cancel or closing the document cancels.`;
        done.command = EDITOR_DONE;
        const cancel = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 999);
        cancel.name = "zot: editor dialog";
        cancel.text = "$(close) Cancel";
        cancel.command = EDITOR_CANCEL;
        done.show();
        cancel.show();
        const subs: vscode.Disposable[] = [done, cancel];
        const dialog = {
            doc,
            finish(ok: boolean) {
                const i = editorDialogs.indexOf(dialog);
                if (i < 0) {
                    return; // finished already
                }
                editorDialogs.splice(i, 1);
                const text = doc.getText();
                for (const s of subs) {
                    s.dispose();
                }
                void vscode.commands.executeCommand("setContext", EDITOR_OPEN_CONTEXT, editorDialogs.length > 0);
                resolve(ok ? { value: text } : { cancelled: true });
                if (!doc.isClosed) {
                    void closeDocument(doc);
                }
            },
        };
        editorDialogs.push(dialog);
        void vscode.commands.executeCommand("setContext", EDITOR_OPEN_CONTEXT, true);
        subs.push(vscode.workspace.onDidCloseTextDocument((d) => d === doc && dialog.finish(false)));
        if (token) {
            subs.push(token.onCancellationRequested(() => dialog.finish(false)));
        }
    });
}

/** Closes an untitled document without asking to save it (its text was answered). */
async function closeDocument(doc: vscode.TextDocument): Promise<void> {
    await vscode.window.showTextDocument(doc, { preview: false });
    await vscode.commands.executeCommand("workbench.action.revertAndCloseActiveEditor");
}

export class ExtensionUI implements vscode.Disposable {
    private readonly items = new Map<string, vscode.StatusBarItem>();
    private readonly widgetLines = new Map<string, ChatWidget>();
    private widgetTimer?: NodeJS.Timeout;
    private widgetsDrawn?: Promise<void>;
    private drawWidgetsNow?: () => void;

    /** chat: where widgets are drawn (the chat view). */
    constructor(private readonly chat?: { post(m: HostToChat): void }) {}

    /** zot/ui/request: the user's answer, or cancelled. */
    async request(p: ext.UIRequestParams, token?: vscode.CancellationToken): Promise<ext.UIRequestResult> {
        const prefix = `[${p.extension}] `;
        const title = p.title ?? "";
        const cancelled = new Promise<undefined>((resolve) => token?.onCancellationRequested(() => resolve(undefined)));
        const race = <T>(x: Thenable<T>) => Promise.race([Promise.resolve(x), cancelled]);
        switch (p.kind) {
            case "confirm": {
                // A QuickPick, not a modal: VS Code cannot close a modal
                // dialog, and zot closes the question when it is moot (the
                // extension died, the run was aborted, its timeout passed).
                // No first: the QuickPick's preselected item, taken by
                // Enter, is the answer that lets nothing happen.
                const choice = await race(
                    vscode.window.showQuickPick([NO, YES], { title: prefix + (title || p.message || ""), placeHolder: title ? p.message : undefined, ignoreFocusOut: true }, token),
                );
                return choice === YES ? { value: true } : choice === NO ? { value: false } : { cancelled: true };
            }
            case "select": {
                const options = p.options ?? [];
                const choice = await race(vscode.window.showQuickPick(options, { title: prefix + title, placeHolder: p.message, ignoreFocusOut: true }, token));
                return typeof choice === "string" && options.includes(choice) ? { value: choice } : { cancelled: true };
            }
            case "input": {
                const text = await race(vscode.window.showInputBox({ title: prefix + title, prompt: p.message, placeHolder: p.placeholder, value: p.default, ignoreFocusOut: true }, token));
                return text === undefined ? { cancelled: true } : { value: text };
            }
            case "editor":
                return editTextDialog(prefix + title, p.default ?? "", token);
        }
        return { cancelled: true };
    }

    /** zot/ui/status: one status bar item per (extension, key). */
    status(p: ext.UIStatusParams): void {
        this.show(`status:${p.extension}/${p.key}`, p.text === null ? null : [p.text], p.extension);
    }

    /** zot/ui/widget: lines above the chat's input, per (extension, key); null removes them. */
    widget(p: ext.UIWidgetParams): void {
        const key = `${p.extension}/${p.key}`;
        if (p.lines === null || p.lines.length === 0) {
            this.widgetLines.delete(key);
        } else {
            this.widgetLines.set(key, { extension: p.extension, key: p.key, lines: p.lines.map(String) });
        }
        this.scheduleWidgets();
    }

    /** The widgets shown now, in (extension, key) order. */
    widgets(): ChatWidget[] {
        return [...this.widgetLines.keys()].sort().map((k) => this.widgetLines.get(k)!);
    }

    /** Resolves once pending widget updates are drawn (tests). */
    widgetsSettled(): Promise<void> {
        return this.widgetsDrawn ?? Promise.resolve();
    }

    private scheduleWidgets(): void {
        if (this.widgetTimer) {
            return;
        }
        this.widgetsDrawn = new Promise((resolve) => {
            this.drawWidgetsNow = () => {
                this.widgetTimer = undefined;
                this.widgetsDrawn = undefined;
                this.drawWidgetsNow = undefined;
                this.chat?.post({ type: "widgets", widgets: this.widgets() });
                resolve();
            };
            this.widgetTimer = setTimeout(this.drawWidgetsNow, WIDGET_MS);
        });
    }

    /** The texts shown now, by key (tests, diagnostics). */
    shown(): Map<string, string> {
        return new Map([...this.items].map(([k, i]) => [k, i.text]));
    }

    private show(key: string, lines: string[] | null, extension: string): void {
        let item = this.items.get(key);
        if (lines === null || lines.length === 0) {
            item?.dispose();
            this.items.delete(key);
            return;
        }
        if (!item) {
            item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 90);
            item.name = `zot: ${extension}`;
            this.items.set(key, item);
        }
        item.text = lines[0];
        item.tooltip = `${extension}\n${lines.join("\n")}`;
        item.show();
    }

    /** The client stopped: its extensions' status items and widgets go. */
    dispose(): void {
        for (const i of this.items.values()) {
            i.dispose();
        }
        this.items.clear();
        if (this.widgetTimer) {
            clearTimeout(this.widgetTimer);
        }
        const had = this.widgetLines.size > 0 || this.drawWidgetsNow !== undefined;
        this.widgetLines.clear();
        if (this.drawWidgetsNow) {
            this.drawWidgetsNow();
        } else if (had) {
            this.chat?.post({ type: "widgets", widgets: [] });
        }
    }
}
