package agent

import (
	"encoding/json"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

// Event types, the RPC event set of zot (shared/seeds/001).
const (
	EventTurnStart        = "turn_start"
	EventUserMessage      = "user_message"
	EventAssistantStart   = "assistant_start"
	EventTextDelta        = "text_delta"
	EventToolCall         = "tool_call"
	EventToolProgress     = "tool_progress"
	EventToolResult       = "tool_result"
	EventAssistantMessage = "assistant_message"
	EventUsage            = "usage"
	EventTurnEnd          = "turn_end"
	EventDone             = "done"
	EventError            = "error"
	EventCompactDone      = "compact_done"
)

// Event is one stream notification of a prompt or compaction. Which fields
// are meaningful depends on Type; MarshalJSON emits exactly the fields of
// zot's wire schema for that type.
type Event struct {
	Type       string
	Step       int               // turn_start
	Content    []message.Content // user_message, assistant_message, tool_result
	Time       time.Time         // user_message, assistant_message
	Delta      string            // text_delta
	ID         string            // tool_call, tool_progress, tool_result
	Name       string            // tool_call
	Args       json.RawMessage   // tool_call
	Text       string            // tool_progress
	IsError    bool              // tool_result
	Usage      message.Usage     // usage: this call
	Cumulative message.Usage     // usage: the runtime's total
	Stop       string            // turn_end
	Error      string            // turn_end (optional)
	Message    string            // error
	Summary    string            // compact_done
}

// MarshalJSON renders the event in zot's wire schema.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(e.Wire())
}

// Wire returns the event as a map in zot's wire schema, so fronts can add
// their own fields (the LSP front adds runId).
func (e Event) Wire() map[string]any {
	m := map[string]any{"type": e.Type}
	switch e.Type {
	case EventTurnStart:
		m["step"] = e.Step
	case EventUserMessage, EventAssistantMessage:
		m["content"] = message.ToWire(e.Content)
		m["time"] = e.Time
	case EventTextDelta:
		m["delta"] = e.Delta
	case EventToolCall:
		args := e.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		m["id"], m["name"], m["args"] = e.ID, e.Name, args
	case EventToolProgress:
		m["id"], m["text"] = e.ID, e.Text
	case EventToolResult:
		m["id"], m["is_error"], m["content"] = e.ID, e.IsError, message.ToWire(e.Content)
	case EventUsage:
		m["input"] = e.Usage.Input
		m["output"] = e.Usage.Output
		m["cache_read"] = e.Usage.CacheRead
		m["cache_write"] = e.Usage.CacheWrite
		m["cost_usd"] = e.Usage.CostUSD
		m["cumulative"] = e.Cumulative
	case EventTurnEnd:
		m["stop"] = e.Stop
		if e.Error != "" {
			m["error"] = e.Error
		}
	case EventError:
		m["message"] = e.Message
	case EventCompactDone:
		m["summary"] = e.Summary
	}
	return m
}
