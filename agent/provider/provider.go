// Package provider holds the LLM clients (Anthropic Messages and OpenAI Chat
// Completions over net/http; the official SDKs are test-only judges, see
// docs/decisions.md), the model catalogue and cost.
// The runtime sees only the Client interface.
package provider

import (
	"context"
	"encoding/json"

	"github.com/zot-editors/zot/agent/message"
)

// Stop reasons, as the turn_end event reports them.
const (
	StopEndTurn = "end_turn"
	StopToolUse = "tool_use"
	StopLength  = "length"
	StopError   = "error"
	StopAborted = "aborted"
)

// ToolSpec describes a tool to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
}

// Request is one streaming model call.
type Request struct {
	Model     Model
	System    string
	Messages  []message.Message
	Tools     []ToolSpec
	MaxTokens int // 0: the model's max output
	// Reasoning is the level to think at (Reasoning* constants); "" or off:
	// no thinking. Models that do not reason ignore it.
	Reasoning string
}

// StreamEvent is one incremental piece of a streaming response. Exactly one
// of the fields is set.
type StreamEvent struct {
	// Open: the API answered and its stream begins (before any delta;
	// again if a stream that delivered nothing is retried).
	Open          bool
	TextDelta     string           // a piece of assistant text
	ThinkingDelta string           // a piece of the model's reasoning
	ToolUse       *ToolUseDelta    // a tool call as it streams: start, argument pieces, end
	ToolCall      *message.Content // a complete tool call (emitted when its args are complete, after its ToolUseEnd)
}

// Phases of a streaming tool call (ToolUseDelta.Phase).
const (
	ToolUseStart = "start" // ID and Name are known, no arguments yet
	ToolUseArgs  = "args"  // Args is the next piece of the raw argument JSON
	ToolUseEnd   = "end"   // the arguments are complete
)

// ToolUseDelta is one step of a tool call while the model streams it, so
// a client can show "writing edit…" before the call is complete. The Args
// pieces of one ID concatenate to the call's raw argument JSON.
type ToolUseDelta struct {
	Phase string
	ID    string
	Name  string // ToolUseStart only
	Args  string // ToolUseArgs only
}

// Response is the complete result of a model call.
type Response struct {
	Content []message.Content // thinking, text and tool_call blocks, in order
	Stop    string            // one of the Stop* constants
	Usage   message.Usage     // tokens of this call, CostUSD filled from the catalogue
}

// Client streams model calls. Stream calls onEvent for each delta in order,
// from the calling goroutine, and returns the assembled response. It retries
// 429/5xx before any delta was delivered. On ctx cancellation it returns
// ctx.Err() promptly.
type Client interface {
	Provider() string
	Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (Response, error)
}

// Model is one catalogue entry.
type Model struct {
	ID            string `json:"id"`
	Provider      string `json:"provider"`
	BaseURL       string `json:"baseUrl,omitempty"`
	ContextWindow int    `json:"context_window"`
	MaxOutput     int    `json:"max_output"`
	Reasoning     bool   `json:"reasoning"`
	// DefaultReasoning is the level used when none is asked for (reasoning
	// models only; "" means off).
	DefaultReasoning string  `json:"default_reasoning,omitempty"`
	InputPrice       float64 `json:"input_price,omitempty"`       // USD per million tokens
	OutputPrice      float64 `json:"output_price,omitempty"`      // USD per million tokens
	CacheRead        float64 `json:"cache_read_price,omitempty"`  // USD per million tokens
	CacheWrite       float64 `json:"cache_write_price,omitempty"` // USD per million tokens
}

// Cost prices a usage by this model's catalogue entry.
func (m Model) Cost(u message.Usage) float64 {
	return (float64(u.Input)*m.InputPrice +
		float64(u.Output)*m.OutputPrice +
		float64(u.CacheRead)*m.CacheRead +
		float64(u.CacheWrite)*m.CacheWrite) / 1e6
}
