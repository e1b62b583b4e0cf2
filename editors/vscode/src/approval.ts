// window/showMessageRequest from zot (bash approvals, writes outside the
// workspace, extension trust). The user sees the whole text before
// choosing: a modal dialog holds it when it fits; a text too long for a
// dialog gets only "Show full command" and the deny action, and "Show full
// command" opens the whole text in a read-only editor and then asks with
// every choice in a notification, so it can be read while deciding.

import * as vscode from "vscode";
import * as lc from "vscode-languageclient/node";

/** window/showMessageRequest, answered by Approvals.ask instead of the language client's toast. */
export const showMessageRequest = new lc.RequestType<lc.ShowMessageRequestParams, lc.MessageActionItem | null, void>("window/showMessageRequest");

export const SHOW_FULL = "Show full command";
const SCHEME = "zot-approval";
/** The safe action of each question zot asks (zot sends it first). */
const DENY_TITLES = new Set(["Deny", "Don't run", "Reject", "Keep guarding", "No"]);
/** What a modal dialog shows in full on every platform. */
const DIALOG_MAX_CHARS = 1500;
const DIALOG_MAX_LINES = 25;

/** Whether a message can be shown whole in a modal dialog. */
export function fitsDialog(message: string): boolean {
    return message.length <= DIALOG_MAX_CHARS && message.split("\n").length <= DIALOG_MAX_LINES;
}

export class Approvals implements vscode.Disposable, vscode.TextDocumentContentProvider {
    private texts = new Map<string, string>();
    private seq = 0;
    private readonly registration = vscode.workspace.registerTextDocumentContentProvider(SCHEME, this);

    provideTextDocumentContent(uri: vscode.Uri): string {
        return this.texts.get(uri.path) ?? "";
    }

    dispose(): void {
        this.registration.dispose();
        this.texts.clear();
    }

    async ask(p: lc.ShowMessageRequestParams): Promise<lc.MessageActionItem | null> {
        const actions = p.actions ?? [];
        const show = p.type === 1 ? vscode.window.showErrorMessage : p.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
        const [head, ...rest] = p.message.split("\n");
        if (actions.length === 0) {
            void show(p.message);
            return null;
        }
        const titles = actions.map((a) => a.title);
        const pick = (title: string | undefined) => actions.find((a) => a.title === title) ?? null;
        if (fitsDialog(p.message)) {
            const detail = rest.join("\n").replace(/^\n+/, "");
            return pick(await show(head, { modal: true, detail }, ...titles));
        }
        const deny = titles.find((t) => DENY_TITLES.has(t));
        const lines = p.message.split("\n").length;
        const first = await show(
            head,
            { modal: true, detail: `The text is too long for this dialog (${lines} lines, ${p.message.length} characters). Read all of it before deciding.` },
            SHOW_FULL,
            ...(deny ? [deny] : []),
        );
        if (first !== SHOW_FULL) {
            return pick(first);
        }
        const uri = vscode.Uri.from({ scheme: SCHEME, path: `/approval-${++this.seq}.sh` });
        this.texts.set(uri.path, p.message);
        await vscode.window.showTextDocument(uri, { preview: true });
        // Not modal: the user scrolls through the document while deciding.
        const title = await show(`${head} The whole text is open in the editor (approval-${this.seq}.sh).`, ...titles);
        this.texts.delete(uri.path);
        return pick(title);
    }
}
