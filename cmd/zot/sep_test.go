package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/sep/schema"
	"github.com/zot-editors/zot/internal/testenv"
)

// sepExt builds extensions/testdata/sepext (a dependency-free SEP
// extension) once per test binary.
func sepExt(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/sepext")
}

// writeSEPExt writes an extension.toml for sepext named name in dir.
func writeSEPExt(t *testing.T, dir, name, out string, env map[string]string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "name = %q\nversion = \"0.1.0\"\nprotocol = 1\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = %q\nSEPEXT_OUT = %q\n", name, sepExt(t), name, out)
	for k, v := range env {
		fmt.Fprintf(&sb, "%s = %q\n", k, v)
	}
	if err := os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A SEP extension under zot rpc, as a user runs it (--ext DIR): its tool
// answers and its progress reaches the client's tool card; its
// permission gate asks the client (confirm) and blocks on no, allows on
// yes. Every message the host sent it in that session validates against
// zot's SEP schemas (extensions/sep/schema).
func TestRPCSEPExtension(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("gate_say", map[string]any{"phrase": "hi"}),
		llmtest.TextReply("said it"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
		llmtest.TextReply("refused"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.TextReply("removed"),
	)
	e.write("build/x", "x")
	trace := t.TempDir()
	dir := writeSEPExt(t, filepath.Join(t.TempDir(), "gate"), "gate", filepath.Join(trace, "notes"), map[string]string{"SEPEXT_HOOK": "gate"})
	// --ext takes the manifest file too.
	p := e.startRPC([]string{extensions.EnvSEPTrace + "=" + trace}, "--ext", filepath.Join(dir, "extension.toml"))

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "say hi"})
	frames := p.until(isType("done"))
	var progress []string
	for _, f := range frames {
		if f["type"] == "tool_progress" {
			progress = append(progress, fmt.Sprint(f["text"]))
		}
	}
	if tr := find(frames, "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "said: hi") {
		t.Fatalf("tool_result: %v (%v)\nstderr: %s", tr, types(frames), p.errb.String())
	}
	if strings.Join(progress, "") != "halfway (50%)" {
		t.Fatalf("tool/update did not reach the tool card: %q", progress)
	}

	answer := func(allow bool) []map[string]any {
		frames := p.until(isType("ext_ui_request"))
		req := frames[len(frames)-1]
		if req["extension"] != "gate" || req["kind"] != "confirm" || !strings.Contains(toJSON(req), "rm -rf") {
			t.Fatalf("ext_ui_request: %v", req)
		}
		p.send(map[string]any{"id": fmt.Sprint("a", allow), "type": "ui_response", "ui_id": req["id"], "value": allow})
		return p.until(isType("done"))
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "clean"})
	tr := find(answer(false), "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "the user said no") {
		t.Fatalf("refused: %v", tr)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the refused command ran")
	}
	p.send(map[string]any{"id": "3", "type": "prompt", "message": "clean now"})
	tr = find(answer(true), "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr), "removed") {
		t.Fatalf("allowed: %v", tr)
	}

	// End the session (shutdown is part of it), then check what was sent.
	p.in.Close()
	for range p.lines {
	}
	checkSEPTrace(t, filepath.Join(trace, "gate.ndjson"), []string{"initialize", "tool/execute", "hook", "event", "shutdown", "reply:ui/request"})
}

// checkSEPTrace validates every message the host sent in a recorded
// session (extensions.EnvSEPTrace) against zot's SEP schemas, and that
// the session used at least the methods in want.
func checkSEPTrace(t *testing.T, path string, want []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sent, errs := schema.CheckTrace(f)
	for _, err := range errs {
		t.Error(err)
	}
	for _, w := range want {
		if sent[w] == 0 {
			t.Errorf("the session sent no %s (sent %v)", w, sent)
		}
	}
}

// A SEP extension's exec/run under zot rpc --no-yolo: the user is asked
// about the command itself (after the extension's tool), shown whole and
// quoted as it will run; a denial reaches the extension as -32000
// Blocked, an allow runs it. complete_command reaches the extension's
// command/complete.
func TestRPCSEPExecAsksAndCompletes(t *testing.T) {
	call := llmtest.ToolReply("ex_exec", map[string]any{"command": "printf", "args": []string{"%s", "a b"}})
	e := newEnv(t, call, llmtest.TextReply("denied"), call, llmtest.TextReply("ran"))
	trace := t.TempDir()
	dir := writeSEPExt(t, filepath.Join(t.TempDir(), "ex"), "ex", filepath.Join(trace, "notes"), nil)
	p := e.startRPC([]string{extensions.EnvSEPTrace + "=" + trace}, "--no-yolo", "--ext", dir)

	// answer answers the next --no-yolo question, which must name what.
	answer := func(what, choice string) {
		t.Helper()
		frames := p.until(isType("ext_ui_request"))
		req := frames[len(frames)-1]
		if req["extension"] != "zot" || !strings.Contains(fmt.Sprint(req["message"]), what) {
			t.Fatalf("asked %v, want a question naming %q", req, what)
		}
		p.send(map[string]any{"id": "u", "type": "ui_response", "ui_id": req["id"], "value": choice})
	}
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "run it"})
	answer("the ex_exec tool", "Allow once")
	answer(`"command": "printf '%s' 'a b'"`, "Deny")
	tr := find(p.until(isType("done")), "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), "refused -32000: blocked: the user denied this bash call") {
		t.Fatalf("denied: %v", tr)
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "run it now"})
	answer("the ex_exec tool", "Allow once")
	answer(`"command": "printf '%s' 'a b'"`, "Allow once")
	tr = find(p.until(isType("done")), "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), `exit 0 out \"a b\" err \"\"`) {
		t.Fatalf("allowed: %v", tr)
	}

	p.send(map[string]any{"id": "3", "type": "complete_command", "name": "/ex-note", "args": "bl"})
	res := p.until(isType("response"))
	if r := res[len(res)-1]; r["success"] != true || toJSON(r["data"]) != `{"completions":[{"description":"the colour blue","value":"blue"}]}` {
		t.Fatalf("complete_command: %v", r)
	}
	p.in.Close()
	for range p.lines {
	}
	checkSEPTrace(t, filepath.Join(trace, "ex.ndjson"), []string{"reply:exec/run", "command/complete", "error reply"})
}

// A SEP extension that registers a provider under zot rpc: its model is
// listed (get_models) and selected with --model PROVIDER/MODEL, a prompt
// streams through provider/complete and provider/delta like a built-in
// provider's (text deltas, the answer, usage), a tool call it makes runs
// and its result goes back to it, and its error ends the turn with an
// error event. zot's own models stay selectable.
func TestRPCSEPProvider(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("from the built-in provider"))
	trace := t.TempDir()
	dir := writeSEPExt(t, filepath.Join(t.TempDir(), "llm"), "llm", filepath.Join(trace, "notes"), map[string]string{"SEPEXT_PROVIDER": "echo-llm"})
	p := e.startRPC([]string{extensions.EnvSEPTrace + "=" + trace}, "--model", "echo-llm/echo-1", "--ext", dir)

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hello there"})
	frames := p.until(isType("done"))
	var deltas []string
	for _, f := range frames {
		if f["type"] == "text_delta" {
			deltas = append(deltas, fmt.Sprint(f["delta"]))
		}
	}
	if strings.Join(deltas, "|") != "echo: he|llo there" {
		t.Fatalf("text deltas %q (%v)\nstderr: %s", deltas, types(frames), p.errb.String())
	}
	if am := find(frames, "assistant_message"); am == nil || !strings.Contains(toJSON(am), `"text":"echo: hello there"`) {
		t.Fatalf("assistant_message: %v", am)
	}
	if u := find(frames, "usage"); u == nil || u["input"] != float64(10) || u["output"] != float64(3) || u["cache_read"] != float64(2) {
		t.Fatalf("usage: %v", u)
	}

	p.send(map[string]any{"id": "2", "type": "get_models"})
	res := p.until(isType("response"))
	if !strings.Contains(toJSON(res[len(res)-1]), `"id":"echo-llm/echo-1"`) || !strings.Contains(toJSON(res[len(res)-1]), `"provider":"echo-llm"`) {
		t.Fatalf("get_models: %v", res[len(res)-1])
	}
	p.send(map[string]any{"id": "3", "type": "get_state"})
	res = p.until(isType("response"))
	if d, _ := res[len(res)-1]["data"].(map[string]any); d["model"] != "echo-llm/echo-1" || d["provider"] != "echo-llm" {
		t.Fatalf("get_state: %v", res[len(res)-1])
	}

	p.send(map[string]any{"id": "4", "type": "prompt", "message": "use the tool"})
	frames = p.until(isType("done"))
	if tr := find(frames, "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "said: x") {
		t.Fatalf("the provider's tool call: %v (%v)", tr, types(frames))
	}
	if am := frames[len(frames)-1]; am["type"] != "done" || !strings.Contains(toJSON(frames), `"text":"done"`) {
		t.Fatalf("the answer after the tool: %v", types(frames))
	}

	p.send(map[string]any{"id": "5", "type": "prompt", "message": "now fail"})
	frames = p.until(isType("done"))
	if ev := find(frames, "error"); ev == nil || !strings.Contains(toJSON(ev), "upstream is down") {
		t.Fatalf("the provider's error: %v (%v)", ev, types(frames))
	}

	// Back to zot's own provider.
	p.send(map[string]any{"id": "6", "type": "set_model", "model": "claude-sonnet-4-5"})
	p.until(isType("response"))
	p.send(map[string]any{"id": "7", "type": "prompt", "message": "hi"})
	if am := find(p.until(isType("done")), "assistant_message"); am == nil || !strings.Contains(toJSON(am), "from the built-in provider") {
		t.Fatalf("the built-in provider after switching back: %v", am)
	}
	p.in.Close()
	for range p.lines {
	}
	checkSEPTrace(t, filepath.Join(trace, "llm.ndjson"), []string{"provider/complete"})
}
