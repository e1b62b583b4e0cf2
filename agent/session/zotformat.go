package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

// zot's session line types. A file starts with one meta line; zot skips
// line types it does not know, which is where our own entries go.
const (
	lineMeta    = "meta"
	lineMessage = "message"
	lineUsage   = "usage"
)

// Our own line types. They carry an "x-" prefix so they never collide with
// a line type zot adds later; zot skips them.
const (
	lineCompact = "x-compact" // the transcript (for us) is replaced by messages
	lineSummary = "x-summary" // the next message line is a compaction summary
	lineTitle   = "x-title"   // the session's title, set after it started
	lineCustom  = "x-entry"   // an extension's append_entry
	lineRewind  = "x-rewind"  // the transcript (for us) keeps its first keep messages
)

// roleTool is zot's role for the message holding tool results (ours keep
// them in a user message, as the Messages API wants).
const roleTool = "tool"

// redactedReasoningID marks, in a reasoning block's reasoning_id, an
// Anthropic redacted_thinking block: its encrypted_content is the block's
// data, not a signature.
const redactedReasoningID = "redacted_thinking"

// Meta is the first line of a session file in zot's format.
type Meta struct {
	ID       string    `json:"id"`
	Cwd      string    `json:"cwd"`
	Model    string    `json:"model"`
	Provider string    `json:"provider"`
	Started  time.Time `json:"started"`
	Version  string    `json:"version"`
	Title    string    `json:"title,omitempty"`
	// Parent and ForkPoint are set by zot on a session forked from
	// another; kept as read.
	Parent    string          `json:"parent,omitempty"`
	ForkPoint json.RawMessage `json:"fork_point,omitempty"`
}

type metaLine struct {
	Type string `json:"type"`
	Meta Meta   `json:"meta"`
}

// zotMessage is a transcript message in zot's session format.
type zotMessage struct {
	Role    string     `json:"role"`
	Content []zotBlock `json:"content"`
	Time    time.Time  `json:"time"`
}

type messageLine struct {
	Type    string     `json:"type"`
	Message zotMessage `json:"message"`
}

// zotUsage is token usage as zot's usage lines spell it.
type zotUsage struct {
	InputTokens      int     `json:"input_tokens"`
	OutputTokens     int     `json:"output_tokens"`
	CacheReadTokens  int     `json:"cache_read_tokens"`
	CacheWriteTokens int     `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

type usageLine struct {
	Type       string   `json:"type"`
	Usage      zotUsage `json:"usage"`
	Cumulative zotUsage `json:"cumulative"`
}

// compactMessage is a message inside our x-compact line: zot's message
// plus the summary mark (our line, so the extra field is ours to add).
type compactMessage struct {
	zotMessage
	Summary bool `json:"summary,omitempty"`
}

type compactLine struct {
	Type     string           `json:"type"`
	Time     time.Time        `json:"time"`
	Messages []compactMessage `json:"messages"`
}

type titleLine struct {
	Type  string    `json:"type"`
	Time  time.Time `json:"time"`
	Title string    `json:"title"`
}

type customLine struct {
	Type      string          `json:"type"`
	Time      time.Time       `json:"time"`
	Extension string          `json:"extension"`
	Kind      string          `json:"kind"`
	Data      json.RawMessage `json:"data"`
}

// rewindLine cuts the transcript: retry and edit-and-resend continue from
// its first Keep messages; the message lines before it are the old branch.
type rewindLine struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	Keep int       `json:"keep"`
}

type markLine struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
}

func toZotUsage(u message.Usage) zotUsage {
	return zotUsage{InputTokens: u.Input, OutputTokens: u.Output, CacheReadTokens: u.CacheRead, CacheWriteTokens: u.CacheWrite, CostUSD: u.CostUSD}
}

func (u zotUsage) usage() message.Usage {
	return message.Usage{Input: u.InputTokens, Output: u.OutputTokens, CacheRead: u.CacheReadTokens, CacheWrite: u.CacheWriteTokens, CostUSD: u.CostUSD}
}

// zotBlock is one content block. zot tells blocks apart by their fields,
// not by a type: text {text}, image {mime_type, data}, tool call {id,
// name, arguments}, tool result {call_id, content, is_error}, reasoning
// {reasoning_id, summary, encrypted_content}. Marshal writes exactly the
// fields of the block's kind; Unmarshal accepts what zot writes.
type zotBlock struct{ c message.Content }

type zotText struct {
	Text string `json:"text"`
}

type zotImage struct {
	MimeType string `json:"mime_type"`
	Data     string `json:"data"`
}

type zotToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type zotToolResult struct {
	CallID  string     `json:"call_id"`
	Content []zotBlock `json:"content"`
	IsError bool       `json:"is_error"`
}

type zotReasoning struct {
	ReasoningID      string `json:"reasoning_id"`
	Summary          string `json:"summary"`
	EncryptedContent string `json:"encrypted_content"`
}

func blocksOf(cs []message.Content) []zotBlock {
	out := make([]zotBlock, 0, len(cs))
	for _, c := range cs {
		out = append(out, zotBlock{c})
	}
	return out
}

func contentsOf(bs []zotBlock) []message.Content {
	out := make([]message.Content, 0, len(bs))
	for _, b := range bs {
		if b.c.Type != "" {
			out = append(out, b.c)
		}
	}
	return out
}

func (b zotBlock) MarshalJSON() ([]byte, error) {
	c := b.c
	switch c.Type {
	case message.TypeText:
		return json.Marshal(zotText{Text: c.Text})
	case message.TypeImage:
		return json.Marshal(zotImage{MimeType: c.MimeType, Data: c.Data})
	case message.TypeToolCall:
		args := c.Args
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		return json.Marshal(zotToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	case message.TypeToolResult:
		return json.Marshal(zotToolResult{CallID: c.CallID, Content: blocksOf(c.Content), IsError: c.IsError})
	case message.TypeThinking:
		r := zotReasoning{ReasoningID: c.ID, Summary: c.Text, EncryptedContent: c.Signature}
		if c.Redacted {
			r.ReasoningID, r.EncryptedContent = redactedReasoningID, c.Data
		}
		return json.Marshal(r)
	}
	return nil, fmt.Errorf("session: content block of unknown type %q", c.Type)
}

// anyBlock holds every field any zot block has; which are present says
// the kind.
type anyBlock struct {
	Type             *string         `json:"type"` // not written by zot; honoured when present
	Text             *string         `json:"text"`
	MimeType         *string         `json:"mime_type"`
	Data             *string         `json:"data"`
	ID               *string         `json:"id"`
	Name             *string         `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	CallID           *string         `json:"call_id"`
	Content          []zotBlock      `json:"content"`
	IsError          bool            `json:"is_error"`
	ReasoningID      *string         `json:"reasoning_id"`
	Summary          json.RawMessage `json:"summary"`
	EncryptedContent *string         `json:"encrypted_content"`
}

func (b *zotBlock) UnmarshalJSON(data []byte) error {
	var a anyBlock
	if err := json.Unmarshal(data, &a); err != nil {
		return err
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	switch {
	case a.CallID != nil:
		b.c = message.Content{Type: message.TypeToolResult, CallID: *a.CallID, IsError: a.IsError, Content: contentsOf(a.Content)}
	case a.ReasoningID != nil || a.EncryptedContent != nil || a.Summary != nil:
		b.c = message.Content{Type: message.TypeThinking, ID: str(a.ReasoningID), Text: summaryText(a.Summary), Signature: str(a.EncryptedContent)}
		if b.c.ID == redactedReasoningID {
			b.c = message.Content{Type: message.TypeThinking, Redacted: true, Data: b.c.Signature}
		}
	case a.Name != nil || a.Arguments != nil:
		b.c = message.Content{Type: message.TypeToolCall, ID: str(a.ID), Name: str(a.Name), Args: argumentsJSON(a.Arguments)}
	case a.MimeType != nil || a.Data != nil:
		b.c = message.Content{Type: message.TypeImage, MimeType: str(a.MimeType), Data: str(a.Data)}
	case a.Text != nil:
		b.c = message.Text(*a.Text)
	case a.Type != nil && *a.Type == message.TypeText:
		b.c = message.Text("")
	default:
		// A block of a kind zot added after us: left out (zot's rule for
		// what it does not know), never fatal.
		b.c = message.Content{}
	}
	return nil
}

// argumentsJSON is a tool call's arguments as a JSON object: zot writes
// them as an object; an OpenAI-style string holding JSON is unwrapped.
func argumentsJSON(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage("{}")
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil && json.Valid([]byte(s)) {
			return json.RawMessage(s)
		}
	}
	return append(json.RawMessage(nil), raw...)
}

// summaryText reads a reasoning summary written as a string, a list of
// strings, or a list of {"text": …} parts (the Responses API's shape).
func summaryText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		var t string
		var obj struct {
			Text string `json:"text"`
		}
		switch {
		case json.Unmarshal(p, &t) == nil:
			texts = append(texts, t)
		case json.Unmarshal(p, &obj) == nil:
			texts = append(texts, obj.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// toZotMessages turns one of our messages into zot's: tool results move
// to a message of role tool; anything else in that user message follows
// as a user message.
func toZotMessages(m message.Message, now time.Time) []zotMessage {
	t := m.Time
	if t.IsZero() {
		t = now
	}
	if m.Role != message.RoleUser || !hasResults(m) {
		return []zotMessage{{Role: m.Role, Content: blocksOf(m.Content), Time: t}}
	}
	var results, rest []message.Content
	for _, c := range m.Content {
		if c.Type == message.TypeToolResult {
			results = append(results, c)
		} else {
			rest = append(rest, c)
		}
	}
	out := []zotMessage{{Role: roleTool, Content: blocksOf(results), Time: t}}
	if len(rest) > 0 {
		out = append(out, zotMessage{Role: message.RoleUser, Content: blocksOf(rest), Time: t})
	}
	return out
}

// fromZot is the message as the runtime holds it: a tool message becomes
// a user message of tool results.
func (z zotMessage) fromZot() message.Message {
	role := z.Role
	if role == roleTool {
		role = message.RoleUser
	}
	return message.Message{Role: role, Content: contentsOf(z.Content), Time: z.Time}
}

// anyLine holds every field of zot's lines and ours; Type says which.
type anyLine struct {
	Type       string           `json:"type"`
	Meta       *Meta            `json:"meta"`
	Message    *zotMessage      `json:"message"`
	Usage      *zotUsage        `json:"usage"`
	Cumulative *zotUsage        `json:"cumulative"`
	Messages   []compactMessage `json:"messages"`
	Title      string           `json:"title"`
	Time       time.Time        `json:"time"`
	// x-entry
	Extension string          `json:"extension"`
	Kind      string          `json:"kind"`
	Data      json.RawMessage `json:"data"`
	// x-rewind
	Keep *int `json:"keep"`
}
