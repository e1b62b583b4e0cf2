package sdk

import (
	"encoding/base64"
	"encoding/json"

	"github.com/zot-editors/zot/extensions/wire"
)

// Response tells the host what to do after a slash command. Build one
// with Prompt, Insert, Display, OpenPanel, Noop or Error.
type Response struct {
	Action  string // wire.ActionPrompt, ActionInsert, ActionDisplay, ActionOpenPanel or ActionNoop
	Prompt  string
	Insert  string
	Display string
	Panel   *PanelView
	// Error, when non-empty, is shown as a red status line whatever
	// the action.
	Error string
}

// PanelView is the content of an extension-owned panel.
type PanelView = wire.PanelView

// Prompt submits text as a fresh user message; the agent runs a turn.
func Prompt(text string) Response { return Response{Action: wire.ActionPrompt, Prompt: text} }

// Insert puts text into the editor at the cursor without submitting it.
func Insert(text string) Response { return Response{Action: wire.ActionInsert, Insert: text} }

// Display appends text to the chat as a one-shot note: no model call,
// nothing written to the transcript.
func Display(text string) Response { return Response{Action: wire.ActionDisplay, Display: text} }

// OpenPanel opens an interactive panel. Keys arrive through OnPanelKey;
// redraw with RenderPanel, close with ClosePanel.
func OpenPanel(p PanelView) Response {
	if p.Lines == nil {
		p.Lines = []string{}
	}
	return Response{Action: wire.ActionOpenPanel, Panel: &p}
}

// Noop says the extension handled the command itself.
func Noop() Response { return Response{Action: wire.ActionNoop} }

// Error reports a failure: the host shows msg as a red status line.
func Error(msg string) Response { return Response{Action: wire.ActionNoop, Error: msg} }

func (r Response) frame(id string) wire.Frame {
	f := wire.Frame{
		Type:    wire.TypeCommandResponse,
		ID:      id,
		Action:  r.Action,
		Prompt:  r.Prompt,
		Insert:  r.Insert,
		Display: r.Display,
		Error:   r.Error,
	}
	if f.Action == "" {
		f.Action = wire.ActionNoop
	}
	if r.Panel != nil {
		p := *r.Panel
		if p.Lines == nil {
			p.Lines = []string{}
		}
		f.OpenPanel = &p
	}
	return f
}

// ToolResult is an extension's reply to a tool call: text and image
// blocks, optionally marked as a failure.
type ToolResult struct {
	Content []wire.Block
	IsError bool
}

// TextBlock is a text content block.
func TextBlock(s string) wire.Block { return wire.Block{Type: "text", Text: s} }

// ImageBlock is an image content block; data is raw bytes, encoded to
// base64 for the wire.
func ImageBlock(mimeType string, data []byte) wire.Block {
	return wire.Block{Type: "image", MimeType: mimeType, Data: base64.StdEncoding.EncodeToString(data)}
}

// TextResult is a successful result with one text block.
func TextResult(s string) ToolResult { return ToolResult{Content: []wire.Block{TextBlock(s)}} }

// ErrorResult is a failed result with one text block; the model sees s
// as the tool's error.
func ErrorResult(s string) ToolResult {
	return ToolResult{Content: []wire.Block{TextBlock(s)}, IsError: true}
}

// ImageResult is a successful result with one image block (data is raw
// bytes, e.g. a PNG file's content).
func ImageResult(mimeType string, data []byte) ToolResult {
	return ToolResult{Content: []wire.Block{ImageBlock(mimeType, data)}}
}

func (r ToolResult) frame(id string) wire.Frame {
	content := r.Content
	if len(content) == 0 {
		content = []wire.Block{TextBlock("")}
	}
	return wire.Frame{Type: wire.TypeToolResult, ID: id, Content: content, IsError: r.IsError}
}

// ToolCallDecision is an InterceptToolCallX verdict. The zero value
// allows the call unchanged.
type ToolCallDecision struct {
	// Block refuses the call; the model sees Reason as the tool error.
	Block  bool
	Reason string
	// ModifiedArgs, when set and Block is false, replaces the args the
	// tool runs with. It must be a JSON object.
	ModifiedArgs json.RawMessage
}

// TurnStartDecision is an InterceptTurnStart verdict. The zero value
// lets the turn run.
type TurnStartDecision struct {
	Block  bool
	Reason string // shown to the user when blocking
}

// AssistantMessageDecision is an InterceptAssistantMessage verdict. The
// zero value shows the message as is.
type AssistantMessageDecision struct {
	// Block hides the message from the user; the transcript keeps it.
	Block  bool
	Reason string
	// ReplaceText, when non-empty and Block is false, is what the user
	// sees instead of the model's text.
	ReplaceText string
}

// HostInfo is what the host said in hello_ack.
type HostInfo struct {
	ProtocolVersion int
	ZotVersion      string
	Provider        string
	Model           string
	Cwd             string
	ExtensionDir    string
	DataDir         string
	// Capabilities is what this front serves (hello_ack's
	// host_capabilities); nil from a host without the additions to v1.
	Capabilities *wire.HostCapabilities
}

// HasUI reports whether the front can show dialogs of kind (pi's
// ctx.hasUI): false in zot -p, where a dialog is cancelled at once.
func (h HostInfo) HasUI(kind string) bool {
	if h.Capabilities == nil {
		return false
	}
	switch kind {
	case wire.UIConfirm:
		return h.Capabilities.UI.Confirm
	case wire.UISelect:
		return h.Capabilities.UI.Select
	case wire.UIInput:
		return h.Capabilities.UI.Input
	}
	return false
}
