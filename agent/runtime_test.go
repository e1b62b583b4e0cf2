package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

func newRuntime(t *testing.T, mod func(*agent.Config), replies ...llmtest.Reply) (*agent.Runtime, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(llmtest.Script{Replies: replies})
	t.Cleanup(srv.Close)
	cfg := agent.Config{Provider: "anthropic", APIKey: "k", BaseURL: srv.URL(), CWD: t.TempDir(), Home: t.TempDir()}
	if mod != nil {
		mod(&cfg)
	}
	rt, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, srv
}

func collect(t *testing.T) func(<-chan agent.Event, error) []agent.Event {
	return func(ch <-chan agent.Event, err error) []agent.Event {
		t.Helper()
		return drain(t, ch, err)
	}
}

func drain(t *testing.T, ch <-chan agent.Event, err error) []agent.Event {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.Event
	for ev := range ch {
		out = append(out, ev)
	}
	if out[len(out)-1].Type != agent.EventDone {
		t.Fatalf("last event %s, want done", out[len(out)-1].Type)
	}
	return out
}

func ofType(evs []agent.Event, typ string) []agent.Event {
	var out []agent.Event
	for _, e := range evs {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func lastRequest(t *testing.T, srv *llmtest.Server) string {
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("no requests")
	}
	b, _ := json.Marshal(reqs[len(reqs)-1].Body)
	return string(b)
}

// hooks is a scripted agent.Hooks.
type hooks struct {
	mu        sync.Mutex
	tool      func(agent.ToolCallInfo) agent.ToolDecision
	turn      func(int) agent.TurnDecision
	assistant func(string) agent.AssistantDecision
	observed  []string
}

func (h *hooks) BeforeTool(_ context.Context, c agent.ToolCallInfo) agent.ToolDecision {
	if h.tool == nil {
		return agent.ToolDecision{}
	}
	return h.tool(c)
}
func (h *hooks) BeforeTurn(_ context.Context, step int) agent.TurnDecision {
	if h.turn == nil {
		return agent.TurnDecision{}
	}
	return h.turn(step)
}
func (h *hooks) BeforeAssistantMessage(_ context.Context, text string) agent.AssistantDecision {
	if h.assistant == nil {
		return agent.AssistantDecision{}
	}
	return h.assistant(text)
}
func (h *hooks) Observe(ev agent.Lifecycle) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.observed = append(h.observed, ev.Event)
}

func TestHookBlocksTool(t *testing.T) {
	h := &hooks{tool: func(c agent.ToolCallInfo) agent.ToolDecision {
		return agent.ToolDecision{Block: true, Reason: "guard: refused rm -rf"}
	}}
	rt, srv := newRuntime(t, func(c *agent.Config) { c.Hooks = h },
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf /tmp/x"}), llmtest.TextReply("ok"))
	evs := collect(t)(rt.Prompt(context.Background(), "clean up", nil))
	res := ofType(evs, agent.EventToolResult)
	if len(res) != 1 || !res[0].IsError || message.TextOf(res[0].Content) != "guard: refused rm -rf" {
		t.Fatalf("tool_result: %+v", res)
	}
	if !strings.Contains(lastRequest(t, srv), "guard: refused rm -rf") {
		t.Fatal("the model did not see the block reason")
	}
	// turn_end closes the model call before its tools run (zot's order).
	want := "session_start agent_start turn_start assistant_message turn_end tool_call turn_start assistant_message turn_end agent_end"
	h.mu.Lock()
	got := strings.Join(h.observed, " ")
	h.mu.Unlock()
	if got != want {
		t.Fatalf("observed %q, want %q", got, want)
	}
}

func TestHookRewritesArgs(t *testing.T) {
	h := &hooks{tool: func(c agent.ToolCallInfo) agent.ToolDecision {
		return agent.ToolDecision{ModifiedArgs: json.RawMessage(`{"command":"echo GUARDED"}`)}
	}}
	rt, srv := newRuntime(t, func(c *agent.Config) { c.Hooks = h },
		llmtest.ToolReply("bash", map[string]any{"command": "echo original"}), llmtest.TextReply("ok"))
	evs := collect(t)(rt.Prompt(context.Background(), "run", nil))
	if out := message.TextOf(ofType(evs, agent.EventToolResult)[0].Content); !strings.Contains(out, "GUARDED") {
		t.Fatalf("rewritten args not used: %q", out)
	}
	_ = srv
}

func TestHookBlocksTurn(t *testing.T) {
	h := &hooks{turn: func(step int) agent.TurnDecision {
		return agent.TurnDecision{Block: true, Reason: "outside business hours"}
	}}
	rt, srv := newRuntime(t, func(c *agent.Config) { c.Hooks = h })
	evs := collect(t)(rt.Prompt(context.Background(), "hi", nil))
	errs := ofType(evs, agent.EventError)
	if len(errs) != 1 || errs[0].Message != "outside business hours" || len(srv.Requests()) != 0 {
		t.Fatalf("errors %+v, requests %d", errs, len(srv.Requests()))
	}
}

func TestHookReplacesAssistantTextTranscriptKeepsOriginal(t *testing.T) {
	h := &hooks{assistant: func(text string) agent.AssistantDecision {
		r := strings.ReplaceAll(text, "sk-secret", "[redacted]")
		return agent.AssistantDecision{ReplaceText: &r}
	}}
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h }, llmtest.TextReply("your key is sk-secret"))
	evs := collect(t)(rt.Prompt(context.Background(), "key?", nil))
	am := ofType(evs, agent.EventAssistantMessage)[0]
	if message.TextOf(am.Content) != "your key is [redacted]" {
		t.Fatalf("visible: %q", message.TextOf(am.Content))
	}
	msgs := rt.Messages()
	if message.TextOf(msgs[1].Content) != "your key is sk-secret" {
		t.Fatalf("transcript: %q", message.TextOf(msgs[1].Content))
	}
}

func TestBusyAndMaxSteps(t *testing.T) {
	rt, _ := newRuntime(t, func(c *agent.Config) { c.MaxSteps = 2 },
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "ls", Args: json.RawMessage(`{}`)}}, DelayMS: 30},
		llmtest.ToolReply("ls", map[string]any{}),
	)
	ch, err := rt.Prompt(context.Background(), "loop", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Prompt(context.Background(), "again", nil); !errors.Is(err, agent.ErrBusy) {
		t.Fatalf("second prompt: %v, want ErrBusy", err)
	}
	evs := collect(t)(ch, nil)
	errs := ofType(evs, agent.EventError)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "--max-steps") {
		t.Fatalf("errors: %+v", errs)
	}
	if n := len(ofType(evs, agent.EventTurnStart)); n != 2 {
		t.Fatalf("turns = %d", n)
	}
}

func TestAutoCompactionAt85Percent(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "models.json"), []byte(`[{"id":"tiny","provider":"anthropic","context_window":1000,"max_output":100}]`), 0o644)
	h := &lifeHooks{}
	rt, srv := newRuntime(t, func(c *agent.Config) { c.Home, c.Model, c.Hooks = home, "tiny", h },
		llmtest.Reply{Text: "first", Usage: &llmtest.Usage{Input: 900, Output: 10}},
		llmtest.Reply{Text: "SUMMARY-TEXT", Usage: &llmtest.Usage{Input: 50, Output: 5}},
		llmtest.Reply{Text: "second", Usage: &llmtest.Usage{Input: 60, Output: 5}},
	)
	collect(t)(rt.Prompt(context.Background(), "one", nil))
	evs := collect(t)(rt.Prompt(context.Background(), "two", nil))
	if len(ofType(evs, agent.EventCompactDone)) != 1 {
		t.Fatalf("no compaction: %v", evs)
	}
	last := lastRequest(t, srv)
	if !strings.Contains(last, "SUMMARY-TEXT") || strings.Contains(last, `"first"`) || !strings.Contains(last, "two") {
		t.Fatalf("request after compaction: %s", last)
	}
	if c := rt.Cost(); c.Input != 1010 || c.Output != 20 {
		t.Fatalf("cost lost the compaction: %+v", c)
	}
	// Extensions hear automatic compaction as they hear /compact.
	if len(h.find("compact_start")) != 1 || len(h.find("compact_end")) != 1 {
		t.Fatalf("automatic compaction: compact_start ×%d, compact_end ×%d, want one each", len(h.find("compact_start")), len(h.find("compact_end")))
	}
}

func TestSessionsResumeAndNew(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("one"), llmtest.TextReply("two")}})
	defer srv.Close()
	cfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true}
	rt, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	collect(t)(rt.Prompt(context.Background(), "first prompt", nil))
	id := rt.State().SessionID
	rt.Close()

	cfg.Resume = id[:4]
	rt2, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	if n := len(rt2.Messages()); n != 2 || rt2.State().SessionID != id {
		t.Fatalf("resumed %d messages, id %s", n, rt2.State().SessionID)
	}
	if rt2.Cost().Input == 0 {
		t.Fatal("usage not restored")
	}
	if err := rt2.NewSession(); err != nil {
		t.Fatal(err)
	}
	if len(rt2.Messages()) != 0 || rt2.State().SessionID == id {
		t.Fatal("new session kept the old transcript")
	}
	list, _ := rt2.Sessions()
	if len(list) != 2 || list[1].Title != "first prompt" && list[0].Title != "first prompt" {
		t.Fatalf("sessions: %+v", list)
	}
	// "latest" is the most recently written session of this workspace: the
	// second one, after the first was resumed again.
	collect(t)(rt2.Prompt(context.Background(), "second prompt", nil))
	id2 := rt2.State().SessionID
	if err := rt2.Resume(id); err != nil || rt2.State().SessionID != id {
		t.Fatalf("resume %s: %v (now %s)", id, err, rt2.State().SessionID)
	}
	if err := rt2.Resume("latest"); err != nil {
		t.Fatal(err)
	}
	msgs := rt2.Messages()
	if rt2.State().SessionID != id2 || len(msgs) != 2 || message.TextOf(msgs[0].Content) != "second prompt" {
		t.Fatalf("latest: session %s (want %s), %d messages", rt2.State().SessionID, id2, len(msgs))
	}
	if err := rt2.Resume("nope"); err == nil || !strings.Contains(err.Error(), "zot sessions") {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestPromptWithImage(t *testing.T) {
	rt, srv := newRuntime(t, nil, llmtest.TextReply("a red dot"))
	img := message.Image("image/png", "iVBORw0KGgo=")
	evs := collect(t)(rt.Prompt(context.Background(), "what is this?", []message.Content{img}))
	um := ofType(evs, agent.EventUserMessage)[0]
	wire, _ := json.Marshal(um)
	if !strings.Contains(string(wire), `"bytes":8`) || strings.Contains(string(wire), "iVBOR") {
		t.Fatalf("user_message image on the wire: %s", wire)
	}
	if !strings.Contains(lastRequest(t, srv), "iVBORw0KGgo=") {
		t.Fatal("image not sent to the model")
	}
}

func TestExtraToolsConsultedEachCall(t *testing.T) {
	calls := 0
	rt, srv := newRuntime(t, func(c *agent.Config) {
		c.ExtraTools = func() []tools.Tool { calls++; return nil }
	}, llmtest.ToolReply("ls", map[string]any{}), llmtest.TextReply("done"))
	collect(t)(rt.Prompt(context.Background(), "x", nil))
	// Before each of the 2 model calls, and when the tool runs (an
	// extension that started meanwhile may own it).
	if calls != 3 || len(srv.Requests()) != 2 {
		t.Fatalf("ExtraTools consulted %d times for %d calls and 1 tool call", calls, len(srv.Requests()))
	}
}

// Readers may call State, Messages and Cost while a run streams.
func TestConcurrentCallersDuringRun(t *testing.T) {
	rt, _ := newRuntime(t, nil,
		llmtest.Reply{RepeatText: &llmtest.Repeat{Text: "x", Count: 200}, DelayMS: 1},
	)
	ch, err := rt.Prompt(context.Background(), "go", nil)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-done:
					return
				default:
					_ = rt.State()
					_ = rt.Messages()
					_ = rt.Cost()
					_ = rt.Busy()
				}
			}
		}()
	}
	drain(t, ch, nil)
	close(done)
	wg.Wait()
	if rt.Busy() || len(rt.Messages()) != 2 {
		t.Fatalf("busy %v, %d messages", rt.Busy(), len(rt.Messages()))
	}
}
