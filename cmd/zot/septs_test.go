package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// sepTSDir is extensions/testdata/sep-ts: zot's own TypeScript SEP
// extensions (hello, permission-gate, plan-mode, todo) and the
// dependency-free echo, run as a user runs them: `node --import tsx`,
// the runner pinned in its lock (make sep-ts-deps).
func sepTSDir(t *testing.T) string {
	t.Helper()
	testenv.NeedCommand(t, "node", "the TypeScript SEP extensions")
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "extensions", "testdata", "sep-ts")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "tsx")); err != nil {
		testenv.Skip(t, "the TypeScript runner is not installed: run make sep-ts-deps")
	}
	return dir
}

// The TypeScript SEP extensions under zot rpc with the scripted model:
// hello's tool answers and its progress reaches the tool card; echo's
// tool, command and completion answer; the permission gate asks the
// client and blocks, then allows; /plan on narrows the model's tools and
// blocks a write; todo's tools draw its widget and clear asks first.
func TestRPCTypeScriptSEPExtensions(t *testing.T) {
	dir := sepTSDir(t)
	e := newEnv(t,
		llmtest.ToolReply("greet", map[string]any{"name": "Ada"}), llmtest.TextReply("greeted"),
		llmtest.ToolReply("say", map[string]any{"phrase": "ping"}), llmtest.TextReply("said"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}), llmtest.TextReply("refused"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}), llmtest.TextReply("removed"),
		llmtest.ToolReply("write", map[string]any{"path": "plan.txt", "content": "x"}), llmtest.TextReply("planned"),
		llmtest.ToolReply("todo_add", map[string]any{"text": "milk"}), llmtest.TextReply("added"),
		llmtest.ToolReply("todo_clear", map[string]any{}), llmtest.TextReply("cleared"),
	)
	e.write("build/x", "x")
	var args []string
	for _, name := range []string{"hello", "echo", "permission-gate", "plan-mode", "todo"} {
		args = append(args, "--ext", filepath.Join(dir, name))
	}
	// A prompt waits for the extensions still starting (a cold tsx start
	// under load takes seconds), so the gate guards the first bash call.
	p := e.startRPC([]string{"ZOT_EXT_START_WAIT=5m"}, args...)
	n := 0
	prompt := func(text string) []map[string]any {
		t.Helper()
		n++
		p.send(map[string]any{"id": fmt.Sprint("p", n), "type": "prompt", "message": text})
		return p.until(isType("done"))
	}
	result := func(frames []map[string]any) string {
		t.Helper()
		tr := find(frames, "tool_result")
		if tr == nil {
			t.Fatalf("no tool_result in %v\nstderr: %s", types(frames), p.errb.String())
		}
		return toJSON(tr)
	}

	frames := prompt("greet Ada")
	if r := result(frames); !strings.Contains(r, "Hello, Ada!") {
		t.Fatalf("hello: %s", r)
	}
	if pr := find(frames, "tool_progress"); pr == nil || pr["text"] != "greeting Ada (50%)" {
		t.Fatalf("hello's progress on the tool card: %v", pr)
	}
	if r := result(prompt("say ping")); !strings.Contains(r, `"text":"ping"`) {
		t.Fatalf("echo: %s", r)
	}
	p.send(map[string]any{"id": "c1", "type": "command", "name": "echo-cmd", "args": "hi"})
	if r := p.until(isType("response")); toJSON(r[len(r)-1]["data"]) != `{"action":"display","display":"ran echo-cmd hi","extension":"echo"}` {
		t.Fatalf("echo-cmd: %v", r[len(r)-1])
	}
	p.send(map[string]any{"id": "c2", "type": "complete_command", "name": "echo-cmd", "args": "ab"})
	if r := p.until(isType("response")); !strings.Contains(toJSON(r[len(r)-1]["data"]), `"value":"ab-done"`) {
		t.Fatalf("echo-cmd completion: %v", r[len(r)-1])
	}

	// The gate asks; no blocks, yes allows.
	gate := func(allow bool) []map[string]any {
		t.Helper()
		frames := p.until(isType("ext_ui_request"))
		req := frames[len(frames)-1]
		if req["extension"] != "permission-gate" || req["kind"] != "confirm" || !strings.Contains(toJSON(req), "rm -rf build") {
			t.Fatalf("the gate's question: %v", req)
		}
		p.send(map[string]any{"id": fmt.Sprint("g", allow), "type": "ui_response", "ui_id": req["id"], "value": allow})
		return p.until(isType("done"))
	}
	n++
	p.send(map[string]any{"id": "p-gate1", "type": "prompt", "message": "clean"})
	if r := result(gate(false)); !strings.Contains(r, "the user refused a dangerous command") {
		t.Fatalf("refused: %s", r)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the refused command ran")
	}
	p.send(map[string]any{"id": "p-gate2", "type": "prompt", "message": "clean now"})
	if r := result(gate(true)); !strings.Contains(r, "removed") {
		t.Fatalf("allowed: %s", r)
	}

	// /plan on: the next model call offers only the read-only tools, and
	// a write is blocked by the plan's hook.
	p.send(map[string]any{"id": "c3", "type": "complete_command", "name": "plan", "args": "o"})
	if r := p.until(isType("response")); !strings.Contains(toJSON(r[len(r)-1]["data"]), `[{"value":"on"},{"value":"off"}]`) {
		t.Fatalf("/plan completion: %v", r[len(r)-1])
	}
	p.send(map[string]any{"id": "c4", "type": "command", "name": "plan", "args": "on"})
	if r := p.until(isType("response")); !strings.Contains(toJSON(r[len(r)-1]["data"]), "Plan mode enabled; tools: read, ls, grep, find.") {
		t.Fatalf("/plan on: %v", r[len(r)-1])
	}
	before := len(e.llm.Requests())
	if r := result(prompt("write the plan")); !strings.Contains(r, "plan mode is on") {
		t.Fatalf("a write in plan mode: %s", r)
	}
	if got := toolNames(t, e, before); !slices.Equal(got, []string{"read", "ls", "grep", "find"}) {
		t.Fatalf("tools offered in plan mode: %v", got)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "plan.txt")); err == nil {
		t.Fatal("the write ran in plan mode")
	}
	p.send(map[string]any{"id": "c5", "type": "command", "name": "plan", "args": "off"})
	p.until(isType("response"))

	// todo: the widget shows the list; clear asks first.
	frames = prompt("add milk")
	if r := result(frames); !strings.Contains(r, "Added: milk (1 total)") {
		t.Fatalf("todo_add: %s", r)
	}
	widget := func(m map[string]any) bool { return m["type"] == "ext_widget" && strings.Contains(toJSON(m), "milk") }
	if !slices.ContainsFunc(frames, widget) {
		p.until(widget)
	}
	p.send(map[string]any{"id": "p-clear", "type": "prompt", "message": "clear"})
	frames = p.until(isType("ext_ui_request"))
	req := frames[len(frames)-1]
	if req["extension"] != "todo" || !strings.Contains(toJSON(req), "Clear all 1 todos?") {
		t.Fatalf("todo's question: %v", req)
	}
	p.send(map[string]any{"id": "gc", "type": "ui_response", "ui_id": req["id"], "value": true})
	if r := result(p.until(isType("done"))); !strings.Contains(r, "Cleared 1 todos.") {
		t.Fatalf("todo_clear: %s", r)
	}
	p.in.Close()
	for range p.lines {
	}
}
