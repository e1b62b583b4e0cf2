package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/zot-editors/zot/agent/message"
)

// anthropicClient streams the Messages API.
type anthropicClient struct {
	endpoint
	cache encodeCache
	base  string // explicit base URL, normalised; "" to use Model.BaseURL or the default
}

func newAnthropic(opts Options, r retrier) *anthropicClient {
	c := &anthropicClient{endpoint: newEndpoint(Anthropic, opts, r), base: normalizeBaseURL(Anthropic, opts.BaseURL)}
	c.header.Set("x-api-key", opts.APIKey)
	c.header.Set("anthropic-version", anthropicVersion)
	return c
}

func (c *anthropicClient) Provider() string { return Anthropic }

func (c *anthropicClient) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (Response, error) {
	body, thinking, err := anthropicBody(req, &c.cache)
	if err != nil {
		return Response{}, fmt.Errorf("anthropic: encoding the request: %w", err)
	}
	base := c.base
	if base == "" && req.Model.BaseURL != "" {
		base = normalizeBaseURL(Anthropic, req.Model.BaseURL)
	}
	if base == "" {
		base = AnthropicBaseURL
	}
	var extra http.Header
	if thinking && interleavedThinking(req.Model.ID) {
		// Thinking between tool calls, not only before the first one.
		extra = http.Header{"Anthropic-Beta": {interleavedThinkingBeta}}
	}
	return c.stream(ctx, base+"/v1/messages", c.cache.share(body), extra, req.Model, onEvent, readAnthropic)
}

const interleavedThinkingBeta = "interleaved-thinking-2025-05-14"

// interleavedThinking reports whether a model thinks between tool calls
// (the Claude 4 family and later) when the beta header asks for it.
func interleavedThinking(id string) bool {
	for _, fam := range [...]string{"claude-opus-4", "claude-sonnet-4", "claude-haiku-4", "claude-4"} {
		if strings.HasPrefix(id, fam) {
			return true
		}
	}
	return false
}

// The request body is built from the small wire types below with
// encoding/json rather than from the SDK's param types: those marshal at
// ~35 MB/s (nested MarshalJSON re-encoding), 6 ms per call for a 220 KB
// transcript, against well under 1 ms here.

type anthRequest struct {
	Model     string        `json:"model"`
	MaxTokens int64         `json:"max_tokens"`
	Stream    bool          `json:"stream"`
	Thinking  *anthThinking `json:"thinking,omitempty"`
	System    []anthBlock   `json:"system,omitempty"`
	Tools     []anthTool    `json:"tools,omitempty"`
	Messages  []anthMessage `json:"messages"` // last and nil: the encoded messages are spliced in
}

type anthThinking struct {
	Type         string `json:"type"` // "enabled"
	BudgetTokens int64  `json:"budget_tokens"`
}

type anthCache struct {
	Type string `json:"type"`
}

var ephemeral = &anthCache{Type: "ephemeral"}

type anthTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema"`
	CacheControl *anthCache      `json:"cache_control,omitempty"`
}

type anthMessage struct {
	Role    string      `json:"role"`
	Content []anthBlock `json:"content"`
}

// anthBlock is any content block; Type says which fields are set.
type anthBlock struct {
	Type         string           `json:"type"`
	Text         string           `json:"text,omitempty"`
	Source       *anthImageSource `json:"source,omitempty"`
	ID           string           `json:"id,omitempty"`
	Name         string           `json:"name,omitempty"`
	Input        json.RawMessage  `json:"input,omitempty"`
	ToolUseID    string           `json:"tool_use_id,omitempty"`
	IsError      bool             `json:"is_error,omitempty"`
	Content      []anthBlock      `json:"content,omitempty"`
	Thinking     *string          `json:"thinking,omitempty"`
	Signature    string           `json:"signature,omitempty"`
	Data         string           `json:"data,omitempty"`
	CacheControl *anthCache       `json:"cache_control,omitempty"`
}

type anthImageSource struct {
	Type      string `json:"type"`
	MediaType string `json:"media_type"`
	Data      string `json:"data"`
}

var emptySchema = json.RawMessage(`{"type":"object","properties":{}}`)

// anthropicBody maps a request to the Messages API, with prompt-caching
// breakpoints on the system prompt, the tool list and the last user message,
// and extended thinking when the request's level asks for it. thinking
// reports whether it does. cache (may be nil) holds the messages encoded
// by earlier calls.
func anthropicBody(req Request, cache *encodeCache) (body []byte, thinking bool, err error) {
	p := anthRequest{
		Model:     req.Model.ID,
		MaxTokens: maxTokens(req),
		Stream:    true,
	}
	if req.Model.Reasoning {
		if b := anthropicThinking(req.Reasoning, p.MaxTokens); b > 0 {
			p.Thinking = &anthThinking{Type: "enabled", BudgetTokens: b}
		}
	}
	if req.System != "" {
		p.System = []anthBlock{{Type: "text", Text: req.System, CacheControl: ephemeral}}
	}
	if len(req.Tools) > 0 {
		p.Tools = make([]anthTool, len(req.Tools))
		for i, t := range req.Tools {
			p.Tools[i] = anthTool{Name: t.Name, Description: t.Description, InputSchema: schemaOrEmpty(t.Schema)}
		}
		p.Tools[len(p.Tools)-1].CacheControl = ephemeral
	}
	lastUser := -1
	for i := len(req.Messages) - 1; i >= 0 && lastUser < 0; i-- {
		if m := req.Messages[i]; m.Role != message.RoleAssistant {
			if _, ok := anthropicMessage(m); ok {
				lastUser = i
			}
		}
	}
	if p.Thinking != nil {
		// The API rejects thinking when the tool-use turn in progress began
		// without it (reasoning was switched on after a run stopped
		// mid-tool): this request goes without; the next turn thinks.
		for i := len(req.Messages) - 1; i >= 0; i-- {
			if m := req.Messages[i]; m.Role == message.RoleAssistant {
				if am, ok := anthropicMessage(m); ok {
					if unthoughtToolTurn([]anthMessage{am}) {
						p.Thinking = nil
					}
					break
				}
			}
		}
	}
	head, err := cache.head(p)
	if err != nil {
		return nil, false, err
	}
	body, err = cache.body(head, nil, req.Messages, lastUser, func(dst []byte, i int, m message.Message) ([]byte, error) {
		return appendMessage(dst, m, func(m message.Message) ([]byte, error) {
			am, ok := anthropicMessage(m)
			if !ok {
				return nil, nil
			}
			if i == lastUser {
				am.Content[len(am.Content)-1].CacheControl = ephemeral
			}
			return encodeJSON(am)
		})
	})
	return body, p.Thinking != nil, err
}

// anthropicMessage maps one transcript message to the Messages API; ok is
// false when nothing of it is sent.
func anthropicMessage(m message.Message) (am anthMessage, ok bool) {
	var blocks []anthBlock
	assistant := m.Role == message.RoleAssistant
	for _, c := range m.Content {
		switch {
		case c.Type == message.TypeText:
			if c.Text != "" {
				blocks = append(blocks, anthBlock{Type: "text", Text: c.Text})
			}
		case c.Type == message.TypeThinking && assistant:
			// Sent back exactly as received (the API checks the
			// signature; tool use within a turn requires the blocks).
			// Unsigned ones (a stream cut short, another provider's
			// reasoning) cannot be verified and are left out, as are
			// reasoning items with an id (OpenAI's, from a zot session):
			// their encrypted content is no Anthropic signature.
			switch {
			case c.Redacted && c.Data != "":
				blocks = append(blocks, anthBlock{Type: "redacted_thinking", Data: c.Data})
			case !c.Redacted && c.Signature != "" && c.ID == "":
				t := c.Text
				blocks = append(blocks, anthBlock{Type: "thinking", Thinking: &t, Signature: c.Signature})
			}
		case c.Type == message.TypeToolCall && assistant:
			blocks = append(blocks, anthBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: validArgs(c.Args)})
		case c.Type == message.TypeImage && !assistant:
			blocks = append(blocks, anthropicImage(c))
		case c.Type == message.TypeToolResult && !assistant:
			tr := anthBlock{Type: "tool_result", ToolUseID: c.CallID, IsError: c.IsError}
			for _, rc := range c.Content {
				switch rc.Type {
				case message.TypeText:
					if rc.Text != "" {
						tr.Content = append(tr.Content, anthBlock{Type: "text", Text: rc.Text})
					}
				case message.TypeImage:
					tr.Content = append(tr.Content, anthropicImage(rc))
				}
			}
			blocks = append(blocks, tr)
		}
	}
	if len(blocks) == 0 {
		return anthMessage{}, false // the API rejects empty messages (an aborted turn, say)
	}
	role := "assistant"
	if !assistant {
		role = "user"
	}
	return anthMessage{Role: role, Content: blocks}, true
}

// unthoughtToolTurn reports whether the last assistant message called tools
// without opening with a thinking block, and only user messages (its tool
// results) follow it: a turn the API still counts as in progress.
func unthoughtToolTurn(msgs []anthMessage) bool {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != "assistant" {
			continue
		}
		toolUse := false
		for _, b := range m.Content {
			toolUse = toolUse || b.Type == "tool_use"
		}
		first := m.Content[0].Type
		return toolUse && first != "thinking" && first != "redacted_thinking"
	}
	return false
}

func anthropicImage(c message.Content) anthBlock {
	return anthBlock{Type: "image", Source: &anthImageSource{Type: "base64", MediaType: c.MimeType, Data: c.Data}}
}

func schemaOrEmpty(s json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(s)) == 0 {
		return emptySchema
	}
	return s
}

// validArgs is a call's args as the request can carry them: a model that
// streamed broken JSON must not make every later request fail to encode.
func validArgs(a json.RawMessage) json.RawMessage {
	if !json.Valid(a) {
		return json.RawMessage("{}")
	}
	return a
}

func argsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(a)) == 0 {
		return json.RawMessage("{}")
	}
	return a
}

// streamBlock is one content block being streamed.
type streamBlock struct {
	kind uint8   // blockText, blockTool, blockThinking, blockRedacted, or 0 (ignored)
	text textBuf // text, or thinking
	id   string
	name string
	args []byte           // tool arguments; the signature of a thinking block; a redacted block's data
	call *message.Content // set when a tool call is complete
	// started: its ToolUseStart was emitted (OpenAI streams the name
	// and arguments of a call in pieces, possibly in either order)
	started bool
}

const (
	blockText = 1 + iota
	blockTool
	blockThinking
	blockRedacted
)

// readAnthropic reads one Messages API event stream.
func readAnthropic(body io.Reader, onEvent func(StreamEvent)) (resp Response, delivered bool, err error) {
	r := newSSEReader(body)
	var blocks []streamBlock
	var stop string
	done := false
	defer func() { resp.Content = blockContent(blocks) }()
	for !done {
		ev, data, err := r.next()
		if err == io.EOF {
			return resp, delivered, transportError(Anthropic, errTruncated)
		}
		if err != nil {
			return resp, delivered, transportError(Anthropic, err)
		}
		s := str(data)
		name := str(ev)
		if name == "" {
			name = gjson.Get(s, "type").Str
		}
		switch name {
		case "content_block_delta":
			if i, t, ok := fastTextDelta(s); ok {
				if i < len(blocks) && blocks[i].kind == blockText && t != "" {
					t = blocks[i].text.add(t)
					delivered = true
					onEvent(StreamEvent{TextDelta: t})
				}
				continue
			}
			i := int(gjson.Get(s, "index").Int())
			if i < 0 || i >= len(blocks) {
				continue
			}
			b := &blocks[i]
			d := gjson.Get(s, "delta")
			switch d.Get("type").Str {
			case "text_delta":
				if b.kind == blockText {
					if t := b.text.add(d.Get("text").Str); t != "" {
						delivered = true
						onEvent(StreamEvent{TextDelta: t})
					}
				}
			case "input_json_delta":
				if b.kind == blockTool {
					piece := d.Get("partial_json").Str
					b.args = append(b.args, piece...)
					if piece != "" {
						onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseArgs, ID: b.id, Args: strings.Clone(piece)}})
					}
				}
			case "thinking_delta":
				if b.kind == blockThinking {
					if t := b.text.add(d.Get("thinking").Str); t != "" {
						delivered = true
						onEvent(StreamEvent{ThinkingDelta: t})
					}
				}
			case "signature_delta":
				if b.kind == blockThinking {
					b.args = append(b.args, d.Get("signature").Str...)
				}
			}
		case "content_block_start":
			i := int(gjson.Get(s, "index").Int())
			if i < 0 || i > 1<<16 {
				continue
			}
			for len(blocks) <= i {
				blocks = append(blocks, streamBlock{})
			}
			b := &blocks[i]
			cb := gjson.Get(s, "content_block")
			switch cb.Get("type").Str {
			case "text":
				b.kind = blockText
				b.text.b = make([]byte, 0, 1024)
				if t := b.text.add(cb.Get("text").Str); t != "" {
					delivered = true
					onEvent(StreamEvent{TextDelta: t})
				}
			case "tool_use":
				b.kind = blockTool
				b.id = strings.Clone(cb.Get("id").Str)
				b.name = strings.Clone(cb.Get("name").Str)
				delivered = true
				onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseStart, ID: b.id, Name: b.name}})
			case "thinking":
				b.kind = blockThinking
				b.args = append(b.args, cb.Get("signature").Str...)
				if t := b.text.add(cb.Get("thinking").Str); t != "" {
					delivered = true
					onEvent(StreamEvent{ThinkingDelta: t})
				}
			case "redacted_thinking":
				b.kind = blockRedacted
				b.args = append(b.args, cb.Get("data").Str...)
			}
		case "content_block_stop":
			i := int(gjson.Get(s, "index").Int())
			if i >= 0 && i < len(blocks) && blocks[i].kind == blockTool && blocks[i].call == nil {
				b := &blocks[i]
				b.call = &message.Content{Type: message.TypeToolCall, ID: b.id, Name: b.name,
					Args: argsOrEmpty(bytes.Clone(b.args))}
				delivered = true
				onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseEnd, ID: b.id}})
				onEvent(StreamEvent{ToolCall: b.call})
			}
		case "message_start":
			u := gjson.Get(s, "message.usage")
			resp.Usage.Input = int(u.Get("input_tokens").Int())
			resp.Usage.Output = int(u.Get("output_tokens").Int())
			resp.Usage.CacheRead = int(u.Get("cache_read_input_tokens").Int())
			resp.Usage.CacheWrite = int(u.Get("cache_creation_input_tokens").Int())
		case "message_delta":
			stop = strings.Clone(gjson.Get(s, "delta.stop_reason").Str)
			// Counts here are cumulative; fields that are absent keep message_start's.
			u := gjson.Get(s, "usage")
			for _, f := range [...]struct {
				key string
				dst *int
			}{
				{"output_tokens", &resp.Usage.Output},
				{"input_tokens", &resp.Usage.Input},
				{"cache_read_input_tokens", &resp.Usage.CacheRead},
				{"cache_creation_input_tokens", &resp.Usage.CacheWrite},
			} {
				if v := u.Get(f.key); v.Type == gjson.Number {
					*f.dst = int(v.Int())
				}
			}
		case "message_stop":
			done = true
		case "error":
			return resp, delivered, streamError(Anthropic, s)
		}
	}
	resp.Stop = anthropicStop(stop, blocks)
	return resp, delivered, nil
}

// fastTextDelta recognises the most frequent event exactly as the API
// writes it, {"type":"content_block_delta","index":N,"delta":{"type":
// "text_delta","text":"…"}} with no escapes in the text, and returns N and
// the text. Anything else (escapes, other fields, other order) gives
// ok=false and goes through gjson.
func fastTextDelta(s string) (index int, text string, ok bool) {
	const head = `{"type":"content_block_delta","index":`
	const mid = `,"delta":{"type":"text_delta","text":"`
	const tail = `"}}`
	if !strings.HasPrefix(s, head) {
		return 0, "", false
	}
	s = s[len(head):]
	n := 0
	for n < len(s) && n < 6 && s[n] >= '0' && s[n] <= '9' {
		index = index*10 + int(s[n]-'0')
		n++
	}
	s = s[n:]
	if n == 0 || !strings.HasPrefix(s, mid) || !strings.HasSuffix(s, tail) || len(s) < len(mid)+len(tail) {
		return 0, "", false
	}
	text = s[len(mid) : len(s)-len(tail)]
	if strings.IndexByte(text, '\\') >= 0 || strings.IndexByte(text, '"') >= 0 {
		return 0, "", false
	}
	return index, text, true
}

func anthropicStop(s string, blocks []streamBlock) string {
	switch s {
	case "tool_use":
		return StopToolUse
	case "max_tokens", "model_context_window_exceeded":
		return StopLength
	}
	for _, b := range blocks {
		if b.call != nil {
			return StopToolUse
		}
	}
	return StopEndTurn
}

// blockContent is the assistant content of the streamed blocks, in order:
// thinking (with its signature), text and complete tool calls.
func blockContent(blocks []streamBlock) []message.Content {
	var out []message.Content
	for i := range blocks {
		b := &blocks[i]
		switch {
		case b.kind == blockThinking && (len(b.text.b) > 0 || len(b.args) > 0):
			out = append(out, message.Content{Type: message.TypeThinking, Text: b.text.String(), Signature: string(b.args)})
		case b.kind == blockRedacted:
			out = append(out, message.Content{Type: message.TypeThinking, Redacted: true, Data: string(b.args)})
		case b.kind == blockText && len(b.text.b) > 0:
			out = append(out, message.Text(b.text.String()))
		case b.call != nil:
			out = append(out, *b.call)
		}
	}
	return out
}
