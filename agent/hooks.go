package agent

import (
	"context"
	"encoding/json"
)

// Hooks lets the extension host observe and steer a run. Every method is
// called from the run's goroutine; a nil Hooks means no extensions.
type Hooks interface {
	// BeforeTool runs before a tool executes: block it (the model sees
	// Reason as the tool's error) or rewrite its args.
	BeforeTool(ctx context.Context, call ToolCallInfo) ToolDecision
	// BeforeTurn runs before each model call: block the turn (Reason is
	// shown to the user as an error event).
	BeforeTurn(ctx context.Context, step int) TurnDecision
	// BeforeAssistantMessage runs on the assembled assistant text of a
	// model call: suppress it or replace the user-visible text. The
	// transcript keeps the original.
	BeforeAssistantMessage(ctx context.Context, text string) AssistantDecision
	// Observe receives lifecycle notifications in order: session_start,
	// turn_start, tool_call, turn_end, assistant_message. It must not block.
	Observe(ev Lifecycle)
}

// ToolCallInfo names a tool call for the hooks.
type ToolCallInfo struct {
	ID   string
	Name string
	Args json.RawMessage
}

// ToolDecision is a BeforeTool verdict. The zero value allows unchanged.
type ToolDecision struct {
	Block        bool
	Reason       string
	ModifiedArgs json.RawMessage
}

// TurnDecision is a BeforeTurn verdict. The zero value allows.
type TurnDecision struct {
	Block  bool
	Reason string
}

// AssistantDecision is a BeforeAssistantMessage verdict. The zero value
// passes the text through.
type AssistantDecision struct {
	Block       bool
	Reason      string
	ReplaceText *string
}

// Lifecycle is a one-way notification for extensions, named as in zot's
// extension protocol: session_start, turn_start, turn_end, tool_call,
// assistant_message.
type Lifecycle struct {
	Event    string
	Step     int             // turn_start
	Stop     string          // turn_end
	ToolID   string          // tool_call
	ToolName string          // tool_call
	ToolArgs json.RawMessage // tool_call
	Text     string          // assistant_message
}
