package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
)

// holdingHooks are hooks that say whether an extension may rewrite the
// answer (agent.AnswerInterceptor).
type holdingHooks struct {
	hooks
	intercepts atomic.Bool
	asked      atomic.Int32 // how often the runtime asked
	onAsk      func(n int32) bool
}

func (h *holdingHooks) InterceptsAssistantMessage() bool {
	n := h.asked.Add(1)
	if h.onAsk != nil {
		return h.onAsk(n)
	}
	return h.intercepts.Load()
}

func deltasOf(evs []agent.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Type == agent.EventTextDelta {
			out = append(out, e.Delta)
		}
	}
	return out
}

// A held answer that an extension suppresses shows no delta at all, and
// one it rewrites shows the rewritten text once, before usage and
// assistant_message, in the answer's place (after its thinking).
func TestHeldAnswerShowsOnlyTheDecision(t *testing.T) {
	reply := llmtest.Reply{Thinking: "mull", Deltas: []string{"pass", "word: hunter2"}}
	for _, tc := range []struct {
		name   string
		decide agent.AssistantDecision
		want   []string
	}{
		{"block", agent.AssistantDecision{Block: true}, nil},
		{"replace", agent.AssistantDecision{ReplaceText: ptr("password: [redacted]")}, []string{"password: [redacted]"}},
		{"pass", agent.AssistantDecision{}, []string{"pass", "word: hunter2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &holdingHooks{}
			h.intercepts.Store(true)
			h.assistant = func(string) agent.AssistantDecision { return tc.decide }
			rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h; c.Reasoning = "high" }, reply)
			evs := collect(t)(rt.Prompt(context.Background(), "hi", nil))
			if got := deltasOf(evs); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Fatalf("deltas %q; want %q", got, tc.want)
			}
			var order []string
			for _, e := range evs {
				switch e.Type {
				case agent.EventThinkingDelta, agent.EventTextDelta, agent.EventUsage, agent.EventAssistantMessage:
					if len(order) == 0 || order[len(order)-1] != e.Type {
						order = append(order, e.Type)
					}
				}
			}
			want := "thinking_delta text_delta usage assistant_message"
			if tc.want == nil {
				want = "thinking_delta usage assistant_message"
			}
			if strings.Join(order, " ") != want {
				t.Fatalf("order %v; want %s", order, want)
			}
		})
	}
}

// A hold that turns out needless (the extension that was starting does not
// intercept) ends at the next delta: what was held goes out in order and
// the rest streams; the runtime stops asking once it stopped holding.
func TestNeedlessHoldEndsAtTheNextDelta(t *testing.T) {
	h := &holdingHooks{onAsk: func(n int32) bool { return n == 1 }} // holding at the start only
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h }, llmtest.Reply{Deltas: []string{"a", "b", "c"}})
	evs := collect(t)(rt.Prompt(context.Background(), "hi", nil))
	if got := strings.Join(deltasOf(evs), ""); got != "abc" {
		t.Fatalf("deltas %q", got)
	}
	if n := h.asked.Load(); n != 2 {
		t.Fatalf("asked %d times; want 2 (at the start, then at the first delta)", n)
	}
}

// Hooks that are no AnswerInterceptor never hold: the deltas stream.
func TestNoInterceptorStreams(t *testing.T) {
	h := &hooks{assistant: func(string) agent.AssistantDecision { return agent.AssistantDecision{ReplaceText: ptr("x")} }}
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h }, llmtest.Reply{Deltas: []string{"a", "b"}})
	evs := collect(t)(rt.Prompt(context.Background(), "hi", nil))
	if got := deltasOf(evs); strings.Join(got, "|") != "a|b" {
		t.Fatalf("deltas %q", got)
	}
}

func ptr[T any](v T) *T { return &v }

// slowJudge intercepts assistant_message and answers only when the run's
// context ends, passing the text through (as the host does when an
// interceptor cannot answer).
type slowJudge struct {
	hooks
	entered chan struct{}
}

func (h *slowJudge) InterceptsAssistantMessage() bool { return true }
func (h *slowJudge) BeforeAssistantMessage(ctx context.Context, _ string) agent.AssistantDecision {
	close(h.entered)
	<-ctx.Done()
	return agent.AssistantDecision{}
}

// An abort while the extensions judge a held answer shows none of its
// text: the pass-through of an interceptor that could not answer is not a
// judgement.
func TestAbortWhileJudgingShowsNoText(t *testing.T) {
	h := &slowJudge{entered: make(chan struct{})}
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h }, llmtest.Reply{Deltas: []string{"pass", "word: hunter2"}})
	ch, err := rt.Prompt(context.Background(), "hi", nil)
	if err != nil {
		t.Fatal(err)
	}
	<-h.entered
	rt.Cancel()
	evs := drain(t, ch, nil)
	for _, e := range evs {
		if b, _ := json.Marshal(e); strings.Contains(string(b), "pass") {
			t.Fatalf("shown after the abort: %s", b)
		}
	}
	if len(ofType(evs, agent.EventAssistantMessage)) != 1 {
		t.Fatalf("events: %v", evs)
	}
}
