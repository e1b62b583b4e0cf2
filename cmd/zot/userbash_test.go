package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
)

// The user's own shell command over zot rpc (pi's RPC bash), with a SEP
// extension's user_bash hook as a user runs it (--ext DIR): a plain
// command runs under zot's bash and joins the conversation (the model
// sees it on the next prompt); exclude_from_context (pi's !!) keeps it
// out; the hook blocks rm -rf (it does not run) and answers "remote …"
// itself. Every message the host sent the extension validates against
// SEP's schemas, the user_bash hook among them.
func TestRPCUserBash(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("I saw it"))
	e.write("build/x", "x")
	trace := t.TempDir()
	notes := filepath.Join(trace, "notes")
	dir := writeSEPExt(t, filepath.Join(t.TempDir(), "shellgate"), "shellgate", notes, map[string]string{"SEPEXT_USERBASH": "gate"})
	p := e.startRPC([]string{extensions.EnvSEPTrace + "=" + trace}, "--ext", dir)

	bash := func(id, command string, exclude bool) map[string]any {
		t.Helper()
		p.send(map[string]any{"id": id, "type": "bash", "command": command, "exclude_from_context": exclude})
		frames := p.until(isType("done"))
		if r := find(frames, "response"); r == nil || r["success"] != true {
			t.Fatalf("bash %q: %v", command, frames)
		}
		if find(frames, "user_bash_start") == nil {
			t.Fatalf("bash %q: no user_bash_start in %v", command, types(frames))
		}
		ub := find(frames, "user_bash")
		if ub == nil {
			t.Fatalf("bash %q: no user_bash in %v\nstderr: %s", command, types(frames), p.errb.String())
		}
		return ub
	}
	ub := bash("1", "echo from-the-shell; exit 2", false)
	if ub["output"] != "from-the-shell" || ub["exit_code"] != float64(2) || ub["message_index"] != float64(0) || ub["extension"] != nil {
		t.Fatalf("a plain command: %v", ub)
	}
	ub = bash("2", "echo kept-private", true)
	if ub["output"] != "kept-private" || ub["message_index"] != nil || ub["exclude_from_context"] != true {
		t.Fatalf("an excluded command: %v", ub)
	}
	ub = bash("3", "rm -rf build", false)
	if ub["blocked"] != true || ub["extension"] != "shellgate" || !strings.Contains(toJSON(ub), "keeps rm -rf out") {
		t.Fatalf("a blocked command: %v", ub)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the blocked command ran")
	}
	ub = bash("4", "remote uptime", false)
	if ub["output"] != "ran elsewhere: uptime" || ub["extension"] != "shellgate" || ub["message_index"] != float64(1) {
		t.Fatalf("a command the extension ran: %v", ub)
	}

	p.send(map[string]any{"id": "5", "type": "prompt", "message": "what happened?"})
	p.until(isType("done"))
	reqs := e.llm.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	body := string(reqs[0].Raw)
	if !strings.Contains(body, "from-the-shell") || !strings.Contains(body, "ran elsewhere: uptime") {
		t.Fatalf("the model did not see the commands: %s", body)
	}
	if strings.Contains(body, "kept-private") || strings.Contains(body, "rm -rf") {
		t.Fatalf("the model saw an excluded or blocked command: %s", body)
	}

	// Bad input: a clear error, and the session goes on.
	p.send(map[string]any{"id": "6", "type": "bash"})
	if r := p.response("6"); r["success"] != false || !strings.Contains(toJSON(r), `bash needs a \"command\"`) {
		t.Fatalf("bash without a command: %v", r)
	}

	p.in.Close()
	for range p.lines {
	}
	b, _ := os.ReadFile(notes)
	if !strings.Contains(string(b), `user_bash "echo kept-private" exclude=true cwd=true`) {
		t.Fatalf("the hook's input: %s", b)
	}
	checkSEPTrace(t, filepath.Join(trace, "shellgate.ndjson"), []string{"initialize", "hook"})
}

// A user_bash guard that does not answer within its hook_timeout_ms
// blocks the command (SEP: user_bash fails closed, as tool_call), with a
// reason naming it; the command does not run.
func TestRPCUserBashFailsClosed(t *testing.T) {
	e := newEnv(t)
	dir := writeSEPExt(t, filepath.Join(t.TempDir(), "stuck"), "stuck", filepath.Join(t.TempDir(), "notes"), map[string]string{"SEPEXT_USERBASH": "hang"})
	man := filepath.Join(dir, "extension.toml")
	b, _ := os.ReadFile(man)
	b = []byte(strings.Replace(string(b), "protocol = 1\n", "protocol = 1\nhook_timeout_ms = { user_bash = 300 }\n", 1))
	if err := os.WriteFile(man, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.startRPC(nil, "--ext", dir)
	p.send(map[string]any{"id": "1", "type": "bash", "command": "touch ran"})
	frames := p.until(isType("done"))
	ub := find(frames, "user_bash")
	if ub == nil || ub["blocked"] != true || ub["extension"] != "stuck" || !strings.Contains(toJSON(ub), "fail closed") {
		t.Fatalf("a hung guard: %v (%v)\nstderr: %s", ub, types(frames), p.errb.String())
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "ran")); err == nil {
		t.Fatal("the command ran past a hung guard")
	}
	var st map[string]any
	p.send(map[string]any{"id": "2", "type": "get_messages"})
	_ = json.Unmarshal([]byte(toJSON(p.response("2")["data"])), &st)
	if msgs, _ := st["messages"].([]any); len(msgs) != 0 {
		t.Fatalf("a blocked command joined the conversation: %v", st)
	}
}

// pi's user_bash under zot rpc: a pi extension's BashResult is the
// command's result (it never runs here); pi's operations (run it
// elsewhere) are refused rather than run here; anything else runs.
func TestRPCPiUserBash(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t)
	p := e.startRPC(rt, "-e", piTestdata("userbash.ts"))
	bash := func(id, command string, exclude bool) map[string]any {
		t.Helper()
		p.send(map[string]any{"id": id, "type": "bash", "command": command, "exclude_from_context": exclude})
		frames := p.until(isType("done"))
		ub := find(frames, "user_bash")
		if ub == nil {
			t.Fatalf("bash %q: no user_bash in %v\nstderr: %s", command, types(frames), p.errb.String())
		}
		return ub
	}
	if ub := bash("1", "echo plain", false); ub["output"] != "plain" || ub["extension"] != nil {
		t.Fatalf("a command the extension lets through: %v", ub)
	}
	want := "ran on the remote (private, in " + e.cwd + "): touch here"
	if ub := bash("2", "remote touch here", true); ub["output"] != want || ub["extension"] != "userbash" || ub["exit_code"] != float64(0) {
		t.Fatalf("a command the extension ran: %v, want output %q", ub, want)
	}
	if ub := bash("3", "sandboxed touch ran", false); ub["blocked"] != true || !strings.Contains(toJSON(ub), "own operations") {
		t.Fatalf("a command for the extension's operations: %v", ub)
	}
	for _, f := range []string{"here", "ran"} {
		if _, err := os.Stat(filepath.Join(e.cwd, f)); err == nil {
			t.Fatalf("%q was created here: the command ran in zot", f)
		}
	}
}
