// The zot/* extensions of LSP, declared once and typed: every method of
// docs/protocol.md (protocol version 1) with its params and result, in the
// order of its method index. The rest of the extension uses only these
// constants (the model is rust-analyzer's editors/code/src/lsp_ext.ts).
// server/protocol.go is the Go half and editors/nvim/lua/zot/protocol.lua
// the Lua one; server/contract_test.go checks that they, and the docs,
// agree (method names and kinds, the fields of each named type).
//
// This file imports only vscode-languageclient's message-type classes
// (re-exported from vscode-jsonrpc), so the webview-free tests can load it.

import * as lc from "vscode-languageclient";

/** The major version of the zot/* contract this client speaks. */
export const PROTOCOL_VERSION = 1;
/**
 * The revision of docs/protocol.md this client needs at least: a server
 * reporting an older one (experimental.zot.protocol; none before revision
 * 11) is refused with one message (handshake.ts). Never newer than the
 * server's ProtocolRevision (server/contract_test.go checks).
 */
export const PROTOCOL_REVISION = 11;

// ---------------------------------------------------------------- shared

export interface Position {
    line: number;
    character: number;
}
export interface Range {
    start: Position;
    end: Position;
}

export interface Usage {
    input: number;
    output: number;
    cache_read: number;
    cache_write: number;
    cost_usd: number;
}

/** A content block of a message, as the server sends it (snake_case as zot rpc). */
export interface WireContent {
    type: "text" | "image" | "tool_call" | "tool_result" | string;
    text?: string;
    mime_type?: string;
    bytes?: number;
    id?: string;
    name?: string;
    args?: unknown;
    call_id?: string;
    is_error?: boolean;
    content?: WireContent[];
    /** A thinking block whose text the API sent encrypted. */
    redacted?: boolean;
}

export interface WireMessage {
    role: "user" | "assistant" | string;
    content: WireContent[];
    time: string;
}

/** Slash command (built-in or from an extension). */
export interface CommandInfo {
    name: string;
    description: string;
    source: "builtin" | "extension" | "mcp" | string;
    extension?: string;
}

/** experimental.zot in the initialize result. */
export interface ServerInfo {
    protocolVersion: number;
    /** The protocol revision the server implements (absent before revision 11). */
    protocol?: number;
    version: string;
    provider: string;
    model: string;
    reasoning?: "off" | "low" | "medium" | "high";
    cwd: string;
    permissionMode: PermissionMode;
    commands: CommandInfo[];
    /** Why the agent cannot run (no API key …), meant for the user as is. */
    error?: string;
}

/** capabilities.experimental.zot the client sends in initialize. */
export interface ClientCapabilities {
    reviewEdit: boolean;
    save: boolean;
    panels: boolean;
    /** The client shows zot/notify itself: no window/showMessage copy. */
    notify: boolean;
    /** The client answers zot/ui/request and shows zot/ui/status and zot/ui/widget. */
    ui?: boolean;
    /** The client's chat input answers zot/input/get and takes zot/input/set. */
    input?: boolean;
    /** The client shows zot/ui/request kind "editor" as a multi-line box. */
    editor?: boolean;
}

export type PermissionMode = "auto" | "ask" | "readonly";

/** initializationOptions: each set field overrides the server's command line. */
export interface InitializationOptions {
    provider?: string;
    model?: string;
    reasoning?: "off" | "low" | "medium" | "high";
    apiKey?: string;
    baseUrl?: string;
    permissionMode?: PermissionMode;
    ext?: string[];
    maxSteps?: number;
    appendSystemPrompt?: string;
    resume?: string;
    /** Directories outside the workspace writable without asking (--add-dir). */
    addDirs?: string[];
    /** pi extensions' flags (registerFlag), as --flag name=value (zot.piFlags). */
    piFlags?: Record<string, string | boolean | number>;
}

// ---------------------------------------------------------------- runs

export interface ImageParam {
    mimeType: string;
    data: string;
}

export interface PromptContext {
    uri: string;
    range?: Range;
    selectionText?: string;
}

export interface PromptParams {
    text: string;
    images?: ImageParam[];
    context?: PromptContext;
    /** Chips: each becomes a `<context …>` block of the user's message. */
    attachments?: Attachment[];
}

export type AttachmentKind = "file" | "selection" | "problems" | "terminal" | "mcpResource";

/** One piece of context attached to a prompt (docs/protocol.md, "Attachments"). */
export interface Attachment {
    kind: AttachmentKind;
    uri?: string;
    range?: Range;
    text?: string;
    server?: string;
    label?: string;
    diagnostics?: AttachedDiagnostic[];
}

export interface AttachedDiagnostic {
    uri: string;
    range: Range;
    severity: "error" | "warning" | "information" | "hint";
    message: string;
    source?: string;
    code?: string;
}

/** The answer to zot/prompt, zot/compact and prompt commands: the run's id. */
export interface RunStarted {
    runId: string;
    queued: boolean;
    ahead?: number;
}
export const prompt = new lc.RequestType<PromptParams, RunStarted, void>("zot/prompt");

/** Runs the last prompt again from where it was sent (the old answer stays in the session file only). */
export const retry = new lc.RequestType0<RunStarted, void>("zot/retry");

export interface ResendParams {
    /** The user message to replace: a user_message event's messageIndex, or an index into zot/messages. */
    messageIndex: number;
    text: string;
    images?: ImageParam[];
    context?: PromptContext;
    attachments?: Attachment[];
}
export const resend = new lc.RequestType<ResendParams, RunStarted, void>("zot/resend");

export interface ApplyCodeParams {
    uri: string;
    text: string;
    /** Replace this range; without it the whole file. */
    range?: Range;
}
export interface ApplyCodeResult {
    applied: boolean;
    message?: string;
}
export const applyCode = new lc.RequestType<ApplyCodeParams, ApplyCodeResult, void>("zot/applyCode");

// Checkpoints (docs/protocol.md, "Checkpoints"): the workspace recorded
// before every prompt; restore code, conversation or both; compare.
export interface CheckpointInfo {
    id: string;
    messageIndex: number;
    prompt: string;
    kind: "prompt" | "restore";
    time: string;
    filesChanged: number;
}
export interface CheckpointsResult {
    checkpoints: CheckpointInfo[];
}
export const checkpoints = new lc.RequestType0<CheckpointsResult, void>("zot/checkpoints");

export interface CheckpointRestoreParams {
    checkpoint: string;
    mode: "code" | "conversation" | "both";
}
export interface CheckpointFileChange {
    path: string;
    uri: string;
    action: "restored" | "removed" | "recreated";
}
export interface CheckpointRestoreResult {
    checkpoint: string;
    mode: string;
    undo: string;
    files: CheckpointFileChange[];
    messageCount: number;
    messagesRemoved: number;
}
export const checkpointRestore = new lc.RequestType<CheckpointRestoreParams, CheckpointRestoreResult, void>("zot/checkpoint/restore");

export interface CheckpointDiffParams {
    checkpoint: string;
}
export interface CheckpointFileDiff {
    path: string;
    uri: string;
    status: "added" | "deleted" | "modified";
    diff: string;
}
export interface CheckpointDiffResult {
    checkpoint: string;
    files: CheckpointFileDiff[];
}
export const checkpointDiff = new lc.RequestType<CheckpointDiffParams, CheckpointDiffResult, void>("zot/checkpoint/diff");

export interface SessionForkParams {
    messageIndex: number;
    withFiles?: boolean;
}
export interface SessionForkResult {
    sessionId: string;
    forkedFrom: string;
    messageCount: number;
    files: CheckpointFileChange[];
    undo?: string;
}
export const sessionFork = new lc.RequestType<SessionForkParams, SessionForkResult, void>("zot/session/fork");

/** An extension moved the conversation (its fork, navigate_tree or new_session action): draw it again. */
export interface SessionChangedParams {
    sessionId: string;
    messageCount: number;
    /** fork, tree, new or resume */
    reason: string;
    /** The prompt a navigation went back to, for the chat's input. */
    editorText?: string;
}
export const sessionChanged = new lc.NotificationType<SessionChangedParams>("zot/session/changed");

export interface AbortParams {
    clearQueue?: boolean;
}
export interface AbortResult {
    aborted: string | null;
    dropped: string[];
}
export const abort = new lc.RequestType<AbortParams, AbortResult, void>("zot/abort");

export interface StateResult {
    provider: string;
    model: string;
    /** The thinking level requests are sent with. */
    reasoning: ReasoningLevel;
    cwd: string;
    message_count: number;
    busy: boolean;
    usage: Usage;
    session_id?: string;
    /** The locked session the current one was copied from (resumed while open in another zot). */
    forked_from?: string;
    permissionMode: PermissionMode;
    runId?: string;
    queued: number;
}
export const state = new lc.RequestType0<StateResult, void>("zot/state");

export interface MessagesResult {
    messages: WireMessage[];
}
export const messages = new lc.RequestType0<MessagesResult, void>("zot/messages");
export interface ClearResult {
    cleared: boolean;
}
export const clear = new lc.RequestType0<ClearResult, void>("zot/clear");
export const compact = new lc.RequestType0<RunStarted, void>("zot/compact");

/** The user's own shell command (`!cmd`; `!!cmd` keeps it out of the conversation). */
export interface UserBashParams {
    command: string;
    excludeFromContext?: boolean;
}
export const userBash = new lc.RequestType<UserBashParams, RunStarted, void>("zot/userBash");

export interface Model {
    id: string;
    provider: string;
    baseUrl?: string;
    context_window: number;
    max_output: number;
    reasoning: boolean;
    input_price?: number;
    output_price?: number;
    cache_read_price?: number;
    cache_write_price?: number;
}
export interface ModelsResult {
    models: Model[];
    current: string;
}
export const models = new lc.RequestType0<ModelsResult, void>("zot/models");
export interface SetModelParams {
    model: string;
}
export interface SetModelResult {
    model: string;
}
export const setModel = new lc.RequestType<SetModelParams, SetModelResult, void>("zot/setModel");
export type ReasoningLevel = "off" | "low" | "medium" | "high";
export interface SetReasoningParams {
    reasoning: ReasoningLevel;
}
export interface SetReasoningResult {
    /** The level now in effect (from the next model call). */
    reasoning: ReasoningLevel;
}
export const setReasoning = new lc.RequestType<SetReasoningParams, SetReasoningResult, void>("zot/setReasoning");
export interface SetPermissionModeParams {
    mode: PermissionMode;
}
export interface SetPermissionModeResult {
    mode: PermissionMode;
}
export const setPermissionMode = new lc.RequestType<SetPermissionModeParams, SetPermissionModeResult, void>(
    "zot/setPermissionMode",
);

// ---------------------------------------------------------------- commands

export interface CommandsResult {
    commands: CommandInfo[];
}
export const commands = new lc.RequestType0<CommandsResult, void>("zot/commands");

/** A SKILL.md: /skill:<name> [args] sends its body as the prompt. */
export interface SkillInfo {
    name: string;
    description: string;
    allowedTools?: string[];
    permissions?: unknown;
    body: string;
    path: string;
    source: string;
}
export interface SkillsResult {
    skills: SkillInfo[];
}
export const skills = new lc.RequestType0<SkillsResult, void>("zot/skills");

export interface CommandParams {
    name: string;
    args?: string;
}
/** What the editor should do after a slash command. */
export interface CommandResult {
    action: "prompt" | "insert" | "display" | "open_panel" | "noop";
    prompt?: string;
    insert?: string;
    display?: string;
    panelId?: string;
    runId?: string;
    queued?: boolean;
    /** An extension's error text, shown whatever the action. */
    error?: string;
}
export const command = new lc.RequestType<CommandParams, CommandResult, void>("zot/command");

/** Completion of a command's argument: `args` is what is typed after the name. */
export interface CommandCompleteParams {
    name: string;
    args: string;
}
export interface CommandCompletion {
    value: string;
    description?: string;
}
export interface CommandCompleteResult {
    completions: CommandCompletion[];
}
export const commandComplete = new lc.RequestType<CommandCompleteParams, CommandCompleteResult, void>(
    "zot/command/complete",
);

// ---------------------------------------------------------------- sessions

export interface SessionInfo {
    id: string;
    path: string;
    cwd: string;
    created: string;
    modified: string;
    title: string;
    messages: number;
    /** The session this one was forked from. */
    parent?: string;
}
export interface SessionsResult {
    sessions: SessionInfo[];
    current: string;
}
export const sessions = new lc.RequestType0<SessionsResult, void>("zot/sessions");
export interface SessionResult {
    sessionId: string;
    messageCount: number;
    /** The session asked for was open in another zot: this is a copy of it. */
    forkedFrom?: string;
    /** Says so, to show the user. */
    message?: string;
}
export interface ResumeParams {
    /** A session id from zot/sessions, or "latest". */
    id: string;
}
export const sessionResume = new lc.RequestType<ResumeParams, SessionResult, void>("zot/session/resume");
export const sessionNew = new lc.RequestType0<SessionResult, void>("zot/session/new");

// ---------------------------------------------------------------- extensions

export interface ExtensionStatus {
    name: string;
    version?: string;
    source: "ext" | "project" | "global" | string;
    dir: string;
    state: "starting" | "loaded" | "restarting" | "failed" | "untrusted" | "disabled" | "shadowed" | "invalid" | "stopped" | string;
    reason?: string;
    pid?: number;
    commands: string[];
    tools: string[];
    /** A pi extension's registerShortcut keys (zot.runShortcut runs them). */
    shortcuts?: Shortcut[];
}
/** One registerShortcut of a pi extension: run with zot/command `command`. */
export interface Shortcut {
    /** As pi spells it: ctrl+shift+t. */
    key: string;
    command: string;
    description?: string;
}
export interface ExtensionsResult {
    extensions: ExtensionStatus[];
    commands: CommandInfo[];
    loading?: boolean;
    error?: string;
}
export const extensions = new lc.RequestType0<ExtensionsResult, void>("zot/extensions");
export const extensionsReload = new lc.RequestType0<ExtensionsResult, void>("zot/extensions/reload");
/** Server → client: the extensions or their commands changed (start, reload, crash). */
export const extensionsChanged = new lc.NotificationType<ExtensionsResult>("zot/extensions/changed");

// ---------------------------------------------------------------- MCP servers

export interface MCPServerStatus {
    name: string;
    scope: "user" | "project" | "flag" | "session" | string;
    file?: string;
    transport: "stdio" | "http" | "sse" | string;
    command: string;
    state: "starting" | "ready" | "restarting" | "failed" | "untrusted" | "invalid" | "stopped" | string;
    tools: string[];
    lastError?: string;
    restarts?: number;
    pid?: number;
    log?: string;
}
export interface MCPResult {
    servers: MCPServerStatus[];
    errors?: string[];
    disabled?: boolean;
}
export interface MCPRestartParams {
    name: string;
}
export const mcp = new lc.RequestType0<MCPResult, void>("zot/mcp");
export const mcpRestart = new lc.RequestType<MCPRestartParams, MCPResult, void>("zot/mcp/restart");
export interface MCPResource {
    server: string;
    uri: string;
    name: string;
    title?: string;
    description?: string;
    mimeType?: string;
}
export interface MCPResourcesResult {
    resources: MCPResource[];
}
export const mcpResources = new lc.RequestType0<MCPResourcesResult, void>("zot/mcp/resources");
/** Server → client: an MCP server's state or tools changed. */
export const mcpChanged = new lc.NotificationType<MCPResult>("zot/mcp/changed");

export interface PingResult {
    pong: boolean;
}
export const ping = new lc.RequestType0<PingResult, void>("zot/ping");

// ---------------------------------------------------------------- panels

export interface Panel {
    panelId: string;
    extension: string;
    title: string;
    lines: string[];
    footer: string;
}
export interface PanelCloseParams {
    panelId: string;
    extension?: string;
}
/** zot's panel key names (as extensions receive them). */
export type PanelKey =
    | "up"
    | "down"
    | "left"
    | "right"
    | "enter"
    | "esc"
    | "tab"
    | "pageup"
    | "pagedown"
    | "home"
    | "end"
    | "backspace"
    | "delete"
    | "rune"
    /** With esc, closes the panel (zot/panel/close comes back). */
    | "ctrl+c";
export interface PanelKeyParams {
    panelId: string;
    key: PanelKey;
    /** The typed character, with key "rune". */
    text?: string;
}
export const panelOpen = new lc.NotificationType<Panel>("zot/panel/open");
export const panelRender = new lc.NotificationType<Panel>("zot/panel/render");
export const panelClose = new lc.NotificationType<PanelCloseParams>("zot/panel/close");
export const panelKey = new lc.NotificationType<PanelKeyParams>("zot/panel/key");
export const panelClosed = new lc.NotificationType<PanelCloseParams>("zot/panel/closed");

// ---------------------------------------------------------------- server → client

/** warn and error also arrive as window/showMessage. */
export type NotifyLevel = "info" | "success" | "warn" | "error" | string;
export interface NotifyParams {
    extension: string;
    level: NotifyLevel;
    message: string;
}
export const notify = new lc.NotificationType<NotifyParams>("zot/notify");

export interface ReviewEditParams {
    uri: string;
    oldText: string;
    newText: string;
    toolCallId: string;
    tool?: string;
}
export interface ReviewEditResult {
    decision: "accept" | "reject";
    /** The text the user accepted, when they changed the proposal. */
    text?: string;
    /** Why the user rejected it (told to the model). */
    message?: string;
}
export const reviewEdit = new lc.RequestType<ReviewEditParams, ReviewEditResult, void>("zot/reviewEdit");

export interface SaveParams {
    uris: string[];
    /** Buffers with the user's unsaved changes: write text to the file, keep the buffer dirty, answer in written. */
    rebased?: RebasedDoc[];
}
export interface RebasedDoc {
    uri: string;
    text: string;
}
export interface SaveFailed {
    uri: string;
    reason: string;
}
export interface SaveResult {
    saved: string[];
    /** The rebased documents the client wrote. */
    written?: string[];
    failed?: SaveFailed[];
}
export const save = new lc.RequestType<SaveParams, SaveResult, void>("zot/save");

/** An extension asks the user (client capability experimental.zot.ui). */
export interface UIRequestParams {
    extension: string;
    kind: "confirm" | "select" | "input" | "editor";
    title?: string;
    message?: string;
    options?: string[];
    placeholder?: string;
    default?: string;
}
export interface UIRequestResult {
    /** true/false for confirm; the chosen option or the typed text. */
    value?: boolean | string;
    cancelled?: boolean;
}
export const uiRequest = new lc.RequestType<UIRequestParams, UIRequestResult, void>("zot/ui/request");

/** An extension's status item; text null clears it. */
export interface UIStatusParams {
    extension: string;
    key: string;
    text: string | null;
}
export const uiStatus = new lc.NotificationType<UIStatusParams>("zot/ui/status");

/** Lines above the chat input; lines null clears the widget. */
export interface UIWidgetParams {
    extension: string;
    key: string;
    lines: string[] | null;
}
export const uiWidget = new lc.NotificationType<UIWidgetParams>("zot/ui/widget");

/** An extension sets the chat input (client capability experimental.zot.input). */
export interface InputSetParams {
    extension: string;
    text: string;
    /** replace: the input becomes text; paste: text is inserted at the cursor. */
    mode: "replace" | "paste";
}
export const inputSet = new lc.NotificationType<InputSetParams>("zot/input/set");

/** An extension reads the chat input. */
export interface InputGetParams {
    extension: string;
}
export interface InputGetResult {
    text: string;
}
export const inputGet = new lc.RequestType<InputGetParams, InputGetResult, void>("zot/input/get");

// ---------------------------------------------------------------- events

/** zot/event: one event of a run, tagged with its runId. */
export type ZotEvent =
    | { type: "turn_start"; step: number; runId: string }
    | { type: "user_message"; content: WireContent[]; time: string; runId: string; messageIndex?: number }
    | { type: "assistant_start"; runId: string }
    | { type: "text_delta"; delta: string; runId: string }
    | { type: "thinking_delta"; text: string; runId: string }
    | { type: "tool_call"; id: string; name: string; args: unknown; runId: string }
    | { type: "tool_progress"; id: string; text: string; runId: string }
    | { type: "tool_result"; id: string; is_error: boolean; content: WireContent[]; runId: string }
    | { type: "assistant_message"; content: WireContent[]; time: string; runId: string }
    | ({ type: "usage"; cumulative: Usage; runId: string } & Usage)
    | { type: "turn_end"; stop: "end_turn" | "tool_use" | "length" | "error" | "aborted" | string; error?: string; runId: string }
    | { type: "done"; runId: string }
    | { type: "error"; message: string; runId: string }
    | { type: "compact_done"; summary: string; runId: string }
    | { type: "user_bash_start"; command: string; exclude_from_context: boolean; runId: string }
    | { type: "user_bash_output"; text: string; runId: string }
    | ({ type: "user_bash"; runId: string } & UserBashEnd);

/** How the user's own command (zot/userBash) ended. */
export interface UserBashEnd {
    command: string;
    exclude_from_context: boolean;
    output?: string;
    exit_code?: number;
    cancelled?: boolean;
    truncated?: boolean;
    note?: string;
    message_index?: number;
    blocked?: boolean;
    reason?: string;
    extension?: string;
}

export const event = new lc.NotificationType<ZotEvent>("zot/event");

/** JSON-RPC error codes of zot (docs/protocol.md, "Errors"). */
export const ErrorCodes = {
    NoRuntime: -32001,
    ServerNotInitialized: -32002,
    RequestCancelled: -32800,
    RequestFailed: -32803,
} as const;
