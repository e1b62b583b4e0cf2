// The extension's context (rust-analyzer's ctx.ts): what the commands
// (commands.ts) and the server's messages (events.ts) work on. extension.ts
// implements it; the unit tests pass a fake.

import type * as vscode from "vscode";
import type * as lc from "vscode-languageclient/node";
import type * as ext from "./lsp_ext";
import type { ZotState, Connection } from "./state";
import type { HostToChat, NoticeLevel, PendingChip } from "./webview/protocol";
import type { PanelManager } from "./panels";
import type { ReviewManager } from "./review";
import type { Approvals } from "./approval";

/** The chat view, as the rest of the extension uses it. */
export interface ChatSink {
    readonly visible: boolean;
    post(m: HostToChat): void;
    notice(level: NoticeLevel, text: string, extension?: string): void;
    event(ev: ext.ZotEvent): void;
    reveal(focus?: boolean): Thenable<void> | void;
}

/** The language client, as the commands use it. */
export interface ClientHandle {
    readonly connection: Connection;
    /** The running client, or an error the user can act on. */
    running(): Pick<lc.LanguageClient, "sendRequest">;
    /** The running client after the start in progress, if any (see ZotClient.ready). */
    ready(): Promise<Pick<lc.LanguageClient, "sendRequest">>;
    restart(): Promise<void>;
    /** The session to resume after a crash. */
    resumeSession?: string;
}

/** The chat's input box, as extensions reach it (zot/input/set, zot/input/get). */
export interface ChatInput {
    /** The input's text now (its draft). */
    get(): string;
    /** replace: the input becomes text; paste: text is inserted at its cursor. */
    set(text: string, mode: "replace" | "paste"): void;
}

export interface Ctx {
    readonly state: ZotState;
    /** The chat's input box (none: zot/input/get answers ""). */
    readonly chatInput?: ChatInput;
    readonly client: ClientHandle;
    readonly chat: ChatSink;
    readonly panels: Pick<PanelManager, "open" | "render" | "close">;
    readonly reviews: Pick<ReviewManager, "review" | "accept" | "reject" | "count"> & Partial<Pick<ReviewManager, "uriForCall" | "reveal" | "showCallDiff">>;
    readonly approvals: Pick<Approvals, "ask">;
    readonly output: Pick<vscode.OutputChannel, "appendLine" | "show">;
    updateStatusBar(): void;
    setCommands(cmds: ext.CommandInfo[]): void;
    /** Re-reads state (model, mode, usage) and optionally the transcript. */
    refresh(history: boolean): Promise<void>;
    /** The active editor's selection as a chip (Zot: Prompt adds it to the chat). */
    selectionChip?(): PendingChip | undefined;
    /** A session with messages: the one to restore after a window reload. */
    rememberSession?(id: string | undefined): void;
}
