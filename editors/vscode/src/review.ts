// zot/reviewEdit: a diff editor (the file as it is ↔ zot's proposal, which
// the user may edit) with Accept / Reject in the editor title, and a
// notification with Accept / Reject / Open Diff. The answer is {decision,
// text?}: text when the user changed the proposal.

import * as vscode from "vscode";
import * as path from "path";
import type * as ext from "./lsp_ext";

export const PROPOSAL_SCHEME = "zot-review";
export const ORIGINAL_SCHEME = "zot-review-original";
const CONTEXT_KEY = "zot.reviewing";
// The notification's buttons.
const ACCEPT = "Accept";
const REJECT = "Reject";
const OPEN_DIFF = "Open Diff";

/** How a review ended: withdrawn when zot stopped waiting (or is gone). */
type Outcome = "accepted" | "rejected" | "withdrawn";

/** A small in-memory file system: one file per review side. */
class MemFS implements vscode.FileSystemProvider {
    private files = new Map<string, { data: Uint8Array; mtime: number }>();
    private readonly _onDidChangeFile = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
    readonly onDidChangeFile = this._onDidChangeFile.event;

    set(uri: vscode.Uri, text: string): void {
        this.files.set(uri.path, { data: Buffer.from(text, "utf8"), mtime: Date.now() });
    }
    get(uri: vscode.Uri): string | undefined {
        const f = this.files.get(uri.path);
        return f ? Buffer.from(f.data).toString("utf8") : undefined;
    }
    delete(uri: vscode.Uri): void {
        this.files.delete(uri.path);
    }
    watch(): vscode.Disposable {
        return new vscode.Disposable(() => undefined);
    }
    stat(uri: vscode.Uri): vscode.FileStat {
        const f = this.files.get(uri.path);
        if (f) {
            return { type: vscode.FileType.File, ctime: f.mtime, mtime: f.mtime, size: f.data.byteLength };
        }
        if ([...this.files.keys()].some((k) => k.startsWith(uri.path.replace(/\/?$/, "/")))) {
            return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0 };
        }
        throw vscode.FileSystemError.FileNotFound(uri);
    }
    readDirectory(): [string, vscode.FileType][] {
        return [];
    }
    createDirectory(): void {}
    readFile(uri: vscode.Uri): Uint8Array {
        const f = this.files.get(uri.path);
        if (!f) {
            throw vscode.FileSystemError.FileNotFound(uri);
        }
        return f.data;
    }
    writeFile(uri: vscode.Uri, content: Uint8Array): void {
        this.files.set(uri.path, { data: content, mtime: Date.now() });
        this._onDidChangeFile.fire([{ type: vscode.FileChangeType.Changed, uri }]);
    }
    rename(): void {
        throw vscode.FileSystemError.NoPermissions("zot review files cannot be renamed");
    }
}

interface Pending {
    id: string;
    params: ext.ReviewEditParams;
    left: vscode.Uri;
    right: vscode.Uri;
    /** The diff editor's title. */
    title: string;
    /** undefined: abandoned (the connection to zot is gone; nothing to answer). */
    settle: (r: ext.ReviewEditResult | undefined, how?: Outcome) => void;
    settled: boolean;
    outcome?: Outcome;
}

export class ReviewManager implements vscode.Disposable {
    private readonly proposals = new MemFS();
    private readonly originals = new MemFS();
    private readonly pending = new Map<string, Pending>();
    private seq = 0;
    private readonly disposables: vscode.Disposable[] = [];

    /** Told when a tool call's review starts (true) and ends (false): the chat card's Accept / Reject. */
    onReviewing: (toolCallId: string, pending: boolean) => void = () => undefined;

    constructor(private readonly log: (s: string) => void) {
        this.disposables.push(
            vscode.workspace.registerFileSystemProvider(PROPOSAL_SCHEME, this.proposals, { isCaseSensitive: true }),
            vscode.workspace.registerFileSystemProvider(ORIGINAL_SCHEME, this.originals, { isCaseSensitive: true, isReadonly: true }),
            vscode.window.tabGroups.onDidChangeTabs((e) => this.onTabsClosed(e.closed)),
        );
    }

    /** Handles one zot/reviewEdit request. */
    async review(params: ext.ReviewEditParams, token: vscode.CancellationToken): Promise<ext.ReviewEditResult> {
        const id = String(++this.seq);
        const target = vscode.Uri.parse(params.uri);
        const base = path.posix.basename(target.path) || "file";
        const left = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${id}/${base}` });
        const right = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${id}/${base}` });
        this.originals.set(left, params.oldText);
        this.proposals.set(right, params.newText);
        const shown = vscode.workspace.asRelativePath(target, false);
        const verb = params.oldText === "" ? "create" : "change";

        const title = `${base} ↔ zot's proposed ${verb} (editable)`;
        let p!: Pending;
        const result = new Promise<ext.ReviewEditResult | undefined>((resolve) => {
            p = { id, params, left, right, title, settled: false, settle: () => undefined };
            p.settle = (r, how) => {
                if (p.settled) {
                    return;
                }
                p.settled = true;
                p.outcome = how ?? (r === undefined ? "withdrawn" : r.decision === "accept" ? "accepted" : "rejected");
                this.pending.delete(id);
                if (params.toolCallId) {
                    this.onReviewing(params.toolCallId, false);
                }
                void this.updateContext();
                resolve(r);
            };
            this.pending.set(id, p);
        });
        void this.updateContext();
        if (params.toolCallId) {
            this.onReviewing(params.toolCallId, true);
        }
        // message is only ever the user's own words (zot quotes it to the model).
        token.onCancellationRequested(() => this.finish(id, { decision: "reject" }, "withdrawn"));

        try {
            await this.openDiff(p);
        } catch (e) {
            this.log(`[review] cannot open the diff: ${e instanceof Error ? e.message : String(e)}`);
        }
        void this.notify(p, `zot wants to ${verb} ${shown}${params.tool ? ` (${params.tool})` : ""}`, shown);
        const answer = await result;
        if (answer === undefined) {
            // Abandoned: zot is gone. The language client writes whatever a
            // request handler returns (or throws) to the connection, and the
            // closed pipe fails with ERR_STREAM_DESTROYED; so this request is
            // never answered. Its connection is being dropped, and this
            // promise with it.
            return new Promise<never>(() => undefined);
        }
        return answer;
    }

    /**
     * The review's notification, one at a time. A message closes on any
     * click and an extension cannot close it: it is shown again after
     * Open Diff (or a Reject taken back with Escape) while the review
     * waits, and a click after the review was decided elsewhere only says
     * so. Dismissing it decides nothing: the diff and the chat card still
     * do.
     */
    private async notify(p: Pending, message: string, shown: string): Promise<void> {
        while (!p.settled) {
            const choice = await vscode.window.showInformationMessage(message, ACCEPT, REJECT, OPEN_DIFF);
            if (choice === undefined) {
                return;
            }
            if (p.settled) {
                vscode.window.setStatusBarMessage(`zot: the change to ${shown} was already ${p.outcome}`, 5000);
                return;
            }
            try {
                // The diff title's own commands, with this review's uri:
                // accept takes the user's edits, reject asks why.
                if (choice === ACCEPT) {
                    await vscode.commands.executeCommand("zot.review.accept", p.right);
                } else if (choice === REJECT) {
                    await vscode.commands.executeCommand("zot.review.reject", p.right);
                } else {
                    await this.openDiff(p);
                }
            } catch (e) {
                this.log(`[review] ${choice}: ${e instanceof Error ? e.message : String(e)}`);
                return;
            }
        }
    }

    /** Opens the review's diff, or shows it again. */
    private async openDiff(p: Pending): Promise<void> {
        await vscode.commands.executeCommand("vscode.diff", p.left, p.right, p.title, { preview: false, preserveFocus: false });
    }

    /** The proposal side of the review of a tool call, if one waits. */
    uriForCall(toolCallId: string): vscode.Uri | undefined {
        for (const p of this.pending.values()) {
            if (p.params.toolCallId === toolCallId) {
                return p.right;
            }
        }
        return undefined;
    }

    /** Shows the review's diff again (Open diff on its chat card). */
    async reveal(toolCallId: string): Promise<boolean> {
        for (const p of this.pending.values()) {
            if (p.params.toolCallId === toolCallId) {
                await this.openDiff(p);
                return true;
            }
        }
        return false;
    }

    /**
     * Shows a past edit of the model as a diff: what it replaced and what
     * it wrote, from the tool call's arguments (read-only documents).
     */
    async showCallDiff(name: string, args: unknown): Promise<void> {
        const a = (args ?? {}) as Record<string, unknown>;
        const file = typeof a.path === "string" ? a.path : "file";
        let before = "";
        let after = "";
        if (name === "edit" && Array.isArray(a.edits)) {
            const sep = "\n⋯\n";
            before = a.edits.map((e: { oldText?: unknown }) => (typeof e?.oldText === "string" ? e.oldText : "")).join(sep);
            after = a.edits.map((e: { newText?: unknown }) => (typeof e?.newText === "string" ? e.newText : "")).join(sep);
        } else if (name === "write" && typeof a.content === "string") {
            after = a.content;
        } else {
            return;
        }
        const id = `call-${++this.seq}`;
        const base = path.posix.basename(file);
        const left = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${id}/${base}` });
        const right = vscode.Uri.from({ scheme: ORIGINAL_SCHEME, path: `/${id}/new/${base}` });
        this.originals.set(left, before);
        this.originals.set(right, after);
        await vscode.commands.executeCommand("vscode.diff", left, right, `${file}: zot's ${name} (what it replaced ↔ what it wrote)`, { preview: true });
    }

    private pick(uri?: vscode.Uri): Pending | undefined {
        const u = uri ?? vscode.window.activeTextEditor?.document.uri;
        if (u && (u.scheme === PROPOSAL_SCHEME || u.scheme === ORIGINAL_SCHEME)) {
            const id = u.path.split("/")[1];
            const p = this.pending.get(id);
            if (p) {
                return p;
            }
            if (uri) {
                // A decided review's own button (the notification, or a
                // reason typed after it was decided): never another review.
                return undefined;
            }
        }
        // The diff editor's title actions may not pass a uri; take the latest review.
        const all = [...this.pending.values()];
        return all[all.length - 1];
    }

    /** The accept command (editor title, notification, palette). */
    async accept(idOrUri?: string | vscode.Uri): Promise<void> {
        const p = typeof idOrUri === "string" ? this.pending.get(idOrUri) : this.pick(idOrUri);
        if (!p) {
            void vscode.window.showInformationMessage("zot: no change is waiting for review.");
            return;
        }
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.right.toString());
        const text = doc ? doc.getText() : (this.proposals.get(p.right) ?? p.params.newText);
        const res: ext.ReviewEditResult = { decision: "accept" };
        if (text !== p.params.newText) {
            res.text = text;
        }
        if (doc?.isDirty) {
            await doc.save(); // into the in-memory file: closing the tab then asks nothing
        }
        await this.finish(p.id, res);
    }

    async reject(idOrUri?: string | vscode.Uri, message?: string): Promise<void> {
        const p = typeof idOrUri === "string" ? this.pending.get(idOrUri) : this.pick(idOrUri);
        if (!p) {
            void vscode.window.showInformationMessage("zot: no change is waiting for review.");
            return;
        }
        const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.right.toString());
        if (doc?.isDirty) {
            await doc.save();
        }
        await this.finish(p.id, message ? { decision: "reject", message } : { decision: "reject" });
    }

    private async finish(id: string, res: ext.ReviewEditResult | undefined, how?: Outcome): Promise<void> {
        const p = this.pending.get(id);
        if (!p) {
            return;
        }
        p.settle(res, how);
        await this.closeTabs(p);
        this.proposals.delete(p.right);
        this.originals.delete(p.left);
    }

    private async closeTabs(p: Pending): Promise<void> {
        const tabs: vscode.Tab[] = [];
        for (const g of vscode.window.tabGroups.all) {
            for (const t of g.tabs) {
                const inp = t.input;
                if (inp instanceof vscode.TabInputTextDiff && (inp.modified.toString() === p.right.toString() || inp.original.toString() === p.left.toString())) {
                    tabs.push(t);
                } else if (inp instanceof vscode.TabInputText && (inp.uri.toString() === p.right.toString() || inp.uri.toString() === p.left.toString())) {
                    tabs.push(t);
                }
            }
        }
        if (tabs.length) {
            try {
                await vscode.window.tabGroups.close(tabs, true);
            } catch (e) {
                this.log(`[review] closing the diff: ${e instanceof Error ? e.message : String(e)}`);
            }
        }
    }

    /** Closing the diff without deciding rejects the change (zot is waiting). */
    private onTabsClosed(closed: readonly vscode.Tab[]): void {
        for (const t of closed) {
            const inp = t.input;
            if (inp instanceof vscode.TabInputTextDiff && inp.modified.scheme === PROPOSAL_SCHEME) {
                const id = inp.modified.path.split("/")[1];
                const p = this.pending.get(id);
                if (p && !p.settled) {
                    void this.finish(id, { decision: "reject" });
                }
            }
        }
    }

    /**
     * Closes every open review without answering it: the connection to zot
     * is gone (zot crashed or was stopped), and zot no longer waits.
     */
    abandonAll(): void {
        for (const id of [...this.pending.keys()]) {
            void this.finish(id, undefined);
        }
    }

    get count(): number {
        return this.pending.size;
    }

    private async updateContext(): Promise<void> {
        await vscode.commands.executeCommand("setContext", CONTEXT_KEY, this.pending.size > 0);
    }

    dispose(): void {
        this.abandonAll();
        for (const d of this.disposables) {
            d.dispose();
        }
    }
}
