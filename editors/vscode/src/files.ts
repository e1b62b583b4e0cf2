// File names in the chat: which exist (the webview asks, to link them) and
// opening one at its line (the links' command, zot.openFile).

import * as vscode from "vscode";
import * as path from "path";
import * as os from "os";
import { promises as fs } from "fs";

/** Where a name written in the chat may be: the workspace folders first. */
export function candidates(p: string, folders: readonly string[], home = os.homedir()): string[] {
    if (p.startsWith("~/")) {
        return [path.join(home, p.slice(2))];
    }
    if (path.isAbsolute(p)) {
        // "/src/a.ts" is often meant from the workspace root.
        return [p, ...folders.map((f) => path.join(f, p))];
    }
    return folders.map((f) => path.join(f, p));
}

function folders(): string[] {
    return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
}

/** The file a name refers to, or undefined (directories and missing names). */
export async function findFile(p: string): Promise<string | undefined> {
    for (const c of candidates(p, folders())) {
        try {
            if ((await fs.stat(c)).isFile()) {
                return c;
            }
        } catch {
            // not there
        }
    }
    return undefined;
}

export async function resolveFiles(paths: string[]): Promise<Record<string, boolean>> {
    const out: Record<string, boolean> = {};
    await Promise.all(paths.map(async (p) => (out[p] = (await findFile(p)) !== undefined)));
    return out;
}

/** zot.openFile: opens the file at line:col (1-based; 0 for none). */
export async function openFile(arg: { path?: unknown; line?: unknown; col?: unknown } | undefined): Promise<void> {
    const p = typeof arg?.path === "string" ? arg.path : "";
    const file = p ? await findFile(p) : undefined;
    if (!file) {
        void vscode.window.showWarningMessage(`zot: ${p || "the file"} does not exist (any more).`);
        return;
    }
    const line = Math.max(Number(arg?.line) || 0, 0);
    const col = Math.max(Number(arg?.col) || 0, 0);
    const opts: vscode.TextDocumentShowOptions = { preview: true };
    if (line > 0) {
        const pos = new vscode.Position(line - 1, Math.max(col - 1, 0));
        opts.selection = new vscode.Range(pos, pos);
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file), opts);
}

/** A code block's action: copy it, or insert it at the cursor of the editor last used. */
export async function codeAction(action: "copy" | "insert", code: string): Promise<void> {
    if (action === "copy") {
        await vscode.env.clipboard.writeText(code);
        vscode.window.setStatusBarMessage("zot: code copied", 2000);
        return;
    }
    const ed = vscode.window.activeTextEditor ?? vscode.window.visibleTextEditors[0];
    if (!ed) {
        void vscode.window.showInformationMessage("zot: open a file to insert the code into.");
        return;
    }
    const ok = await ed.edit((b) => {
        for (const sel of ed.selections) {
            b.replace(sel, code);
        }
    });
    if (!ok) {
        void vscode.window.showWarningMessage(`zot: could not insert into ${vscode.workspace.asRelativePath(ed.document.uri)}.`);
        return;
    }
    await vscode.window.showTextDocument(ed.document, ed.viewColumn);
}
