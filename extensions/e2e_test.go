package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
	"github.com/zot-editors/zot/extensions/wire"
)

// These tests drive real extension subprocesses (the examples and
// testdata/fakeext) through the runtime with the scripted LLM.

func newRuntime(t *testing.T, e *env, h *Host, replies ...llmtest.Reply) (*agent.Runtime, *llmtest.Server) {
	t.Helper()
	srv := llmtest.New(llmtest.Script{Replies: replies})
	t.Cleanup(srv.Close)
	rt, err := agent.New(agent.Config{
		Provider: "anthropic", APIKey: "k", BaseURL: srv.URL(),
		CWD: e.cwd, Home: e.home, Hooks: h, ExtraTools: h.Tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	return rt, srv
}

func prompt(t *testing.T, rt *agent.Runtime, text string) []agent.Event {
	t.Helper()
	ch, err := rt.Prompt(context.Background(), text, nil)
	if err != nil {
		t.Fatal(err)
	}
	var evs []agent.Event
	for ev := range ch {
		evs = append(evs, ev)
	}
	return evs
}

func toolResults(evs []agent.Event) []agent.Event {
	var out []agent.Event
	for _, ev := range evs {
		if ev.Type == agent.EventToolResult {
			out = append(out, ev)
		}
	}
	return out
}

func requestJSON(srv *llmtest.Server, i int) string {
	reqs := srv.Requests()
	if i >= len(reqs) {
		return ""
	}
	b, _ := json.Marshal(reqs[i].Body)
	return string(b)
}

// installAt places an example's runnable copy under $ZOT_HOME/extensions.
func installAt(t *testing.T, e *env, example string) string {
	t.Helper()
	src := examplestest.Build(t, example)
	dst := filepath.Join(GlobalRoot(e.home), filepath.Base(src))
	os.MkdirAll(GlobalRoot(e.home), 0o755)
	if err := os.Rename(src, dst); err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestE2EToolResultReachesModel(t *testing.T) {
	e := newEnv(t)
	installAt(t, e, "python")
	installAt(t, e, "node")
	h := e.start(nil)
	for _, n := range []string{"words-py", "clock-node"} {
		if st := statusOf(h, n); st.State != StateReady {
			t.Fatalf("%s: %+v", n, st)
		}
	}
	rt, srv := newRuntime(t, e, h,
		llmtest.ToolReply("word_count", map[string]any{"text": "one two three"}),
		llmtest.ToolReply("now", map[string]any{}),
		llmtest.TextReply("done"))
	evs := prompt(t, rt, "count")
	res := toolResults(evs)
	if len(res) != 2 || res[0].IsError || res[1].IsError {
		t.Fatalf("results %+v", res)
	}
	first, second := requestJSON(srv, 0), requestJSON(srv, 1)
	if !strings.Contains(first, `"word_count"`) || !strings.Contains(first, `"now"`) {
		t.Fatalf("tools not offered to the model: %s", first)
	}
	if !strings.Contains(second, "3 words, 1 lines, 13 characters") {
		t.Fatalf("tool result did not reach the model: %s", second)
	}
	if !strings.Contains(requestJSON(srv, 2), "Z (") { // ISO timestamp + local form
		t.Fatalf("node tool result missing: %s", requestJSON(srv, 2))
	}
}

func TestE2EGuardBlocks(t *testing.T) {
	e := newEnv(t)
	installAt(t, e, "guard")
	h := e.start(nil)
	marker := filepath.Join(e.cwd, "victim")
	os.WriteFile(marker, []byte("x"), 0o644)
	rt, srv := newRuntime(t, e, h,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf " + marker}),
		llmtest.ToolReply("bash", map[string]any{"command": "echo allowed-through"}),
		llmtest.TextReply("ok"))
	evs := prompt(t, rt, "clean up")
	res := toolResults(evs)
	if len(res) != 2 || !res[0].IsError || res[1].IsError {
		t.Fatalf("results %+v", res)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatal("the guarded command ran")
	}
	if !strings.Contains(requestJSON(srv, 1), "rm -rf") || !strings.Contains(requestJSON(srv, 2), "allowed-through") {
		t.Fatalf("requests:\n%s\n%s", requestJSON(srv, 1), requestJSON(srv, 2))
	}
}

func TestE2EArgsRewriteChainsInLoadOrder(t *testing.T) {
	e := newEnv(t)
	e.global("a-first", "-intercept", "tool_call", "-suffix", " A")
	e.global("b-second", "-intercept", "tool_call", "-suffix", " B")
	h := e.start(nil)
	rt, srv := newRuntime(t, e, h,
		llmtest.ToolReply("bash", map[string]any{"command": "echo chained"}),
		llmtest.TextReply("ok"))
	prompt(t, rt, "go")
	if !strings.Contains(requestJSON(srv, 1), "chained A B") {
		t.Fatalf("rewrite chain: %s", requestJSON(srv, 1))
	}
}

func TestE2EPanelAndTodoTool(t *testing.T) {
	e := newEnv(t)
	dir := installAt(t, e, "todo")
	h := e.start(nil)
	rt, srv := newRuntime(t, e, h,
		llmtest.ToolReply("todo", map[string]any{"action": "add", "text": "write docs"}),
		llmtest.ToolReply("todo", map[string]any{"action": "add"}),  // schema-valid, extension refuses
		llmtest.ToolReply("todo", map[string]any{"action": "nope"}), // schema-invalid: the host refuses
		llmtest.TextReply("added"))
	prompt(t, rt, "remember to write docs")
	if !strings.Contains(requestJSON(srv, 1), "added #1: write docs") {
		t.Fatalf("todo tool: %s", requestJSON(srv, 1))
	}
	if !strings.Contains(requestJSON(srv, 3), "invalid arguments for tool todo") {
		t.Fatalf("schema validation: %s", requestJSON(srv, 3))
	}
	if _, err := os.Stat(filepath.Join(dir, "todos.json")); err != nil {
		t.Fatal("state not in data_dir")
	}

	res, err := h.RunCommand(context.Background(), "todos", "buy milk")
	if err != nil || res.Action != wire.ActionOpenPanel || res.Panel.ID != "todos-main" || len(res.Panel.Lines) != 2 {
		t.Fatalf("open: %+v %v", res, err)
	}
	eventually(t, "panel shown", func() bool { return e.ui.count(func(u *recUI) int { return len(u.opens) }) == 1 })
	h.PanelKey("todos-main", "up", "")
	eventually(t, "cursor moved", func() bool { return strings.HasPrefix(e.ui.lastRender(), "› □ write docs") })
	h.PanelKey("todos-main", "rune", "x")
	eventually(t, "toggled", func() bool { return strings.HasPrefix(e.ui.lastRender(), "› ✓ write docs") })
	h.PanelKey("todos-main", "esc", "")
	eventually(t, "closed", func() bool {
		return e.ui.count(func(u *recUI) int { return len(u.closes) }) == 1
	})
	if e.ui.closes[0] != "todo|todos-main" {
		t.Fatalf("closes %v", e.ui.closes)
	}
	// Reopen and close from the editor side.
	res, err = h.RunCommand(context.Background(), "todos", "")
	if err != nil || res.Action != wire.ActionOpenPanel || res.Panel.ID != "todos-main" || !strings.HasPrefix(res.Panel.Lines[0], "› ✓ write docs") {
		t.Fatalf("reopen: %+v %v", res, err)
	}
	eventually(t, "panel shown again", func() bool { return e.ui.count(func(u *recUI) int { return len(u.opens) }) == 2 })
	if err := h.PanelClosed("todos-main"); err != nil {
		t.Fatal(err)
	}
	if err := h.PanelClosed("todos-main"); err == nil || !strings.Contains(err.Error(), "no open panel") {
		t.Fatalf("closing a closed panel: %v", err)
	}
}

func TestE2EHelloCommands(t *testing.T) {
	e := newEnv(t)
	installAt(t, e, "hello")
	h := e.start(nil)
	res, err := h.RunCommand(context.Background(), "hello-display", "")
	if err != nil || res.Action != wire.ActionDisplay || !strings.Contains(res.Display, "zot test, anthropic/m, cwd "+e.cwd) {
		t.Fatalf("%+v %v", res, err)
	}
	res, _ = h.RunCommand(context.Background(), "/hello", "Ada")
	if res.Action != wire.ActionPrompt || !strings.Contains(res.Prompt, "Ada") {
		t.Fatalf("%+v", res)
	}
}

func TestE2EReloadOnSaveSwapsTool(t *testing.T) {
	e := newEnv(t)
	dir := e.global("hot", "-tools", "echo", "-prefix", "v1")
	h := e.start(func(o *Options) { o.Watch = true })
	rt, srv := newRuntime(t, e, h,
		llmtest.ToolReply("echo", map[string]any{"text": "x"}),
		llmtest.TextReply("one"),
		llmtest.ToolReply("echo", map[string]any{"text": "y"}),
		llmtest.TextReply("two"))
	prompt(t, rt, "first")
	pid := statusOf(h, "hot").PID
	writeExt(t, dir, "hot", nil, "-tools", "echo", "-prefix", "v2")
	eventually(t, "reloaded", func() bool { st := statusOf(h, "hot"); return st.State == StateReady && st.PID != pid })
	prompt(t, rt, "second")
	if !strings.Contains(requestJSON(srv, 1), "v1: x") || !strings.Contains(requestJSON(srv, 3), "v2: y") {
		t.Fatalf("requests:\n%s\n%s", requestJSON(srv, 1), requestJSON(srv, 3))
	}
}

func TestE2ELifecycleEventsInOrder(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("obs", "-events", "session_start,turn_start,tool_call,turn_end,assistant_message", "-record", rec)
	e.global("t", "-tools", "echo")
	h := e.start(nil)
	rt, _ := newRuntime(t, e, h,
		llmtest.ToolReply("echo", map[string]any{"text": "x"}),
		llmtest.TextReply("fine"))
	prompt(t, rt, "go")
	// turn_end closes the model call before its tool runs (zot's order).
	want := []string{"session_start", "turn_start:1", "assistant_message", "turn_end:tool_use", "tool_call:echo", "turn_start:2", "assistant_message:fine", "turn_end:end_turn"}
	var got []string
	eventually(t, "events", func() bool {
		got = got[:0]
		for _, f := range recorded(t, rec) {
			if f.Type != wire.TypeEvent {
				continue
			}
			s := f.Event
			switch f.Event {
			case "turn_start":
				s += ":" + string(rune('0'+f.Step))
			case "tool_call":
				s += ":" + f.ToolName
			case "turn_end":
				s += ":" + f.Stop
			case "assistant_message":
				if f.Text != "" {
					s += ":" + f.Text
				}
			}
			got = append(got, s)
		}
		return len(got) >= len(want)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("events\n got %v\nwant %v", got, want)
	}
}
