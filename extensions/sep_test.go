package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/sep/schema"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/testenv"
)

// sepext builds testdata/sepext (a dependency-free SEP extension) once.
func sepext(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Dir(fakeBin), "github.com/zot-editors/zot/extensions/testdata/sepext")
}

// writeSEP writes dir/extension.toml running sepext as name; env is
// [run.env] (SEPEXT_* switches), out the file sepext notes into.
func writeSEP(t *testing.T, dir, name, out string, env map[string]string, extra string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "name = %q\nversion = \"0.1.0\"\nprotocol = 1\n%s\n[run]\ncommand = %q\n[run.env]\nSEPEXT_NAME = %q\nSEPEXT_OUT = %q\n", name, extra, sepext(t), name, out)
	for k, v := range env {
		fmt.Fprintf(&sb, "%s = %q\n", k, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// recordSEP records every SEP session of the test (EnvSEPTrace) and,
// once the host is closed (call it before e.start), checks every message
// the host sent against zot's SEP schemas, and that the sessions used the
// methods in want.
func recordSEP(t *testing.T, want ...string) {
	dir := t.TempDir()
	t.Setenv(EnvSEPTrace, dir)
	t.Cleanup(func() {
		files, _ := filepath.Glob(filepath.Join(dir, "*.ndjson"))
		all := map[string]int{}
		for _, path := range files {
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			sent, errs := schema.CheckTrace(f)
			f.Close()
			for _, err := range errs {
				t.Errorf("%s: %v", filepath.Base(path), err)
			}
			for k, n := range sent {
				all[k] += n
			}
		}
		for _, w := range want {
			if all[w] == 0 {
				t.Errorf("no %s in the recorded sessions (%v)", w, all)
			}
		}
	})
}

// notes reads the lines sepext appended to out.
func notes(out string) []string {
	return strings.Split(strings.TrimSpace(string(readWholeLines(out))), "\n")
}

func noted(out, line string) func() bool {
	return func() bool {
		for _, l := range notes(out) {
			if l == line || strings.HasPrefix(l, line) {
				return true
			}
		}
		return false
	}
}

func countNoted(out, prefix string) int {
	n := 0
	for _, l := range notes(out) {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// A SEP extension found in SEP's own project directory runs through the
// host: its tool answers (the progress it streams reaches the caller),
// its command runs, `ext list`-style status shows it, and the env of its
// manifest is expanded from the host's.
func TestSEPToolCommandAndProgress(t *testing.T) {
	recordSEP(t, "initialize", "tool/execute", "command/execute", "hook", "shutdown")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	t.Setenv("SEPEXT_TEST_SWITCH", "gate")
	writeSEP(t, filepath.Join(e.home, "ext", "alpha"), "alpha", out, map[string]string{"SEPEXT_HOOK": "${env:SEPEXT_TEST_SWITCH}"}, "")
	h := e.start(func(o *Options) { o.ExtPaths = []string{filepath.Join(e.home, "ext", "alpha")} })
	if st := statusOf(h, "alpha"); st.State != StateReady {
		t.Fatalf("status %+v; log:\n%s", st, e.logOf("alpha"))
	}
	// log notifications and stderr land in the extension's log (zot ext logs).
	if l := e.logOf("alpha"); !strings.Contains(l, "[info] sepext says hello {\"pid\":") || !strings.Contains(l, "sepext started") {
		t.Fatalf("log:\n%s", l)
	}
	tool := toolNamed(h, "alpha_say")
	if tool == nil {
		t.Fatalf("no alpha_say tool; log:\n%s", e.logOf("alpha"))
	}
	var mu sync.Mutex
	var progress []string
	r := tool.Run(context.Background(), tools.Call{ID: "c1", Args: json.RawMessage(`{"phrase":"hi"}`), Progress: func(s string) {
		mu.Lock()
		progress = append(progress, s)
		mu.Unlock()
	}})
	if got := resultText(r); got != "said: hi" || r.IsError {
		t.Fatalf("result %q (error %v)", got, r.IsError)
	}
	mu.Lock()
	if len(progress) != 1 || progress[0] != "halfway (50%)" {
		t.Errorf("progress %q, want [halfway (50%%)]", progress)
	}
	mu.Unlock()
	h.SetActions(fakeActions{})
	res, err := h.RunCommand(context.Background(), "alpha-note", "")
	if err != nil || res.Display != "noted" {
		t.Fatalf("command: %+v, %v", res, err)
	}
	// ${env:VAR} reached the process: the gate is on.
	d := h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "c2", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf /"}`)})
	if !d.Block {
		t.Fatalf("the gate (switched on through ${env:…}) let rm -rf through without a UI")
	}
}

// The permission gate asks through the host's dialog seam and blocks or
// allows on the answer.
func TestSEPGateAsksAndBlocksOrAllows(t *testing.T) {
	recordSEP(t, "hook", "reply:ui/request")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(SEPProjectRoot(e.cwd), "gate"), "gate", out, map[string]string{"SEPEXT_HOOK": "gate"}, "")
	allow := make(chan bool, 2)
	ui := &askUI{caps: wire.UICapabilities{Confirm: true}}
	ui.answer = func(ctx context.Context, req UIRequest) UIAnswer { return UIAnswer{Confirmed: <-allow} }
	var asked sync.Once
	trustAsked := false
	h := e.start(func(o *Options) {
		o.UI = ui
		// A project extension (.smooth/extensions too) runs only once trusted.
		o.AskTrust = func(ctx context.Context, st Status) bool {
			asked.Do(func() { trustAsked = st.Name == "gate" })
			return true
		}
	})
	eventually(t, "the gate running", func() bool { return statusOf(h, "gate").State == StateReady })
	if !trustAsked {
		t.Fatal("the project SEP extension ran without a trust question")
	}
	call := agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf build"}`)}
	allow <- false
	if d := h.BeforeTool(context.Background(), call); !d.Block || !strings.Contains(d.Reason, "said no") {
		t.Fatalf("refused: %+v; log:\n%s", d, e.logOf("gate"))
	}
	allow <- true
	if d := h.BeforeTool(context.Background(), call); d.Block {
		t.Fatalf("allowed: %+v", d)
	}
	ui.mu2.Lock()
	n := len(ui.asked)
	kind := ui.asked[0].Kind
	ui.mu2.Unlock()
	if n != 2 || kind != wire.UIConfirm {
		t.Fatalf("asked %d times, kind %q", n, kind)
	}
	if d := h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "c3", Name: "read", Args: json.RawMessage(`{"path":"x"}`)}); d.Block {
		t.Fatalf("a harmless call was blocked: %+v", d)
	}
}

// A tool_call hook that never answers blocks the call when the manifest's
// hook_timeout_ms runs out (fail closed), naming the extension.
func TestSEPHungToolCallHookFailsClosed(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "hang"), "hang", out, map[string]string{"SEPEXT_HOOK": "hang"}, "[hook_timeout_ms]\ntool_call = 300")
	h := e.start(nil)
	d := h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"ls"}`)})
	if !d.Block || !strings.Contains(d.Reason, `"hang"`) || !strings.Contains(d.Reason, "300ms") {
		t.Fatalf("decision %+v", d)
	}
	if !noted(out, "hang hook hangs")() {
		t.Fatalf("the hook never reached the extension: %q", notes(out))
	}
}

// A crashing SEP extension is restarted, and its kv values survive.
func TestSEPCrashRestartsAndKVSurvives(t *testing.T) {
	recordSEP(t, "reply:kv/set", "reply:kv/get")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "kv"), "kv", out, nil, "")
	h := e.start(nil)
	if r := callTool(t, h, "kv_kv", `{"value":"blue"}`); resultText(r) != "stored" {
		t.Fatalf("set: %q", resultText(r))
	}
	r := callTool(t, h, "kv_crash", `{}`)
	if !r.IsError {
		t.Fatalf("a crash mid-call is not an error: %q", resultText(r))
	}
	// Ready, and its tools in the host's registry again (rebuilt just after
	// the restarted process registered them).
	eventually(t, "a restart", func() bool {
		return countNoted(out, "kv started") == 2 && statusOf(h, "kv").State == StateReady && toolNamed(h, "kv_kv") != nil
	})
	if r := callTool(t, h, "kv_kv", `{}`); resultText(r) != "recalled: blue" {
		t.Fatalf("after restart: %q", resultText(r))
	}
	b, err := os.ReadFile(filepath.Join(e.home, "extension-data", "kv", "kv.json"))
	if err != nil || !strings.Contains(string(b), "blue") {
		t.Fatalf("store under $ZOT_HOME: %q, %v", b, err)
	}
}

// bus/publish reaches the other SEP extension as bus/event, not the
// publisher.
func TestSEPBusReachesOtherExtension(t *testing.T) {
	recordSEP(t, "event")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "pub"), "pub", out, nil, "")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "sub"), "sub", out, nil, "")
	h := e.start(nil)
	if r := callTool(t, h, "pub_publish", `{}`); resultText(r) != "published" {
		t.Fatalf("publish: %q", resultText(r))
	}
	eventually(t, "bus/event at sub", noted(out, `sub bus greeting from pub {"from":"pub"}`))
	if countNoted(out, "pub bus") != 0 {
		t.Fatalf("the publisher got its own message: %q", notes(out))
	}
}

// A session mutation from an event's context is refused with -32003, and
// the turn goes on; from a command's context it goes through.
func TestSEPEventTierMutationRefused(t *testing.T) {
	recordSEP(t, "event", "error reply")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "ev"), "ev", out, map[string]string{"SEPEXT_EVENTMUTATE": "1"}, "")
	h := e.start(nil)
	h.SetActions(fakeActions{})
	h.Observe(agent.Lifecycle{Event: wire.EventTurnStart, Step: 1})
	eventually(t, "the refusal", noted(out, "ev cv "))
	if !noted(out, "ev cv -32003")() {
		t.Fatalf("notes %q, want cv -32003", notes(out))
	}
}

// An extension that stops answering pings is treated as crashed and
// restarted.
func TestSEPMissedPingsRestart(t *testing.T) {
	recordSEP(t, "ping")
	t.Setenv(EnvSEPPing, "50ms")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "deaf"), "deaf", out, map[string]string{"SEPEXT_NOPING": "1"}, "")
	e.start(nil)
	eventually(t, "a restart after missed pings", func() bool { return countNoted(out, "deaf started") >= 2 })
	if !strings.Contains(e.logOf("deaf"), "no answer to two pings") {
		t.Fatalf("log:\n%s", e.logOf("deaf"))
	}
}

// toolActions is a front's Actions with a fixed tool list; it records
// what set_active_tools asked for.
type toolActions struct {
	fakeActions
	mu     sync.Mutex
	active []string
}

func (a *toolActions) Tools() []wire.ToolInfo {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []wire.ToolInfo
	for _, n := range []string{"read", "bash", "nar_say"} {
		on := a.active == nil || slices.Contains(a.active, n)
		out = append(out, wire.ToolInfo{Name: n, Active: on})
	}
	return out
}

func (a *toolActions) SetActiveTools(names []string) error {
	a.mu.Lock()
	a.active = names
	a.mu.Unlock()
	return nil
}

// tools/set_active is clamped to the tools that exist here: a name the
// user did not enable is dropped, never added.
func TestSEPSetActiveClamped(t *testing.T) {
	recordSEP(t, "reply:tools/set_active")
	e := newEnv(t)
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "nar"), "nar", filepath.Join(e.home, "notes"), nil, "")
	h := e.start(nil)
	act := &toolActions{}
	h.SetActions(act)
	r := callTool(t, h, "nar_narrow", `{}`)
	if resultText(r) != `active: {"active":["read","nar_say"]}` {
		t.Fatalf("result %q", resultText(r))
	}
	act.mu.Lock()
	defer act.mu.Unlock()
	if strings.Join(act.active, ",") != "read,nar_say" {
		t.Fatalf("set_active_tools got %v", act.active)
	}
}

// Saving extension.toml reloads a SEP extension like any other: a new
// process with the new manifest (here the gate switched on), and the
// host's trace of both sessions still validates.
func TestSEPHotReloadOnManifestSave(t *testing.T) {
	recordSEP(t, "initialize", "shutdown")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	dir := filepath.Join(GlobalRoot(e.home), "hot")
	writeSEP(t, dir, "hot", out, nil, "")
	h := e.start(func(o *Options) { o.Watch = true })
	call := agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf x"}`)}
	if d := h.BeforeTool(context.Background(), call); d.Block {
		t.Fatalf("blocked before the gate was on: %+v", d)
	}
	pid := statusOf(h, "hot").PID
	writeSEP(t, dir, "hot", out, map[string]string{"SEPEXT_HOOK": "gate"}, "")
	eventually(t, "reloaded", func() bool { st := statusOf(h, "hot"); return st.State == StateReady && st.PID != pid })
	if d := h.BeforeTool(context.Background(), call); !d.Block {
		t.Fatalf("the reloaded gate (no UI to ask) let it through: %+v", d)
	}
}

// The bus crosses wires: a SEP extension's bus/publish reaches a zot
// extension that negotiated "bus" (bus_event), and a zot extension's
// bus_publish reaches a SEP one (event bus/event).
func TestBusAcrossWires(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	rec := filepath.Join(e.home, "rec")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "sep"), "sep", out, nil, "")
	e.global("vone", "-tools", "buspub", "-caps", "bus", "-record", rec)
	h := e.start(nil)
	if r := callTool(t, h, "sep_publish", `{}`); resultText(r) != "published" {
		t.Fatalf("publish: %q", resultText(r))
	}
	eventually(t, "bus_event at the zot extension", func() bool {
		for _, f := range recorded(t, rec) {
			if f.Type == wire.TypeBusEvent && f.Name == "sep" && f.Key == "greeting" && string(f.Data) == `{"from":"sep"}` {
				return true
			}
		}
		return false
	})
	if r := callTool(t, h, "buspub", `{"text":"news"}`); resultText(r) != "published" {
		t.Fatalf("v1 publish: %q", resultText(r))
	}
	eventually(t, "bus/event at the SEP extension", noted(out, `sep bus news from vone {"from":"vone"}`))
}
