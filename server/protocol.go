package server

// The zot/* extensions of LSP, declared once: every method of
// docs/protocol.md with its params and result. This is the Go half of
// editors/vscode/src/lsp_ext.ts (and editors/nvim/lua/zot/protocol.lua),
// as rust-analyzer's lsp/ext.rs is of its lsp_ext.ts; contract_test.go
// checks that the four agree. Handlers never spell a method name: they
// use these constants, and the client → server methods are served only
// through the typed table zotMethods (methods.go).

import (
	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/skills"
)

// ProtocolVersion is the major version of the zot/* contract
// (experimental.zot.protocolVersion). Within a major version methods,
// fields and event types are only added.
const ProtocolVersion = 1

// ProtocolRevision counts the changes to docs/protocol.md. A change to the
// document needs a new revision: bump this, the revision in the document's
// header, and add a line to its changelog (contract_test.go checks all
// three, and the changelog line's digest of the document).
const ProtocolRevision = 33

// zotPrefix starts every method of the contract.
const zotPrefix = "zot/"

// Client → server requests.
const (
	MethodPrompt            = "zot/prompt"
	MethodAbort             = "zot/abort"
	MethodCompact           = "zot/compact"
	MethodState             = "zot/state"
	MethodMessages          = "zot/messages"
	MethodClear             = "zot/clear"
	MethodModels            = "zot/models"
	MethodSetModel          = "zot/setModel"
	MethodSetReasoning      = "zot/setReasoning"
	MethodSetPermissionMode = "zot/setPermissionMode"
	MethodPing              = "zot/ping"
	MethodCommands          = "zot/commands"
	MethodCommand           = "zot/command"
	MethodCommandComplete   = "zot/command/complete"
	MethodSkills            = "zot/skills"
	MethodSessions          = "zot/sessions"
	MethodSessionResume     = "zot/session/resume"
	MethodSessionNew        = "zot/session/new"
	MethodSessionFork       = "zot/session/fork"
	MethodExtensions        = "zot/extensions"
	MethodExtensionsReload  = "zot/extensions/reload"
	MethodMCP               = "zot/mcp"
	MethodMCPRestart        = "zot/mcp/restart"
	MethodMCPResources      = "zot/mcp/resources"
	MethodRetry             = "zot/retry"
	MethodResend            = "zot/resend"
	MethodApplyCode         = "zot/applyCode"
	MethodCheckpoints       = "zot/checkpoints"
	MethodCheckpointRestore = "zot/checkpoint/restore"
	MethodCheckpointDiff    = "zot/checkpoint/diff"
	MethodUserBash          = "zot/userBash"
)

// Client → server notifications.
const (
	MethodPanelKey    = "zot/panel/key"
	MethodPanelClosed = "zot/panel/closed"
)

// Server → client notifications.
const (
	MethodEvent             = "zot/event"
	MethodNotify            = "zot/notify"
	MethodPanelOpen         = "zot/panel/open"
	MethodPanelRender       = "zot/panel/render"
	MethodPanelClose        = "zot/panel/close"
	MethodExtensionsChanged = "zot/extensions/changed"
	MethodUIStatus          = "zot/ui/status"
	MethodUIWidget          = "zot/ui/widget"
	MethodMCPChanged        = "zot/mcp/changed"
	MethodSessionChanged    = "zot/session/changed"
	MethodInputSet          = "zot/input/set"
)

// Server → client requests.
const (
	MethodReviewEdit = "zot/reviewEdit"
	MethodSave       = "zot/save"
	MethodUIRequest  = "zot/ui/request"
	MethodInputGet   = "zot/input/get"
)

// The server → client methods, typed: the only way the server sends them.
var (
	notifyEvent             = serverNotification[agent.Event]{MethodEvent} // framed by hand (sendEvent)
	notifyNotify            = serverNotification[NotifyParams]{MethodNotify}
	notifyPanelOpen         = serverNotification[Panel]{MethodPanelOpen}
	notifyPanelRender       = serverNotification[Panel]{MethodPanelRender}
	notifyPanelClose        = serverNotification[PanelCloseParams]{MethodPanelClose}
	notifyExtensionsChanged = serverNotification[ExtensionsResult]{MethodExtensionsChanged}
	notifyMCPChanged        = serverNotification[MCPResult]{MethodMCPChanged}
	requestReviewEdit       = serverRequest[ReviewEditParams, ReviewEditResult]{MethodReviewEdit}
	requestSave             = serverRequest[SaveParams, SaveResult]{MethodSave}
	requestUI               = serverRequest[UIRequestParams, UIRequestResult]{MethodUIRequest}
	notifyUIStatus          = serverNotification[UIStatusParams]{MethodUIStatus}
	notifyUIWidget          = serverNotification[UIWidgetParams]{MethodUIWidget}
	notifySessionChanged    = serverNotification[SessionChangedParams]{MethodSessionChanged}
	notifyInputSet          = serverNotification[InputSetParams]{MethodInputSet}
	requestInputGet         = serverRequest[InputGetParams, InputGetResult]{MethodInputGet}
)

// serverMethods lists the server → client methods for the contract test.
var serverMethods = []methodSpec{
	notifyEvent.spec(), notifyNotify.spec(), notifyPanelOpen.spec(), notifyPanelRender.spec(),
	notifyPanelClose.spec(), notifyExtensionsChanged.spec(), notifyMCPChanged.spec(),
	requestReviewEdit.spec(), requestSave.spec(),
	requestUI.spec(), notifyUIStatus.spec(), notifyUIWidget.spec(), notifySessionChanged.spec(),
	notifyInputSet.spec(), requestInputGet.spec(),
}

// ---------------------------------------------------------------- runs

// PromptParams is zot/prompt's params.
type PromptParams struct {
	Text    string         `json:"text"`
	Images  []ImageParam   `json:"images,omitempty"`
	Context *PromptContext `json:"context,omitempty"`
	// Attachments are the chips the user attached; the server expands
	// each into a delimited context block of the user's message.
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Attachment kinds.
const (
	AttachFile        = "file"
	AttachSelection   = "selection"
	AttachProblems    = "problems"
	AttachTerminal    = "terminal"
	AttachMCPResource = "mcpResource"
)

// Attachment is one piece of context attached to a prompt (docs/protocol.md,
// "Attachments").
type Attachment struct {
	Kind string `json:"kind"` // file | selection | problems | terminal | mcpResource
	// URI: file and selection (required), problems (optional: the file
	// they are about), mcpResource (the resource's URI, required).
	URI string `json:"uri,omitempty"`
	// Range: selection (required); file (optional: only those lines).
	Range *protocol.Range `json:"range,omitempty"`
	// Text: terminal (required: the output); selection (optional: the
	// selected text when the server has no buffer for the URI).
	Text string `json:"text,omitempty"`
	// Server: mcpResource (required: the MCP server's name).
	Server string `json:"server,omitempty"`
	// Label is what the chip shows (the terminal's name …); optional.
	Label string `json:"label,omitempty"`
	// Diagnostics: problems (may be empty: "no problems").
	Diagnostics []AttachedDiagnostic `json:"diagnostics,omitempty"`
}

// AttachedDiagnostic is one problem of a problems attachment.
type AttachedDiagnostic struct {
	URI      string         `json:"uri"`
	Range    protocol.Range `json:"range"`
	Severity string         `json:"severity"` // error | warning | information | hint
	Message  string         `json:"message"`
	Source   string         `json:"source,omitempty"`
	Code     string         `json:"code,omitempty"`
}

// ResendParams is zot/resend's params: the user message at MessageIndex
// (an index into zot/messages, or a user_message event's messageIndex) is
// replaced by this prompt and the conversation after it is dropped.
type ResendParams struct {
	MessageIndex int `json:"messageIndex"`
	PromptParams
}

// ApplyCodeParams is zot/applyCode's params: put Text into the file at
// URI, replacing Range, or the whole file without one.
type ApplyCodeParams struct {
	URI   string          `json:"uri"`
	Text  string          `json:"text"`
	Range *protocol.Range `json:"range,omitempty"`
}

// ApplyCodeResult says whether the text was applied.
type ApplyCodeResult struct {
	Applied bool `json:"applied"`
	// Message says why not (rejected in review …), or what was done.
	Message string `json:"message,omitempty"`
}

// CheckpointsResult is zot/checkpoints: the session's checkpoints, oldest
// first (docs/protocol.md, "Checkpoints").
type CheckpointsResult struct {
	Checkpoints []CheckpointInfo `json:"checkpoints"`
}

// CheckpointInfo is one checkpoint: the workspace recorded before the
// prompt at MessageIndex (Kind "prompt"), or before a restore (Kind
// "restore": restoring it undoes that restore).
type CheckpointInfo struct {
	ID           string `json:"id"`
	MessageIndex int    `json:"messageIndex"`
	Prompt       string `json:"prompt"`
	Kind         string `json:"kind"`
	Time         string `json:"time"` // RFC 3339
	// FilesChanged counts the files that differ between the checkpoint
	// and now (the buffers included): what restoring its code changes.
	FilesChanged int `json:"filesChanged"`
}

// CheckpointRestoreParams is zot/checkpoint/restore's params.
type CheckpointRestoreParams struct {
	Checkpoint string `json:"checkpoint"`
	Mode       string `json:"mode"` // code | conversation | both
}

// CheckpointRestoreResult says what a restore did.
type CheckpointRestoreResult struct {
	Checkpoint string `json:"checkpoint"`
	Mode       string `json:"mode"`
	// Undo is the checkpoint taken just before the restore: restoring it
	// undoes this one.
	Undo            string                 `json:"undo"`
	Files           []CheckpointFileChange `json:"files"`
	MessageCount    int                    `json:"messageCount"`
	MessagesRemoved int                    `json:"messagesRemoved"`
}

// CheckpointFileChange is one file a restore changed.
type CheckpointFileChange struct {
	Path   string `json:"path"` // relative to the workspace, slash-separated
	URI    string `json:"uri"`
	Action string `json:"action"` // restored | removed | recreated
}

// CheckpointDiffParams is zot/checkpoint/diff's params.
type CheckpointDiffParams struct {
	Checkpoint string `json:"checkpoint"`
}

// CheckpointDiffResult is the difference between a checkpoint and now,
// file by file.
type CheckpointDiffResult struct {
	Checkpoint string               `json:"checkpoint"`
	Files      []CheckpointFileDiff `json:"files"`
}

// CheckpointFileDiff is one file's unified diff, checkpoint → now.
type CheckpointFileDiff struct {
	Path   string `json:"path"`
	URI    string `json:"uri"`
	Status string `json:"status"` // added | deleted | modified (since the checkpoint)
	Diff   string `json:"diff"`
}

// ImageParam is one attached image (base64).
type ImageParam struct {
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
	// MimeTypeRPC accepts the RPC spelling mime_type too.
	MimeTypeRPC string `json:"mime_type,omitempty"`
}

// PromptContext is what the user is looking at.
type PromptContext struct {
	URI           string          `json:"uri"`
	Range         *protocol.Range `json:"range,omitempty"`
	SelectionText string          `json:"selectionText,omitempty"`
}

// RunStarted answers zot/prompt, zot/compact and prompt commands at once.
type RunStarted struct {
	RunID string `json:"runId"`
	// Queued: another run is in progress; this one starts after it (and
	// after Ahead-1 other queued runs).
	Queued bool `json:"queued"`
	Ahead  int  `json:"ahead,omitempty"`
}

// UserBashParams is zot/userBash's params: a shell command the user
// typed in the chat (`!cmd`; `!!cmd` with excludeFromContext).
type UserBashParams struct {
	Command            string `json:"command"`
	ExcludeFromContext bool   `json:"excludeFromContext,omitempty"`
}

// AbortParams is zot/abort's params.
type AbortParams struct {
	// ClearQueue also drops the queued runs.
	ClearQueue bool `json:"clearQueue,omitempty"`
}

// AbortResult says what was stopped.
type AbortResult struct {
	Aborted *string  `json:"aborted"`
	Dropped []string `json:"dropped"`
}

// StateResult is zot/state: the RPC get_state object plus the server's own
// fields.
type StateResult struct {
	agent.State
	PermissionMode string `json:"permissionMode"`
	RunID          string `json:"runId,omitempty"`
	Queued         int    `json:"queued"`
}

// MessagesResult is zot/messages: the transcript.
type MessagesResult struct {
	Messages []message.WireMessage `json:"messages"`
}

// ClearResult is zot/clear's result.
type ClearResult struct {
	Cleared bool `json:"cleared"`
}

// ModelsResult is zot/models: the provider's models and the current one.
type ModelsResult struct {
	Models  []provider.Model `json:"models"`
	Current string           `json:"current"`
}

// SetModelParams is zot/setModel's params.
type SetModelParams struct {
	Model string `json:"model"`
}

// SetModelResult is zot/setModel's result: the model now in use.
type SetModelResult struct {
	Model string `json:"model"`
}

// SetReasoningParams is zot/setReasoning's params.
type SetReasoningParams struct {
	Reasoning string `json:"reasoning"`
}

// SetReasoningResult is zot/setReasoning's result: the level now in effect.
type SetReasoningResult struct {
	Reasoning string `json:"reasoning"`
}

// SetPermissionModeParams is zot/setPermissionMode's params.
type SetPermissionModeParams struct {
	Mode string `json:"mode"`
}

// SetPermissionModeResult is zot/setPermissionMode's result.
type SetPermissionModeResult struct {
	Mode PermissionMode `json:"mode"`
}

// PingResult is zot/ping's result.
type PingResult struct {
	Pong bool `json:"pong"`
}

// ---------------------------------------------------------------- commands

// SkillsResult is zot/skills: the skills found, first name wins.
type SkillsResult struct {
	Skills []skills.Skill `json:"skills"`
}

// CommandsResult is zot/commands: built-in commands, then the extensions'.
type CommandsResult struct {
	Commands []CommandInfo `json:"commands"`
}

// CommandInfo is one slash command.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"` // builtin | extension | mcp (a server's prompt; Extension names the server) | skill
	Extension   string `json:"extension,omitempty"`
}

// CommandParams is zot/command's params.
type CommandParams struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

// CommandCompleteParams is zot/command/complete's params: the command
// and what is typed after it so far.
type CommandCompleteParams struct {
	Name string `json:"name"`
	Args string `json:"args"`
}

// CommandCompleteResult is zot/command/complete's result: candidates
// for the argument (the whole argument, replacing what is typed).
type CommandCompleteResult struct {
	Completions []CommandCompletion `json:"completions"`
}

// CommandCompletion is one candidate for a command's argument.
type CommandCompletion struct {
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
}

// CommandResult is zot/command's result: what the editor should do.
type CommandResult struct {
	// Action: prompt (a run started: RunID), insert (put Insert in the
	// input box), display (show Display in the chat), open_panel (a
	// zot/panel/open was sent: PanelID), noop.
	Action  string `json:"action"`
	Prompt  string `json:"prompt,omitempty"`
	Insert  string `json:"insert,omitempty"`
	Display string `json:"display,omitempty"`
	PanelID string `json:"panelId,omitempty"`
	RunID   string `json:"runId,omitempty"`
	Queued  bool   `json:"queued,omitempty"`
	// Error is the extension's error text, shown as an error line
	// whatever the action.
	Error string `json:"error,omitempty"`
}

// ---------------------------------------------------------------- sessions

// SessionsResult is zot/sessions: this workspace's sessions, newest first.
type SessionsResult struct {
	Sessions []session.Info `json:"sessions"`
	Current  string         `json:"current"`
}

// ResumeParams is zot/session/resume's params.
type ResumeParams struct {
	// ID is a session id from zot/sessions, or "latest".
	ID string `json:"id"`
}

// SessionResult answers zot/session/resume and zot/session/new.
type SessionResult struct {
	SessionID    string `json:"sessionId"`
	MessageCount int    `json:"messageCount"`
	// ForkedFrom and Message: the session asked for was open in another
	// zot process, so this one is a new session copied from it.
	ForkedFrom string `json:"forkedFrom,omitempty"`
	Message    string `json:"message,omitempty"`
}

// SessionChangedParams is zot/session/changed's params: an extension
// moved the conversation to another session or point of the session tree
// (its fork or navigate_tree action) or started a new one (new_session);
// the client draws it again (zot/messages).
type SessionChangedParams struct {
	SessionID    string `json:"sessionId"`
	MessageCount int    `json:"messageCount"`
	// Reason is fork, tree or new.
	Reason string `json:"reason"`
	// EditorText is the prompt a navigation went back to, for the chat's
	// input (pi puts it in its editor).
	EditorText string `json:"editorText,omitempty"`
}

// SessionForkParams is zot/session/fork's params: a new session continues
// the conversation before message MessageIndex (a user message's index,
// or the conversation's length); WithFiles also restores the files to the
// checkpoint taken before that prompt.
type SessionForkParams struct {
	MessageIndex int  `json:"messageIndex"`
	WithFiles    bool `json:"withFiles,omitempty"`
}

// SessionForkResult is the new session: ForkedFrom is the session it
// branched from; Files what WithFiles restored, Undo the checkpoint that
// undoes it.
type SessionForkResult struct {
	SessionID    string                 `json:"sessionId"`
	ForkedFrom   string                 `json:"forkedFrom"`
	MessageCount int                    `json:"messageCount"`
	Files        []CheckpointFileChange `json:"files"`
	Undo         string                 `json:"undo,omitempty"`
}

// ---------------------------------------------------------------- extensions

// ExtensionStatus is one extension as zot/extensions lists it.
type ExtensionStatus struct {
	Name     string   `json:"name"`
	Version  string   `json:"version,omitempty"`
	Source   string   `json:"source"` // ext | workspace | project | global
	Dir      string   `json:"dir"`
	State    string   `json:"state"` // loaded | failed | untrusted | disabled | shadowed | starting
	Reason   string   `json:"reason,omitempty"`
	PID      int      `json:"pid,omitempty"`
	Commands []string `json:"commands"`
	Tools    []string `json:"tools"`
	// Shortcuts are a pi extension's registerShortcut keys: commands the
	// user binds in the editor (VS Code zot.runShortcut, Neovim
	// <Plug>(zot-shortcut-KEY)), run with zot/command.
	Shortcuts []Shortcut `json:"shortcuts,omitempty"`
}

// Shortcut is one registerShortcut of a pi extension.
type Shortcut struct {
	Key         string `json:"key"`     // as pi spells it: ctrl+shift+t
	Command     string `json:"command"` // zot/command's name: shortcut:ctrl-shift-t
	Description string `json:"description,omitempty"`
}

// ExtensionsResult is zot/extensions and zot/extensions/changed.
type ExtensionsResult struct {
	Extensions []ExtensionStatus `json:"extensions"`
	Commands   []CommandInfo     `json:"commands"`
	// Loading: the host or one of its extensions is still starting.
	Loading bool   `json:"loading,omitempty"`
	Error   string `json:"error,omitempty"`
}

// ---------------------------------------------------------------- MCP servers

// MCPServerStatus is one MCP server as zot/mcp lists it (docs/mcp.md).
type MCPServerStatus struct {
	Name      string `json:"name"`
	Scope     string `json:"scope"` // user | project | flag | session
	File      string `json:"file,omitempty"`
	Transport string `json:"transport"` // stdio | http | sse
	// Command is what runs (the command line; env names only) or the URL.
	Command   string   `json:"command"`
	State     string   `json:"state"` // starting | ready | restarting | failed | untrusted | invalid | stopped
	Tools     []string `json:"tools"` // the names the model sees (mcp__server__tool)
	LastError string   `json:"lastError,omitempty"`
	Restarts  int      `json:"restarts,omitempty"`
	PID       int      `json:"pid,omitempty"`
	Log       string   `json:"log,omitempty"`
}

// MCPResult is zot/mcp, zot/mcp/restart and zot/mcp/changed.
type MCPResult struct {
	Servers []MCPServerStatus `json:"servers"`
	// Errors are configuration files that could not be read.
	Errors []string `json:"errors,omitempty"`
	// Disabled: --no-mcp or initializationOptions.noMcp.
	Disabled bool `json:"disabled,omitempty"`
}

// MCPResourcesResult is zot/mcp/resources: the resources of the ready
// servers, to attach as context.
type MCPResourcesResult struct {
	Resources []MCPResource `json:"resources"`
}

// MCPResource is one resource an MCP server lists.
type MCPResource struct {
	Server      string `json:"server"`
	URI         string `json:"uri"`
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	MimeType    string `json:"mimeType,omitempty"`
}

// MCPRestartParams is zot/mcp/restart's params.
type MCPRestartParams struct {
	Name string `json:"name"`
}

// ---------------------------------------------------------------- panels

// Panel is an extension panel's content.
type Panel struct {
	PanelID   string   `json:"panelId"`
	Extension string   `json:"extension"`
	Title     string   `json:"title"`
	Lines     []string `json:"lines"`
	Footer    string   `json:"footer"`
}

// PanelCloseParams is zot/panel/close (s→c) and zot/panel/closed (c→s).
type PanelCloseParams struct {
	PanelID   string `json:"panelId"`
	Extension string `json:"extension,omitempty"`
}

// PanelKeyParams is zot/panel/key.
type PanelKeyParams struct {
	PanelID string `json:"panelId"`
	Key     string `json:"key"`
	Text    string `json:"text,omitempty"`
}

// ---------------------------------------------------------------- server → client

// NotifyParams is zot/notify.
type NotifyParams struct {
	Extension string `json:"extension"`
	Level     string `json:"level"`
	Message   string `json:"message"`
}

// ReviewEditParams is zot/reviewEdit's params (server → client).
type ReviewEditParams struct {
	URI        string `json:"uri"`
	OldText    string `json:"oldText"`
	NewText    string `json:"newText"`
	ToolCallID string `json:"toolCallId"`
	Tool       string `json:"tool,omitempty"`
}

// ReviewEditResult is the client's answer.
type ReviewEditResult struct {
	Decision string  `json:"decision"` // accept | reject
	Text     *string `json:"text,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// SaveParams is zot/save's params (server → client).
type SaveParams struct {
	URIs []string `json:"uris"`
	// Rebased are documents whose buffers hold the user's unsaved changes
	// as well as zot's: the client writes Text (the saved file plus zot's
	// changes) to the file, keeps the buffer as it is, modified, and
	// answers the uri in Written; then it neither reloads the buffer nor
	// reports a conflict for that write. zot writes the rebased documents
	// the client does not answer itself.
	Rebased []RebasedDoc `json:"rebased,omitempty"`
}

// RebasedDoc is a file written under a modified buffer: text is the saved
// file plus zot's changes.
type RebasedDoc struct {
	URI  string `json:"uri"`
	Text string `json:"text"`
}

// UIRequestParams is zot/ui/request's params (server → client): an
// extension asks the user. Sent only to a client whose capabilities say
// experimental.zot.ui; others get window/showMessageRequest for confirm
// and select, and input is cancelled.
type UIRequestParams struct {
	Extension   string   `json:"extension"`
	Kind        string   `json:"kind"` // confirm | select | input | editor
	Title       string   `json:"title,omitempty"`
	Message     string   `json:"message,omitempty"`
	Options     []string `json:"options,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Default     string   `json:"default,omitempty"`
}

// UIRequestResult is zot/ui/request's result: value is a boolean
// (confirm) or a string (select: one of options; input), or cancelled.
type UIRequestResult struct {
	Value     any  `json:"value,omitempty"`
	Cancelled bool `json:"cancelled,omitempty"`
}

// InputSetParams is zot/input/set's params (server → client, to a
// client with experimental.zot.input): an extension sets the chat's
// input. Mode replace puts Text in place of the input's text; paste
// inserts it at the cursor (at the end when the input has no focus).
type InputSetParams struct {
	Extension string `json:"extension"`
	Text      string `json:"text"`
	Mode      string `json:"mode"` // replace | paste
}

// Modes of zot/input/set.
const (
	InputReplace = "replace"
	InputPaste   = "paste"
)

// InputGetParams is zot/input/get's params: an extension reads the
// chat's input.
type InputGetParams struct {
	Extension string `json:"extension"`
}

// InputGetResult is zot/input/get's result: the chat input's text now
// (its draft when the chat is not open).
type InputGetResult struct {
	Text string `json:"text"`
}

// UIStatusParams is zot/ui/status: an extension's status item under key;
// text null clears it.
type UIStatusParams struct {
	Extension string  `json:"extension"`
	Key       string  `json:"key"`
	Text      *string `json:"text"`
}

// UIWidgetParams is zot/ui/widget: lines shown above the chat input under
// key; lines null clears the widget.
type UIWidgetParams struct {
	Extension string   `json:"extension"`
	Key       string   `json:"key"`
	Lines     []string `json:"lines"`
}

// SaveResult is zot/save's result.
type SaveResult struct {
	Saved   []string     `json:"saved"`
	Written []string     `json:"written,omitempty"` // of the rebased documents
	Failed  []SaveFailed `json:"failed,omitempty"`
}

// SaveFailed is one document the client could not save.
type SaveFailed struct {
	URI    string `json:"uri"`
	Reason string `json:"reason"`
}
