package agent

import (
	"encoding/json"
	"slices"
	"strconv"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/internal/jsonstr"
)

// Event types, the RPC event set of zot (shared/seeds/001).
const (
	EventTurnStart        = "turn_start"
	EventUserMessage      = "user_message"
	EventAssistantStart   = "assistant_start"
	EventTextDelta        = "text_delta"
	EventThinkingDelta    = "thinking_delta"
	EventToolUseStart     = "tool_use_start"
	EventToolUseArgs      = "tool_use_args"
	EventToolUseEnd       = "tool_use_end"
	EventToolCall         = "tool_call"
	EventToolProgress     = "tool_progress"
	EventToolResult       = "tool_result"
	EventAssistantMessage = "assistant_message"
	EventUsage            = "usage"
	EventTurnEnd          = "turn_end"
	EventDone             = "done"
	EventError            = "error"
	EventCompactDone      = "compact_done"
	// The user's own shell command (Runtime.UserBash): its start, its
	// output as it comes (Text, line by line), and its result (UserBash).
	EventUserBashStart  = "user_bash_start"
	EventUserBashOutput = "user_bash_output"
	EventUserBash       = "user_bash"
)

// ZotStop is a turn_end stop reason as zot's binary writes it on its RPC
// and --json streams: "end" for a model that finished (provider.StopEndTurn,
// which the seed's table, the LSP front and the extension protocol keep);
// tool_use, length, error and aborted are the same in both.
func ZotStop(stop string) string {
	if stop == "end_turn" {
		return "end"
	}
	return stop
}

// Event is one stream notification of a prompt or compaction. Which fields
// are meaningful depends on Type; MarshalJSON emits exactly the fields of
// zot's wire schema for that type.
type Event struct {
	Type    string
	Step    int               // turn_start
	Content []message.Content // user_message, assistant_message, tool_result
	Time    time.Time         // user_message, assistant_message
	Delta   string            // text_delta, tool_use_args (a piece of the raw argument JSON)
	ID      string            // tool_use_*, tool_call, tool_progress, tool_result
	Name    string            // tool_use_start, tool_call
	Args    json.RawMessage   // tool_call
	Text    string            // tool_progress, thinking_delta
	IsError bool              // tool_result
	// Extension names the extension providing the tool (tool_call,
	// tool_result; "" for zot's own): sent as details.extension, seed
	// 000's tool result attribution.
	Extension  string
	Usage      message.Usage // usage: this call
	Cumulative message.Usage // usage: the runtime's total
	Stop       string        // turn_end
	Error      string        // turn_end (optional)
	Message    string        // error
	Summary    string        // compact_done
	// Index is a user_message's position in the transcript (Messages);
	// the LSP front sends it as messageIndex (zot/resend).
	Index int
	// UserBash: user_bash_start (Command, ExcludeFromContext) and
	// user_bash (all of it).
	UserBash *UserBashRun
}

// MarshalJSON renders the event in zot's wire schema.
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(nil, ""), nil
}

// AppendJSON appends the event's wire JSON to b. A non-empty runID adds a
// "runId" field (the LSP front's). The frequent events (deltas, progress,
// turn markers) are encoded by hand: they dominate a run's output.
func (e Event) AppendJSON(b []byte, runID string) []byte {
	switch e.Type {
	case EventTextDelta, EventThinkingDelta, EventToolProgress, EventToolUseStart, EventToolUseArgs, EventToolUseEnd, EventTurnStart, EventTurnEnd, EventAssistantStart, EventDone, EventError, EventCompactDone:
	default:
		m := e.Wire()
		if runID != "" {
			m["runId"] = runID
			if e.Type == EventUserMessage {
				m["messageIndex"] = e.Index
			}
		}
		// Sized once and appended in place (encoding/json's output, see
		// provider.encodeJSON): a user_message can carry a 16 MiB prompt.
		start := len(b)
		b = slices.Grow(b, 256+len(e.Args)+message.WireSize(e.Content))
		out, err := segjson.Append(b, m, segjson.EscapeHTML|segjson.SortMapKeys)
		if err != nil {
			return appendError(b[:start], err)
		}
		return out
	}
	b = append(b, `{"type":`...)
	b = jsonstr.Append(b, e.Type)
	switch e.Type {
	case EventTextDelta:
		b = append(b, `,"delta":`...)
		b = jsonstr.Append(b, e.Delta)
	case EventThinkingDelta:
		b = append(b, `,"text":`...)
		b = jsonstr.Append(b, e.Text)
	case EventToolProgress:
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, e.ID)
		b = append(b, `,"text":`...)
		b = jsonstr.Append(b, e.Text)
	case EventToolUseStart:
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, e.ID)
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, e.Name)
	case EventToolUseArgs:
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, e.ID)
		b = append(b, `,"delta":`...)
		b = jsonstr.Append(b, e.Delta)
	case EventToolUseEnd:
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, e.ID)
	case EventTurnStart:
		b = append(b, `,"step":`...)
		b = strconv.AppendInt(b, int64(e.Step), 10)
	case EventTurnEnd:
		b = append(b, `,"stop":`...)
		b = jsonstr.Append(b, e.Stop)
		if e.Error != "" {
			b = append(b, `,"error":`...)
			b = jsonstr.Append(b, e.Error)
		}
	case EventError:
		b = append(b, `,"message":`...)
		b = jsonstr.Append(b, e.Message)
	case EventCompactDone:
		b = append(b, `,"summary":`...)
		b = jsonstr.Append(b, e.Summary)
	}
	if runID != "" {
		b = append(b, `,"runId":`...)
		b = jsonstr.Append(b, runID)
	}
	return append(b, '}')
}

// largeEventText is the text size from which Spliced keeps a text apart.
const largeEventText = 64 << 10

// Spliced is AppendJSON(b, runID) with the texts of 64 KiB or more kept
// apart (jsonstr.Spliced), the same bytes: a front writes them escaped in
// pieces instead of encoding a 16 MiB prompt's user_message into one more
// buffer as large as the prompt.
func (e Event) Spliced(b []byte, runID string) jsonstr.Spliced {
	switch e.Type {
	case EventUserMessage, EventAssistantMessage, EventToolResult:
		var texts []string
		if cs, ok := message.WithPlaceholders(e.Content, largeEventText, &texts); ok {
			withPlaceholders := e
			withPlaceholders.Content = cs
			if sp, err := jsonstr.Splice(withPlaceholders.AppendJSON(b, runID), texts, true); err == nil {
				return sp
			}
		}
	}
	return jsonstr.Whole(e.AppendJSON(b, runID))
}

func appendError(b []byte, err error) []byte {
	b = append(b, `{"type":"error","message":`...)
	return append(jsonstr.Append(b, "internal: cannot encode event: "+err.Error()), '}')
}

// Wire returns the event as a map in zot's wire schema, so fronts can add
// their own fields (the LSP front adds runId).
// ToolDetails is a tool event's details: the extension providing the tool.
type ToolDetails struct {
	Extension string `json:"extension"`
}

// addDetails attributes an extension's tool call or result; zot's own
// tools' events are unchanged.
func addDetails(m map[string]any, ext string) {
	if ext != "" {
		m["details"] = ToolDetails{Extension: ext}
	}
}

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
	case EventThinkingDelta:
		m["text"] = e.Text
	case EventToolCall:
		args := e.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		m["id"], m["name"], m["args"] = e.ID, e.Name, args
		addDetails(m, e.Extension)
	case EventToolProgress:
		m["id"], m["text"] = e.ID, e.Text
	case EventToolUseStart:
		m["id"], m["name"] = e.ID, e.Name
	case EventToolUseArgs:
		m["id"], m["delta"] = e.ID, e.Delta
	case EventToolUseEnd:
		m["id"] = e.ID
	case EventToolResult:
		m["id"], m["is_error"], m["content"] = e.ID, e.IsError, message.ToWire(e.Content)
		addDetails(m, e.Extension)
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
	case EventUserBashOutput:
		m["text"] = e.Text
	case EventUserBashStart, EventUserBash:
		if b := e.UserBash; b != nil {
			b.wire(m, e.Type == EventUserBash)
		}
	}
	return m
}
