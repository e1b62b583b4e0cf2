// "Restore checkpoint…" on a user message of the chat (docs/protocol.md,
// "Checkpoints"): restore the code, the conversation or both to how they
// were before that prompt, or compare first in a multi-file diff.

import * as vscode from "vscode";
import * as ext from "./lsp_ext";
import type { Ctx } from "./ctx";
import { checkpointFor, checkpointText } from "./checkpoint_text";
import { errorMessage } from "./errors";

/** The scheme of a checkpoint's text in the compare view (read-only). */
export const CHECKPOINT_SCHEME = "zot-checkpoint";

/** The texts the compare view shows, by URI: set before it opens. */
const texts = new Map<string, string>();

export function registerCheckpointContent(): vscode.Disposable {
    return vscode.workspace.registerTextDocumentContentProvider(CHECKPOINT_SCHEME, {
        provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? "",
    });
}

interface Choice extends vscode.QuickPickItem {
    mode?: "code" | "conversation" | "both";
    fork?: "conversation" | "files";
}

/** The user message's "Restore checkpoint…": pick code, conversation, both or compare. */
export async function restoreFromMessage(ctx: Ctx, messageIndex: number): Promise<void> {
    try {
        const c = await ctx.client.ready();
        const { checkpoints } = await c.sendRequest(ext.checkpoints);
        const cp = checkpointFor(checkpoints, messageIndex);
        if (!cp) {
            void vscode.window.showInformationMessage("zot: no checkpoint for this message (one is taken before each prompt zot runs).");
            return;
        }
        const files = `${cp.filesChanged} file${cp.filesChanged === 1 ? "" : "s"} differ from now`;
        const pick = await vscode.window.showQuickPick<Choice>(
            [
                { label: "$(discard) Restore code", description: files, detail: "The files as they were before this prompt (open editors get the text back, undoable)", mode: "code" },
                { label: "$(comment-discussion) Restore conversation", detail: "The conversation as it was before this prompt; the files stay", mode: "conversation" },
                { label: "$(history) Restore both", description: files, mode: "both" },
                { label: "$(diff) Compare", description: files, detail: "What changed since this checkpoint, file by file" },
                { label: "$(repo-forked) Fork a new session here", detail: "The conversation before this prompt continues in a new session; this one is kept", fork: "conversation" },
                { label: "$(repo-forked) Fork a new session here, with these files", description: files, fork: "files" },
            ],
            { title: `zot: checkpoint before "${cp.prompt}"`, placeHolder: "A restore can be undone: it takes a checkpoint first" },
        );
        if (!pick) {
            return;
        }
        if (pick.fork) {
            const f = await c.sendRequest(ext.sessionFork, { messageIndex, withFiles: pick.fork === "files" || undefined });
            await ctx.refresh(true);
            const restored = pick.fork === "files" ? `, ${f.files.length} file(s) restored` : "";
            ctx.chat.notice("info", `Forked into a new session (${f.messageCount} messages${restored}); the previous one is in Zot: Resume Session.`);
            return;
        }
        if (!pick.mode) {
            await compare(ctx, cp);
            return;
        }
        const r = await c.sendRequest(ext.checkpointRestore, { checkpoint: cp.id, mode: pick.mode });
        if (pick.mode !== "code") {
            await ctx.refresh(true);
        }
        const what = pick.mode === "conversation" ? "the conversation" : pick.mode === "code" ? `${r.files.length} file(s)` : `${r.files.length} file(s) and the conversation`;
        ctx.chat.notice("info", `Restored ${what} to before "${cp.prompt}".`);
        const undo = await vscode.window.showInformationMessage(`zot: restored ${what}.`, "Undo");
        if (undo === "Undo") {
            await c.sendRequest(ext.checkpointRestore, { checkpoint: r.undo, mode: pick.mode });
            if (pick.mode !== "code") {
                await ctx.refresh(true);
            }
            ctx.chat.notice("info", "Undid the restore.");
        }
    } catch (e) {
        ctx.chat.notice("error", `Restore checkpoint: ${errorMessage(e)}`);
    }
}

/** Compare: every changed file, checkpoint (left) → now (right), in one multi-file diff. */
async function compare(ctx: Ctx, cp: ext.CheckpointInfo): Promise<void> {
    const c = await ctx.client.ready();
    const d = await c.sendRequest(ext.checkpointDiff, { checkpoint: cp.id });
    if (d.files.length === 0) {
        void vscode.window.showInformationMessage("zot: nothing changed since this checkpoint.");
        return;
    }
    const resources: [vscode.Uri, vscode.Uri | undefined, vscode.Uri | undefined][] = [];
    for (const f of d.files) {
        const now = vscode.Uri.parse(f.uri);
        const before = vscode.Uri.from({ scheme: CHECKPOINT_SCHEME, path: "/" + cp.id + "/" + f.path });
        let nowText = "";
        if (f.status !== "deleted") {
            nowText = (await vscode.workspace.openTextDocument(now)).getText();
        }
        texts.set(before.toString(), f.status === "added" ? "" : checkpointText(f.diff, nowText));
        resources.push([now, f.status === "added" ? undefined : before, f.status === "deleted" ? undefined : now]);
    }
    await vscode.commands.executeCommand("vscode.changes", `zot: since "${cp.prompt}"`, resources);
}
