package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
)

// A thinking turn with a tool call: thinking_delta events, the thinking
// block with its signature in the transcript, the session file and the
// next request of the same turn; a resumed session sends it back intact.
func TestThinkingEndToEndAndResume(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(cwd, "a.txt"), []byte("alpha"), 0o644)
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
		{Thinking: "I need a.txt first.", Signature: "SIG-1+/==", ToolCalls: []llmtest.ToolCall{{ID: "toolu_1", Name: "read", Args: json.RawMessage(`{"path":"a.txt"}`)}}},
		{Thinking: "It says alpha.", Signature: "SIG-2", Text: "It says alpha."},
		llmtest.TextReply("after resume"),
	}})
	defer srv.Close()
	cfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true, Reasoning: "medium"}
	rt, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rt.State().Reasoning != "medium" {
		t.Fatalf("state reasoning = %q", rt.State().Reasoning)
	}
	evs := collect(t)(rt.Prompt(context.Background(), "what is in a.txt?", nil))
	var thought strings.Builder
	for _, e := range ofType(evs, agent.EventThinkingDelta) {
		thought.WriteString(e.Text)
	}
	if thought.String() != "I need a.txt first.It says alpha." {
		t.Fatalf("thinking deltas = %q", thought.String())
	}
	// The first thinking_delta comes before any text or tool call of its step.
	for _, e := range evs {
		if e.Type == agent.EventToolCall || e.Type == agent.EventTextDelta {
			t.Fatalf("%s before thinking_delta", e.Type)
		}
		if e.Type == agent.EventThinkingDelta {
			break
		}
	}
	b, _ := json.Marshal(ofType(evs, agent.EventThinkingDelta)[0])
	if string(b) != `{"type":"thinking_delta","text":"I"}` {
		t.Fatalf("wire = %s", b)
	}
	// The second call of the turn carried the first thinking block back.
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	first := reqs[0].Body["thinking"].(map[string]any)
	if first["budget_tokens"] != float64(10000) {
		t.Fatalf("thinking = %v", first)
	}
	wantBlock := `{"signature":"SIG-1+/==","thinking":"I need a.txt first.","type":"thinking"}`
	asst, _ := json.Marshal(reqs[1].Body["messages"].([]any)[1].(map[string]any)["content"].([]any)[0])
	if string(asst) != wantBlock {
		t.Fatalf("sent back %s, want %s", asst, wantBlock)
	}
	msgs := rt.Messages()
	if c := msgs[1].Content[0]; c.Type != message.TypeThinking || c.Signature != "SIG-1+/==" {
		t.Fatalf("transcript block = %+v", c)
	}
	w := message.MessageToWire(msgs[1])
	wb, _ := json.Marshal(w.Content[0])
	if string(wb) != `{"type":"thinking","text":"I need a.txt first."}` {
		t.Fatalf("get_messages block = %s", wb)
	}
	id := rt.State().SessionID
	rt.Close()

	cfg.Resume = id
	rt2, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	collect(t)(rt2.Prompt(context.Background(), "and now?", nil))
	if !strings.Contains(lastRequest(t, srv), wantBlock) || !strings.Contains(lastRequest(t, srv), `"signature":"SIG-2"`) {
		t.Fatalf("resumed request lost the signed thinking: %s", lastRequest(t, srv))
	}
}

func TestReasoningOnAModelThatDoesNotReason(t *testing.T) {
	_, err := agent.New(agent.Config{Provider: "openai", Model: "gpt-4.1", APIKey: "k", CWD: t.TempDir(), Home: t.TempDir(), Reasoning: "high"})
	if err == nil || !strings.Contains(err.Error(), "gpt-4.1 does not reason") {
		t.Fatalf("err = %v", err)
	}
	rt, _ := newRuntime(t, nil)
	if err := rt.SetReasoning("loud"); err == nil || !strings.Contains(err.Error(), "off, low, medium or high") {
		t.Fatalf("err = %v", err)
	}
	if err := rt.SetReasoning("high"); err != nil || rt.State().Reasoning != "high" {
		t.Fatalf("err = %v state = %q", err, rt.State().Reasoning)
	}
}

// An overloaded API mid-answer: a clear error, and no half-written
// assistant message in the transcript or the session file.
func TestMidStreamOverloadLeavesNoHalfMessage(t *testing.T) {
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Sessions = true },
		llmtest.Reply{Text: "I will now explain everything", ErrorAfter: llmtest.Count(3)})
	evs := collect(t)(rt.Prompt(context.Background(), "explain", nil))
	errs := ofType(evs, agent.EventError)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "Overloaded") || !strings.Contains(errs[0].Message, "send the prompt again") {
		t.Fatalf("errors = %+v", errs)
	}
	if end := ofType(evs, agent.EventTurnEnd); len(end) != 1 || end[0].Stop != "error" {
		t.Fatalf("turn_end = %+v", end)
	}
	for _, m := range rt.Messages() {
		if m.Role == message.RoleAssistant {
			t.Fatalf("half-written assistant message kept: %+v", m)
		}
	}
}

// A stream that stalls mid-answer: an error naming the stall, and nothing
// half-written in the transcript or the session.
func TestStallMidAnswerLeavesNoHalfMessage(t *testing.T) {
	rt, _ := newRuntime(t, func(c *agent.Config) {
		c.Sessions = true
		c.FirstByteTimeout, c.IdleTimeout = time.Second, time.Second
	}, llmtest.Reply{Thinking: "hm", Text: "half of an answer", StallAfter: llmtest.Count(2)})
	evs := collect(t)(rt.Prompt(context.Background(), "go", nil))
	errs := ofType(evs, agent.EventError)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "stream stalled") {
		t.Fatalf("errors = %+v", errs)
	}
	if len(ofType(evs, agent.EventTextDelta)) != 2 {
		t.Fatalf("deltas: %d", len(ofType(evs, agent.EventTextDelta)))
	}
	for _, m := range rt.Messages() {
		if m.Role == message.RoleAssistant {
			t.Fatalf("half-written assistant message kept: %+v", m)
		}
	}
}
