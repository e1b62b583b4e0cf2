// Extensions that ask the user and show state (docs/protocol.md, zot/ui/*):
// zot/ui/request as a modal (confirm), a QuickPick (select) or an InputBox
// (input), closed when zot cancels the request; zot/ui/status and
// zot/ui/widget as status bar items, one per (extension, key).

import * as vscode from "vscode";
import * as ext from "./lsp_ext";

/** Confirm choices. */
export const YES = "Yes";
export const NO = "No";

export class ExtensionUI implements vscode.Disposable {
    private readonly items = new Map<string, vscode.StatusBarItem>();

    /** zot/ui/request: the user's answer, or cancelled. */
    async request(p: ext.UIRequestParams, token?: vscode.CancellationToken): Promise<ext.UIRequestResult> {
        const prefix = `[${p.extension}] `;
        const title = p.title ?? "";
        const cancelled = new Promise<undefined>((resolve) => token?.onCancellationRequested(() => resolve(undefined)));
        const race = <T>(x: Thenable<T>) => Promise.race([Promise.resolve(x), cancelled]);
        switch (p.kind) {
            case "confirm": {
                const msg = prefix + (title || p.message || "");
                const detail = title && p.message ? p.message : undefined;
                const choice = await race(vscode.window.showWarningMessage(msg, { modal: true, detail }, YES, NO));
                return choice === undefined ? { cancelled: true } : { value: choice === YES };
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
        }
        return { cancelled: true };
    }

    /** zot/ui/status: one status bar item per (extension, key). */
    status(p: ext.UIStatusParams): void {
        this.show(`status:${p.extension}/${p.key}`, p.text === null ? null : [p.text], p.extension);
    }

    /** zot/ui/widget: the first line in the status bar, all in the tooltip. */
    widget(p: ext.UIWidgetParams): void {
        this.show(`widget:${p.extension}/${p.key}`, p.lines, p.extension);
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

    dispose(): void {
        for (const i of this.items.values()) {
            i.dispose();
        }
        this.items.clear();
    }
}
