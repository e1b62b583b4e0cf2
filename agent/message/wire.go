package message

import (
	"encoding/base64"
	"encoding/json"
	"time"
)

// WireContent is a content block as the RPC and LSP fronts send it: images
// carry a byte count instead of their data, to keep transcript dumps small.
type WireContent struct {
	Type     string          `json:"type"`
	Text     *string         `json:"text,omitempty"`
	MimeType string          `json:"mime_type,omitempty"`
	Bytes    *int            `json:"bytes,omitempty"`
	ID       string          `json:"id,omitempty"`
	Name     string          `json:"name,omitempty"`
	Args     json.RawMessage `json:"args,omitempty"`
	CallID   string          `json:"call_id,omitempty"`
	IsError  *bool           `json:"is_error,omitempty"`
	Content  []WireContent   `json:"content,omitempty"`
	// Redacted marks a thinking block whose text the API encrypted.
	Redacted bool `json:"redacted,omitempty"`
}

// WireMessage is a message as the fronts send it.
type WireMessage struct {
	Role    string        `json:"role"`
	Content []WireContent `json:"content"`
	Time    time.Time     `json:"time"`
}

// ToWire converts content blocks to their wire form.
func ToWire(cs []Content) []WireContent {
	out := make([]WireContent, 0, len(cs))
	for _, c := range cs {
		w := WireContent{Type: c.Type}
		switch c.Type {
		case TypeText:
			t := c.Text
			w.Text = &t
		case TypeImage:
			w.MimeType = c.MimeType
			n := base64.StdEncoding.DecodedLen(len(c.Data))
			if raw, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
				n = len(raw)
			}
			w.Bytes = &n
		case TypeToolCall:
			w.ID, w.Name, w.Args = c.ID, c.Name, c.Args
			if len(w.Args) == 0 {
				w.Args = json.RawMessage("{}")
			}
		case TypeToolResult:
			w.CallID = c.CallID
			e := c.IsError
			w.IsError = &e
			w.Content = ToWire(c.Content)
		case TypeThinking:
			// The signature and encrypted data stay in the session: they
			// mean nothing to a client.
			t := c.Text
			w.Text = &t
			w.Redacted = c.Redacted
		}
		out = append(out, w)
	}
	return out
}

// MessageToWire converts a message to its wire form.
func MessageToWire(m Message) WireMessage {
	return WireMessage{Role: m.Role, Content: ToWire(m.Content), Time: m.Time}
}
