package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/param"
	"github.com/tidwall/gjson"

	"github.com/zot-editors/zot/agent/message"
)

// anthropicClient streams the Messages API through the official SDK.
type anthropicClient struct {
	sdk     anthropic.Client
	base    string // explicit base URL, normalised; "" to use Model.BaseURL or the default
	retry   retrier
	catalog *Catalog
}

func newAnthropic(opts Options, r retrier) *anthropicClient {
	c := &anthropicClient{base: normalizeBaseURL(Anthropic, opts.BaseURL), retry: r, catalog: opts.Catalog}
	sdkOpts := []option.RequestOption{
		// Our key, our base URL: no ANTHROPIC_* variables, profiles or
		// federation picked up behind the caller's back.
		option.WithoutEnvironmentDefaults(),
		option.WithHTTPClient(opts.HTTPClient),
		option.WithAPIKey(opts.APIKey),
		option.WithMaxRetries(0), // see retry.go
	}
	if c.base != "" {
		sdkOpts = append(sdkOpts, option.WithBaseURL(c.base+"/"))
	}
	c.sdk = anthropic.NewClient(sdkOpts...)
	return c
}

func (c *anthropicClient) Provider() string { return Anthropic }

func (c *anthropicClient) Stream(ctx context.Context, req Request, onEvent func(StreamEvent)) (Response, error) {
	params := anthropicParams(req)
	var opts []option.RequestOption
	if c.base == "" && req.Model.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(normalizeBaseURL(Anthropic, req.Model.BaseURL)+"/"))
	}
	resp, err := c.retry.run(ctx, func() (Response, bool, error) {
		var raw *http.Response
		if err := c.sdk.Post(ctx, "v1/messages", params, &raw, opts...); err != nil {
			return Response{}, false, fromSDK(Anthropic, err)
		}
		defer raw.Body.Close()
		return readAnthropic(raw.Body, onEvent)
	})
	cost(c.catalog, req.Model, &resp.Usage)
	return resp, err
}

// anthropicParams maps a request to the Messages API, with prompt-caching
// breakpoints on the system prompt, the tool list and the last user message.
func anthropicParams(req Request) anthropic.MessageNewParams {
	p := anthropic.MessageNewParams{
		Model:     anthropic.Model(req.Model.ID),
		MaxTokens: maxTokens(req),
		Messages:  make([]anthropic.MessageParam, 0, len(req.Messages)),
	}
	p.SetExtraFields(map[string]any{"stream": true})
	if req.System != "" {
		p.System = []anthropic.TextBlockParam{{Text: req.System, CacheControl: anthropic.NewCacheControlEphemeralParam()}}
	}
	if len(req.Tools) > 0 {
		p.Tools = make([]anthropic.ToolUnionParam, len(req.Tools))
		for i, t := range req.Tools {
			schema := t.Schema
			if len(bytes.TrimSpace(schema)) == 0 {
				schema = json.RawMessage(`{"type":"object","properties":{}}`)
			}
			tp := &anthropic.ToolParam{Name: t.Name, InputSchema: overrideSchema(schema)}
			if t.Description != "" {
				tp.Description = anthropic.String(t.Description)
			}
			if i == len(req.Tools)-1 {
				tp.CacheControl = anthropic.NewCacheControlEphemeralParam()
			}
			p.Tools[i] = anthropic.ToolUnionParam{OfTool: tp}
		}
	}
	lastUser := -1
	for _, m := range req.Messages {
		var blocks []anthropic.ContentBlockParamUnion
		switch m.Role {
		case message.RoleAssistant:
			for _, c := range m.Content {
				switch c.Type {
				case message.TypeText:
					if c.Text != "" {
						blocks = append(blocks, anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: c.Text}})
					}
				case message.TypeToolCall:
					blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolUse: &anthropic.ToolUseBlockParam{
						ID: c.ID, Name: c.Name, Input: argsOrEmpty(c.Args)}})
				}
			}
		default:
			for _, c := range m.Content {
				switch c.Type {
				case message.TypeText:
					if c.Text != "" {
						blocks = append(blocks, anthropic.ContentBlockParamUnion{OfText: &anthropic.TextBlockParam{Text: c.Text}})
					}
				case message.TypeImage:
					blocks = append(blocks, anthropic.ContentBlockParamUnion{OfImage: anthropicImage(c)})
				case message.TypeToolResult:
					tr := &anthropic.ToolResultBlockParam{ToolUseID: c.CallID}
					if c.IsError {
						tr.IsError = anthropic.Bool(true)
					}
					for _, rc := range c.Content {
						switch rc.Type {
						case message.TypeText:
							if rc.Text != "" {
								tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfText: &anthropic.TextBlockParam{Text: rc.Text}})
							}
						case message.TypeImage:
							tr.Content = append(tr.Content, anthropic.ToolResultBlockParamContentUnion{OfImage: anthropicImage(rc)})
						}
					}
					blocks = append(blocks, anthropic.ContentBlockParamUnion{OfToolResult: tr})
				}
			}
		}
		if len(blocks) == 0 {
			continue // the API rejects empty messages (an aborted turn, say)
		}
		role := anthropic.MessageParamRoleUser
		if m.Role == message.RoleAssistant {
			role = anthropic.MessageParamRoleAssistant
		} else {
			lastUser = len(p.Messages)
		}
		p.Messages = append(p.Messages, anthropic.MessageParam{Role: role, Content: blocks})
	}
	if lastUser >= 0 {
		blocks := p.Messages[lastUser].Content
		cc := anthropic.NewCacheControlEphemeralParam()
		switch b := blocks[len(blocks)-1]; {
		case b.OfText != nil:
			b.OfText.CacheControl = cc
		case b.OfImage != nil:
			b.OfImage.CacheControl = cc
		case b.OfToolResult != nil:
			b.OfToolResult.CacheControl = cc
		}
	}
	return p
}

func anthropicImage(c message.Content) *anthropic.ImageBlockParam {
	return &anthropic.ImageBlockParam{Source: anthropic.ImageBlockParamSourceUnion{
		OfBase64: &anthropic.Base64ImageSourceParam{Data: c.Data, MediaType: anthropic.Base64ImageSourceMediaType(c.MimeType)}}}
}

func argsOrEmpty(a json.RawMessage) json.RawMessage {
	if len(bytes.TrimSpace(a)) == 0 {
		return json.RawMessage("{}")
	}
	return a
}

// streamBlock is one content block being streamed.
type streamBlock struct {
	kind uint8 // blockText, blockTool, or 0 (ignored: thinking…)
	text textBuf
	id   string
	name string
	args []byte
	call *message.Content // set when a tool call is complete
}

const (
	blockText = 1 + iota
	blockTool
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
					b.args = append(b.args, d.Get("partial_json").Str...)
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
			}
		case "content_block_stop":
			i := int(gjson.Get(s, "index").Int())
			if i >= 0 && i < len(blocks) && blocks[i].kind == blockTool && blocks[i].call == nil {
				b := &blocks[i]
				b.call = &message.Content{Type: message.TypeToolCall, ID: b.id, Name: b.name,
					Args: argsOrEmpty(bytes.Clone(b.args))}
				delivered = true
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
// text and complete tool calls.
func blockContent(blocks []streamBlock) []message.Content {
	var out []message.Content
	for i := range blocks {
		b := &blocks[i]
		switch {
		case b.kind == blockText && len(b.text.b) > 0:
			out = append(out, message.Text(b.text.String()))
		case b.call != nil:
			out = append(out, *b.call)
		}
	}
	return out
}

// overrideSchema sends a tool's JSON schema as it is.
func overrideSchema(schema json.RawMessage) anthropic.ToolInputSchemaParam {
	return param.Override[anthropic.ToolInputSchemaParam](schema)
}
