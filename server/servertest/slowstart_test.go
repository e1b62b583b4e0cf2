package servertest_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/server/servertest"
)

var (
	fakeExtOnce sync.Once
	fakeExtBin  string
	fakeExtErr  error
)

// fakeExt builds extensions/testdata/fakeext once per test binary.
func fakeExt(t *testing.T) string {
	t.Helper()
	fakeExtOnce.Do(func() {
		fakeExtBin = filepath.Join(filepath.Dir(zotBin), "fakeext")
		fakeExtErr = servertest.Build("./extensions/testdata/fakeext", fakeExtBin, false)
	})
	if fakeExtErr != nil {
		t.Fatalf("building fakeext: %v", fakeExtErr)
	}
	return fakeExtBin
}

// An extension that has not said hello yet shows as "starting" in the
// editor, holds up a prompt no longer than the start wait (2 s), and its
// tool and command, used while it starts, wait for it instead of being
// unknown.
func TestSlowExtensionStartsInBackground(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("echo", map[string]any{"text": "hi"}),
		llmtest.TextReply("done."),
	)
	path, release := proctest.Gate(t)
	dir := filepath.Join(e.home, "dev", "slow")
	os.MkdirAll(dir, 0o755)
	m, _ := json.Marshal(map[string]any{"name": "slow", "exec": fakeExt(t),
		"args": []string{"-name", "slow", "-tools", "echo", "-cmds", "insert", "-gate", path}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	waitExt(ed, "slow", "starting")
	var l struct {
		Loading    bool `json:"loading"`
		Extensions []struct {
			Name, State string
		} `json:"extensions"`
	}
	if ed.MustCall("zot/extensions", nil, &l); !l.Loading {
		t.Fatal("zot/extensions: not loading while an extension starts")
	}

	run := ed.Prompt("use echo")
	ed.WaitEvent(run.RunID, "tool_call") // the run got this far while the extension starts
	cmd := ed.Go("zot/command", map[string]any{"name": "insert", "args": "x"})
	ed.MustCall("zot/state", nil, nil) // zot/command has been taken up (ordered dispatch)
	release()

	evs := ed.WaitDone(run.RunID)
	tr := servertest.Find(evs, "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(servertest.ResultText(tr), "echo: hi") {
		t.Fatalf("tool_result: %v\nevents: %s", tr, servertest.Types(evs))
	}
	got := ed.Await(cmd, "zot/command")
	var r commandResult
	if got.Error != nil || json.Unmarshal(got.Result, &r) != nil || r.Action != "insert" || r.Insert != "inserted x" {
		t.Fatalf("command of a starting extension: %+v %s", got.Error, got.Result)
	}
	waitExt(ed, "slow", "loaded")
	l.Loading = false // (omitted when false)
	if ed.MustCall("zot/extensions", nil, &l); l.Loading {
		t.Fatalf("zot/extensions: still loading with every extension started: %+v", l)
	}
}

// hello_ack names the provider and model in zot lsp without --provider or
// --model, even before the runtime is built.
func TestHelloAckNamesDefaultModel(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "received")
	dir := filepath.Join(e.home, "dev", "rec")
	os.MkdirAll(dir, 0o755)
	m, _ := json.Marshal(map[string]any{"name": "rec", "exec": fakeExt(t), "args": []string{"-name", "rec", "-record", rec}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	waitExt(ed, "rec", "loaded")
	var b []byte
	ed.Wait("the extension to record hello_ack", func() bool {
		b, _ = os.ReadFile(rec)
		b = b[:bytes.LastIndexByte(b, '\n')+1] // whole lines only: the extension may be writing
		return strings.Contains(string(b), `"hello_ack"`)
	})
	for _, line := range strings.Split(string(b), "\n") {
		var f map[string]any
		if json.Unmarshal([]byte(line), &f) == nil && f["type"] == "hello_ack" {
			if f["provider"] != "anthropic" || f["model"] == nil || f["model"] == "" {
				t.Fatalf("hello_ack: %s", line)
			}
			return
		}
	}
	t.Fatalf("no hello_ack received: %s", b)
}

// Each extension's command answers without waiting for another's start:
// zot/command of one that has just registered answers while another is
// still held before its hello; and one that registers and never sends
// ready (zot's own clock example) answers after zot's silence rule, not
// after its hello budget. zot/commands lists both then.
func TestCommandsDoNotWaitForOtherExtensions(t *testing.T) {
	e := newEnv(t)
	clockGate, releaseClock := proctest.Gate(t)
	helloGate, releaseHello := proctest.Gate(t)
	ext := func(name string, args ...string) string {
		dir := filepath.Join(e.home, "dev", name)
		os.MkdirAll(dir, 0o755)
		m, _ := json.Marshal(map[string]any{"name": name, "exec": fakeExt(t), "args": append([]string{"-name", name}, args...)})
		if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	clock := ext("clock", "-cmds", "display", "-noready", "-gate", clockGate)
	hello := ext("hello", "-cmds", "insert", "-gate", helloGate)
	ed := servertest.Start(t, e.config("--ext", clock, "--ext", hello))
	ed.Initialize(nil)

	cmd := ed.Go("zot/command", map[string]any{"name": "insert", "args": "x"})
	ed.MustCall("zot/state", nil, nil) // zot/command has been taken up (ordered dispatch)
	releaseHello()
	got := ed.Await(cmd, "zot/command insert")
	var r commandResult
	if got.Error != nil || json.Unmarshal(got.Result, &r) != nil || r.Insert != "inserted x" {
		t.Fatalf("/insert beside a starting extension: %+v %s", got.Error, got.Result)
	}
	// The clock was held before its hello all along (its gate opens only
	// now): /insert did not wait for it.
	releaseClock()
	got = ed.Await(ed.Go("zot/command", map[string]any{"name": "display", "args": "y"}), "zot/command display")
	if got.Error != nil || json.Unmarshal(got.Result, &r) != nil || r.Display != "shown y" {
		t.Fatalf("/display of an extension that never sends ready: %+v %s", got.Error, got.Result)
	}
	var l struct {
		Commands []struct{ Name string } `json:"commands"`
	}
	ed.MustCall("zot/commands", nil, &l)
	var names []string
	for _, c := range l.Commands {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, "insert") || !slices.Contains(names, "display") {
		t.Fatalf("zot/commands: %v", names)
	}
}
