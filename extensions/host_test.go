package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/extensions/wire"
)

func TestToolRoundTripAndHelloAck(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("alpha", "-tools", "echo,image", "-record", rec)
	h := e.start(nil)

	st := statusOf(h, "alpha")
	if st.State != StateReady || st.Source != SourceGlobal || !slices.Equal(st.Tools, []string{"echo", "image"}) {
		t.Fatalf("status %+v", st)
	}
	r := callTool(t, h, "echo", `{"text":"hi"}`)
	if r.IsError || resultText(r) != "echo: hi" {
		t.Fatalf("echo result %+v", r)
	}
	r = callTool(t, h, "image", `{"text":"x"}`)
	if r.IsError || len(r.Content) != 2 || r.Content[1].Type != message.TypeImage || r.Content[1].MimeType != "image/png" || r.Content[1].Data != "iVBORw0KGgo=" {
		t.Fatalf("image result %+v", r)
	}
	frames := recorded(t, rec)
	if len(frames) == 0 || frames[0].Type != wire.TypeHelloAck {
		t.Fatalf("first frame %+v", frames)
	}
	ack := frames[0]
	dir := filepath.Join(GlobalRoot(e.home), "alpha")
	if ack.ProtocolVersion != 1 || ack.ZotVersion != "test" || ack.Provider != "anthropic" || ack.Model != "m" || ack.Cwd != e.cwd || ack.ExtensionDir != dir || ack.DataDir != dir {
		t.Fatalf("hello_ack %+v", ack)
	}
	if !strings.Contains(e.logOf("alpha"), "fakeext alpha starting") {
		t.Fatalf("stderr not in the log:\n%s", e.logOf("alpha"))
	}
}

func TestSchemaValidationBeforeCall(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("alpha", "-tools", "echo", "-record", rec)
	h := e.start(nil)
	r := callTool(t, h, "echo", `{"n":1}`)
	if !r.IsError || !strings.Contains(resultText(r), "text") || !strings.Contains(resultText(r), "invalid arguments for tool echo") {
		t.Fatalf("missing required: %+v", r)
	}
	r = callTool(t, h, "echo", `{"text":5}`)
	if !r.IsError || !strings.Contains(resultText(r), "string") {
		t.Fatalf("wrong type: %+v", r)
	}
	for _, f := range recorded(t, rec) {
		if f.Type == wire.TypeToolCall {
			t.Fatalf("invalid args reached the extension: %+v", f)
		}
	}
}

func TestDiscoveryPrecedenceAndNameShadowing(t *testing.T) {
	e := newEnv(t)
	// Same extension name in all three places: --ext wins, then project.
	explicit := writeExt(t, filepath.Join(t.TempDir(), "dev"), "dup", nil, "-tools", "echo", "-prefix", "explicit")
	e.project("dup", "-tools", "echo", "-prefix", "project")
	e.global("dup", "-tools", "echo", "-prefix", "global")
	// Tool-name clashes: a built-in, and two extensions (load order: b1 < b2).
	e.global("b1", "-tools", "read,shared", "-cmds", "compact,mine")
	e.global("b2", "-tools", "shared", "-cmds", "mine")
	if err := TrustCandidate(e.home, e.cwd, Discover(e.cwd, e.home, nil)[0]); err != nil {
		t.Fatal(err)
	}
	h := e.start(func(o *Options) {
		o.ExtPaths = []string{explicit}
		o.BuiltinTools = []string{"read", "bash"}
		o.BuiltinCommands = []string{"compact"}
	})
	r := callTool(t, h, "echo", `{"text":"x"}`)
	if resultText(r) != "explicit: x" {
		t.Fatalf("--ext should win: %q", resultText(r))
	}
	var shadowedDirs []string
	for _, s := range h.Status() {
		if s.State == StateShadowed {
			shadowedDirs = append(shadowedDirs, s.Source)
		}
	}
	if !slices.Equal(shadowedDirs, []string{SourceProject, SourceGlobal}) {
		t.Fatalf("shadowed: %v (%+v)", shadowedDirs, h.Status())
	}
	if toolNamed(h, "read") != nil {
		t.Fatal("an extension must not replace a built-in tool")
	}
	b1, b2 := statusOf(h, "b1"), statusOf(h, "b2")
	if !slices.Contains(b1.Shadowed, "tool read (built-in wins)") || !slices.Contains(b1.Shadowed, "command /compact (built-in wins)") {
		t.Fatalf("b1 shadowed %v", b1.Shadowed)
	}
	if !slices.Contains(b2.Shadowed, "tool shared (extension b1 wins)") || !slices.Contains(b2.Shadowed, "command /mine (extension b1 wins)") {
		t.Fatalf("b2 shadowed %v", b2.Shadowed)
	}
	if !strings.Contains(e.logOf("b2"), "shadowed: tool shared (extension b1 wins)") {
		t.Fatalf("shadowing not logged:\n%s", e.logOf("b2"))
	}
	var owners []string
	for _, c := range h.Commands() {
		owners = append(owners, c.Name+"@"+c.Extension)
	}
	if !slices.Equal(owners, []string{"mine@b1"}) {
		t.Fatalf("commands %v", owners)
	}
}

func TestCommandsAllActions(t *testing.T) {
	e := newEnv(t)
	e.global("c", "-cmds", "hi,insert,display,noop,err")
	h := e.start(nil)
	ctx := context.Background()
	cases := []struct {
		name string
		want CommandResult
	}{
		{"/hi", CommandResult{Extension: "c", Action: "prompt", Prompt: "say hi to  bob"}},
		{"insert", CommandResult{Extension: "c", Action: "insert", Insert: "inserted  bob"}},
		{"display", CommandResult{Extension: "c", Action: "display", Display: "shown  bob"}},
		{"noop", CommandResult{Extension: "c", Action: "noop"}},
		{"err", CommandResult{Extension: "c", Action: "noop", Error: "it went wrong"}},
	}
	for _, c := range cases {
		got, err := h.RunCommand(ctx, c.name, "  bob ")
		c.want.Prompt = strings.ReplaceAll(c.want.Prompt, "  ", " ")
		c.want.Insert = strings.ReplaceAll(c.want.Insert, "  ", " ")
		c.want.Display = strings.ReplaceAll(c.want.Display, "  ", " ")
		if err != nil || got != c.want {
			t.Errorf("%s: got %+v, %v; want %+v", c.name, got, err, c.want)
		}
	}
	if _, err := h.RunCommand(ctx, "nope", ""); !errors.Is(err, ErrUnknownCommand) {
		t.Fatalf("unknown command: %v", err)
	}
}

func TestPanelOpenKeysRenderClose(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("todo", "-cmds", "panel", "-record", rec)
	h := e.start(nil)
	res, err := h.RunCommand(context.Background(), "panel", "")
	if err != nil || res.Action != wire.ActionOpenPanel || res.Panel == nil || res.Panel.ID != "p1" {
		t.Fatalf("open: %+v %v", res, err)
	}
	eventually(t, "panel open", func() bool { return e.ui.count(func(u *recUI) int { return len(u.opens) }) == 1 })
	if err := h.PanelKey("p1", "down", ""); err != nil {
		t.Fatal(err)
	}
	eventually(t, "render item 1", func() bool { return e.ui.lastRender() == "item 1" })
	h.PanelKey("p1", "rune", "x")
	eventually(t, "render typed x", func() bool { return e.ui.lastRender() == "typed x" })
	if err := h.PanelKey("p1", "bogus", ""); err == nil {
		t.Fatal("unknown key accepted")
	}
	if err := h.PanelKey("nope", "down", ""); err == nil {
		t.Fatal("key for unknown panel accepted")
	}
	// esc closes it in the host, as zot's terminal UI does: the UI
	// closes the panel, the extension hears panel_close (not a key).
	h.PanelKey("p1", "esc", "")
	eventually(t, "panel closed on esc", func() bool {
		return e.ui.count(func(u *recUI) int { return len(u.closes) }) == 1
	})
	eventually(t, "panel_close after esc", func() bool {
		return slices.ContainsFunc(recorded(t, rec), func(f wire.Frame) bool { return f.Type == wire.TypePanelClose && f.PanelID == "p1" })
	})
	if err := h.PanelKey("p1", "down", ""); err == nil {
		t.Fatal("closed panel still takes keys")
	}
	// Open again; the user closes it: the extension hears panel_close.
	h.RunCommand(context.Background(), "panel", "")
	if err := h.PanelClosed("p1"); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a second panel_close sent", func() bool {
		n := 0
		for _, f := range recorded(t, rec) {
			if f.Type == wire.TypePanelClose && f.PanelID == "p1" {
				n++
			}
		}
		return n == 2
	})
	var keys []string
	for _, f := range recorded(t, rec) {
		if f.Type == wire.TypePanelKey {
			keys = append(keys, f.Key+f.Text)
		}
	}
	if !slices.Equal(keys, []string{"down", "runex"}) {
		t.Fatalf("keys %v", keys)
	}
}

func TestInterceptsLoadOrderChainAndBlock(t *testing.T) {
	e := newEnv(t)
	e.global("a", "-intercept", "tool_call,assistant_message", "-suffix", " A", "-replace", "secret=[a]")
	e.global("b", "-intercept", "tool_call,assistant_message", "-suffix", " B", "-replace", "[a]=[b]")
	e.global("c", "-intercept", "tool_call,turn_start", "-block", "rm -rf", "-block-turn")
	h := e.start(nil)
	ctx := context.Background()
	d := h.BeforeTool(ctx, agent.ToolCallInfo{ID: "1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
	if d.Block || string(d.ModifiedArgs) != `{"command":"ls A B"}` {
		t.Fatalf("chain: %+v %s", d, d.ModifiedArgs)
	}
	d = h.BeforeTool(ctx, agent.ToolCallInfo{ID: "2", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf /"}`)})
	if !d.Block || d.Reason != "c refused: rm -rf" {
		t.Fatalf("block: %+v", d)
	}
	if td := h.BeforeTurn(ctx, 1); !td.Block || td.Reason != "outside business hours" {
		t.Fatalf("turn: %+v", td)
	}
	ad := h.BeforeAssistantMessage(ctx, "the secret is out")
	if ad.Block || ad.ReplaceText == nil || *ad.ReplaceText != "the [b] is out" {
		t.Fatalf("assistant: %+v", ad)
	}

	// --ext order is the flag order: b before a.
	e2 := newEnv(t)
	a := writeExt(t, filepath.Join(t.TempDir(), "a"), "a", nil, "-intercept", "tool_call", "-suffix", " A")
	b := writeExt(t, filepath.Join(t.TempDir(), "b"), "b", nil, "-intercept", "tool_call", "-suffix", " B")
	h2 := e2.start(func(o *Options) { o.ExtPaths = []string{b, a} })
	d = h2.BeforeTool(ctx, agent.ToolCallInfo{ID: "1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
	if string(d.ModifiedArgs) != `{"command":"ls B A"}` {
		t.Fatalf("flag order chain: %s", d.ModifiedArgs)
	}
}

func TestObserveInOrder(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("obs", "-events", "session_start,turn_start,tool_call,turn_end,assistant_message", "-record", rec)
	h := e.start(func(o *Options) { o.EventQueue = 1000 }) // no drops in this test
	h.Observe(agent.Lifecycle{Event: "session_start"})
	for i := 1; i <= 200; i++ {
		h.Observe(agent.Lifecycle{Event: "turn_start", Step: i})
		h.Observe(agent.Lifecycle{Event: "tool_call", ToolID: "t", ToolName: "read", ToolArgs: json.RawMessage(`{"path":"x"}`)})
		h.Observe(agent.Lifecycle{Event: "turn_end", Stop: "tool_use"})
	}
	h.Observe(agent.Lifecycle{Event: "assistant_message", Text: "done"})
	var evs []wire.Frame
	eventually(t, "events", func() bool {
		evs = evs[:0]
		for _, f := range recorded(t, rec) {
			if f.Type == wire.TypeEvent {
				evs = append(evs, f)
			}
		}
		return len(evs) == 602
	})
	if evs[0].Event != "session_start" || evs[601].Event != "assistant_message" || evs[601].Text != "done" {
		t.Fatalf("ends: %+v %+v", evs[0], evs[601])
	}
	for i := 1; i <= 200; i++ {
		ts, tc, te := evs[3*i-2], evs[3*i-1], evs[3*i]
		if ts.Event != "turn_start" || ts.Step != i || tc.Event != "tool_call" || string(tc.ToolArgs) != `{"path":"x"}` || te.Event != "turn_end" || te.Stop != "tool_use" {
			t.Fatalf("out of order at %d: %+v %+v %+v", i, ts, tc, te)
		}
	}
}

func TestEventQueueDropsOldest(t *testing.T) {
	e := newEnv(t)
	dir := t.TempDir()
	listening, rec := filepath.Join(dir, "listening"), filepath.Join(dir, "record")
	e.global("deaf", "-events", "turn_start", "-read-after", listening, "-record", rec)
	e.global("ok", "-tools", "echo")
	h := e.start(func(o *Options) { o.EventQueue = 8 })
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 20000; i++ { // far more than the pipe buffer plus the queue
			h.Observe(agent.Lifecycle{Event: "turn_start", Step: i + 1})
		}
	}()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Observe blocked on an extension that does not read")
	}
	eventually(t, "drop logged", func() bool { return strings.Contains(e.logOf("deaf"), "dropped the oldest queued event") })
	if r := callTool(t, h, "echo", `{"text":"still"}`); resultText(r) != "echo: still" {
		t.Fatalf("other extension: %+v", r)
	}
	// Once it reads: what the pipe held, then the queue's 8 — the newest.
	if err := os.WriteFile(listening, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var steps []int
	eventually(t, "the last event read", func() bool {
		steps = steps[:0]
		for _, f := range recorded(t, rec) {
			if f.Type == wire.TypeEvent && f.Event == "turn_start" {
				steps = append(steps, f.Step)
			}
		}
		return len(steps) > 0 && steps[len(steps)-1] == 20000
	})
	if len(steps) < 8 || !slices.Equal(steps[len(steps)-8:], []int{19993, 19994, 19995, 19996, 19997, 19998, 19999, 20000}) {
		t.Fatalf("the queue kept other than the newest 8: ends %v (of %d read)", steps[max(0, len(steps)-12):], len(steps))
	}
}

// An extension that says hello and nothing else is ready after the
// silence; what it registers later reaches the next model call and the
// editors.
func TestReadyFallbackAndLateRegistration(t *testing.T) {
	e := newEnv(t)
	e.global("legacy", "-tools", "late", "-noready", "-late-delay", "400ms")
	ui := &lateWatchUI{recUI: e.ui}
	h := e.start(func(o *Options) { o.UI = ui })
	ui.h.Store(h)
	st := statusOf(h, "legacy")
	if st.State != StateReady || !slices.Contains(st.Diagnostics, "no ready frame; ready after silence") {
		t.Fatalf("status %+v", st)
	}
	eventually(t, "the editors told of the late tool", ui.sawLate.Load)
	if r := callTool(t, h, "late", `{"text":"l"}`); resultText(r) != "echo: l" {
		t.Fatalf("late: %+v", r)
	}
}

// zot's rule for an extension that never sends ready: ready after 250 ms
// without a frame, also once it has registered (zot's own clock example
// registers its commands and never sends ready) — not after the hello
// budget, which held its commands, and every command that waits for
// starting extensions, for a minute. What it registers later still counts.
func TestRegisteredNeverReadyIsReadyBySilence(t *testing.T) {
	e := newEnv(t)
	e.global("clock", "-tools", "echo,late", "-cmds", "display", "-noready", "-late-delay", "400ms")
	h := e.start(func(o *Options) { o.HelloTimeout = 20 * time.Second })
	st := statusOf(h, "clock")
	if st.State != StateReady || !slices.Equal(st.Diagnostics, []string{"no ready frame; ready after silence"}) {
		t.Fatalf("clock: %+v", st)
	}
	if toolNamed(h, "echo") == nil {
		t.Fatal("tool missing when Start returned")
	}
	if r, err := h.RunCommand(context.Background(), "display", "x"); err != nil || r.Display != "shown x" {
		t.Fatalf("/display: %+v %v", r, err)
	}
	eventually(t, "the tool registered after the silence", func() bool { return toolNamed(h, "late") != nil })
}

// An extension that declares "ready" in hello (our SDK does) and then
// pauses longer than the silence window before its first registration (a
// loaded machine) is not declared ready early: its tools are all there
// when Start returns. The same pause from one that does not declare it is
// still zot's silence rule.
func TestPromisedReadyIsNotReadyBySilence(t *testing.T) {
	e := newEnv(t)
	e.global("promised", "-tools", "echo", "-caps", "ready", "-register-delay", "700ms")
	e.global("plain", "-tools", "echo2", "-register-delay", "700ms")
	h := e.start(nil)
	st := statusOf(h, "promised")
	if st.State != StateReady || len(st.Diagnostics) != 0 {
		t.Fatalf("promised: %+v", st)
	}
	if strings.Contains(e.logOf("promised"), "no ready frame") {
		t.Fatal("declared ready by silence although it promised ready")
	}
	if toolNamed(h, "echo") == nil {
		t.Fatal("tool missing when Start returned")
	}
	if st := statusOf(h, "plain"); !slices.Contains(st.Diagnostics, "no ready frame; ready after silence") {
		t.Fatalf("plain: %+v", st)
	}
}

// A notify an extension sends while running a tool reaches the UI with its
// extension and level (warn through zot/notify: servertest TestCommands).
func TestNotifyDuringToolCall(t *testing.T) {
	e := newEnv(t)
	e.global("n", "-tools", "echo", "-notify-on-call")
	h := e.start(nil)
	callTool(t, h, "echo", `{"text":"x"}`)
	eventually(t, "notify", func() bool {
		return e.ui.count(func(u *recUI) int { return len(u.notifies) }) == 1
	})
	if got := e.ui.notifies[0]; got != "n|info|calling echo" {
		t.Fatalf("notify %q", got)
	}
}

func TestInvalidManifestAndDisabled(t *testing.T) {
	e := newEnv(t)
	bad := filepath.Join(GlobalRoot(e.home), "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, ManifestFile), []byte(`{"name":"bad"`), 0o644)
	off := e.global("off", "-tools", "echo")
	if err := SetEnabled(off, false); err != nil {
		t.Fatal(err)
	}
	h := e.start(nil)
	var states []string
	for _, s := range h.Status() {
		states = append(states, s.Name+"="+s.State)
	}
	if !slices.Equal(states, []string{"bad=invalid", "off=disabled"}) {
		t.Fatalf("states %v", states)
	}
	if len(h.Tools()) != 0 {
		t.Fatal("disabled extension offers tools")
	}
}

func TestEnvironmentInheritedNotLogged(t *testing.T) {
	t.Setenv("ZOT_TEST_SECRET", "hunter2-very-secret")
	e := newEnv(t)
	e.global("env", "-tools", "env")
	h := e.start(nil)
	// The extension runs with zot's environment: it sees the value.
	if got := resultText(callTool(t, h, "env", `{"text":"ZOT_TEST_SECRET"}`)); got != "hunter2-very-secret" {
		t.Fatalf("the extension saw %q", got)
	}
	h.Close(context.Background())
	// The log shows neither the value nor the tool result carrying it.
	if log := e.logOf("env"); strings.Contains(log, "hunter2") {
		t.Fatalf("an environment value reached the log:\n%s", log)
	}
}

// lateWatchUI notes whether a Changed call saw the late tool registered.
type lateWatchUI struct {
	*recUI
	h       atomic.Pointer[Host]
	sawLate atomic.Bool
}

func (u *lateWatchUI) Changed() {
	if h := u.h.Load(); h != nil && toolNamed(h, "late") != nil {
		u.sawLate.Store(true)
	}
}
