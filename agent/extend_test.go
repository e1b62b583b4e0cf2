package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
)

// lifeHooks records every Lifecycle in full.
type lifeHooks struct {
	hooks
	mu2  sync.Mutex
	life []agent.Lifecycle
}

func (h *lifeHooks) Observe(ev agent.Lifecycle) {
	h.hooks.Observe(ev)
	h.mu2.Lock()
	h.life = append(h.life, ev)
	h.mu2.Unlock()
}

func (h *lifeHooks) find(event string) []agent.Lifecycle {
	h.mu2.Lock()
	defer h.mu2.Unlock()
	var out []agent.Lifecycle
	for _, l := range h.life {
		if l.Event == event {
			out = append(out, l)
		}
	}
	return out
}

func requestBody(t *testing.T, srv *llmtest.Server, i int) string {
	t.Helper()
	reqs := srv.Requests()
	if len(reqs) <= i {
		t.Fatalf("only %d requests", len(reqs))
	}
	b, _ := json.Marshal(reqs[i].Body)
	return string(b)
}

// send_message's three deliveries: steer joins the running run before
// its next model call, follow_up continues the run after the model
// stops, next_turn rides with the next prompt.
func TestSteerFollowUpNextTurn(t *testing.T) {
	var rt *agent.Runtime
	h := &lifeHooks{}
	h.tool = func(agent.ToolCallInfo) agent.ToolDecision {
		if !rt.Steer("STEER-TEXT") || !rt.FollowUp("FOLLOW-TEXT") {
			t.Error("steer/follow-up refused during a run")
		}
		return agent.ToolDecision{}
	}
	rt, srv := newRuntime(t, func(c *agent.Config) { c.Hooks = h },
		llmtest.ToolReply("ls", map[string]any{}),
		llmtest.TextReply("after steer"),
		llmtest.TextReply("after follow-up"),
		llmtest.TextReply("second prompt"),
	)
	if rt.Steer("idle") || rt.FollowUp("idle") {
		t.Fatal("steer/follow-up accepted with no run")
	}
	evs := collect(t)(rt.Prompt(context.Background(), "go", nil))
	users := ofType(evs, agent.EventUserMessage)
	if len(users) != 3 || message.TextOf(users[1].Content) != "STEER-TEXT" || message.TextOf(users[2].Content) != "FOLLOW-TEXT" {
		t.Fatalf("user messages: %+v", users)
	}
	if !strings.Contains(requestBody(t, srv, 1), "STEER-TEXT") || strings.Contains(requestBody(t, srv, 1), "FOLLOW-TEXT") {
		t.Fatalf("the steered call: %s", requestBody(t, srv, 1))
	}
	if !strings.Contains(requestBody(t, srv, 2), "FOLLOW-TEXT") {
		t.Fatalf("the follow-up call: %s", requestBody(t, srv, 2))
	}
	if n := len(h.find("agent_end")); n != 1 {
		t.Fatalf("the follow-up did not continue the same run: %d agent_end", n)
	}
	h.tool = nil
	rt.NextTurn("NEXT-TEXT")
	collect(t)(rt.Prompt(context.Background(), "again", nil))
	if b := requestBody(t, srv, 3); !strings.Contains(b, "NEXT-TEXT") || !strings.Contains(b, "again") {
		t.Fatalf("next_turn: %s", b)
	}
}

// append_entry is kept in the session file and comes back on resume; a
// new session starts without entries.
func TestEntriesFollowTheSession(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("one")}})
	defer srv.Close()
	cfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true}
	rt, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	collect(t)(rt.Prompt(context.Background(), "first", nil))
	if err := rt.AppendEntry("gate", "always", json.RawMessage(`"rm -rf build"`)); err != nil {
		t.Fatal(err)
	}
	rt.AppendEntry("other", "always", json.RawMessage(`"x"`))
	if err := rt.AppendEntry("gate", "always", json.RawMessage(`{bad`)); err == nil {
		t.Fatal("invalid JSON accepted")
	}
	id := rt.State().SessionID
	// Open elsewhere meanwhile: the copy carries the entries too.
	cfg.Resume = id
	fork, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if fork.State().ForkedFrom != id || len(fork.Entries("gate", "always")) != 1 {
		t.Fatalf("fork: forked from %q, entries %+v", fork.State().ForkedFrom, fork.Entries("gate", "always"))
	}
	forkID := fork.State().SessionID
	fork.Close()
	cfgFork := cfg
	cfgFork.Resume = forkID
	fork2, err := agent.New(cfgFork)
	if err != nil {
		t.Fatal(err)
	}
	if es := fork2.Entries("gate", "always"); len(es) != 1 {
		t.Fatalf("the fork's file lacks the entries: %+v", es)
	}
	fork2.Close()
	rt.Close()
	rt2, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt2.Close()
	es := rt2.Entries("gate", "always")
	if len(es) != 1 || string(es[0].Data) != `"rm -rf build"` {
		t.Fatalf("entries after resume: %+v", es)
	}
	if len(rt2.Messages()) != 2 {
		t.Fatalf("a custom entry disturbed the transcript: %d messages", len(rt2.Messages()))
	}
	if err := rt2.NewSession(); err != nil {
		t.Fatal(err)
	}
	if es := rt2.Entries("gate", ""); len(es) != 0 {
		t.Fatalf("a new session has entries: %+v", es)
	}
}

// session_start fires again on new and resume, with the reason;
// model_select names both models; agent_end carries stop and usage.
func TestLifecycleAdditions(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("one")}})
	defer srv.Close()
	h := &lifeHooks{}
	rt, err := agent.New(agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true, Hooks: h})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rt.ObserveSessionStart("startup")
	collect(t)(rt.Prompt(context.Background(), "first", nil))
	id := rt.State().SessionID
	if err := rt.NewSession(); err != nil {
		t.Fatal(err)
	}
	if err := rt.Resume(id); err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, l := range h.find("session_start") {
		reasons = append(reasons, l.Reason)
	}
	if strings.Join(reasons, ",") != "startup,new,resume" {
		t.Fatalf("session_start reasons: %v", reasons)
	}
	ends := h.find("agent_end")
	if len(ends) != 1 || ends[0].Stop != "end_turn" || ends[0].Usage == nil || ends[0].Usage.Output == 0 {
		t.Fatalf("agent_end: %+v", ends)
	}
	prev := rt.Model().ID
	var other string
	for _, m := range rt.ListModels() {
		if m.ID != prev {
			other = m.ID
			break
		}
	}
	if err := rt.SetModel(other); err != nil {
		t.Fatal(err)
	}
	ms := h.find("model_select")
	if len(ms) != 1 || ms[0].Model != other || ms[0].PreviousModel != prev {
		t.Fatalf("model_select: %+v", ms)
	}
	collect(t)(rt.Compact(context.Background()))
	if len(h.find("compact_start")) != 1 || len(h.find("compact_end")) != 1 {
		t.Fatalf("compaction events: %v", h.observed)
	}
	rt.Close()
	rt.Close()
	if n := len(h.find("session_shutdown")); n != 1 {
		t.Fatalf("session_shutdown %d times", n)
	}
}

// set_active_tools narrows what later model calls are offered; an
// unknown name is refused, naming it, and changes nothing.
func TestActiveTools(t *testing.T) {
	rt, srv := newRuntime(t, nil, llmtest.TextReply("a"), llmtest.TextReply("b"))
	if err := rt.SetActiveTools([]string{"read", "nope"}); err == nil || !strings.Contains(err.Error(), `unknown tool "nope"`) {
		t.Fatalf("unknown tool: %v", err)
	}
	if err := rt.SetActiveTools([]string{"read", "ls"}); err != nil {
		t.Fatal(err)
	}
	collect(t)(rt.Prompt(context.Background(), "x", nil))
	b := requestBody(t, srv, 0)
	if !strings.Contains(b, `"name":"read"`) || strings.Contains(b, `"name":"bash"`) {
		t.Fatalf("offered tools: %s", b)
	}
	active := 0
	for _, ti := range rt.ToolInfos() {
		if ti.Active {
			active++
		}
	}
	if active != 2 {
		t.Fatalf("ToolInfos: %+v", rt.ToolInfos())
	}
	rt.SetActiveTools(nil)
	collect(t)(rt.Prompt(context.Background(), "y", nil))
	if !strings.Contains(requestBody(t, srv, 1), `"name":"bash"`) {
		t.Fatal("SetActiveTools(nil) did not restore every tool")
	}
}
