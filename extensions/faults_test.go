package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

func TestFaultNoHelloKilledStartupBounded(t *testing.T) {
	e := newEnv(t)
	e.global("mute", "-nohello")
	e.global("ok", "-tools", "echo")
	h := e.start(func(o *Options) { o.HelloTimeout = 300 * time.Millisecond })
	// Start returned, so startup did not hang on the silent extension.
	st := statusOf(h, "mute")
	if st.State != StateFailed || !strings.Contains(st.Reason, "no hello within 300ms") {
		t.Fatalf("mute: %+v", st)
	}
	if r := callTool(t, h, "echo", `{"text":"x"}`); resultText(r) != "echo: x" {
		t.Fatalf("ok: %+v", r)
	}
	eventually(t, "no hello logged", func() bool { return strings.Contains(e.logOf("mute"), "no hello within") })
	// The process is gone: no fakeext -name mute left in this group.
	eventually(t, "mute killed", func() bool {
		return !strings.Contains(psList(), "-name mute")
	})
}

func TestFaultCrashFailsPendingAtOnce(t *testing.T) {
	e := newEnv(t)
	e.global("boom", "-tools", "crash,echo", "-cmds", "crash")
	e.global("guard", "-intercept", "tool_call", "-crash-intercept")
	e.global("ok", "-tools", "ok")
	h := e.start(func(o *Options) {
		o.RestartBackoff = []time.Duration{time.Hour, time.Hour, time.Hour} // stay down
		o.ToolTimeout = time.Hour                                           // "at once" cannot be a timeout
		o.InterceptTimeout = time.Hour
	})
	done := make(chan tools.Result, 1)
	go func() { done <- callTool(t, h, "crash", `{"text":"x"}`) }()
	var r tools.Result
	select {
	case r = <-done:
	case <-time.After(wait):
		t.Fatal("pending tool call did not fail when the extension crashed")
	}
	if !r.IsError || !strings.Contains(resultText(r), `extension "boom" crashed`) {
		t.Fatalf("result %+v", r)
	}
	eventually(t, "tools leave the registry", func() bool { return toolNamed(h, "echo") == nil })
	st := statusOf(h, "boom")
	if st.State != StateRestarting || st.Crashes != 1 || !strings.Contains(st.Reason, "restart 1 of 3") {
		t.Fatalf("status %+v", st)
	}

	// A command pending while it crashes.
	h2 := newEnv(t)
	h2.global("boom", "-cmds", "crash")
	hh := h2.start(func(o *Options) { o.RestartBackoff = []time.Duration{time.Hour}; o.ToolTimeout = time.Hour })
	if _, err := hh.RunCommand(context.Background(), "crash", ""); err == nil || !strings.Contains(err.Error(), "crashed") {
		t.Fatalf("command: %v", err)
	}

	// An intercept pending while the guard crashes: blocked, naming it.
	d := h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "1", Name: "bash", Args: json.RawMessage(`{}`)})
	if !d.Block || !strings.Contains(d.Reason, `extension "guard"`) {
		t.Fatalf("intercept: %+v", d)
	}
	// While the crashed guard waits for its restart, calls still fail
	// closed: nothing slips past a guard that is down.
	eventually(t, "guard restarting", func() bool { return statusOf(h, "guard").State == StateRestarting })
	d = h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "2", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf /"}`)})
	if !d.Block || !strings.Contains(d.Reason, `extension "guard"`) || !strings.Contains(d.Reason, "restarting") {
		t.Fatalf("call while the guard is down: %+v", d)
	}
}

func TestFaultRestartBackoffThenFailed(t *testing.T) {
	e := newEnv(t)
	e.global("flaky", "-tools", "echo", "-crash-start")
	h := e.start(nil) // backoff 10ms ×3
	eventually(t, "failed after the restarts", func() bool { return statusOf(h, "flaky").State == StateFailed })
	st := statusOf(h, "flaky")
	if st.Crashes != 4 || !strings.Contains(st.Reason, "crashed 4 times") {
		t.Fatalf("status %+v", st)
	}
	if n := strings.Count(e.logOf("flaky"), "started flaky"); n != 4 {
		t.Fatalf("started %d times, want 4 (1 + 3 restarts)", n)
	}
	if toolNamed(h, "echo") != nil {
		t.Fatal("failed extension still offers tools")
	}
}

func TestFaultRestartRecovers(t *testing.T) {
	e := newEnv(t)
	e.global("phoenix", "-tools", "crash,echo")
	h := e.start(nil)
	callTool(t, h, "crash", `{"text":"x"}`)
	eventually(t, "restarted", func() bool {
		st := statusOf(h, "phoenix")
		return st.State == StateReady && st.Crashes == 1
	})
	if r := callTool(t, h, "echo", `{"text":"again"}`); resultText(r) != "echo: again" {
		t.Fatalf("after restart: %+v", r)
	}
}

func TestFaultHangingInterceptFailsClosedOthersOpen(t *testing.T) {
	e := newEnv(t)
	e.global("stuck", "-intercept", "tool_call,turn_start,assistant_message", "-hang-intercept")
	h := e.start(func(o *Options) { o.InterceptTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	d := h.BeforeTool(ctx, agent.ToolCallInfo{ID: "1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
	if !d.Block || !strings.Contains(d.Reason, `extension "stuck"`) || !strings.Contains(d.Reason, "no answer within 300ms") {
		t.Fatalf("tool_call must fail closed: %+v", d)
	}
	if td := h.BeforeTurn(ctx, 1); td.Block {
		t.Fatalf("turn_start must fail open: %+v", td)
	}
	if ad := h.BeforeAssistantMessage(ctx, "x"); ad.Block || ad.ReplaceText != nil {
		t.Fatalf("assistant_message must fail open: %+v", ad)
	}
	if !strings.Contains(e.logOf("stuck"), "blocked (fail-closed)") || !strings.Contains(e.logOf("stuck"), "allowed (fail-open)") {
		t.Fatalf("log:\n%s", e.logOf("stuck"))
	}
}

func TestFaultToolTimeoutAndCancelSendToolCancel(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	writeExt(t, filepath.Join(GlobalRoot(e.home), "slowpoke"), "slowpoke", map[string]any{"timeout": 0.3}, "-tools", "slow", "-record", rec)
	h := e.start(nil)
	r := callTool(t, h, "slow", `{"text":"x","n":3600000}`)
	if !r.IsError || !strings.Contains(resultText(r), "timed out after 300ms") {
		t.Fatalf("timeout result %+v", r)
	}
	// Abort by the user.
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() {
		done <- toolNamed(h, "slow").Run(ctx, tools.Call{ID: "c2", Args: json.RawMessage(`{"text":"y","n":3600000}`), Progress: func(string) {}})
	}()
	eventually(t, "second call sent", func() bool {
		n := 0
		for _, f := range recorded(t, rec) {
			if f.Type == wire.TypeToolCall {
				n++
			}
		}
		return n == 2
	})
	cancel()
	r = <-done
	if !r.IsError || !strings.Contains(resultText(r), "cancelled") {
		t.Fatalf("cancel result %+v", r)
	}
	eventually(t, "two tool_cancel frames", func() bool {
		var calls, cancels []string
		for _, f := range recorded(t, rec) {
			switch f.Type {
			case wire.TypeToolCall:
				calls = append(calls, f.ID)
			case wire.TypeToolCancel:
				cancels = append(cancels, f.ID)
			}
		}
		return len(cancels) == 2 && slices.Equal(calls, cancels)
	})
	eventually(t, "extension saw the cancel", func() bool { return strings.Contains(e.logOf("slowpoke"), "cancelled tool_call-") })
}

func TestFaultGarbageAndHugeLines(t *testing.T) {
	e := newEnv(t)
	e.global("junk", "-tools", "echo", "-garbage", "200", "-huge", "17000000")
	e.global("big", "-huge", "15000000")
	h := e.start(nil)
	defer func() {
		if t.Failed() {
			l := e.logOf("junk")
			if len(l) > 3000 {
				l = l[:3000]
			}
			t.Log(l)
		}
	}()
	eventually(t, "huge line dropped and logged", func() bool {
		return strings.Contains(e.logOf("junk"), "dropped a line longer than 16777216 bytes")
	})
	if r := callTool(t, h, "echo", `{"text":"fine"}`); resultText(r) != "echo: fine" {
		t.Fatalf("after garbage: %+v", r)
	}
	log := e.logOf("junk")
	for _, want := range []string{"not a JSON object", "unknown frame type \"no_such_frame\"", "unknown or expired id \"never-sent\""} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	// A 15 MB line is a legal frame; its notify reaches the front cut
	// (MaxNotifyBytes), and the log whole.
	eventually(t, "big notify delivered", func() bool {
		return e.ui.count(func(u *recUI) int {
			n := 0
			for _, m := range u.notifies {
				if strings.HasPrefix(m, "big|info|xxxx") && len(m) <= len("big|info|")+MaxNotifyBytes && strings.HasSuffix(m, truncatedMark("big")) {
					n++
				}
			}
			return n
		}) == 1
	})
	if !strings.Contains(e.logOf("big"), "notify of 15000000 bytes was cut for the front; the whole text:\n"+strings.Repeat("x", 15000000)+"\n") {
		t.Errorf("the log of big lacks the whole notify")
	}
	eventually(t, "notify after the huge line", func() bool {
		return e.ui.count(func(u *recUI) int { return len(u.notifies) }) >= 3
	})
	if st := statusOf(h, "junk"); st.State != StateReady {
		t.Fatalf("junk: %+v", st)
	}
}

func TestFaultFloodDoesNotStallOthers(t *testing.T) {
	e := newEnv(t)
	hold := filepath.Join(t.TempDir(), "flood-done")
	e.global("loud", "-cmds", "flood,panel", "-flood-hold", hold)
	e.global("ok", "-tools", "echo")
	h := e.start(nil)
	if _, err := h.RunCommand(context.Background(), "panel", ""); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	type result struct {
		res CommandResult
		err error
	}
	flood := make(chan result, 1)
	go func() {
		res, err := h.RunCommand(context.Background(), "flood", "20000")
		flood <- result{res, err}
	}()
	// The other extension answers while loud floods and its command is
	// still running (it answers only once hold exists).
	eventually(t, "the flood under way", func() bool { return strings.HasPrefix(e.ui.lastRender(), "flood ") })
	for i := 0; i < 5; i++ {
		if r := callTool(t, h, "echo", `{"text":"x"}`); resultText(r) != "echo: x" {
			t.Fatalf("ok during flood: %+v", r)
		}
	}
	select {
	case r := <-flood:
		t.Fatalf("the flood command ended before its hold was lifted: %+v", r)
	default:
	}
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if r := <-flood; r.err != nil || r.res.Display != "flooded" {
		t.Fatalf("flood: %+v %v", r.res, r.err)
	}
	eventually(t, "flood logged", func() bool { return strings.Contains(e.logOf("loud"), "notify flood: dropped") })
	// Rate limited: at most the burst plus the rate for the time the flood
	// took (measured generously, to now) reached the UI.
	n := e.ui.count(func(u *recUI) int { return len(u.notifies) })
	if limit := notifyBurst + int(time.Since(start).Seconds()*notifyRate) + 1; n > limit {
		t.Fatalf("%d notifications reached the UI; the limit allows %d", n, limit)
	}
	eventually(t, "last render wins", func() bool { return e.ui.lastRender() == "flood 19999" })
}

func TestFaultClosesStdoutEarly(t *testing.T) {
	e := newEnv(t)
	e.global("quiet", "-tools", "echo", "-close-stdout")
	e.global("ok", "-tools", "ok")
	h := e.start(func(o *Options) { o.RestartBackoff = []time.Duration{} })
	eventually(t, "quiet failed", func() bool { return statusOf(h, "quiet").State == StateFailed })
	if st := statusOf(h, "quiet"); !strings.Contains(st.Reason, "closed its stdout") {
		t.Fatalf("status %+v", st)
	}
	eventually(t, "quiet killed", func() bool { return !strings.Contains(psList(), "-name quiet") })
	if statusOf(h, "ok").State != StateReady {
		t.Fatal("other extension affected")
	}
}

func TestFaultIgnoresShutdown(t *testing.T) {
	e := newEnv(t)
	e.global("stubborn", "-ignore-shutdown")
	e.global("lingers", "-ack-no-exit")
	e.global("ok", "-tools", "echo")
	h := e.start(nil)
	pid := statusOf(h, "stubborn").PID
	pid2 := statusOf(h, "lingers").PID
	done := make(chan struct{})
	go func() {
		h.Close(context.Background())
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("Close hung on an extension ignoring shutdown")
	}
	if proctest.Alive(pid) || proctest.Alive(pid2) {
		t.Fatal("holdouts still alive after Close")
	}
	if !strings.Contains(e.logOf("stubborn"), "sending SIGTERM") {
		t.Fatalf("log:\n%s", e.logOf("stubborn"))
	}
}

func TestFaultExecMissing(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(GlobalRoot(e.home), "ghost")
	writeExt(t, dir, "ghost", map[string]any{"exec": "./nope"})
	h := e.start(nil)
	if st := statusOf(h, "ghost"); st.State != StateFailed || !strings.Contains(st.Reason, "cannot start ./nope") {
		t.Fatalf("ghost: %+v", st)
	}
}

// The hello budget defaults to 60 s (a cold `go run .` fits) and the
// manifest's timeout overrides it for that extension alone.
func TestHelloBudgetManifestTimeoutOverrides(t *testing.T) {
	if d := NewHost(Options{}).o.HelloTimeout; d != 60*time.Second {
		t.Fatalf("default hello budget %s, want 60s", d)
	}
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "mute"), "mute", map[string]any{"timeout": 0.3}, "-nohello")
	h := e.start(func(o *Options) { o.HelloTimeout = time.Hour })
	// Start returned although the host's own budget is an hour.
	if st := statusOf(h, "mute"); st.State != StateFailed || !strings.Contains(st.Reason, "no hello within 300ms") {
		t.Fatalf("mute: %+v", st)
	}
}

// With Background, Start returns while an extension is still starting
// (shown as such), and a command of that extension waits for it.
func TestBackgroundStartCommandWaits(t *testing.T) {
	e := newEnv(t)
	gate := filepath.Join(t.TempDir(), "gate")
	if err := mkfifo(gate); err != nil {
		testenv.Skip(t, "mkfifo: %v", err)
	}
	e.global("slow", "-cmds", "insert", "-gate", gate)
	h := e.start(func(o *Options) { o.Background = true })
	if st := statusOf(h, "slow"); st.State != StateStarting {
		t.Fatalf("slow right after Start: %+v", st)
	}
	type result struct {
		r   CommandResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := h.RunCommand(context.Background(), "insert", "x")
		done <- result{r, err}
	}()
	releaseFifo(t, gate)
	got := <-done
	if got.err != nil || got.r.Insert != "inserted x" {
		t.Fatalf("command of a starting extension: %+v %v", got.r, got.err)
	}
	if st := statusOf(h, "slow"); st.State != StateReady {
		t.Fatalf("slow after its command: %+v", st)
	}
}

// A first frame that is a hello zot cannot read (capabilities as an
// object, an easy slip) fails the start at once with an error naming the
// field, instead of a skipped line and "no hello" when the budget ends.
func TestMalformedHelloFailsAtOnce(t *testing.T) {
	e := newEnv(t)
	e.global("broken", "-tools", "echo", "-hello-json", `{"type":"hello","name":"broken","version":"1.0.0","capabilities":{"tools":true}}`)
	e.global("fine", "-tools", "echo2")
	h := e.start(func(o *Options) { o.HelloTimeout = 20 * time.Second })
	st := statusOf(h, "broken")
	if st.State != StateFailed || !strings.Contains(st.Reason, `malformed hello: "capabilities" must be an array of strings, not an object`) {
		t.Fatalf("broken: %+v", st)
	}
	if st := statusOf(h, "fine"); st.State != StateReady {
		t.Fatalf("fine: %+v", st)
	}
}
