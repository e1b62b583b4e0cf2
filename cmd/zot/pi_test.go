package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/testenv"
)

// piRuntime is the source tree's pi runtime (extensions/pi/runtime),
// as $ZOT_PI_RUNTIME for a zot under test; it skips (testenv) without
// node or without the runtime's node_modules (make pi-runtime).
func piRuntime(t *testing.T) []string {
	t.Helper()
	testenv.NeedCommand(t, "node", "pi extensions")
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "extensions", "pi", "runtime")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "jiti")); err != nil {
		testenv.Skip(t, "the pi runtime's node_modules are not installed (make pi-runtime)")
	}
	return []string{extensions.EnvPiRuntime + "=" + dir}
}

// piTestdata is a pi extension of extensions/testdata/piext.
func piTestdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "extensions", "testdata", "piext", name)
}

// A pi extension (a .ts module, unmodified pi API) under zot rpc: its tool
// answers with its result and its onUpdate progress reaches the tool
// card; its tool_call handler blocks a command, which then never runs.
func TestRPCPiToolAndGuard(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("shout", map[string]any{"phrase": "hi"}),
		llmtest.TextReply("shouted"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
		llmtest.TextReply("refused"),
	)
	e.write("build/x", "x")
	p := e.startRPC(rt, "-e", piTestdata("gate.ts"))

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "shout hi"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), "HI!") {
		t.Fatalf("tool_result: %v (%v)\nstderr: %s", tr, types(frames), p.errb.String())
	}
	var progress []string
	for _, f := range frames {
		if f["type"] == "tool_progress" {
			progress = append(progress, fmt.Sprint(f["text"]))
		}
	}
	if !strings.Contains(strings.Join(progress, "|"), "warming up") {
		t.Fatalf("onUpdate did not reach the tool card: %q", progress)
	}

	p.send(map[string]any{"id": "2", "type": "prompt", "message": "clean"})
	frames = p.until(isType("done"))
	tr = find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "gate: rm -rf is not allowed here") {
		t.Fatalf("blocked call: %v\nstderr: %s", tr, p.errb.String())
	}
	if e.read("build/x") != "x" {
		t.Fatal("the blocked command ran")
	}
}
