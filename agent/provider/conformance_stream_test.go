package provider

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	assestream "github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3"
	ossestream "github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/zot-editors/zot/agent/message"
)

// extracted is what a reader makes of a stream, in terms both our readers
// and the SDKs' decoders can fill.
type extracted struct {
	Thinking []message.Content // thinking blocks: text + signature, or redacted data
	Text     string
	Calls    []call
	Stop     string // ours (StopEndTurn…)
	Usage    message.Usage
	ErrType  string // an error event's type, "" for none
}

type call struct{ ID, Name, Args string } // Args: compact JSON

func compactJSON(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("args %q: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func sseFile(t *testing.T, name string) *http.Response {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: f}
}

// ours runs one of our readers over a transcript.
func ours(t *testing.T, name string, read func(io.Reader, func(StreamEvent)) (Response, bool, error)) extracted {
	t.Helper()
	var text, thinking strings.Builder
	resp, _, err := read(sseFile(t, name).Body, func(ev StreamEvent) {
		text.WriteString(ev.TextDelta)
		thinking.WriteString(ev.ThinkingDelta)
	})
	var x extracted
	var ae *APIError
	if errors.As(err, &ae) {
		x.ErrType = ae.Type
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	streamed := ""
	for _, c := range resp.Content {
		switch c.Type {
		case message.TypeThinking:
			x.Thinking = append(x.Thinking, c)
			streamed += c.Text
		case message.TypeText:
			x.Text += c.Text
		case message.TypeToolCall:
			x.Calls = append(x.Calls, call{c.ID, c.Name, compactJSON(t, string(c.Args))})
		}
	}
	// What was streamed is what was kept.
	if err == nil && (text.String() != x.Text || thinking.String() != streamed) {
		t.Fatalf("%s: streamed %q / %q, kept %q / %q", name, text.String(), thinking.String(), x.Text, streamed)
	}
	if err != nil {
		x.Text = text.String() // an interrupted answer: what the user saw
	}
	x.Stop, x.Usage = resp.Stop, resp.Usage
	if err != nil {
		x.Stop = StopError // as the retrier marks it
	}
	return x
}

var sdkAnthropicStop = map[anthropic.StopReason]string{"end_turn": StopEndTurn, "tool_use": StopToolUse, "max_tokens": StopLength}

func anthropicSDK(t *testing.T, name string) extracted {
	t.Helper()
	st := assestream.NewStream[anthropic.MessageStreamEventUnion](assestream.NewDecoder(sseFile(t, name)), nil)
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	var x extracted
	if err := st.Err(); err != nil {
		// The SDK reports an error event as an error carrying its JSON.
		var body struct {
			Error struct{ Type string } `json:"error"`
		}
		var ae *anthropic.Error
		if errors.As(err, &ae) {
			json.Unmarshal([]byte(ae.RawJSON()), &body)
		}
		if body.Error.Type == "" {
			for _, typ := range []string{"overloaded_error", "api_error"} {
				if strings.Contains(err.Error(), typ) {
					body.Error.Type = typ
				}
			}
		}
		x.ErrType = body.Error.Type
		if x.ErrType == "" {
			t.Fatalf("SDK error without a type: %v", err)
		}
	}
	for _, b := range msg.Content {
		switch b.Type {
		case "thinking":
			x.Thinking = append(x.Thinking, message.Content{Type: message.TypeThinking, Text: b.Thinking, Signature: b.Signature})
		case "redacted_thinking":
			x.Thinking = append(x.Thinking, message.Content{Type: message.TypeThinking, Redacted: true, Data: b.Data})
		case "text":
			x.Text += b.Text
		case "tool_use":
			x.Calls = append(x.Calls, call{b.ID, b.Name, compactJSON(t, string(b.Input))})
		}
	}
	if x.ErrType == "" {
		x.Stop = sdkAnthropicStop[msg.StopReason]
	} else {
		x.Stop = StopError
	}
	u := msg.Usage
	x.Usage = message.Usage{Input: int(u.InputTokens), Output: int(u.OutputTokens),
		CacheRead: int(u.CacheReadInputTokens), CacheWrite: int(u.CacheCreationInputTokens)}
	return x
}

var sdkOpenAIStop = map[string]string{"stop": StopEndTurn, "tool_calls": StopToolUse, "length": StopLength}

func openaiSDK(t *testing.T, name string) extracted {
	t.Helper()
	st := ossestream.NewStream[openai.ChatCompletionChunk](ossestream.NewDecoder(sseFile(t, name)), nil)
	var acc openai.ChatCompletionAccumulator
	var x extracted
	var reasoning strings.Builder
	for st.Next() {
		ch := st.Current()
		acc.AddChunk(ch)
		// The SDK has no field for compatible servers' reasoning; it keeps
		// unknown fields raw.
		if len(ch.Choices) > 0 {
			if f, ok := ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]; ok {
				var s *string
				json.Unmarshal([]byte(f.Raw()), &s)
				if s != nil {
					reasoning.WriteString(*s)
				}
			}
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if reasoning.Len() > 0 {
		x.Thinking = []message.Content{{Type: message.TypeThinking, Text: reasoning.String()}}
	}
	m := acc.Choices[0].Message
	x.Text = m.Content + m.Refusal
	for _, tc := range m.ToolCalls {
		x.Calls = append(x.Calls, call{tc.ID, tc.Function.Name, compactJSON(t, tc.Function.Arguments)})
	}
	x.Stop = sdkOpenAIStop[acc.Choices[0].FinishReason]
	cached := int(acc.Usage.PromptTokensDetails.CachedTokens)
	x.Usage = message.Usage{Input: int(acc.Usage.PromptTokens) - cached, CacheRead: cached, Output: int(acc.Usage.CompletionTokens)}
	return x
}

func TestRecordedStreamsMatchTheSDKs(t *testing.T) {
	for _, tc := range []struct {
		file string
		want func(t *testing.T, x extracted) // what the transcript holds, beyond agreement
	}{
		{"anthropic_thinking_tool.sse", func(t *testing.T, x extracted) {
			if len(x.Thinking) != 2 || !strings.HasPrefix(x.Thinking[0].Signature, "EqQBCgIYAhIM") || !x.Thinking[1].Redacted ||
				len(x.Calls) != 1 || x.Calls[0].Args != `{"limit":200,"path":"cmd/zot/main.go"}` || x.Stop != StopToolUse ||
				x.Usage.CacheRead != 1280 || x.Usage.Output != 187 {
				t.Fatalf("%+v", x)
			}
		}},
		{"anthropic_overloaded.sse", func(t *testing.T, x extracted) {
			if x.ErrType != "overloaded_error" || x.Text != "The answer starts here" {
				t.Fatalf("%+v", x)
			}
		}},
		{"anthropic_max_tokens.sse", func(t *testing.T, x extracted) {
			if x.Stop != StopLength || x.Usage.CacheWrite != 40 {
				t.Fatalf("%+v", x)
			}
		}},
		{"openai_parallel_tools.sse", func(t *testing.T, x extracted) {
			if len(x.Calls) != 2 || x.Calls[0].Name != "read" || x.Calls[1].Args != `{"glob":"*.go","pattern":"func main\\("}` ||
				x.Stop != StopToolUse || x.Usage.Input != 300 || x.Usage.CacheRead != 512 {
				t.Fatalf("%+v", x)
			}
		}},
		{"openai_refusal.sse", func(t *testing.T, x extracted) {
			if x.Text != "I'm sorry, I can't help with that." || x.Stop != StopEndTurn {
				t.Fatalf("%+v", x)
			}
		}},
		{"openai_length.sse", func(t *testing.T, x extracted) {
			if x.Stop != StopLength || x.Usage.Output != 256 || !strings.HasSuffix(x.Text, "2. be") {
				t.Fatalf("%+v", x)
			}
		}},
		{"openai_reasoning_content.sse", func(t *testing.T, x extracted) {
			if len(x.Thinking) != 1 || x.Thinking[0].Text != "Okay, 9.11 versus 9.8: compare tenths, 1 < 8." || x.Text != "9.8 is larger." {
				t.Fatalf("%+v", x)
			}
		}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var got, sdk extracted
			if strings.HasPrefix(tc.file, "anthropic") {
				got, sdk = ours(t, tc.file, readAnthropic), anthropicSDK(t, tc.file)
			} else {
				got, sdk = ours(t, tc.file, readOpenAI), openaiSDK(t, tc.file)
			}
			if sdk.ErrType != "" {
				// The SDK's accumulated message holds the text before the error.
				got.Usage, sdk.Usage = message.Usage{}, message.Usage{}
			}
			if !reflect.DeepEqual(got, sdk) {
				t.Fatalf("our reader and the SDK disagree\n ours: %+v\n  SDK: %+v", got, sdk)
			}
			tc.want(t, got)
		})
	}
}
