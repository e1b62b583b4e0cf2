// Package sessiontest is for tests: a strict reader of zot's session
// format, written from zot's observed lines (issue 21) independently of
// package session, so a test can prove that what we write is exactly what
// zot reads: every field of zot's line types named to the letter, no field
// zot does not know, no zero time.
package sessiontest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// File is a session file as zot reads it.
type File struct {
	Meta     Meta
	Messages []Message
	Usages   []UsageLine
	// Other lists the types of the lines zot skips (ours), in order.
	Other []string
}

// Meta is zot's meta line.
type Meta struct {
	ID, Cwd, Model, Provider, Version string
	Started                           time.Time
	Title, Parent                     string
	ForkPoint                         json.RawMessage
}

// Message is zot's message line.
type Message struct {
	Role    string
	Content []Block
	Time    time.Time
}

// Block is one content block; Kind is which of zot's five shapes it has.
type Block struct {
	Kind                                   string // text, image, tool_call, tool_result, reasoning
	Text                                   string
	MimeType, Data                         string
	ID, Name                               string
	Arguments                              json.RawMessage
	CallID                                 string
	Content                                []Block
	IsError                                bool
	ReasoningID, Summary, EncryptedContent string
}

// Usage is zot's token usage object.
type Usage struct {
	InputTokens      int     `json:"input_tokens"`
	OutputTokens     int     `json:"output_tokens"`
	CacheReadTokens  int     `json:"cache_read_tokens"`
	CacheWriteTokens int     `json:"cache_write_tokens"`
	CostUSD          float64 `json:"cost_usd"`
}

// UsageLine is zot's usage line.
type UsageLine struct {
	Usage, Cumulative Usage
}

// blockShapes are zot's content blocks, told apart by their field sets.
var blockShapes = map[string][]string{
	"text":        {"text"},
	"image":       {"data", "mime_type"},
	"tool_call":   {"arguments", "id", "name"},
	"tool_result": {"call_id", "content", "is_error"},
	"reasoning":   {"encrypted_content", "reasoning_id", "summary"},
}

// Decode reads a session file strictly: the first line is meta; meta,
// message and usage lines carry exactly zot's fields; every other line
// type is recorded in Other (zot skips those). The error names the line.
func Decode(data []byte) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<30)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		n++
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, fmt.Errorf("line %d: empty", n)
		}
		if err := f.line(n, line); err != nil {
			return nil, fmt.Errorf("line %d: %w\n%s", n, err, line)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("empty file")
	}
	return f, nil
}

func (f *File) line(n int, line []byte) error {
	obj, err := object(line)
	if err != nil {
		return err
	}
	var typ string
	if err := json.Unmarshal(obj["type"], &typ); err != nil {
		return fmt.Errorf("no string type: %v", err)
	}
	if n == 1 && typ != "meta" {
		return fmt.Errorf("the first line is %q, want meta", typ)
	}
	switch typ {
	case "meta":
		if n != 1 {
			return fmt.Errorf("meta after the first line")
		}
		if err := keys(obj, []string{"meta", "type"}, nil); err != nil {
			return err
		}
		return f.meta(obj["meta"])
	case "message":
		if err := keys(obj, []string{"message", "type"}, nil); err != nil {
			return err
		}
		m, err := message(obj["message"])
		if err != nil {
			return err
		}
		f.Messages = append(f.Messages, m)
	case "usage":
		if err := keys(obj, []string{"cumulative", "type", "usage"}, nil); err != nil {
			return err
		}
		var u UsageLine
		if err := strictInto(obj["usage"], &u.Usage); err != nil {
			return fmt.Errorf("usage: %w", err)
		}
		if err := strictInto(obj["cumulative"], &u.Cumulative); err != nil {
			return fmt.Errorf("cumulative: %w", err)
		}
		f.Usages = append(f.Usages, u)
	default:
		f.Other = append(f.Other, typ)
	}
	return nil
}

func (f *File) meta(raw json.RawMessage) error {
	obj, err := object(raw)
	if err != nil {
		return fmt.Errorf("meta: %w", err)
	}
	if err := keys(obj, []string{"cwd", "id", "model", "provider", "started", "version"}, []string{"fork_point", "parent", "title"}); err != nil {
		return fmt.Errorf("meta: %w", err)
	}
	m := &f.Meta
	for k, dst := range map[string]*string{"id": &m.ID, "cwd": &m.Cwd, "model": &m.Model, "provider": &m.Provider, "version": &m.Version, "title": &m.Title, "parent": &m.Parent} {
		if v, ok := obj[k]; ok {
			if err := json.Unmarshal(v, dst); err != nil {
				return fmt.Errorf("meta.%s: %w", k, err)
			}
		}
	}
	if m.ID == "" || m.Cwd == "" {
		return fmt.Errorf("meta: empty id or cwd")
	}
	m.ForkPoint = obj["fork_point"]
	m.Started, err = stamp(obj["started"])
	if err != nil {
		return fmt.Errorf("meta.started: %w", err)
	}
	return nil
}

func message(raw json.RawMessage) (Message, error) {
	var m Message
	obj, err := object(raw)
	if err != nil {
		return m, err
	}
	if err := keys(obj, []string{"content", "role", "time"}, nil); err != nil {
		return m, fmt.Errorf("message: %w", err)
	}
	if err := json.Unmarshal(obj["role"], &m.Role); err != nil {
		return m, fmt.Errorf("message.role: %w", err)
	}
	if !slices.Contains([]string{"user", "assistant", "tool"}, m.Role) {
		return m, fmt.Errorf("message.role %q", m.Role)
	}
	if m.Time, err = stamp(obj["time"]); err != nil {
		return m, fmt.Errorf("message.time: %w", err)
	}
	if m.Content, err = blocks(obj["content"]); err != nil {
		return m, fmt.Errorf("message.content: %w", err)
	}
	for _, b := range m.Content {
		if (b.Kind == "tool_result") != (m.Role == "tool") {
			return m, fmt.Errorf("a %s block in a %s message (tool results go in, and only in, messages of role tool)", b.Kind, m.Role)
		}
	}
	return m, nil
}

func blocks(raw json.RawMessage) ([]Block, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || items == nil {
		return nil, fmt.Errorf("want an array: %s", raw)
	}
	out := make([]Block, 0, len(items))
	for i, it := range items {
		b, err := block(it)
		if err != nil {
			return nil, fmt.Errorf("block %d: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

func block(raw json.RawMessage) (Block, error) {
	var b Block
	obj, err := object(raw)
	if err != nil {
		return b, err
	}
	have := sortedKeys(obj)
	for kind, shape := range blockShapes {
		if slices.Equal(have, shape) {
			b.Kind = kind
		}
	}
	str := func(k string, dst *string) {
		if err == nil {
			if e := json.Unmarshal(obj[k], dst); e != nil {
				err = fmt.Errorf("%s: want a string: %s", k, obj[k])
			}
		}
	}
	switch b.Kind {
	case "text":
		str("text", &b.Text)
	case "image":
		str("mime_type", &b.MimeType)
		str("data", &b.Data)
	case "tool_call":
		str("id", &b.ID)
		str("name", &b.Name)
		if a := bytes.TrimSpace(obj["arguments"]); err == nil && (len(a) == 0 || a[0] != '{') {
			err = fmt.Errorf("arguments: want a JSON object: %s", a)
		}
		b.Arguments = obj["arguments"]
	case "tool_result":
		str("call_id", &b.CallID)
		if err == nil {
			if e := json.Unmarshal(obj["is_error"], &b.IsError); e != nil {
				err = fmt.Errorf("is_error: want a bool: %s", obj["is_error"])
			}
		}
		if err == nil {
			b.Content, err = blocks(obj["content"])
		}
	case "reasoning":
		str("reasoning_id", &b.ReasoningID)
		str("summary", &b.Summary)
		str("encrypted_content", &b.EncryptedContent)
	default:
		return b, fmt.Errorf("fields %v are none of zot's block shapes", have)
	}
	return b, err
}

// object decodes one JSON object.
func object(raw []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("want a JSON object: %v", err)
	}
	return obj, nil
}

// keys checks obj has every required key, and no key beyond required and
// optional.
func keys(obj map[string]json.RawMessage, required, optional []string) error {
	for _, k := range required {
		if _, ok := obj[k]; !ok {
			return fmt.Errorf("missing field %q", k)
		}
	}
	for k := range obj {
		if !slices.Contains(required, k) && !slices.Contains(optional, k) {
			return fmt.Errorf("unknown field %q (zot's fields: %s)", k, strings.Join(append(append([]string(nil), required...), optional...), ", "))
		}
	}
	return nil
}

func strictInto(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	obj, err := object(raw)
	if err != nil {
		return err
	}
	if len(obj) != 5 {
		return fmt.Errorf("want zot's 5 usage fields, got %v", sortedKeys(obj))
	}
	return nil
}

func stamp(raw json.RawMessage) (time.Time, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return time.Time{}, fmt.Errorf("want an RFC 3339 string: %s", raw)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, err
	}
	if t.Year() < 2000 {
		return t, fmt.Errorf("a zero or bogus time: %s", s)
	}
	return t, nil
}

func sortedKeys(obj map[string]json.RawMessage) []string {
	out := make([]string, 0, len(obj))
	for k := range obj {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
