package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/proctest"
)

// rewriteArgs rewrites an extension's manifest args (a "save").
func rewriteArgs(t testing.TB, dir, name string, args ...string) {
	t.Helper()
	writeExt(t, dir, name, nil, args...)
}

func TestHotReloadOnSaveOnlyThatExtension(t *testing.T) {
	e := newEnv(t)
	dir := e.global("hot", "-tools", "echo", "-prefix", "v1")
	e.global("steady", "-tools", "steady")
	h := e.start(func(o *Options) { o.Watch = true })
	steadyPID := statusOf(h, "steady").PID
	hotPID := statusOf(h, "hot").PID
	if r := callTool(t, h, "echo", `{"text":"a"}`); resultText(r) != "v1: a" {
		t.Fatalf("v1: %+v", r)
	}
	old := toolNamed(h, "echo") // a tool object from before the reload
	rewriteArgs(t, dir, "hot", "-tools", "echo", "-prefix", "v2")
	eventually(t, "v2 callable", func() bool {
		st := statusOf(h, "hot")
		return st.State == StateReady && st.PID != hotPID
	})
	if r := callTool(t, h, "echo", `{"text":"b"}`); resultText(r) != "v2: b" {
		t.Fatalf("after save: %+v", r)
	}
	if r := old.Run(context.Background(), tools.Call{Args: json.RawMessage(`{"text":"c"}`), Progress: func(string) {}}); resultText(r) != "v2: c" {
		t.Fatalf("stale tool object: %+v", r)
	}
	if statusOf(h, "steady").PID != steadyPID {
		t.Fatal("an unchanged extension was restarted")
	}
	// An extension writing its own state file is not reloaded. The barrier:
	// a new extension written after the data file loads, so the watcher has
	// seen the data file's write (fsnotify delivers in order) and a
	// reconciliation has run since.
	pid := statusOf(h, "hot").PID
	os.WriteFile(filepath.Join(dir, "todos.json"), []byte("[]"), 0o644)
	e.global("marker", "-tools", "marker")
	eventually(t, "the extension written after the data file to load", func() bool { return statusOf(h, "marker").State == StateReady })
	if st := statusOf(h, "hot"); st.PID != pid || st.State != StateReady {
		t.Fatalf("a data file write reloaded the extension: pid %d → %+v", pid, st)
	}
}

func TestHotReloadNewAndRemovedDirs(t *testing.T) {
	e := newEnv(t)
	e.global("first", "-tools", "one")
	h := e.start(func(o *Options) { o.Watch = true })
	var changedBefore int
	e.ui.count(func(u *recUI) int { changedBefore = u.changed; return 0 })
	dir := e.global("second", "-tools", "echo")
	eventually(t, "new extension loads", func() bool { return toolNamed(h, "echo") != nil })
	if r := callTool(t, h, "echo", `{"text":"x"}`); r.IsError {
		t.Fatalf("two: %+v", r)
	}
	pid := statusOf(h, "second").PID
	os.RemoveAll(dir)
	eventually(t, "removed extension stops", func() bool { return toolNamed(h, "echo") == nil && statusOf(h, "second").Name == "" })
	eventually(t, "process gone", func() bool { return !proctest.Alive(pid) })
	if e.ui.count(func(u *recUI) int { return u.changed }) <= changedBefore {
		t.Fatal("no change callback")
	}
	// A project root that did not exist at start: noticed, and asked about.
	e.project("late", "-tools", "echo")
	eventually(t, "new project extension discovered", func() bool { return statusOf(h, "late").State == StateUntrusted })
}

func TestReloadWaitsForInFlightCall(t *testing.T) {
	e := newEnv(t)
	e.global("busy", "-tools", "slow")
	h := e.start(nil)
	done := make(chan tools.Result, 1)
	go func() { done <- callTool(t, h, "slow", `{"text":"x","n":700}`) }()
	eventually(t, "call in flight", func() bool {
		h.mu.Lock()
		s := h.slots[0]
		h.mu.Unlock()
		s.mu.Lock()
		p := s.cur
		s.mu.Unlock()
		if p == nil {
			return false
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.inflight == 1
	})
	pid := statusOf(h, "busy").PID
	if err := h.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Had the reload stopped the old process mid-call, the call would
	// have failed with "was stopped".
	select {
	case r := <-done:
		if r.IsError || resultText(r) != "slow done: x" {
			t.Fatalf("the in-flight call was disturbed by the reload: %+v", r)
		}
	case <-time.After(wait):
		t.Fatal("the in-flight call never finished")
	}
	if st := statusOf(h, "busy"); st.PID == pid || st.State != StateReady {
		t.Fatalf("not reloaded: %+v", st)
	}
}

func TestReloadResetsCrashesAndPicksUpChanges(t *testing.T) {
	e := newEnv(t)
	dir := e.global("flaky", "-crash-start")
	h := e.start(nil)
	eventually(t, "failed", func() bool { return statusOf(h, "flaky").State == StateFailed })
	rewriteArgs(t, dir, "flaky", "-tools", "echo")
	if err := h.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(h, "flaky"); st.State != StateReady || st.Crashes != 0 {
		t.Fatalf("after reload: %+v", st)
	}
}

func TestTrustProjectExtensions(t *testing.T) {
	e := newEnv(t)
	dir := e.project("local", "-tools", "echo")
	e.global("glob", "-tools", "gt")
	h := e.start(func(o *Options) { o.Watch = true })
	st := statusOf(h, "local")
	if st.State != StateUntrusted || !strings.Contains(st.Reason, "zot ext trust local") || st.PID != 0 {
		t.Fatalf("untrusted: %+v", st)
	}
	if toolNamed(h, "echo") != nil {
		t.Fatal("untrusted extension offers tools")
	}
	if statusOf(h, "glob").State != StateReady {
		t.Fatal("global extensions need no trust")
	}
	if err := h.Trust("local"); err != nil {
		t.Fatal(err)
	}
	if st := statusOf(h, "local"); st.State != StateReady {
		t.Fatalf("trusted: %+v", st)
	}
	b, _ := os.ReadFile(filepath.Join(e.home, TrustFile))
	if !strings.Contains(string(b), workspaceKey(e.cwd)) || !strings.Contains(string(b), `"local"`) {
		t.Fatalf("trust.json: %s", b)
	}
	// A changed manifest asks again.
	rewriteArgs(t, dir, "local", "-tools", "echo", "-prefix", "changed")
	eventually(t, "untrusted again", func() bool { return statusOf(h, "local").State == StateUntrusted })
	// Enabling/disabling does not change the hash.
	h2Env := newEnv(t)
	d2 := h2Env.project("x", "-tools", "echo")
	c := Discover(h2Env.cwd, h2Env.home, nil)[0]
	h1, err := TrustHash(c.Dir, c.Manifest, c.Raw)
	if err != nil || h1 == "" {
		t.Fatalf("trust hash: %q, %v", h1, err)
	}
	if err := SetEnabled(d2, false); err != nil {
		t.Fatal(err)
	}
	c = Discover(h2Env.cwd, h2Env.home, nil)[0]
	if c.Manifest.IsEnabled() {
		t.Fatal("SetEnabled(false) left the manifest enabled")
	}
	h2, err := TrustHash(c.Dir, c.Manifest, c.Raw)
	if err != nil || h1 != h2 {
		t.Fatalf("enable/disable changed the trust hash: %q → %q (%v)", h1, h2, err)
	}
}

func TestAskTrust(t *testing.T) {
	e := newEnv(t)
	e.project("yes", "-tools", "y")
	e.project("no", "-tools", "n")
	asked := make(chan string, 4)
	h := e.start(func(o *Options) {
		o.AskTrust = func(ctx context.Context, st Status) bool {
			asked <- st.Name + ":" + st.State
			return st.Name == "yes"
		}
	})
	eventually(t, "yes trusted and started", func() bool { return statusOf(h, "yes").State == StateReady })
	// "no" is untrusted before its answer too: wait for the answer's mark.
	eventually(t, "no declined", func() bool { return strings.Contains(statusOf(h, "no").Reason, "declined when asked") })
	if st := statusOf(h, "no"); st.State != StateUntrusted || st.PID != 0 || toolNamed(h, "n") != nil {
		t.Fatalf("no: %+v", st)
	}
	got := map[string]bool{}
	for len(got) < 2 {
		got[<-asked] = true
	}
	if !got["yes:untrusted"] || !got["no:untrusted"] {
		t.Fatalf("asked %v", got)
	}
	// Asked once per hash: a reload does not ask again. Close waits for the
	// host's background work (where questions are asked), so after it every
	// question a reload would have asked is in the channel.
	if err := h.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.Close(context.Background())
	select {
	case a := <-asked:
		t.Fatalf("asked again: %s", a)
	default:
	}
}
