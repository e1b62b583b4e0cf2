package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"
	"github.com/tidwall/gjson"

	"github.com/zot-editors/zot/agent/message"
)

// openaiClient streams Chat Completions through the official SDK. It also
// serves OpenAI-compatible servers (Ollama, vLLM, llama.cpp, OpenRouter)
// through a base URL.
type openaiClient struct {
	sdk     openai.Client
	base    string // explicit base URL, normalised; "" to use Model.BaseURL or the default
	retry   retrier
	catalog *Catalog
}

func newOpenAI(opts Options, r retrier) *openaiClient {
	c := &openaiClient{base: normalizeBaseURL(OpenAI, opts.BaseURL), retry: r, catalog: opts.Catalog}
	base := c.base
	if base == "" {
		base = OpenAIBaseURL
	}
	// NewClient reads OPENAI_* variables first; the key and base URL given
	// here override them (OPENAI_ORG_ID / OPENAI_PROJECT_ID still apply).
	c.sdk = openai.NewClient(
		option.WithHTTPClient(opts.HTTPClient),
		option.WithAPIKey(opts.APIKey),
		option.WithBaseURL(base+"/"),
		option.WithMaxRetries(0), // see retry.go
	)
	return c
}

func (c *openaiClient) Provider() string { return OpenAI }

func (c *openaiClient) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (Response, error) {
	base := c.base
	var opts []option.RequestOption
	if base == "" && req.Model.BaseURL != "" {
		base = normalizeBaseURL(OpenAI, req.Model.BaseURL)
		opts = append(opts, option.WithBaseURL(base+"/"))
	}
	params := openaiParams(req, base == "" || strings.HasPrefix(base, "https://api.openai.com"))
	resp, err := c.retry.run(ctx, func() (Response, bool, error) {
		var raw *http.Response
		if err := c.sdk.Post(ctx, "chat/completions", params, &raw, opts...); err != nil {
			return Response{}, false, fromSDK(OpenAI, err)
		}
		defer raw.Body.Close()
		return readOpenAI(raw.Body, onEvent)
	})
	cost(c.catalog, req.Model, &resp.Usage)
	return resp, err
}

// openaiParams maps a request to Chat Completions. official selects
// max_completion_tokens (api.openai.com) over max_tokens (what compatible
// servers understand).
func openaiParams(req Request, official bool) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{
		Model:         shared.ChatModel(req.Model.ID),
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
		Messages:      make([]openai.ChatCompletionMessageParamUnion, 0, len(req.Messages)+1),
	}
	p.SetExtraFields(map[string]any{"stream": true})
	if n := maxTokens(req); official {
		p.MaxCompletionTokens = openai.Int(n)
	} else {
		p.MaxTokens = openai.Int(n)
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, t := range req.Tools {
		schema := t.Schema
		if len(bytes.TrimSpace(schema)) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		def, _ := json.Marshal(struct {
			Name        string          `json:"name"`
			Description string          `json:"description,omitempty"`
			Parameters  json.RawMessage `json:"parameters"`
		}{t.Name, t.Description, schema})
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(param.Override[shared.FunctionDefinitionParam](json.RawMessage(def))))
	}
	for _, m := range req.Messages {
		if m.Role == message.RoleAssistant {
			a := openai.ChatCompletionAssistantMessageParam{}
			if text := message.TextOf(m.Content); text != "" {
				a.Content.OfString = openai.String(text)
			}
			for _, c := range m.Content {
				if c.Type == message.TypeToolCall {
					a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
						OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{ID: c.ID,
							Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: c.Name, Arguments: string(argsOrEmpty(c.Args))}}})
				}
			}
			if a.Content.OfString.Valid() || len(a.ToolCalls) > 0 {
				p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
			}
			continue
		}
		// A user message: its tool results become "tool" messages, which must
		// follow the assistant message at once; images in tool results (a
		// tool message holds text only) go in a user message after them,
		// with the message's own text and images.
		var parts, toolImages []openai.ChatCompletionContentPartUnionParam
		for _, c := range m.Content {
			switch c.Type {
			case message.TypeText:
				if c.Text != "" {
					parts = append(parts, openai.TextContentPart(c.Text))
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
				p.Messages = append(p.Messages, openai.ToolMessage(text, c.CallID))
			}
		}
		if len(toolImages) > 0 {
			parts = append(append([]openai.ChatCompletionContentPartUnionParam{openai.TextContentPart("Images from the tool results above:")}, toolImages...), parts...)
		}
		if len(parts) == 0 {
			continue
		}
		allText := true
		for _, pt := range parts {
			allText = allText && pt.OfText != nil
		}
		if allText {
			// Plain string content: what every compatible server accepts.
			var b strings.Builder
			for i, pt := range parts {
				if i > 0 {
					b.WriteString("\n")
				}
				b.WriteString(pt.OfText.Text)
			}
			p.Messages = append(p.Messages, openai.UserMessage(b.String()))
		} else {
			p.Messages = append(p.Messages, openai.UserMessage(parts))
		}
	}
	return p
}

func openaiImage(c message.Content) openai.ChatCompletionContentPartUnionParam {
	return openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
		URL: "data:" + c.MimeType + ";base64," + c.Data})
}

// readOpenAI reads one Chat Completions chunk stream. Tool calls arrive in
// pieces by index and are emitted when the choice finishes.
func readOpenAI(body io.Reader, onEvent func(StreamEvent)) (resp Response, delivered bool, err error) {
	r := newSSEReader(body)
	text := textBuf{b: make([]byte, 0, 1024)}
	var calls []streamBlock
	finish, finished := "", false
	defer func() {
		if len(text.b) > 0 {
			resp.Content = append([]message.Content{message.Text(text.String())}, resp.Content...)
		}
	}()
	emitCalls := func() {
		for i := range calls {
			b := &calls[i]
			if b.call != nil || (b.name == "" && b.id == "" && len(b.args) == 0) {
				continue
			}
			id := b.id
			if id == "" {
				id = "call_" + strconv.Itoa(i)
			}
			b.call = &message.Content{Type: message.TypeToolCall, ID: id, Name: b.name, Args: argsOrEmpty(bytes.Clone(b.args))}
			resp.Content = append(resp.Content, *b.call)
			delivered = true
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
			if c := d.Get("content"); c.Type == gjson.String && c.Str != "" {
				t := text.add(c.Str)
				delivered = true
				onEvent(StreamEvent{TextDelta: t})
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
					b.args = append(b.args, fn.Get("arguments").Str...)
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
