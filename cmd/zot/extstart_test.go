package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

// fakeExt builds extensions/testdata/fakeext once per test binary.
func fakeExt(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/fakeext")
}

// installGlobalExt writes $ZOT_HOME/extensions/<name>/extension.json.
func (e *env) installGlobalExt(name string, manifest map[string]any) string {
	e.t.Helper()
	dir := filepath.Join(extensions.GlobalRoot(e.home), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		e.t.Fatal(err)
	}
	manifest["name"] = name
	b, _ := json.Marshal(manifest)
	if err := os.WriteFile(filepath.Join(dir, extensions.ManifestFile), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return dir
}

// An extension that has not said hello yet does not hold up zot rpc: the
// prompt runs (after the start wait, 2 s), and the model's call of that
// extension's tool waits for it instead of failing as "unknown tool".
func TestRPCSlowExtensionDoesNotBlockAndItsToolWaits(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("echo", map[string]any{"text": "hi"}),
		llmtest.TextReply("done."),
	)
	gate, release := proctest.Gate(t)
	e.installGlobalExt("slow", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "slow", "-tools", "echo", "-gate", gate}})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "use echo"})
	// The run reaches the tool call while the extension is still starting.
	frames := p.until(isType("tool_call"))
	if tc := find(frames, "tool_call"); tc["name"] != "echo" {
		t.Fatalf("tool_call: %v", tc)
	}
	release()
	frames = p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr["content"]), "echo: hi") {
		t.Fatalf("tool_result: %v\nframes: %v\nstderr: %s", tr, types(frames), p.errb.String())
	}
}

// An extension run as `go run .` with an empty build cache compiles
// first (the standard library too): it must become ready, and its tool
// must run, however long that takes within its hello budget.
func TestRPCGoRunExtensionColdCache(t *testing.T) {
	if testing.Short() {
		testenv.Skip(t, "cold compile")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		testenv.Skip(t, "no go")
	}
	e := newEnv(t,
		llmtest.ToolReply("gotool", map[string]any{}),
		llmtest.TextReply("done."),
	)
	// A cold compile of the standard library on a loaded 2-core machine
	// takes minutes: the manifest's timeout gives it the time (the
	// default budget is 60 s).
	dir := e.installGlobalExt("gorun", map[string]any{"exec": goBin, "args": []string{"run", "."}, "timeout": 900})
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module gorunext\n\ngo 1.21\n")
	write("main.go", goRunExt)
	p := e.startRPC([]string{"GOCACHE=" + t.TempDir(), "GOTOOLCHAIN=local", "GOFLAGS=-mod=mod"})
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "use gotool"})
	frames := p.untilWithin(15*time.Minute, isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr["content"]), "compiled and running") {
		t.Fatalf("tool_result: %v\nframes: %v\nstderr: %s", tr, types(frames), p.errb.String())
	}
}

// goRunExt is a standard-library-only extension speaking the protocol.
const goRunExt = `package main

import (
	"bufio"
	"encoding/json"
	"os"
)

func main() {
	out := json.NewEncoder(os.Stdout)
	out.Encode(map[string]any{"type": "hello", "name": "gorun", "version": "0.1.0", "capabilities": []string{"tools"}})
	out.Encode(map[string]any{"type": "register_tool", "name": "gotool", "description": "says hi", "schema": map[string]any{"type": "object"}})
	out.Encode(map[string]any{"type": "ready"})
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var f map[string]any
		if json.Unmarshal(sc.Bytes(), &f) != nil {
			continue
		}
		switch f["type"] {
		case "tool_call":
			out.Encode(map[string]any{"type": "tool_result", "id": f["id"], "content": []any{map[string]any{"type": "text", "text": "compiled and running"}}})
		case "shutdown":
			out.Encode(map[string]any{"type": "shutdown_ack"})
			return
		}
	}
}
`

// An assistant_message intercept answering replace_text "" passes the text
// through (zot rewrites only on a non-empty value); a non-empty one
// rewrites.
func TestRPCEmptyReplaceTextPassesThrough(t *testing.T) {
	// The tool call first: it waits for both extensions to be up, so the
	// answers after it meet their intercepts.
	e := newEnv(t, llmtest.ToolReply("echo", map[string]any{"text": "x"}), llmtest.TextReply("Hello world"), llmtest.TextReply("Hello again"))
	e.installGlobalExt("eraser", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "eraser", "-tools", "echo", "-intercept", "assistant_message", "-replace", "Hello world="}})
	e.installGlobalExt("rewriter", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "rewriter", "-intercept", "assistant_message", "-replace", "again=there"}})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	var am map[string]any
	for _, f := range p.until(isType("done")) {
		if f["type"] == "assistant_message" {
			am = f // the last: the answer after the tool
		}
	}
	if am == nil || !strings.Contains(toJSON(am), "Hello world") {
		t.Fatalf("an empty replace_text erased the answer: %v", am)
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
	am = find(p.until(isType("done")), "assistant_message")
	if am == nil || !strings.Contains(toJSON(am), "Hello there") {
		t.Fatalf("a non-empty replace_text did not rewrite: %v", am)
	}
}

// hello_ack names the provider and model in zot rpc without --provider or
// --model (the defaults).
func TestRPCHelloAckNamesDefaultModel(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("echo", map[string]any{"text": "x"}), llmtest.TextReply("ok"))
	rec := filepath.Join(t.TempDir(), "received")
	e.installGlobalExt("rec", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "rec", "-tools", "echo", "-record", rec}})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	p.until(isType("done")) // the tool ran: the extension is up
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
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
