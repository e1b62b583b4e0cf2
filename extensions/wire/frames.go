// Package wire holds zot's extension protocol v1 frames (shared/seeds/000),
// field for field: one JSON object per line, "type" the discriminator. The
// host and the Go SDK both use these types, so the contract lives here once.
package wire

import "encoding/json"

// ProtocolVersion is the extension protocol's major version.
const ProtocolVersion = 1

// Frame types, extension → host.
const (
	TypeHello                  = "hello"
	TypeRegisterCommand        = "register_command"
	TypeRegisterTool           = "register_tool"
	TypeReady                  = "ready"
	TypeToolResult             = "tool_result"
	TypeSubscribe              = "subscribe"
	TypeEventInterceptResponse = "event_intercept_response"
	TypeCommandResponse        = "command_response"
	TypePanelRender            = "panel_render"
	TypePanelClose             = "panel_close" // both directions
	TypeNotify                 = "notify"
	TypeShutdownAck            = "shutdown_ack"

	// Additions to v1 (docs/extensions.md "Capabilities"): an extension
	// that declares "ui", "hooks" or "actions" in hello.capabilities gets
	// hello_ack.host_capabilities and may send these.
	TypeUIRequest      = "ui_request"
	TypeSetStatus      = "set_status"
	TypeSetWidget      = "set_widget"
	TypeToolUpdate     = "tool_update"
	TypeSendMessage    = "send_message"
	TypeSetActiveTools = "set_active_tools"
	TypeGetTools       = "get_tools"
	TypeSetModel       = "set_model"
	TypeAppendEntry    = "append_entry"
	TypeGetEntries     = "get_entries"
	// The session tree (pi's ctx.branch / ctx.fork, ctx.navigateTree):
	// fork from an entry, move to another point of the tree, read it.
	TypeFork         = "fork"
	TypeNavigateTree = "navigate_tree"
	TypeGetTree      = "get_tree"
	// TypeNewSession (pi's ctx.newSession): a fresh session (and
	// transcript); session_start with reason "new" follows.
	TypeNewSession = "new_session"
	// TypeBusPublish (negotiated with CapBus): Key is the topic, Data
	// the payload (a JSON object); the host fans it out to the other
	// extensions, zot's and SEP's alike.
	TypeBusPublish = "bus_publish"
	// SEP's other additions, offered on zot's wire (negotiated with the
	// Cap* of the same name; hello_ack.host_capabilities.features lists
	// what this host serves). Each has an id and gets an action_result.
	// kv_get {key} → value; kv_set {key, value}; kv_delete {key};
	// kv_list {prefix} → keys: the extension's own store (CapKV).
	TypeKVGet    = "kv_get"
	TypeKVSet    = "kv_set"
	TypeKVDelete = "kv_delete"
	TypeKVList   = "kv_list"
	// TypeExec {command, timeout_ms} (CapExec) → stdout, stderr,
	// exit_code, killed: the command runs as the model's bash would,
	// through the guards and the front's approval. pi's runtime sends
	// {name (the program), names (its arguments), cwd} instead of command:
	// the host makes the same shell line of them. cancel {id} stops it.
	TypeExec = "exec"
	// TypePing (CapPing) both ways: answered at once with pong {id}.
	TypePing = "ping"
	TypePong = "pong"
	// TypeCompletions (CapComplete) answers command_complete.
	TypeCompletions = "completions"
	// Providers (CapProviders): register_provider {name, models} makes
	// the models selectable; the host's provider_complete is answered by
	// provider_delta {id, delta} pieces, then provider_result {id, text,
	// tool_calls, stop, usage, error}.
	TypeRegisterProvider = "register_provider"
	TypeProviderDelta    = "provider_delta"
	TypeProviderResult   = "provider_result"
	// Added for pi extensions (extensions/pi): cancel {id} withdraws an
	// open ui_request or exec (pi's AbortSignal); abort stops the
	// running prompt (ctx.abort); get_thinking / set_thinking {level}
	// read and set the reasoning level; get_messages answers the
	// session's transcript (action_result.messages) for ctx.sessionManager.
	TypeCancel      = "cancel" // withdraws an open ui_request or exec
	TypeAbort       = "abort"
	TypeGetThinking = "get_thinking"
	TypeSetThinking = "set_thinking"
	TypeGetMessages = "get_messages"
	// get_commands lists every slash command (zot's and the extensions'),
	// for pi's getCommands; the host answers it itself.
	TypeGetCommands = "get_commands"
	// The user's chat input (pi's ctx.ui.setEditorText / pasteToEditor /
	// getEditorText), negotiated with "ui" and offered when
	// host_capabilities.ui.editor_text: set_editor_text {text, paste}
	// replaces the input's text with text, or with paste inserts text at
	// the cursor (no answer; a front without a chat input ignores it);
	// get_editor_text {id} is answered by action_result {id, text}: the
	// input's text now ("" where the front has none).
	TypeSetEditorText = "set_editor_text"
	TypeGetEditorText = "get_editor_text"
	// The session's lifetime (pi's ctx.compact, ctx.reload,
	// ctx.switchSession, ctx.shutdown), each answered by action_result:
	// compact {custom_instructions} runs zot's compaction as /compact does
	// and answers when it ends (Summary); reload restarts every extension
	// as /reload-ext does (answered first: the caller is restarted too);
	// switch_session {session_file} resumes that session (a file, or a
	// session id); request_shutdown ends the session the way the front
	// ends (zot rpc: exits once idle; zot lsp: the editor is told, the
	// server stays). unregister_provider {name} withdraws a
	// register_provider.
	TypeCompact            = "compact"
	TypeReload             = "reload"
	TypeSwitchSession      = "switch_session"
	TypeRequestShutdown    = "request_shutdown"
	TypeUnregisterProvider = "unregister_provider"
)

// Frame types, host → extension.
const (
	TypeHelloAck       = "hello_ack"
	TypeCommandInvoked = "command_invoked"
	TypeToolCall       = "tool_call"
	TypeEvent          = "event"
	TypeEventIntercept = "event_intercept"
	TypePanelKey       = "panel_key"
	TypeShutdown       = "shutdown"
	// TypeToolCancel is our addition: the call timed out or the user
	// aborted. zot's SDK ignores unknown frames, so it is safe to send.
	TypeToolCancel = "tool_cancel"

	// Additions to v1, sent only to extensions that negotiated them.
	TypeUIResponse   = "ui_response"   // answers ui_request
	TypeActionResult = "action_result" // answers an action frame that carried an id
	TypeError        = "error"         // a frame the host cannot serve (Ref names it)
	// TypeBusEvent (negotiated with CapBus): another extension's
	// bus_publish / SEP bus/publish. Name is the publisher, Key the
	// topic, Data the payload.
	TypeBusEvent = "bus_event"
	// TypeCommandComplete (CapComplete): the editor completes the
	// argument of the extension's command; Name is the command, Text
	// what is typed after it. Answer: completions {id, completions}.
	TypeCommandComplete = "command_complete"
	// TypeProviderComplete (CapProviders): one model call to the
	// extension's provider: Name the provider, Model the model id,
	// Messages zot's message objects (a leading system message carries
	// the system prompt), ToolSpecs the tools offered. Cancelled with
	// tool_cancel {id}.
	TypeProviderComplete = "provider_complete"
)

// Capability names an extension may declare in hello.capabilities to
// negotiate the additions to v1.
const (
	CapUI      = "ui"
	CapHooks   = "hooks"
	CapActions = "actions"
	// CapReady promises a ready frame after the registrations: the host
	// then never takes silence for ready (a pause under load between
	// hello and the first registration is not the end of them).
	CapReady = "ready"
	// CapBus: the extension publishes bus_publish and receives bus_event
	// (SEP's inter-extension bus, offered on zot's wire too).
	CapBus = "bus"
	// SEP's other additions on zot's wire: the extension's kv store
	// (kv_*), exec, ping both ways (an extension that negotiated it and
	// misses two pings is restarted), and command argument completion
	// (command_complete / completions).
	CapKV       = "kv"
	CapExec     = "exec"
	CapPing     = "ping"
	CapComplete = "complete"
	// CapProviders: the extension registers model providers
	// (register_provider) and answers provider_complete.
	CapProviders = "providers"
)

// ui_request kinds.
const (
	UIConfirm = "confirm"
	UISelect  = "select"
	UIInput   = "input"
	// UIEditor is a multi-line text (pi's ctx.ui.editor): default is the
	// prefill. A front that shows no multi-line box asks it as input.
	UIEditor = "editor"
)

// send_message deliveries.
const (
	DeliverSteer    = "steer"
	DeliverFollowUp = "follow_up"
	DeliverNextTurn = "next_turn"
)

// MaxActionBytes bounds an action's payload (send_message text,
// append_entry data, set_widget lines, set_status text).
const MaxActionBytes = 1 << 20

// Command response actions.
const (
	ActionPrompt    = "prompt"
	ActionInsert    = "insert"
	ActionDisplay   = "display"
	ActionOpenPanel = "open_panel"
	ActionNoop      = "noop"
)

// Lifecycle event names for subscribe / event / event_intercept.
const (
	EventSessionStart     = "session_start"
	EventTurnStart        = "turn_start"
	EventTurnEnd          = "turn_end"
	EventToolCall         = "tool_call"
	EventAssistantMessage = "assistant_message"

	// Additions to v1.
	EventToolResult       = "tool_result"        // intercept: replace content / is_error
	EventBeforeAgentStart = "before_agent_start" // intercept: add messages, append to the system prompt
	EventContext          = "context"            // intercept: rewrite the messages of one model call
	EventInput            = "input"              // intercept: transform or handle the user's prompt
	EventAgentStart       = "agent_start"
	EventAgentEnd         = "agent_end"
	EventSessionShutdown  = "session_shutdown"
	EventModelSelect      = "model_select"
	EventCompactStart     = "compact_start"
	EventCompactEnd       = "compact_end"
	// The session tree (pi's names and payloads): the before_ ones are
	// intercepts an extension may cancel (fail-open), the others events.
	EventSessionBeforeFork = "session_before_fork"
	EventSessionFork       = "session_fork"
	EventSessionBeforeTree = "session_before_tree"
	EventSessionTree       = "session_tree"
	// EventUserBash (intercept, fail-closed): a shell command the user
	// typed (`!cmd`, `!!cmd`, zot rpc's bash, zot/userBash): Command,
	// Cwd, ExcludeFromContext. The response may block (Reason) or carry
	// the extension's own run of it (BashResult).
	EventUserBash = "user_bash"
	// session_before_switch (pi's): before a new session or a resume
	// (Reason new or resume; SessionID / SessionFile the session resumed);
	// cancel refuses, fail-open.
	EventSessionBeforeSwitch = "session_before_switch"
)

// Notify levels.
const (
	LevelInfo    = "info"
	LevelSuccess = "success"
	LevelWarn    = "warn"
	LevelError   = "error"
)

// Panel key names sent in panel_key.
const (
	KeyUp        = "up"
	KeyDown      = "down"
	KeyLeft      = "left"
	KeyRight     = "right"
	KeyEnter     = "enter"
	KeyEsc       = "esc"
	KeyTab       = "tab"
	KeyPageUp    = "pageup"
	KeyPageDown  = "pagedown"
	KeyHome      = "home"
	KeyEnd       = "end"
	KeyBackspace = "backspace"
	KeyDelete    = "delete"
	KeyRune      = "rune" // Text carries the character
	// KeyCtrlC comes from the editor only: like esc it closes the
	// focused panel (panel_close), as zot's terminal UI does.
	KeyCtrlC = "ctrl+c"
)

// Frame is every frame of the protocol in one struct, as zot's own
// implementation does: fields unused by a type stay empty and are omitted.
// Args is raw because command_invoked carries a string and tool_call an
// object under the same name.
type Frame struct {
	Type string `json:"type"`
	ID   string `json:"id,omitempty"`

	// hello, register_command, register_tool, command_invoked, tool_call
	Name         string          `json:"name,omitempty"`
	Version      string          `json:"version,omitempty"`
	Capabilities []string        `json:"capabilities,omitempty"`
	Description  string          `json:"description,omitempty"`
	Schema       json.RawMessage `json:"schema,omitempty"`
	Args         json.RawMessage `json:"args,omitempty"`

	// hello_ack
	ProtocolVersion int    `json:"protocol_version,omitempty"`
	ZotVersion      string `json:"zot_version,omitempty"`
	Provider        string `json:"provider,omitempty"`
	Model           string `json:"model,omitempty"`
	Cwd             string `json:"cwd,omitempty"`
	ExtensionDir    string `json:"extension_dir,omitempty"`
	DataDir         string `json:"data_dir,omitempty"`

	// hello_ack (negotiated): what this front offers
	HostCapabilities *HostCapabilities `json:"host_capabilities,omitempty"`

	// tool_result; also the tool_result intercept and its response
	Content []Block `json:"content,omitempty"`
	IsError bool    `json:"is_error,omitempty"`

	// subscribe
	Events    []string `json:"events,omitempty"`
	Intercept []string `json:"intercept,omitempty"`

	// event, event_intercept
	Event    string          `json:"event,omitempty"`
	Step     int             `json:"step,omitempty"`
	Stop     string          `json:"stop,omitempty"`
	ToolID   string          `json:"tool_id,omitempty"`
	ToolName string          `json:"tool_name,omitempty"`
	ToolArgs json.RawMessage `json:"tool_args,omitempty"`
	Text     string          `json:"text,omitempty"` // also panel_key's rune

	// event_intercept_response
	Block        bool            `json:"block,omitempty"`
	Reason       string          `json:"reason,omitempty"`
	ModifiedArgs json.RawMessage `json:"modified_args,omitempty"`
	ReplaceText  *string         `json:"replace_text,omitempty"`

	// command_response
	Action    string     `json:"action,omitempty"`
	Prompt    string     `json:"prompt,omitempty"`
	Insert    string     `json:"insert,omitempty"`
	Display   string     `json:"display,omitempty"`
	OpenPanel *PanelView `json:"open_panel,omitempty"`
	Error     string     `json:"error,omitempty"`

	// panel_render, panel_close, panel_key
	PanelID string   `json:"panel_id,omitempty"`
	Title   string   `json:"title,omitempty"`
	Lines   []string `json:"lines,omitempty"`
	Footer  string   `json:"footer,omitempty"`
	Key     string   `json:"key,omitempty"`

	// notify
	Level   string `json:"level,omitempty"`
	Message string `json:"message,omitempty"`

	// Additions to v1.
	// ui_request (Title, Message too); append_entry / get_entries kind
	Kind        string   `json:"kind,omitempty"`
	Options     []string `json:"options,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Default     string   `json:"default,omitempty"`
	TimeoutMS   int      `json:"timeout_ms,omitempty"`
	// ui_response: Value is true/false (confirm) or a string (select,
	// input); Cancelled when dismissed, timed out or not servable.
	Value     json.RawMessage `json:"value,omitempty"`
	Cancelled bool            `json:"cancelled,omitempty"`
	// send_message (Text too)
	Deliver string `json:"deliver,omitempty"`
	// set_editor_text (Text too): insert Text at the cursor instead of
	// replacing the input's text
	Paste bool `json:"paste,omitempty"`
	// set_active_tools
	Names []string `json:"names,omitempty"`
	// append_entry
	Data json.RawMessage `json:"data,omitempty"`
	// action_result
	Tools []ToolInfo `json:"tools,omitempty"`
	// exec's answer (Stdout, Stderr, ExitCode below): Killed when it was
	// stopped (cancel, its timeout, the extension's end).
	Killed bool `json:"killed,omitempty"`
	// Commands answers get_commands: every slash command there is.
	Commands []CommandInfo `json:"commands,omitempty"`
	Entries  []Entry       `json:"entries,omitempty"`
	// error: the frame type that could not be served
	Ref string `json:"ref,omitempty"`
	// event session_start (Reason), agent_end (Stop, Usage), model_select
	// (Provider, Model, PreviousModel); intercepts before_agent_start
	// (Prompt, SystemPrompt), context (Messages)
	Usage         json.RawMessage `json:"usage,omitempty"`
	PreviousModel string          `json:"previous_model,omitempty"`
	SystemPrompt  string          `json:"system_prompt,omitempty"`
	// Messages: context intercept and response (zot rpc's message
	// objects); before_agent_start response (an array of strings).
	Messages json.RawMessage `json:"messages,omitempty"`
	// input intercept response: the prompt was handled (Display shown)
	Handled bool `json:"handled,omitempty"`
	// The session tree. Entry ids are "<session id>:<message index>"
	// (docs/extensions.md, "The session tree"); a leaf id absent is
	// pi's null (an empty conversation).
	// session_before_fork, session_fork, fork: the entry forked from
	EntryID string `json:"entry_id,omitempty"`
	// session_before_fork, session_fork: its index in its session
	MessageIndex *int `json:"message_index,omitempty"`
	// session_before_fork, fork: the checkpoint's files come along
	WithFiles bool `json:"with_files,omitempty"`
	// session_fork, session_tree: the session now and before; fork's
	// action_result: the new session
	SessionID           string `json:"session_id,omitempty"`
	SessionFile         string `json:"session_file,omitempty"`
	PreviousSessionID   string `json:"previous_session_id,omitempty"`
	PreviousSessionFile string `json:"previous_session_file,omitempty"`
	// session_before_tree
	Preparation *TreePreparation `json:"preparation,omitempty"`
	// session_tree; navigate_tree's action_result (NewLeafID)
	NewLeafID string `json:"new_leaf_id,omitempty"`
	OldLeafID string `json:"old_leaf_id,omitempty"`
	// navigate_tree (pi's options; zot writes no branch summaries, so
	// summarize is refused)
	TargetID            string `json:"target_id,omitempty"`
	Summarize           bool   `json:"summarize,omitempty"`
	CustomInstructions  string `json:"custom_instructions,omitempty"`
	ReplaceInstructions bool   `json:"replace_instructions,omitempty"`
	Label               string `json:"label,omitempty"`
	// navigate_tree's action_result: the prompt navigated to (pi puts it
	// in the editor)
	EditorText string `json:"editor_text,omitempty"`
	// compact's action_result: the summary the compaction wrote
	Summary string `json:"summary,omitempty"`
	// get_tree's action_result
	Tree *Tree `json:"tree,omitempty"`
	// session_before_fork / session_before_tree response: refuse (pi's
	// field; block means the same, as in zot's other intercepts)
	Cancel bool `json:"cancel,omitempty"`
	// event tool_call and the tool_result intercept of an extension's
	// tool: the extension providing it (seed 000's tool result
	// attribution, "surfaces extension name in details").
	Details *ToolDetails `json:"details,omitempty"`

	// SEP's additions on zot's wire. kv_*: Key, Value, Prefix; the
	// action_result of kv_get carries Value, of kv_list Keys. exec:
	// Command, TimeoutMS; its action_result Stdout, Stderr, ExitCode.
	// completions: Completions.
	Prefix      string       `json:"prefix,omitempty"`
	Keys        []string     `json:"keys,omitempty"`
	Command     string       `json:"command,omitempty"`
	Stdout      *string      `json:"stdout,omitempty"`
	Stderr      *string      `json:"stderr,omitempty"`
	ExitCode    *int         `json:"exit_code,omitempty"`
	Completions []Completion `json:"completions,omitempty"`
	// register_provider (Name too): the models. provider_complete
	// (Name, Model, Messages): ToolSpecs. provider_delta: Delta (SEP's
	// stream event: {"type":"Delta","content"}, Reasoning, ToolCallStart
	// {index,id,name}, ToolCallArgumentsDelta {index,arguments_chunk},
	// Usage, Done). provider_result (Text, Stop, Usage, Error): ToolCalls.
	Models    []ProviderModel    `json:"models,omitempty"`
	ToolSpecs json.RawMessage    `json:"tool_specs,omitempty"`
	Delta     json.RawMessage    `json:"delta,omitempty"`
	ToolCalls []ProviderToolCall `json:"tool_calls,omitempty"`
	// user_bash intercept (Command, Cwd): `!!`, the output stays out of
	// the conversation; its response: the extension ran the command
	// itself (pi's full replacement result).
	ExcludeFromContext bool        `json:"exclude_from_context,omitempty"`
	BashResult         *BashResult `json:"result,omitempty"`
}

// BashResult is a user_bash response's own run of the command (pi's
// BashResult, snake_case).
type BashResult struct {
	Output    string `json:"output"`
	ExitCode  int    `json:"exit_code"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
}

// ProviderModel is one model of an extension's provider.
type ProviderModel struct {
	ID            string `json:"id"`
	DisplayName   string `json:"display_name,omitempty"`
	ContextWindow int    `json:"context_window,omitempty"`
	MaxOutput     int    `json:"max_output,omitempty"`
}

// ProviderToolCall is a tool call a provider's model made.
type ProviderToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Completion is one candidate for a command's argument.
type Completion struct {
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
}

// TreePreparation is session_before_tree's preparation (pi's
// TreePreparation, snake_case): where the navigation goes and what the
// old branch keeps. Null ids are JSON null.
type TreePreparation struct {
	TargetID         string  `json:"target_id"`
	OldLeafID        *string `json:"old_leaf_id"`
	CommonAncestorID *string `json:"common_ancestor_id"`
	// EntriesToSummarize are the old branch's entries past the common
	// ancestor, oldest first.
	EntriesToSummarize  []string `json:"entries_to_summarize"`
	UserWantsSummary    bool     `json:"user_wants_summary"`
	CustomInstructions  string   `json:"custom_instructions,omitempty"`
	ReplaceInstructions bool     `json:"replace_instructions,omitempty"`
	Label               string   `json:"label,omitempty"`
}

// Tree is get_tree's answer: the sessions of the current session's tree
// (zot's branches are session files naming their parent), oldest first.
type Tree struct {
	SessionID string       `json:"session_id"`
	LeafID    string       `json:"leaf_id,omitempty"`
	Sessions  []TreeBranch `json:"sessions"`
}

// TreeBranch is one session of the tree.
type TreeBranch struct {
	SessionID string `json:"session_id"`
	Parent    string `json:"parent,omitempty"`
	Title     string `json:"title,omitempty"`
	Messages  int    `json:"messages"`
	LeafID    string `json:"leaf_id,omitempty"`
	Current   bool   `json:"current,omitempty"`
}

// ToolDetails attributes a tool call or result to the extension whose
// tool it is.
type ToolDetails struct {
	Extension string `json:"extension"`
}

// HostCapabilities is hello_ack.host_capabilities: what this front
// serves. UI.* false means ui_request of that kind is cancelled at once
// and set_status / set_widget get an error frame.
type HostCapabilities struct {
	UI      UICapabilities `json:"ui"`
	Hooks   []string       `json:"hooks"`
	Actions []string       `json:"actions"`
	// Features lists SEP's additions this host serves on zot's wire
	// (bus, kv, exec, ping, complete): an extension uses those it also
	// declared in hello.capabilities.
	Features []string `json:"features,omitempty"`
}

// UICapabilities says which user interface this front has (pi's
// ctx.hasUI, per kind).
type UICapabilities struct {
	Confirm bool `json:"confirm"`
	Select  bool `json:"select"`
	Input   bool `json:"input"`
	Status  bool `json:"status"`
	Widget  bool `json:"widget"`
	Panels  bool `json:"panels"`
	// Editor: ui_request kind editor is served (multi-line where the
	// client shows such a box, else as a one-line input).
	Editor bool `json:"editor"`
	// EditorText: set_editor_text and get_editor_text reach the user's
	// chat input.
	EditorText bool `json:"editor_text"`
}

// ToolInfo is one tool in get_tools' action_result.
// CommandInfo is one slash command in get_commands' answer.
type CommandInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`              // builtin | extension
	Extension   string `json:"extension,omitempty"` // the extension's name, for source extension
}

type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"` // builtin | extension
	Active      bool   `json:"active"`
}

// Entry is a custom session entry (append_entry / get_entries).
type Entry struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
	Time string          `json:"time,omitempty"`
}

// Block is a tool_result content block: text, or an image with base64 data.
type Block struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MimeType string `json:"mime_type,omitempty"`
	Data     string `json:"data,omitempty"`
}

// PanelView is the panel content of command_response's open_panel.
type PanelView struct {
	ID     string   `json:"id"`
	Title  string   `json:"title,omitempty"`
	Lines  []string `json:"lines"`
	Footer string   `json:"footer,omitempty"`
}
