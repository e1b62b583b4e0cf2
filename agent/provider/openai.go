package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/zot-editors/zot/agent/message"
)

// openaiClient streams Chat Completions. It also serves OpenAI-compatible
// servers (Ollama, vLLM, llama.cpp, OpenRouter) through a base URL.
type openaiClient struct {
	endpoint
	cache encodeCache
	base  string // explicit base URL, normalised; "" to use Model.BaseURL or the default
}

func newOpenAI(opts Options, r retrier) *openaiClient {
	c := &openaiClient{endpoint: newEndpoint(OpenAI, opts, r), base: normalizeBaseURL(OpenAI, opts.BaseURL)}
	c.header.Set("Authorization", "Bearer "+opts.APIKey)
	// As the official SDK does: organisation and project from the environment.
	if v := os.Getenv("OPENAI_ORG_ID"); v != "" {
		c.header.Set("OpenAI-Organization", v)
	}
	if v := os.Getenv("OPENAI_PROJECT_ID"); v != "" {
		c.header.Set("OpenAI-Project", v)
	}
	return c
}

func (c *openaiClient) Provider() string { return OpenAI }

func (c *openaiClient) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (Response, error) {
	base := c.base
	if base == "" && req.Model.BaseURL != "" {
		base = normalizeBaseURL(OpenAI, req.Model.BaseURL)
	}
	body, err := openaiBody(req, base == "" || strings.HasPrefix(base, "https://api.openai.com"), &c.cache)
	if err != nil {
		return Response{}, fmt.Errorf("openai: encoding the request: %w", err)
	}
	url := base
	if url == "" {
		url = OpenAIBaseURL
	}
	url += "/chat/completions"
	return c.stream(ctx, url, c.cache.share(body), nil, req.Model, onEvent, readOpenAI)
}

// The request body is built from small wire types with encoding/json, as
// for Anthropic (see anthropic.go).

type oaiRequest struct {
	Model               string       `json:"model"`
	Tools               []oaiTool    `json:"tools,omitempty"`
	Stream              bool         `json:"stream"`
	StreamOptions       oaiStreamOpt `json:"stream_options"`
	MaxTokens           int64        `json:"max_tokens,omitempty"`
	MaxCompletionTokens int64        `json:"max_completion_tokens,omitempty"`
	ReasoningEffort     string       `json:"reasoning_effort,omitempty"`
	// Messages stays last and nil: the encoded messages are spliced in.
	Messages []oaiMessage `json:"messages"`
}

type oaiStreamOpt struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaiMessage struct {
	Role       string        `json:"role"`
	Content    any           `json:"content,omitempty"` // string or []oaiPart
	ToolCalls  []oaiToolCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

type oaiPart struct {
	Type     string       `json:"type"`
	Text     string       `json:"text,omitempty"`
	ImageURL *oaiImageURL `json:"image_url,omitempty"`
}

type oaiImageURL struct {
	URL string `json:"url"`
}

type oaiTool struct {
	Type     string      `json:"type"`
	Function oaiFunction `json:"function"`
}

type oaiFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type oaiToolCall struct {
	ID       string          `json:"id"`
	Type     string          `json:"type"`
	Function oaiFunctionCall `json:"function"`
}

type oaiFunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// openaiBody maps a request to Chat Completions. official selects
// max_completion_tokens (api.openai.com) over max_tokens (what compatible
// servers understand). cache (may be nil) holds the messages encoded by
// earlier calls.
func openaiBody(req Request, official bool, cache *encodeCache) ([]byte, error) {
	p := oaiRequest{
		Model:         req.Model.ID,
		Stream:        true,
		StreamOptions: oaiStreamOpt{IncludeUsage: true},
	}
	if n := maxTokens(req); official {
		p.MaxCompletionTokens = n
	} else {
		p.MaxTokens = n
	}
	if req.Model.Reasoning {
		p.ReasoningEffort = openaiEffort(req.Reasoning, req.Model.ID, official)
	}
	var system [][]byte
	if req.System != "" {
		b, err := encodeJSON(oaiMessage{Role: "system", Content: req.System})
		if err != nil {
			return nil, err
		}
		system = [][]byte{b}
	}
	for _, t := range req.Tools {
		p.Tools = append(p.Tools, oaiTool{Type: "function",
			Function: oaiFunction{Name: t.Name, Description: t.Description, Parameters: schemaOrEmpty(t.Schema)}})
	}
	head, err := cache.head(p)
	if err != nil {
		return nil, err
	}
	return cache.body(head, system, req.Messages, -1, func(dst []byte, _ int, m message.Message) ([]byte, error) {
		return appendMessage(dst, m, func(m message.Message) ([]byte, error) {
			var raw []byte
			for i, om := range openaiMessages(m) {
				b, err := encodeJSON(om)
				if err != nil {
					return nil, err
				}
				if i > 0 {
					raw = append(raw, ',')
				}
				raw = append(raw, b...)
			}
			return raw, nil
		})
	})
}

// openaiMessages maps one transcript message to Chat Completions messages
// (none, one, or a user message's tool results and then its own content).
func openaiMessages(m message.Message) (out []oaiMessage) {
	if m.Role == message.RoleAssistant {
		a := oaiMessage{Role: "assistant"}
		if text := message.TextOf(m.Content); text != "" {
			a.Content = text
		}
		for _, c := range m.Content {
			if c.Type == message.TypeToolCall {
				a.ToolCalls = append(a.ToolCalls, oaiToolCall{ID: c.ID, Type: "function",
					Function: oaiFunctionCall{Name: c.Name, Arguments: string(argsOrEmpty(c.Args))}})
			}
		}
		if a.Content != nil || len(a.ToolCalls) > 0 {
			out = append(out, a)
		}
		return out
	}
	// A user message: its tool results become "tool" messages, which must
	// follow the assistant message at once; images in tool results (a
	// tool message holds text only) go in a user message after them,
	// with the message's own text and images.
	var parts, toolImages []oaiPart
	for _, c := range m.Content {
		switch c.Type {
		case message.TypeText:
			if c.Text != "" {
				parts = append(parts, oaiPart{Type: "text", Text: c.Text})
			}
		case message.TypeImage:
			parts = append(parts, openaiImage(c))
		case message.TypeToolResult:
			text := message.TextOf(c.Content)
			imgs := 0
			for _, rc := range c.Content {
				if rc.Type == message.TypeImage {
					toolImages = append(toolImages, openaiImage(rc))
					imgs++
				}
			}
			if imgs > 0 {
				text = strings.TrimSpace(text + "\n(" + strconv.Itoa(imgs) + " image(s) attached in the next message)")
			}
			if text == "" {
				text = "(no output)"
			}
			out = append(out, oaiMessage{Role: "tool", Content: text, ToolCallID: c.CallID})
		}
	}
	if len(toolImages) > 0 {
		parts = append(append([]oaiPart{{Type: "text", Text: "Images from the tool results above:"}}, toolImages...), parts...)
	}
	if len(parts) == 0 {
		return out
	}
	allText := true
	for _, pt := range parts {
		allText = allText && pt.Type == "text"
	}
	if allText {
		// Plain string content: what every compatible server accepts.
		texts := make([]string, len(parts))
		for i, pt := range parts {
			texts[i] = pt.Text
		}
		out = append(out, oaiMessage{Role: "user", Content: strings.Join(texts, "\n")})
	} else {
		out = append(out, oaiMessage{Role: "user", Content: parts})
	}
	return out
}

// openaiEffort is the reasoning_effort of a level. Off is "minimal" for
// OpenAI's GPT-5 models (they cannot switch reasoning off; minimal is the
// least) and omitted elsewhere, which leaves compatible servers at their
// default. Reasoning sent back by a model is never replayed: the API keeps
// it server-side, and compatible servers (DeepSeek) reject it in input.
func openaiEffort(level, model string, official bool) string {
	switch level {
	case ReasoningLow, ReasoningMedium, ReasoningHigh:
		return level
	case ReasoningOff:
		if official && strings.HasPrefix(model, "gpt-5") {
			return "minimal"
		}
	}
	return ""
}

func openaiImage(c message.Content) oaiPart {
	return oaiPart{Type: "image_url", ImageURL: &oaiImageURL{URL: "data:" + c.MimeType + ";base64," + c.Data}}
}

// readOpenAI reads one Chat Completions chunk stream. Tool calls arrive in
// pieces by index and are emitted when the choice finishes. Reasoning that
// compatible servers stream beside the answer (reasoning_content: vLLM,
// llama.cpp, DeepSeek; reasoning: Ollama, OpenRouter, newer vLLM) becomes
// thinking.
func readOpenAI(body io.Reader, onEvent func(StreamEvent)) (resp Response, delivered bool, err error) {
	r := newSSEReader(body)
	text := textBuf{b: make([]byte, 0, 1024)}
	var thinking textBuf
	var calls []streamBlock
	finish, finished := "", false
	defer func() {
		var head []message.Content
		if len(thinking.b) > 0 {
			head = append(head, message.Content{Type: message.TypeThinking, Text: thinking.String()})
		}
		if len(text.b) > 0 {
			head = append(head, message.Text(text.String()))
		}
		if head != nil {
			resp.Content = append(head, resp.Content...)
		}
	}()
	// startCall announces call i once its name is known (or when it
	// completes without one), with the arguments that came before.
	startCall := func(i int) {
		b := &calls[i]
		if b.started {
			return
		}
		b.started = true
		if b.id == "" {
			b.id = "call_" + strconv.Itoa(i)
		}
		delivered = true
		onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseStart, ID: b.id, Name: b.name}})
		if len(b.args) > 0 {
			onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseArgs, ID: b.id, Args: string(b.args)}})
		}
	}
	emitCalls := func() {
		for i := range calls {
			b := &calls[i]
			if b.call != nil || (b.name == "" && b.id == "" && len(b.args) == 0) {
				continue
			}
			startCall(i)
			b.call = &message.Content{Type: message.TypeToolCall, ID: b.id, Name: b.name, Args: argsOrEmpty(bytes.Clone(b.args))}
			resp.Content = append(resp.Content, *b.call)
			delivered = true
			onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseEnd, ID: b.id}})
			onEvent(StreamEvent{ToolCall: b.call})
		}
	}
	for {
		_, data, err := r.next()
		if err == io.EOF {
			if finished {
				break // some servers end without [DONE]
			}
			return resp, delivered, transportError(OpenAI, errTruncated)
		}
		if err != nil {
			return resp, delivered, transportError(OpenAI, err)
		}
		s := str(data)
		if s == "[DONE]" {
			break
		}
		ch := gjson.Get(s, "choices.0")
		if ch.Exists() {
			d := ch.Get("delta")
			for _, key := range [...]string{"reasoning_content", "reasoning"} {
				if c := d.Get(key); c.Type == gjson.String && c.Str != "" {
					t := thinking.add(c.Str)
					delivered = true
					onEvent(StreamEvent{ThinkingDelta: t})
					break
				}
			}
			// A refusal is the model's answer too: the user must see it.
			for _, key := range [...]string{"content", "refusal"} {
				if c := d.Get(key); c.Type == gjson.String && c.Str != "" {
					t := text.add(c.Str)
					delivered = true
					onEvent(StreamEvent{TextDelta: t})
				}
			}
			if tcs := d.Get("tool_calls"); tcs.IsArray() {
				for _, tc := range tcs.Array() {
					i := int(tc.Get("index").Int())
					if i < 0 || i > 1<<10 {
						continue
					}
					for len(calls) <= i {
						calls = append(calls, streamBlock{kind: blockTool})
					}
					b := &calls[i]
					if id := tc.Get("id").Str; id != "" && b.id == "" {
						b.id = strings.Clone(id)
					}
					fn := tc.Get("function")
					if n := fn.Get("name").Str; n != "" && b.name == "" {
						b.name = strings.Clone(n)
					}
					piece := fn.Get("arguments").Str
					b.args = append(b.args, piece...)
					if b.started {
						if piece != "" {
							onEvent(StreamEvent{ToolUse: &ToolUseDelta{Phase: ToolUseArgs, ID: b.id, Args: strings.Clone(piece)}})
						}
					} else if b.name != "" {
						startCall(i)
					}
				}
			}
			if fr := ch.Get("finish_reason"); fr.Type == gjson.String && fr.Str != "" {
				finish, finished = strings.Clone(fr.Str), true
				emitCalls()
			}
		} else if e := gjson.Get(s, "error"); e.Exists() {
			return resp, delivered, streamError(OpenAI, s)
		}
		if u := gjson.Get(s, "usage"); u.IsObject() {
			prompt := int(u.Get("prompt_tokens").Int())
			cached := int(u.Get("prompt_tokens_details.cached_tokens").Int())
			resp.Usage.Input = max(0, prompt-cached)
			resp.Usage.CacheRead = cached
			resp.Usage.Output = int(u.Get("completion_tokens").Int())
		}
	}
	emitCalls()
	resp.Stop = openaiStop(finish, len(resp.Content) > 0)
	return resp, delivered, nil
}

func openaiStop(finish string, hasCalls bool) string {
	switch finish {
	case "length":
		return StopLength
	case "tool_calls", "function_call":
		return StopToolUse
	}
	if hasCalls {
		return StopToolUse // some compatible servers say "stop" with tool calls
	}
	return StopEndTurn
}
