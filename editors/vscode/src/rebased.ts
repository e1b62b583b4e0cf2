// zot/save's rebased documents: buffers that hold the user's unsaved
// changes as well as zot's. The file gets zot's changes only (the text the
// server sends: the saved file plus zot's edits); the buffer stays as it
// is, dirty. VS Code does not reload a dirty document when its file
// changes, but its next save would fail with "The content of the file is
// newer" (its save checks that the file's mtime is not newer than the one
// it last read, unless the size is the same). Just before that save, the
// file's mtime is set back to the one VS Code knew — only while the file
// still holds exactly what zot wrote, so a change by anyone else still
// gets VS Code's conflict question.

import * as fs from "node:fs/promises";
import * as path from "node:path";
import * as vscode from "vscode";

interface Written {
    /** What zot wrote to the file. */
    text: string;
    /** The file's mtime before zot's first write since VS Code read it. */
    mtime: Date;
}

export class RebasedWrites implements vscode.Disposable {
    private readonly written = new Map<string, Written>();
    private readonly subscriptions: vscode.Disposable[];

    constructor() {
        this.subscriptions = [
            vscode.workspace.onWillSaveTextDocument((e) => {
                const k = e.document.uri.toString();
                const w = this.written.get(k);
                if (w) {
                    this.written.delete(k);
                    e.waitUntil(restoreMtime(e.document.uri.fsPath, w));
                }
            }),
            vscode.workspace.onDidCloseTextDocument((d) => this.written.delete(d.uri.toString())),
        ];
    }

    /** Writes text to uri's file (temp file + rename, the mode kept), not to its buffer. */
    async write(uri: vscode.Uri, text: string): Promise<void> {
        if (uri.scheme !== "file") {
            throw new Error(`${uri.toString()} is not a file on disk`);
        }
        const file = uri.fsPath;
        const st = await fs.stat(file);
        const prev = this.written.get(uri.toString());
        await writeAtomic(file, text, st.mode);
        this.written.set(uri.toString(), { text, mtime: prev?.mtime ?? st.mtime });
    }

    dispose(): void {
        for (const s of this.subscriptions) {
            s.dispose();
        }
        this.written.clear();
    }
}

async function writeAtomic(file: string, text: string, mode: number): Promise<void> {
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.zot-${process.pid}-${Date.now()}`);
    try {
        await fs.writeFile(tmp, text, { mode: mode & 0o7777 });
        await fs.chmod(tmp, mode & 0o7777); // writeFile's mode is masked by the umask
        await fs.rename(tmp, file);
    } catch (e) {
        await fs.rm(tmp, { force: true });
        throw e;
    }
}

/** Sets file's mtime back to w.mtime if the file still holds what zot wrote. */
async function restoreMtime(file: string, w: Written): Promise<void> {
    try {
        if ((await fs.readFile(file, "utf8")) !== w.text) {
            return; // changed by someone else since: VS Code's question is right
        }
        const st = await fs.stat(file);
        await fs.utimes(file, st.atime, w.mtime);
    } catch {
        // Gone or unreadable: VS Code's own save reports it.
    }
}
