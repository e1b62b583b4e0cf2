package provider

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
)

func TestThinkingStreamedAndKeptWithSignature(t *testing.T) {
	const thought = "The user wants the file read. I will call read."
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{
				Thinking: thought, Signature: "EqQBCkYIARgCKkD+sig/==", Text: "Reading.",
				ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)}},
			}}})
			defer srv.Close()
			req := simpleRequest(t, prov)
			req.Reasoning = ReasoningHigh
			resp, col, err := stream(t, newTestClient(t, prov, srv, nil, nil), req)
			if err != nil {
				t.Fatal(err)
			}
			if want := []string{"thinking", "text", "start:read", "end:read", "call:read"}; !reflect.DeepEqual(col.order, want) {
				t.Fatalf("event order = %v, want %v", col.order, want)
			}
			if got := strings.Join(col.thinking, ""); got != thought {
				t.Fatalf("thinking deltas = %q", got)
			}
			if len(resp.Content) != 3 || resp.Content[0].Type != message.TypeThinking || resp.Content[0].Text != thought {
				t.Fatalf("content = %+v", resp.Content)
			}
			wantSig := "EqQBCkYIARgCKkD+sig/=="
			if prov == OpenAI {
				wantSig = "" // reasoning_content carries none
			}
			if resp.Content[0].Signature != wantSig {
				t.Fatalf("signature = %q, want %q", resp.Content[0].Signature, wantSig)
			}
			if message.TextOf(resp.Content) != "Reading." {
				t.Fatalf("text = %q: thinking leaked into the answer", message.TextOf(resp.Content))
			}

			sent := srv.Requests()[0]
			if prov == Anthropic {
				if got := path(sent.Body, "thinking"); !reflect.DeepEqual(got, map[string]any{"type": "enabled", "budget_tokens": float64(32000)}) {
					t.Fatalf("thinking = %v", got)
				}
				if got := sent.Header.Get("anthropic-beta"); got != interleavedThinkingBeta {
					t.Fatalf("anthropic-beta = %q", got)
				}
			} else if got := path(sent.Body, "reasoning_effort"); got != "high" {
				t.Fatalf("reasoning_effort = %v", got)
			}
		})
	}
}

func TestRedactedThinkingKept(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Thinking: "hm", RedactedThinking: "ENCRYPTED==", Text: "ok"}}})
	defer srv.Close()
	resp, _, err := stream(t, newTestClient(t, Anthropic, srv, nil, nil), simpleRequest(t, Anthropic))
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Content) != 3 || !resp.Content[1].Redacted || resp.Content[1].Data != "ENCRYPTED==" {
		t.Fatalf("content = %+v", resp.Content)
	}
}

// thinkingTranscript is a turn in progress: the assistant thought, called
// a tool, and the result is back.
func thinkingTranscript() []message.Message {
	return []message.Message{
		{Role: message.RoleUser, Content: []message.Content{message.Text("read a")}},
		{Role: message.RoleAssistant, Content: []message.Content{
			{Type: message.TypeThinking, Text: "I should read a.\n", Signature: "sig-1/+=="},
			{Type: message.TypeThinking, Redacted: true, Data: "REDACTED=="},
			{Type: message.TypeThinking, Text: "cut short, never signed"},
			{Type: message.TypeToolCall, ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path":"a"}`)},
		}},
		{Role: message.RoleUser, Content: []message.Content{{Type: message.TypeToolResult, CallID: "toolu_1",
			Content: []message.Content{message.Text("contents")}}}},
	}
}

func TestThinkingSentBackUnchanged(t *testing.T) {
	req := Request{Model: testModel(t, Anthropic), Messages: thinkingTranscript(), Reasoning: ReasoningLow}
	body, thinking, err := anthropicBody(req, nil)
	if err != nil || !thinking {
		t.Fatal(err, thinking)
	}
	var got any
	json.Unmarshal(body, &got)
	want := []any{
		map[string]any{"type": "thinking", "thinking": "I should read a.\n", "signature": "sig-1/+=="},
		map[string]any{"type": "redacted_thinking", "data": "REDACTED=="},
		map[string]any{"type": "tool_use", "id": "toolu_1", "name": "read", "input": map[string]any{"path": "a"}},
	}
	if c := path(got, "messages", 1, "content"); !reflect.DeepEqual(c, want) {
		t.Fatalf("assistant content = %v\nwant %v", c, want)
	}
	if b := path(got, "thinking", "budget_tokens"); b != float64(4096) {
		t.Fatalf("budget = %v", b)
	}

	// OpenAI-compatible servers get no reasoning back (DeepSeek rejects it).
	ob, err := openaiBody(Request{Model: testModel(t, OpenAI), Messages: thinkingTranscript()}, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(ob), "read a.") || strings.Contains(string(ob), "REDACTED") {
		t.Fatalf("reasoning replayed to OpenAI: %s", ob)
	}
}

func TestThinkingBudgetFitsMaxTokens(t *testing.T) {
	for _, tc := range []struct {
		level     string
		maxTokens int
		want      any // budget_tokens, or nil: no thinking
	}{
		{ReasoningHigh, 0, float64(32000)}, // the model's 64000 max output
		{ReasoningHigh, 8000, float64(8000 - minAnswerTokens)},
		{ReasoningMedium, 3000, float64(3000 - minAnswerTokens)},
		{ReasoningLow, 1500, nil}, // no room for the 1024 minimum
		{ReasoningOff, 0, nil},
		{"", 0, nil},
	} {
		req := simpleRequest(t, Anthropic)
		req.Reasoning, req.MaxTokens = tc.level, tc.maxTokens
		body, _, err := anthropicBody(req, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		json.Unmarshal(body, &got)
		if b := path(got, "thinking", "budget_tokens"); b != tc.want {
			t.Errorf("%s with max_tokens %d: budget = %v, want %v", tc.level, tc.maxTokens, b, tc.want)
		}
		if mt := path(got, "max_tokens").(float64); tc.want != nil && mt <= tc.want.(float64) {
			t.Errorf("max_tokens %v not above the budget %v", mt, tc.want)
		}
	}
}

func TestReasoningEffortLevels(t *testing.T) {
	gpt5, gpt41 := testModel(t, OpenAI), Model{ID: "gpt-4.1", Provider: OpenAI}
	for _, tc := range []struct {
		model    Model
		level    string
		official bool
		want     any
	}{
		{gpt5, ReasoningLow, true, "low"},
		{gpt5, ReasoningOff, true, "minimal"},
		{Model{ID: "qwq", Provider: OpenAI, Reasoning: true}, ReasoningOff, false, nil},
		{Model{ID: "qwq", Provider: OpenAI, Reasoning: true}, ReasoningMedium, false, "medium"},
		{gpt41, ReasoningHigh, true, nil}, // does not reason
	} {
		body, err := openaiBody(Request{Model: tc.model, Reasoning: tc.level, Messages: thinkingTranscript()[:1]}, tc.official, nil)
		if err != nil {
			t.Fatal(err)
		}
		var got any
		json.Unmarshal(body, &got)
		if e := path(got, "reasoning_effort"); e != tc.want {
			t.Errorf("%s at %s: reasoning_effort = %v, want %v", tc.model.ID, tc.level, e, tc.want)
		}
	}
}

func TestReasoningLevelsAndCatalogue(t *testing.T) {
	cat := Builtin()
	if _, err := ParseReasoning("extreme"); err == nil || !strings.Contains(err.Error(), "off, low, medium or high") {
		t.Fatalf("err = %v", err)
	}
	gpt41, _ := cat.Resolve(OpenAI, "gpt-4.1", "")
	err := cat.CheckReasoning(gpt41, ReasoningHigh)
	if err == nil || !strings.Contains(err.Error(), "gpt-4.1 does not reason") || !strings.Contains(err.Error(), "gpt-5-mini") {
		t.Fatalf("err = %v", err)
	}
	if err := cat.CheckReasoning(gpt41, ReasoningOff); err != nil {
		t.Fatal(err)
	}
	gpt5, _ := cat.Resolve(OpenAI, "gpt-5", "")
	sonnet, _ := cat.Resolve(Anthropic, "claude-sonnet-4-5", "")
	for _, tc := range []struct {
		m         Model
		requested string
		want      string
	}{
		{gpt5, "", ReasoningMedium}, {gpt5, ReasoningLow, ReasoningLow},
		{sonnet, "", ReasoningOff}, {sonnet, ReasoningHigh, ReasoningHigh},
		{gpt41, ReasoningHigh, ReasoningOff},
	} {
		if got := EffectiveReasoning(tc.m, tc.requested); got != tc.want {
			t.Errorf("%s %q: %q, want %q", tc.m.ID, tc.requested, got, tc.want)
		}
	}
}

func TestMidStreamOverloadEndsTheCallWithoutRetry(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				{Text: "one two three four", ErrorAfter: llmtest.Count(2)},
				llmtest.TextReply("never asked for"),
			}})
			defer srv.Close()
			w := &waits{}
			resp, col, err := stream(t, newTestClient(t, prov, srv, w, nil), simpleRequest(t, prov))
			var ae *APIError
			if !errors.As(err, &ae) || ae.Type != "overloaded_error" {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), "overloaded") || !strings.Contains(err.Error(), "send the prompt again") {
				t.Fatalf("err = %q", err)
			}
			if strings.Join(col.deltas, "") != "one two" || resp.Stop != StopError {
				t.Fatalf("deltas = %q stop = %q", col.deltas, resp.Stop)
			}
			if n := len(srv.Requests()); n != 1 || len(w.all()) != 0 {
				t.Fatalf("requests = %d waits = %v: retried after deltas were shown", n, w.all())
			}
		})
	}
}

func TestErrorEventBeforeFirstDeltaIsRetried(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				{Text: "lost", ErrorAfter: llmtest.Count(0)},
				llmtest.TextReply("second try"),
			}})
			defer srv.Close()
			resp, _, err := stream(t, newTestClient(t, prov, srv, &waits{}, nil), simpleRequest(t, prov))
			if err != nil || message.TextOf(resp.Content) != "second try" {
				t.Fatalf("err = %v content = %+v", err, resp.Content)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Fatalf("requests = %d", n)
			}
		})
	}
}

// Stalls: the timeouts are made small (but well above any pause of a
// loopback stream on a loaded machine); nothing here measures time. A
// stall either ends the call with a StallError or is retried.
func stallClient(t *testing.T, prov string, srv *llmtest.Server, w *waits) Client {
	return newTestClient(t, prov, srv, w, func(o *Options) {
		o.FirstByteTimeout, o.IdleTimeout = time.Second, time.Second
	})
}

func TestStallMidStreamIsAnErrorNamingTheStall(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				{Text: "one two three", StallAfter: llmtest.Count(2)},
				llmtest.TextReply("never asked for"),
			}})
			defer srv.Close()
			_, col, err := stream(t, stallClient(t, prov, srv, &waits{}), simpleRequest(t, prov))
			var se *StallError
			if !errors.As(err, &se) || !se.Started {
				t.Fatalf("err = %v", err)
			}
			if !strings.Contains(err.Error(), prov+": the stream stalled: nothing received for") {
				t.Fatalf("err = %q", err)
			}
			if strings.Join(col.deltas, "") != "one two" {
				t.Fatalf("deltas = %q", col.deltas)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Fatalf("requests = %d: retried after deltas were shown", n)
			}
		})
	}
}

func TestStallBeforeAnyDeltaIsRetriedOnce(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Hang: true}, llmtest.TextReply("recovered")}})
			defer srv.Close()
			resp, _, err := stream(t, stallClient(t, prov, srv, &waits{}), simpleRequest(t, prov))
			if err != nil || message.TextOf(resp.Content) != "recovered" {
				t.Fatalf("err = %v content = %+v", err, resp.Content)
			}

			srv2 := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				{Hang: true}, {Text: "x", StallAfter: llmtest.Count(0)}, llmtest.TextReply("not a third try"),
			}})
			defer srv2.Close()
			_, _, err = stream(t, stallClient(t, prov, srv2, &waits{}), simpleRequest(t, prov))
			var se *StallError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "stalled") {
				t.Fatalf("err = %v", err)
			}
			if n := len(srv2.Requests()); n != 2 {
				t.Fatalf("requests = %d, want 2 (one retry)", n)
			}
		})
	}
}

func TestCancelStillWinsOverTheWatchdog(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Hang: true}}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := stallClient(t, Anthropic, srv, nil).Stream(ctx, simpleRequest(t, Anthropic), func(StreamEvent) {})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// Reasoning switched on after a run stopped mid-tool: the turn in progress
// has no thinking block, which the API rejects with thinking on.
func TestThinkingOffForATurnThatBeganWithoutIt(t *testing.T) {
	msgs := thinkingTranscript()
	msgs[1].Content = msgs[1].Content[3:] // the tool call only
	msgs = append(msgs, message.Message{Role: message.RoleUser, Content: []message.Content{message.Text("go on")}})
	req := Request{Model: testModel(t, Anthropic), Messages: msgs, Reasoning: ReasoningHigh}
	if _, thinking, _ := anthropicBody(req, nil); thinking {
		t.Fatal("thinking sent for a tool turn that began without it")
	}
	// Once that turn has an answer, the next request thinks again.
	msgs = append(msgs, message.Message{Role: message.RoleAssistant, Content: []message.Content{message.Text("done")}},
		message.Message{Role: message.RoleUser, Content: []message.Content{message.Text("next")}})
	req.Messages = msgs
	if _, thinking, _ := anthropicBody(req, nil); !thinking {
		t.Fatal("thinking stayed off after the turn ended")
	}
	// A signed turn keeps it.
	req.Messages = thinkingTranscript()
	if _, thinking, _ := anthropicBody(req, nil); !thinking {
		t.Fatal("thinking off for a signed turn")
	}
}
