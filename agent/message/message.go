// Package message holds the transcript types shared by the runtime, the
// provider clients, the tools and the fronts. Field names follow zot's RPC
// wire schema (shared/seeds/001) so every front can marshal them as they are.
package message

import (
	"encoding/json"
	"strings"
	"time"
)

// Roles of a transcript message.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// Content block types.
const (
	TypeText       = "text"
	TypeImage      = "image"
	TypeToolCall   = "tool_call"
	TypeToolResult = "tool_result"
	TypeThinking   = "thinking"
)

// Content is one block of a message. Which fields are set depends on Type:
//
//	text:        Text
//	image:       MimeType, Data (base64; kept in sessions, never on the wire)
//	tool_call:   ID, Name, Args
//	tool_result: CallID, IsError, Content (nested text and image blocks)
//	thinking:    Text (the model's reasoning), Signature (Anthropic's proof
//	             that the block is unmodified; sent back as is); Redacted
//	             with Data (encrypted reasoning the API returned instead)
type Content struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	MimeType string          `json:"mime_type,omitempty"`
	Data     string          `json:"data,omitempty"`
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	CallID   string          `json:"call_id,omitempty"`
	IsError  bool            `json:"is_error,omitempty"`
	Content  []Content       `json:"content,omitempty"`
	// Signature and Redacted belong to thinking blocks. Sessions keep
	// them: a resumed transcript must send them back byte for byte.
	Signature string `json:"signature,omitempty"`
	Redacted  bool   `json:"redacted,omitempty"`
}

// WireSize estimates the encoded JSON size of contents (their strings plus
// an allowance for escapes and structure), to size an encoding buffer once
// instead of growing it: a large prompt would otherwise be copied over and
// over as the buffer doubles.
func WireSize(contents []Content) int {
	n := 0
	for _, c := range contents {
		n += 64 + len(c.Text) + len(c.Data) + len(c.Args) + len(c.ID) + len(c.Name) + len(c.CallID) + len(c.Signature) + WireSize(c.Content)
		n += len(c.Text) / 8 // escapes (newlines, quotes)
	}
	return n
}

// Text builds a text block.
func Text(s string) Content { return Content{Type: TypeText, Text: s} }

// Image builds an image block from base64 data.
func Image(mime, b64 string) Content { return Content{Type: TypeImage, MimeType: mime, Data: b64} }

// Message is one transcript entry. Once in a transcript a message is
// never modified in place (a change is a new message with a new Content
// slice): the provider clients cache each message's wire encoding by the
// address of its Content array.
type Message struct {
	Role    string    `json:"role"`
	Content []Content `json:"content"`
	Time    time.Time `json:"time"`
	// Summary marks the synthetic user message that replaced a compacted
	// prefix of the transcript.
	Summary bool `json:"summary,omitempty"`
}

// TextOf concatenates the text blocks of a content list.
func TextOf(cs []Content) string {
	var n, texts int
	var only string
	for _, c := range cs {
		if c.Type == TypeText {
			n += len(c.Text)
			texts++
			only = c.Text
		}
	}
	if texts <= 1 {
		// The common case, a prompt of one text: no copy (a 16 MiB
		// prompt was copied twice here per call).
		return only
	}
	var b strings.Builder
	b.Grow(n)
	for _, c := range cs {
		if c.Type == TypeText {
			b.WriteString(c.Text)
		}
	}
	return b.String()
}

// ToolCalls returns the tool_call blocks of a message.
func (m Message) ToolCalls() []Content {
	var out []Content
	for _, c := range m.Content {
		if c.Type == TypeToolCall {
			out = append(out, c)
		}
	}
	return out
}

// Usage counts tokens and cost.
type Usage struct {
	Input      int     `json:"input"`
	Output     int     `json:"output"`
	CacheRead  int     `json:"cache_read"`
	CacheWrite int     `json:"cache_write"`
	CostUSD    float64 `json:"cost_usd"`
}

// Add returns u+v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		Input:      u.Input + v.Input,
		Output:     u.Output + v.Output,
		CacheRead:  u.CacheRead + v.CacheRead,
		CacheWrite: u.CacheWrite + v.CacheWrite,
		CostUSD:    u.CostUSD + v.CostUSD,
	}
}
