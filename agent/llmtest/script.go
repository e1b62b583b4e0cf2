package llmtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"unicode/utf8"

	"github.com/zot-editors/zot/internal/jsonerr"
)

// Script is what the server answers, in order. See the package doc for the
// JSON form.
type Script struct {
	Replies []Reply `json:"replies"`
	// Loop cycles the replies forever instead of failing when they run out.
	Loop bool `json:"loop,omitempty"`
	// Models are the ids GET /v1/models lists (default: ["llmtest"]).
	Models []string `json:"models,omitempty"`
}

// Reply is the answer to one model request.
type Reply struct {
	Text         string     `json:"text,omitempty"`
	Deltas       []string   `json:"deltas,omitempty"`
	RepeatText   *Repeat    `json:"repeat_text,omitempty"`
	ToolCalls    []ToolCall `json:"tool_calls,omitempty"`
	Usage        *Usage     `json:"usage,omitempty"`
	Stop         string     `json:"stop,omitempty"`
	DelayMS      int        `json:"delay_ms,omitempty"`
	Status       int        `json:"status,omitempty"`
	ErrorMessage string     `json:"error_message,omitempty"`
	RetryAfter   *float64   `json:"retry_after,omitempty"`
	FailTimes    int        `json:"fail_times,omitempty"`
	Hang         bool       `json:"hang,omitempty"`

	// Thinking is streamed before the text: Anthropic thinking_delta
	// events and a signature_delta, OpenAI reasoning_content deltas.
	Thinking  string `json:"thinking,omitempty"`
	Signature string `json:"signature,omitempty"` // default "sig_llmtest_N"
	// RedactedThinking adds a redacted_thinking block with this data (Anthropic).
	RedactedThinking string `json:"redacted_thinking,omitempty"`
	// ErrorAfter ends the stream with an error event after that many text
	// deltas (0 with an ErrorType: before the first one).
	ErrorAfter *int   `json:"error_after,omitempty"`
	ErrorType  string `json:"error_type,omitempty"` // default overloaded_error
	// StallAfter stops sending, with the connection open, after that many
	// text deltas, until the client leaves.
	StallAfter *int `json:"stall_after,omitempty"`
	// Gate holds this reply, once its request has arrived, until the test
	// calls Server.Release(Gate); Server.Arrived(Gate) says it is held. A
	// test uses it to act while a run is certainly in progress, instead of
	// hoping a slow reply is still streaming. Go tests only (no JSON form).
	Gate string `json:"-"`
}

// Repeat generates Count deltas of Text.
type Repeat struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

// ToolCall is one tool call of a reply. Args must be a JSON object (nil: {}).
type ToolCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Usage is the token usage a reply reports.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cache_read"`
	CacheWrite int `json:"cache_write"`
}

// TextReply is a reply streaming s.
func TextReply(s string) Reply { return Reply{Text: s} }

// ToolReply is a reply calling one tool; args is marshalled to JSON (it
// panics if it cannot be, which is a bug in the test).
func ToolReply(name string, args any) Reply {
	return Reply{ToolCalls: []ToolCall{{Name: name, Args: mustJSON(args)}}}
}

// Count returns a pointer to n, for Reply.ErrorAfter and StallAfter.
func Count(n int) *int { return &n }

// ErrorReply is a reply answering an HTTP error.
func ErrorReply(status int, message string) Reply {
	return Reply{Status: status, ErrorMessage: message}
}

// Seconds returns a pointer to s, for Reply.RetryAfter.
func Seconds(s float64) *float64 { return &s }

func mustJSON(v any) json.RawMessage {
	if v == nil {
		return json.RawMessage("{}")
	}
	if r, ok := v.(json.RawMessage); ok {
		return r
	}
	b, err := json.Marshal(v)
	if err != nil {
		panic("llmtest: tool args: " + err.Error())
	}
	return b
}

// replyFields are the fields a scripted reply may have.
const replyFields = "text, deltas, repeat_text, tool_calls, usage, stop, delay_ms, status, error_message, retry_after, fail_times, hang, thinking, signature, redacted_thinking, error_after, error_type, stall_after"

// LoadScript reads a script file: a JSON object {"replies": [...], "loop":
// bool} or a bare JSON array of replies.
func LoadScript(path string) (Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Script{}, fmt.Errorf("llmtest: %w", err)
	}
	s, err := ParseScript(data)
	if err != nil {
		return Script{}, fmt.Errorf("llmtest: %s: %w", path, err)
	}
	return s, nil
}

// ParseScript parses and validates the JSON form of a script.
func ParseScript(data []byte) (Script, error) {
	var s Script
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return s, errors.New("empty script")
	}
	var err error
	dec := func(v any) error {
		d := json.NewDecoder(bytes.NewReader(trimmed))
		d.DisallowUnknownFields()
		return d.Decode(v)
	}
	if trimmed[0] == '[' {
		err = dec(&s.Replies)
	} else {
		err = dec(&s)
	}
	if err != nil {
		return Script{}, jsonerr.Describe(trimmed, err, "a script: an object with \"replies\", or an array of replies", replyFields)
	}
	if err := s.Validate(); err != nil {
		return Script{}, err
	}
	return s, nil
}

// Validate reports the first problem of a script.
func (s Script) Validate() error {
	if s.Loop && len(s.Replies) == 0 {
		return errors.New(`"loop" needs at least one reply`)
	}
	for i, r := range s.Replies {
		if err := r.validate(); err != nil {
			return fmt.Errorf("reply %d: %w", i+1, err)
		}
	}
	return nil
}

func (r Reply) validate() error {
	n := 0
	if r.Text != "" {
		n++
	}
	if r.Deltas != nil {
		n++
	}
	if r.RepeatText != nil {
		n++
		if r.RepeatText.Count < 0 {
			return errors.New("repeat_text.count is negative")
		}
	}
	if n > 1 {
		return errors.New("use only one of text, deltas and repeat_text")
	}
	if r.Status != 0 && (r.Status < 400 || r.Status > 599) {
		return fmt.Errorf("status %d is not an HTTP error status (400-599)", r.Status)
	}
	if r.FailTimes < 0 || r.DelayMS < 0 {
		return errors.New("fail_times and delay_ms must not be negative")
	}
	if (r.ErrorAfter != nil && *r.ErrorAfter < 0) || (r.StallAfter != nil && *r.StallAfter < 0) {
		return errors.New("error_after and stall_after must not be negative")
	}
	if r.ErrorAfter != nil && r.StallAfter != nil {
		return errors.New("use only one of error_after and stall_after")
	}
	if r.ErrorType != "" && r.ErrorAfter == nil {
		return errors.New("error_type needs error_after")
	}
	if r.RetryAfter != nil && *r.RetryAfter < 0 {
		return errors.New("retry_after must not be negative")
	}
	for j, tc := range r.ToolCalls {
		if tc.Name == "" {
			return fmt.Errorf("tool_calls[%d]: missing name", j)
		}
		if len(tc.Args) > 0 {
			a := bytes.TrimSpace(tc.Args)
			if !json.Valid(a) || a[0] != '{' {
				return fmt.Errorf("tool_calls[%d] (%s): args must be a JSON object", j, tc.Name)
			}
		}
	}
	return nil
}

// deltas returns the text deltas of a reply.
func (r Reply) deltas() []string {
	switch {
	case r.Deltas != nil:
		return r.Deltas
	case r.RepeatText != nil:
		out := make([]string, r.RepeatText.Count)
		for i := range out {
			out[i] = r.RepeatText.Text
		}
		return out
	case r.Text != "":
		return SplitText(r.Text)
	}
	return nil
}

// SplitText splits s into word-sized deltas: a new delta starts at each run
// of whitespace that follows non-whitespace ("Hello there" → "Hello",
// " there"). Joining the deltas gives s back.
func SplitText(s string) []string {
	var out []string
	start := 0
	for i := 1; i < len(s); i++ {
		if isSpace(s[i]) && !isSpace(s[i-1]) {
			out = append(out, s[start:i])
			start = i
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

// splitArgs splits a JSON text into pieces of at most n bytes, never inside
// a UTF-8 sequence, as the APIs stream tool arguments.
func splitArgs(s string, n int) []string {
	var out []string
	for len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		if cut == 0 {
			cut = n
		}
		out = append(out, s[:cut])
		s = s[cut:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}
