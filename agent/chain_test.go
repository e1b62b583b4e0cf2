package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

// recordingHost implements every hook and records which were called.
type recordingHost struct {
	mu     sync.Mutex
	called []string
}

func (h *recordingHost) rec(name string) {
	h.mu.Lock()
	h.called = append(h.called, name)
	h.mu.Unlock()
}

func (h *recordingHost) BeforeTool(context.Context, agent.ToolCallInfo) agent.ToolDecision {
	h.rec("BeforeTool")
	return agent.ToolDecision{ModifiedArgs: json.RawMessage(`{"rewritten":true}`)}
}
func (h *recordingHost) BeforeTurn(context.Context, int) agent.TurnDecision {
	h.rec("BeforeTurn")
	return agent.TurnDecision{}
}
func (h *recordingHost) BeforeAssistantMessage(context.Context, string) agent.AssistantDecision {
	h.rec("BeforeAssistantMessage")
	return agent.AssistantDecision{}
}
func (h *recordingHost) Observe(agent.Lifecycle) { h.rec("Observe") }
func (h *recordingHost) TransformInput(context.Context, string) agent.InputDecision {
	h.rec("TransformInput")
	return agent.InputDecision{}
}
func (h *recordingHost) BeforeAgentStart(context.Context, string, string) agent.AgentStartDecision {
	h.rec("BeforeAgentStart")
	return agent.AgentStartDecision{}
}
func (h *recordingHost) TransformContext(context.Context, []message.Message) []message.Message {
	h.rec("TransformContext")
	return nil
}
func (h *recordingHost) AfterTool(_ context.Context, _ agent.ToolCallInfo, res tools.Result) tools.Result {
	h.rec("AfterTool")
	return res
}

// hookMethods are every method of Hooks and RunHooks, by reflection: a hook
// added to either interface is in the list without a line here.
func hookMethods() []reflect.Method {
	var out []reflect.Method
	for _, t := range []reflect.Type{reflect.TypeFor[agent.Hooks](), reflect.TypeFor[agent.RunHooks]()} {
		for i := range t.NumMethod() {
			out = append(out, t.Method(i))
		}
	}
	return out
}

// callZero calls the method name of v with zero arguments (a context
// where one is expected).
func callZero(v any, name string) {
	m := reflect.ValueOf(v).MethodByName(name)
	args := make([]reflect.Value, m.Type().NumIn())
	for i := range args {
		t := m.Type().In(i)
		if t == reflect.TypeFor[context.Context]() {
			args[i] = reflect.ValueOf(context.Background())
			continue
		}
		args[i] = reflect.Zero(t)
	}
	m.Call(args)
}

// Every hook reaches the host through the chain, with any front's layers on
// it (none, --no-yolo's approval, a layer that overrides one hook), and the
// chain implements the whole set: the runtime finds RunHooks by type
// assertion, so a wrapper without them would switch them off silently.
func TestHookChainForwardsEveryHook(t *testing.T) {
	allow := agent.ApprovalLayer(func(context.Context, agent.ToolCallInfo) agent.ToolDecision { return agent.ToolDecision{} })
	var observedByLayer int
	observer := agent.HookLayer{Observe: func(ev agent.Lifecycle, next func(agent.Lifecycle)) {
		observedByLayer++
		next(ev)
	}}
	fronts := map[string][]agent.HookLayer{
		"no layer":          nil,
		"approval":          {allow},
		"approval+observer": {allow, observer},
		"empty layer":       {{}},
	}
	for name, layers := range fronts {
		t.Run(name, func(t *testing.T) {
			host := &recordingHost{}
			var chain agent.Hooks = agent.ChainHooks(agent.StaticHooks(host), layers...)
			if _, ok := chain.(agent.RunHooks); !ok {
				t.Fatal("the chain does not implement agent.RunHooks: the runtime would skip the host's input, before_agent_start, context and tool_result hooks")
			}
			var want []string
			for _, m := range hookMethods() {
				callZero(chain, m.Name)
				want = append(want, m.Name)
			}
			got := append([]string(nil), host.called...)
			sort.Strings(got)
			sort.Strings(want)
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("the host saw %v through the chain, want every hook %v", got, want)
			}
		})
	}
	if observedByLayer != 1 {
		t.Fatalf("the observing layer saw %d events, want 1", observedByLayer)
	}
	// No host (--no-ext): every hook answers its zero verdict.
	chain := agent.ChainHooks(agent.StaticHooks(nil), allow)
	for _, m := range hookMethods() {
		callZero(chain, m.Name)
	}
}

// Under --no-yolo the guards see a call first and the user is asked about
// the call as it will run (rewritten by the guard); a refusal wins.
func TestApprovalLayerAsksAfterTheGuards(t *testing.T) {
	host := &recordingHost{}
	var asked []string
	ask := func(_ context.Context, call agent.ToolCallInfo) agent.ToolDecision {
		asked = append(asked, string(call.Args))
		return agent.ToolDecision{Block: true, Reason: "denied"}
	}
	chain := agent.ChainHooks(agent.StaticHooks(host), agent.ApprovalLayer(ask))
	d := chain.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "1", Name: "bash", Args: json.RawMessage(`{}`)})
	if !d.Block || d.Reason != "denied" {
		t.Fatalf("decision %+v, want the user's refusal", d)
	}
	if len(host.called) != 1 || host.called[0] != "BeforeTool" || len(asked) != 1 || asked[0] != `{"rewritten":true}` {
		t.Fatalf("host saw %v, the user was asked about %v; want the guard first, then the rewritten call", host.called, asked)
	}
}

// extensionTool is a tool an extension provides.
type extensionTool struct{ ext string }

func (extensionTool) Name() string            { return "weather" }
func (extensionTool) Description() string     { return "the weather" }
func (extensionTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (extensionTool) Run(context.Context, tools.Call) tools.Result {
	return tools.TextResult("Berlin: 16°C, fog")
}
func (t extensionTool) Extension() string { return t.ext }

// An extension's tool call and result name the extension (details.extension
// on the events, the hooks' ToolExtension / Extension); zot's own tools'
// events do not change.
func TestToolEventsNameTheExtension(t *testing.T) {
	h := &lifeHooks{}
	rt, _ := newRuntime(t, func(c *agent.Config) {
		c.Hooks = agent.ChainHooks(agent.StaticHooks(h))
		c.ExtraTools = func() []tools.Tool { return []tools.Tool{extensionTool{ext: "forecast"}} }
	}, llmtest.ToolReply("weather", map[string]any{"city": "Berlin"}), llmtest.ToolReply("ls", map[string]any{}), llmtest.TextReply("done"))
	evs := collect(t)(rt.Prompt(context.Background(), "x", nil))
	var got []string
	for _, e := range evs {
		if e.Type == agent.EventToolCall || e.Type == agent.EventToolResult {
			b, _ := json.Marshal(e)
			var w struct {
				Details *struct{ Extension string } `json:"details"`
			}
			_ = json.Unmarshal(b, &w)
			ext := "-"
			if w.Details != nil {
				ext = w.Details.Extension
			}
			got = append(got, e.Type+":"+ext)
		}
	}
	if want := "tool_call:forecast tool_result:forecast tool_call:- tool_result:-"; strings.Join(got, " ") != want {
		t.Fatalf("tool events' details.extension: %v, want %s", got, want)
	}
	calls := h.find("tool_call")
	if len(calls) != 2 || calls[0].ToolExtension != "forecast" || calls[1].ToolExtension != "" {
		t.Fatalf("tool_call lifecycle: %+v", calls)
	}
}

// A resumed session brings back the model it was written with (another
// model of the provider), and the hooks hear model_select after its
// session_start; a model asked for by name at start wins over the
// session's, until a later resume.
func TestResumeRestoresTheSessionsModel(t *testing.T) {
	home, cwd := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(home, "models.json"), []byte(`[{"id":"tiny","provider":"anthropic","context_window":1000,"max_output":100},
		{"id":"tiny2","provider":"anthropic","context_window":1000,"max_output":100}]`), 0o644)
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("one")}})
	defer srv.Close()
	cfg := agent.Config{APIKey: "k", BaseURL: srv.URL(), CWD: cwd, Home: home, Sessions: true, Model: "tiny2"}
	rt1, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	collect(t)(rt1.Prompt(context.Background(), "first", nil))
	id := rt1.State().SessionID
	rt1.Close()

	selects := func(h *lifeHooks) string {
		var out []string
		for _, l := range h.life {
			if l.Event == "session_start" || l.Event == "model_select" {
				out = append(out, l.Event+":"+l.Reason+l.PreviousModel+">"+l.Model)
			}
		}
		return strings.Join(out, " ")
	}
	// Resumed at start, no model asked for: the session's comes back.
	h := &lifeHooks{}
	cfg.Model, cfg.Resume, cfg.Hooks = "", id, h
	rt2, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rt2.ObserveSessionStart("resume")
	if rt2.Model().ID != "tiny2" || !strings.HasPrefix(selects(h), "session_start:resume> model_select:") || !strings.HasSuffix(selects(h), ">tiny2") {
		t.Fatalf("resumed at start: model %s, events %s", rt2.Model().ID, selects(h))
	}
	rt2.Close()

	// --model tiny at start wins; /resume later restores the session's.
	h = &lifeHooks{}
	cfg.Model, cfg.Hooks = "tiny", h
	rt3, err := agent.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt3.Close()
	rt3.ObserveSessionStart("resume")
	if rt3.Model().ID != "tiny" || selects(h) != "session_start:resume>" {
		t.Fatalf("--model at start: model %s, events %s", rt3.Model().ID, selects(h))
	}
	if err := rt3.Resume(id); err != nil {
		t.Fatal(err)
	}
	if rt3.Model().ID != "tiny2" || selects(h) != "session_start:resume> session_start:resume> model_select:tiny>tiny2" {
		t.Fatalf("/resume: model %s, events %s", rt3.Model().ID, selects(h))
	}
}
