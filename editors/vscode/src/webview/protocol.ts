// Messages between the extension host and its webviews (chat view and
// extension panels). Types only: both sides import this file, neither
// imports 'vscode' through it.

import type { Attachment, AttachmentKind, CommandCompletion, CommandInfo, MCPServerStatus, Model, Panel, PanelKey, PermissionMode, Usage, WireMessage, ZotEvent } from "../lsp_ext";

/** An entry of the `@` completion list. */
export interface AtItem {
    kind: AttachmentKind;
    /** What the list shows (the file's path, "selection" …). */
    label: string;
    detail?: string;
    /** What the host needs to make the chip: a workspace-relative path, an MCP server + "\n" + URI, or "". */
    key: string;
}

/** A chip above the input: an attachment about to be sent. */
export interface PendingChip {
    label: string;
    /** The tooltip: the whole path, the lines. */
    title?: string;
    attachment: Attachment;
}

/** A button in the chat that runs a command (problems/ fixes). */
export interface ChatAction {
    label: string;
    command: string;
    args?: unknown[];
}

export type ConnectionState = "starting" | "running" | "stopped" | "error";

/** What the header and footer of the chat show. */
export interface ChatStatus {
    connection?: ConnectionState;
    /** A problem to show (server not found, no API key …). */
    message?: string;
    /** What the user can do about message (buttons). */
    actions?: ChatAction[];
    provider?: string;
    model?: string;
    permissionMode?: PermissionMode;
    usage?: Usage;
    /** Tokens the last model call read (input and cache): the context window's fill; 0 unknown. */
    contextUsed?: number;
    version?: string;
}

/** An extension's widget (zot/ui/widget): lines shown above the input. */
export interface ChatWidget {
    extension: string;
    key: string;
    lines: string[];
}

/** The MCP servers' state (zot/mcp, zot/mcp/changed) for the Zot view. */
export interface ChatMcp {
    servers: MCPServerStatus[];
    disabled?: boolean;
}

export type HostToChat =
    | { type: "status"; status: ChatStatus }
    | { type: "commands"; commands: CommandInfo[] }
    | { type: "models"; models: Model[]; current: string }
    /** A batch of zot/event notifications, in arrival order. */
    /** firstDelta: the last event is an answer's first delta, drawn at once (not on the next frame). */
    | { type: "events"; events: ZotEvent[]; firstDelta?: boolean }
    /** Replace the transcript (resume, reconnect). */
    | { type: "history"; messages: WireMessage[] }
    /** Drop the transcript (new session, /clear). */
    | { type: "clear" }
    /** A run was accepted (zot/prompt's answer). */
    | { type: "runStarted"; runId: string; queued: boolean; ahead?: number }
    /** A line in the transcript: command output, notify, errors. */
    | { type: "notice"; level: NoticeLevel; text: string; source?: string }
    /** Put text into the input box (command action insert). */
    | { type: "insert"; text: string }
    /** An extension sets the input (zot/input/set): its text becomes text, or (paste) text goes in at the cursor. */
    | { type: "setInput"; text: string; paste: boolean }
    | { type: "focusInput" }
    /** Which of the names asked about (resolveFiles) are existing files. */
    | { type: "files"; exists: Record<string, boolean> }
    /** A message could not be sent: its text goes back into the input. */
    | { type: "sendFailed"; text: string; error?: string; actions?: ChatAction[] }
    /** The input's text as last typed (restored after a window reload). */
    | { type: "draft"; text: string }
    /** The `@` completion list for query. */
    | { type: "atItems"; query: string; items: AtItem[] }
    /** Completions of a slash command's argument (argQuery's answer). */
    | { type: "argItems"; name: string; args: string; completions: CommandCompletion[] }
    /** A chip to add above the input (an `@` pick, Zot: Prompt's selection). */
    | { type: "addChip"; chip: PendingChip }
    /** The active editor's file, offered as a chip the user can toggle (none: no file editor). */
    | { type: "activeFile"; chip?: PendingChip }
    /**
     * A retry or a resend is being sent: drop that user message (the last one
     * when messageIndex is absent) and what followed. Posted before the
     * request, so the new run's events (which may come before zot's answer)
     * land after the cut.
     */
    | { type: "truncate"; messageIndex?: number }
    /** zot refused the retry or resend: what the last truncate dropped comes back. */
    | { type: "untruncate" }
    /** A review of a tool call's edit is waiting (pending) or decided. */
    | { type: "review"; toolCallId: string; pending: boolean }
    /** Every extension widget now shown (all of them: replaces the last). */
    | { type: "widgets"; widgets: ChatWidget[] }
    /** Every MCP server's state now (replaces the last). */
    | ({ type: "mcp" } & ChatMcp);

export type NoticeLevel = "info" | "warn" | "error" | "display";

export type ChatToHost =
    | { type: "ready" }
    /** resendIndex: edit and resend the user message of that index. */
    | { type: "send"; text: string; attachments?: Attachment[]; resendIndex?: number }
    /** The `@` word being typed (answered by atItems). */
    | { type: "atQuery"; query: string }
    /** "/name args" typed: complete the argument (zot/command/complete). */
    | { type: "argQuery"; name: string; args: string }
    /** An `@` entry was chosen (answered by addChip). */
    | { type: "pickAt"; item: AtItem }
    /** Retry the last answer. */
    | { type: "retry" }
    /** A user message's "Restore checkpoint…": code, conversation, both or compare (the host asks). */
    | { type: "restoreCheckpoint"; messageIndex: number }
    /** Accept or reject, from the chat's tool card, the review of a tool call's edit. */
    | { type: "reviewDecision"; toolCallId: string; decision: "accept" | "reject" }
    /** Show a tool call's edit as a diff (its review's, when one is open). */
    | { type: "openDiff"; toolCallId: string; name: string; args: unknown }
    /** The input's text, as typed (kept by the host across reloads). */
    | { type: "draft"; text: string }
    /** Names in the transcript that may be files (answered by "files"). */
    | { type: "resolveFiles"; paths: string[] }
    /** A button of a problem (ChatAction) was clicked. */
    | { type: "action"; action: ChatAction }
    /** A code block's button: copy it, insert it at the editor's cursor, or apply it to a file (lang: the fence's language). */
    | { type: "codeAction"; action: "copy" | "insert" | "apply"; code: string; lang?: string }
    | { type: "abort" }
    | { type: "setModel"; model: string }
    | { type: "setMode"; mode: PermissionMode }
    /** The restart button of an MCP server's line. */
    | { type: "mcpRestart"; name: string };

export type HostToPanel = { type: "render"; panel: Panel } | { type: "closed" };

export type PanelToHost = { type: "ready" } | { type: "key"; key: PanelKey; text?: string };
