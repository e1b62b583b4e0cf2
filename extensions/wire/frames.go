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
)

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

	// tool_result
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
