package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/testenv"
)

func bashCall(id, cmd string) agent.ToolCallInfo {
	args, _ := json.Marshal(map[string]string{"command": cmd})
	return agent.ToolCallInfo{ID: id, Name: "bash", Args: args}
}

// A guard that crashes on every call is given up after its restarts, and
// from then on blocks every tool call (naming it) until the user disables
// or removes it; its status says so.
func TestGuardGivenUpBlocksUntilDisabled(t *testing.T) {
	e := newEnv(t)
	dir := e.global("guard", "-intercept", "tool_call", "-crash-intercept")
	h := e.start(nil) // backoff 10 ms ×3
	for i := 1; statusOf(h, "guard").State != StateFailed; i++ {
		if i > 10 {
			t.Fatalf("never given up: %+v", statusOf(h, "guard"))
		}
		d := h.BeforeTool(context.Background(), bashCall("c", "echo hi"))
		if !d.Block || !strings.Contains(d.Reason, `"guard"`) {
			t.Fatalf("call %d slipped past the guard: %+v", i, d)
		}
		eventually(t, "crash counted, then back or given up", func() bool {
			st := statusOf(h, "guard")
			return st.Crashes >= i && (st.State == StateReady || st.State == StateFailed)
		})
	}
	st := statusOf(h, "guard")
	if st.Crashes != 4 || !strings.HasPrefix(st.Reason, GuardBlocked) {
		t.Fatalf("status of a given-up guard: %+v", st)
	}
	for i := 0; i < 3; i++ {
		d := h.BeforeTool(context.Background(), bashCall("after", "rm -rf ~"))
		if !d.Block || !strings.Contains(d.Reason, `guard extension "guard" is not running`) || !strings.Contains(d.Reason, GuardBlocked) {
			t.Fatalf("a given-up guard must keep blocking: %+v", d)
		}
	}
	// The user disables it (zot ext disable + reload): calls pass again.
	if err := SetEnabled(dir, false); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := h.BeforeTool(context.Background(), bashCall("x", "echo ok")); d.Block {
		t.Fatalf("after the user disabled the guard: %+v", d)
	}
	if st := statusOf(h, "guard"); st.State != StateDisabled || strings.Contains(st.Reason, GuardBlocked) {
		t.Fatalf("disabled guard: %+v", st)
	}
}

// A tool call made the moment a guard is marked ready, before its start
// has rebuilt the registry, still goes through the guard: BeforeTool
// brings the registry up to date instead of reading the one from before
// the start (where no guard was listed, so the call passed unchecked).
func TestToolCallRightAfterGuardStartIsGuarded(t *testing.T) {
	e := newEnv(t)
	e.global("guard", "-intercept", "tool_call", "-block", "forbidden")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	h := e.start(func(o *Options) {
		o.Background = true
		o.readied = func(name string) {
			once.Do(func() {
				close(held)
				<-release
			})
		}
	})
	var released sync.Once
	let := func() { released.Do(func() { close(release) }) }
	t.Cleanup(let) // before the host's Close, which waits for the start
	<-held         // the guard is ready; its start has not rebuilt the registry
	if st := statusOf(h, "guard"); st.State != StateReady || h.Intercepts(wire.EventToolCall) {
		t.Fatalf("not the moment under test: %+v, guard listed: %v", st, h.Intercepts(wire.EventToolCall))
	}
	decided := make(chan agent.ToolDecision, 1)
	go func() { decided <- h.BeforeTool(context.Background(), bashCall("1", "forbidden")) }()
	// The call lists the guard, then waits for its start to finish (the
	// slot's gate) to ask it.
	select {
	case d := <-decided:
		t.Fatalf("a call right after the guard started was decided without it: %+v", d)
	case <-eventuallyCh(t, func() bool { return h.Intercepts(wire.EventToolCall) }):
	}
	let()
	if d := <-decided; !d.Block || d.Reason != "guard refused: forbidden" {
		t.Fatalf("want the guard's own refusal: %+v", d)
	}
}

// eventuallyCh is closed once cond holds (polled until the test ends).
func eventuallyCh(t *testing.T, cond func() bool) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		for !cond() {
			select {
			case <-t.Context().Done():
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		close(ch)
	}()
	return ch
}

// A guard whose start fails (here: its exec vanished) blocks as well.
func TestGuardThatCannotStartAfterReloadBlocks(t *testing.T) {
	e := newEnv(t)
	bin := filepath.Join(t.TempDir(), "guardbin")
	b, _ := os.ReadFile(fakeBin)
	os.WriteFile(bin, b, 0o755)
	dir := writeExt(t, filepath.Join(GlobalRoot(e.home), "g"), "g", map[string]any{"exec": bin}, "-intercept", "tool_call", "-block", "forbidden")
	h := e.start(nil)
	if d := h.BeforeTool(context.Background(), bashCall("1", "forbidden")); !d.Block {
		t.Fatal("guard not guarding")
	}
	os.Remove(bin)
	_ = dir
	h.Reload(context.Background())
	if st := statusOf(h, "g"); st.State != StateFailed || !strings.HasPrefix(st.Reason, GuardBlocked) {
		t.Fatalf("status: %+v", st)
	}
	if d := h.BeforeTool(context.Background(), bashCall("2", "echo fine")); !d.Block || !strings.Contains(d.Reason, GuardBlocked) {
		t.Fatalf("a guard that cannot start must block: %+v", d)
	}
}

// A file change that disables a guard (the model writing "enabled": false)
// does not stop it without the user's confirmation.
func TestGuardDisabledByFileChangeNeedsConfirmation(t *testing.T) {
	for _, confirm := range []bool{false, true} {
		e := newEnv(t)
		dir := e.global("guard", "-intercept", "tool_call", "-block", "forbidden")
		var mu sync.Mutex
		var asked []string
		h := e.start(func(o *Options) {
			o.Watch = true
			o.Debounce = 10 * time.Millisecond
			o.ConfirmGuardOff = func(ctx context.Context, st Status) bool {
				mu.Lock()
				asked = append(asked, st.Name)
				mu.Unlock()
				return confirm
			}
		})
		if d := h.BeforeTool(context.Background(), bashCall("1", "forbidden")); !d.Block {
			t.Fatal("guard not guarding")
		}
		if err := SetEnabled(dir, false); err != nil {
			t.Fatal(err)
		}
		eventually(t, "the confirmation question", func() bool { mu.Lock(); defer mu.Unlock(); return len(asked) == 1 })
		if !confirm {
			// Declined: still guarding, and says why.
			eventually(t, "status notes the pending disable", func() bool {
				return strings.Contains(statusOf(h, "guard").Reason, "still guarding until you confirm")
			})
			// The note is there before the answer: wait for the decline itself.
			eventually(t, "the decline handled", func() bool { return strings.Contains(e.logOf("guard"), "the user kept the guard on") })
			if d := h.BeforeTool(context.Background(), bashCall("2", "forbidden")); !d.Block {
				t.Fatalf("the guard was disabled by a file change without the user: %+v", statusOf(h, "guard"))
			}
			continue
		}
		eventually(t, "disabled after confirmation", func() bool { return statusOf(h, "guard").State == StateDisabled })
		if d := h.BeforeTool(context.Background(), bashCall("3", "forbidden")); d.Block {
			t.Fatalf("confirmed disable: %+v", d)
		}
	}
}

// The agent's write and edit into extension directories and $ZOT_HOME
// need the user's approval in every mode (ProtectedWriteRule in the
// workspace's write policy); with no way to ask they are refused with a
// tool error naming why, and nothing is written. Through the real runtime,
// write and edit tools and a real guard extension. (servertest checks the
// question an editor gets: one, with the whole change.)
func TestAgentWritesIntoExtensionDirsNeedApproval(t *testing.T) {
	e := newEnv(t)
	dir := e.global("guard", "-intercept", "tool_call", "-block", "DANGER")
	manifest := filepath.Join(dir, ManifestFile)
	before, _ := os.ReadFile(manifest)
	disabled := strings.Replace(strings.ReplaceAll(string(before), "DANGER", "nothing"), "{", "{\n  \"enabled\": false,", 1)
	// A symlink in the workspace pointing into $ZOT_HOME does not help.
	os.Symlink(e.home, filepath.Join(e.cwd, "zothome"))
	projFile := filepath.Join(ProjectRoot(e.cwd), "new", ManifestFile)
	okFile := filepath.Join(e.cwd, "notes.txt")

	h := e.start(nil)
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
		llmtest.ToolReply("write", map[string]any{"path": manifest, "content": disabled}),
		llmtest.ToolReply("write", map[string]any{"path": "zothome/extensions/guard/extension.json", "content": disabled}),
		llmtest.ToolReply("write", map[string]any{"path": ".zot/extensions/new/extension.json", "content": "{}"}),
		llmtest.ToolReply("edit", map[string]any{"path": manifest, "old_string": "\"-block\"", "new_string": "\"-x\""}),
		llmtest.ToolReply("write", map[string]any{"path": "notes.txt", "content": "fine\n"}),
		llmtest.TextReply("done"),
	}})
	t.Cleanup(srv.Close)
	rt, err := agent.New(agent.Config{
		Provider: "anthropic", APIKey: "k", BaseURL: srv.URL(),
		CWD: e.cwd, Home: e.home, Hooks: h, ExtraTools: h.Tools,
		WriteRules: []tools.WriteRule{ProtectedWriteRule(h.ProtectedDirs())},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	res := toolResults(prompt(t, rt, "turn the guard off"))
	h.Close(context.Background())
	if len(res) != 5 {
		t.Fatalf("%d results", len(res))
	}
	for i, r := range res[:4] {
		txt := message.TextOf(r.Content)
		if !r.IsError || !strings.Contains(txt, "needs the user's approval") || !strings.Contains(txt, "where zot's extensions, trust and settings live") {
			t.Fatalf("result %d: %v %s", i, r.IsError, txt)
		}
	}
	if res[4].IsError {
		t.Fatalf("an ordinary write was refused: %s", message.TextOf(res[4].Content))
	}
	if after, _ := os.ReadFile(manifest); string(after) != string(before) {
		t.Fatal("the guard's manifest was changed")
	}
	if _, err := os.Stat(projFile); err == nil {
		t.Fatal("a project extension was created")
	}
	if b, _ := os.ReadFile(okFile); string(b) != "fine\n" {
		t.Fatal("the ordinary write did not happen")
	}
}

// A guard is known as one from the next start of zot on (GuardsFile),
// before it has said hello: a tool call made while it starts waits for it
// and gets its verdict; and if it cannot start, tool calls are blocked
// rather than run unchecked.
func TestKnownGuardIsWaitedForFromTheNextStart(t *testing.T) {
	e := newEnv(t)
	dir := e.global("g", "-intercept", "tool_call", "-block", "rm -rf")
	first := e.start(nil)
	if d := first.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "1", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf x"}`)}); !d.Block {
		t.Fatal("the guard did not block")
	}
	if err := first.Close(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The next zot: the guard is held before its hello.
	gate := filepath.Join(t.TempDir(), "gate")
	if err := mkfifo(gate); err != nil {
		testenv.Skip(t, "mkfifo: %v", err)
	}
	writeExt(t, dir, "g", nil, "-intercept", "tool_call", "-block", "rm -rf", "-gate", gate)
	second := e.start(func(o *Options) { o.Background = true })
	res := make(chan agent.ToolDecision, 1)
	go func() {
		res <- second.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "2", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf y"}`)})
	}()
	releaseFifo(t, gate) // the call was made while the guard was starting
	if d := <-res; !d.Block || !strings.Contains(d.Reason, "g refused: rm -rf") {
		t.Fatalf("a call made while the known guard started: %+v", d)
	}
	second.Close(context.Background())

	// A known guard that cannot start blocks tool calls.
	writeExt(t, dir, "g", map[string]any{"exec": "./missing"})
	third := e.start(nil)
	d := third.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "3", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
	if !d.Block || !strings.Contains(d.Reason, GuardBlocked) {
		t.Fatalf("a known guard that cannot start: %+v", d)
	}
}

// A tool call waits for a starting extension that has subscribed to
// intercept tool_call, and an answer for one that has subscribed to
// intercept assistant_message (here both: registered, promised ready, held
// before it): each gets the extension's verdict, not a pass.
func TestStartingInterceptorsAreWaitedFor(t *testing.T) {
	e := newEnv(t)
	gate := filepath.Join(t.TempDir(), "gate")
	if err := mkfifo(gate); err != nil {
		testenv.Skip(t, "mkfifo: %v", err)
	}
	e.global("g", "-caps", "ready", "-intercept", "tool_call,assistant_message", "-block", "rm -rf", "-replace", "SECRET=[redacted]", "-ready-gate", gate)
	h := e.start(func(o *Options) { o.Background = true })
	// The extension's log line can come before the host has read the
	// subscriptions it sent first: wait for the host to know them too.
	eventually(t, "the extension registered and held before ready", func() bool {
		return strings.Contains(e.logOf("g"), "waiting at the ready gate") && h.startingWhere(startingGuard) && h.startingWhere(startingRedactor)
	})
	tool := make(chan agent.ToolDecision, 1)
	answer := make(chan agent.AssistantDecision, 1)
	go func() { tool <- h.BeforeTool(context.Background(), bashCall("1", "rm -rf x")) }()
	go func() { answer <- h.BeforeAssistantMessage(context.Background(), "the SECRET is out") }()
	releaseFifo(t, gate) // both were asked while it was starting
	if d := <-tool; !d.Block || !strings.Contains(d.Reason, "g refused: rm -rf") {
		t.Fatalf("tool call: %+v", d)
	}
	if d := <-answer; d.ReplaceText == nil || *d.ReplaceText != "the [redacted] is out" {
		t.Fatalf("answer: %+v", d)
	}
}
