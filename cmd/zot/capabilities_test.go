package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
	"github.com/zot-editors/zot/internal/testenv"
)

// capExt builds extensions/testdata/capext once per test binary.
func capExt(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/capext")
}

// The permission-gate example asks over zot rpc (ext_ui_request →
// ui_response): allowed runs the command, denied tells the model the user
// refused, "always" is remembered (no second dialog).
func TestRPCPermissionGateAsksAndRemembers(t *testing.T) {
	gate := examplestest.Build(t, "permission-gate")
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.TextReply("done 1"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.TextReply("done 2"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build2 && echo again"}),
		llmtest.TextReply("done 3"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build2 && echo again"}),
		llmtest.TextReply("done 4"),
	)
	e.write("build/x", "x")
	e.write("keep/x", "x")
	p := e.startRPC(nil, "--ext", gate)

	answer := func(choice string) []map[string]any {
		frames := p.until(isType("ext_ui_request"))
		req := frames[len(frames)-1]
		if req["extension"] != "permission-gate" || req["kind"] != "select" || !strings.Contains(toJSON(req), "rm -rf") {
			t.Fatalf("ext_ui_request: %v", req)
		}
		p.send(map[string]any{"id": "ans-" + choice, "type": "ui_response", "ui_id": req["id"], "value": choice})
		return p.until(isType("done"))
	}

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "clean"})
	tr := find(answer("Allow once"), "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr), "removed") {
		t.Fatalf("allowed command: %v", tr)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "build")); !os.IsNotExist(err) {
		t.Fatalf("build still there after allow: %v", err)
	}

	p.send(map[string]any{"id": "2", "type": "prompt", "message": "clean more"})
	tr = find(answer("Deny"), "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "the user denied") {
		t.Fatalf("denied command: %v", tr)
	}
	if e.read("keep/x") != "x" {
		t.Fatal("the denied command ran")
	}
	if body, _ := json.Marshal(e.llm.Requests()[3].Body); !strings.Contains(string(body), "the user denied running: rm -rf keep") {
		t.Fatalf("the model was not told: %s", body)
	}

	p.send(map[string]any{"id": "3", "type": "prompt", "message": "again"})
	answer("Always allow this command")
	// The same command again: no dialog, the tool_result follows the
	// tool_call directly.
	p.send(map[string]any{"id": "4", "type": "prompt", "message": "again"})
	frames := p.until(isType("done"))
	if find(frames, "ext_ui_request") != nil {
		t.Fatalf("asked again after always: %v", types(frames))
	}
	if tr := find(frames, "tool_result"); tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr), "again") {
		t.Fatalf("remembered command: %v", tr)
	}
}

// In zot -p there is no UI: the gate cannot ask, so it refuses (fail
// closed) at once instead of hanging.
func TestPrintPermissionGateRefusesWithoutUI(t *testing.T) {
	gate := examplestest.Build(t, "permission-gate")
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
		llmtest.TextReply("stopped"),
	)
	e.write("build/x", "x")
	out, errOut, code := e.runZot(e.args("-p", "clean", "--ext", gate)...)
	if code != 0 || !strings.Contains(out, "stopped") {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the command ran without approval")
	}
	if body, _ := json.Marshal(e.llm.Requests()[1].Body); !strings.Contains(string(body), "cannot ask (no UI)") {
		t.Fatalf("the model was not told why: %s", body)
	}
}

// An extension that sends ui_request and then crashes: the dialog the
// client shows is closed (ext_ui_closed), the run goes on.
func TestRPCUIRequestThenCrashClosesDialog(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("ask_then_crash", map[string]any{}),
		llmtest.TextReply("all done"),
	)
	e.installGlobalExt("capext", map[string]any{"exec": capExt(t)})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	frames := p.until(isType("done"))
	req := find(frames, "ext_ui_request")
	if req == nil {
		t.Fatalf("no ext_ui_request: %v", types(frames))
	}
	closed := false
	for _, f := range frames {
		if f["type"] == "ext_ui_closed" && f["id"] == req["id"] {
			closed = true
		}
	}
	if !closed {
		t.Fatalf("the dialog of the crashed extension was not closed: %v", types(frames))
	}
	if am := find(frames, "assistant_message"); !strings.Contains(toJSON(frames), "all done") || am == nil {
		t.Fatalf("the run did not go on to its answer: %v", types(frames))
	}
	// Answering the closed dialog is an error naming it, not a hang.
	p.send(map[string]any{"id": "late", "type": "ui_response", "ui_id": req["id"], "value": true})
	if r := p.response("late"); r["success"] != false || !strings.Contains(toJSON(r), "no open ext_ui_request") {
		t.Fatalf("late ui_response: %v", r)
	}
}

// Every added frame over zot rpc with a real SDK extension: hello_ack's
// host_capabilities and session_start at startup, tool_update as
// tool_progress, the tool_result and before_agent_start hooks, a status
// flood (coalesced, last value wins) and an unknown tool named in the
// error.
func TestRPCExtensionCapabilities(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("slow", map[string]any{}),
		llmtest.ToolReply("write", map[string]any{"path": "a.txt", "content": "hi\n"}),
		llmtest.ToolReply("flood", map[string]any{}),
		llmtest.ToolReply("bad_tools", map[string]any{}),
		llmtest.TextReply("all done"),
		llmtest.TextReply("second"),
	)
	rec := filepath.Join(t.TempDir(), "rec")
	e.installGlobalExt("capext", map[string]any{"exec": capExt(t), "args": []string{"-record", rec}})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
	frames := p.until(isType("done"))

	var progress []string
	var statuses []any
	for _, f := range frames {
		switch f["type"] {
		case "tool_progress":
			progress = append(progress, f["text"].(string))
		case "ext_status":
			if f["key"] == "flood" {
				statuses = append(statuses, f["text"])
			}
		}
	}
	if strings.Join(progress, "") != "step 1\nstep 2\n" {
		t.Fatalf("tool_update did not stream as tool_progress: %q (%v)", progress, types(frames))
	}
	// The newest value may still be on its way after done.
	if len(statuses) == 0 || statuses[len(statuses)-1] != "final" {
		more := p.until(func(m map[string]any) bool { return m["type"] == "ext_status" && m["text"] == "final" })
		for _, f := range more {
			if f["type"] == "ext_status" && f["key"] == "flood" {
				statuses = append(statuses, f["text"])
			}
		}
	}
	if statuses[len(statuses)-1] != "final" || len(statuses) >= 2001 {
		t.Fatalf("status flood: %d updates reached the client, the last %v; want fewer than sent, ending with final", len(statuses), statuses[len(statuses)-1])
	}
	var writeResult, badTools map[string]any
	for _, f := range frames {
		if f["type"] == "tool_result" && strings.Contains(toJSON(f), "[linted]") {
			writeResult = f
		}
		if f["type"] == "tool_result" && strings.Contains(toJSON(f), "no_such_tool") {
			badTools = f
		}
	}
	if writeResult == nil {
		t.Fatalf("the tool_result hook did not rewrite the write result: %v", types(frames))
	}
	if badTools == nil || !strings.Contains(toJSON(badTools), `unknown tool \"no_such_tool\"`) {
		t.Fatalf("set_active_tools with an unknown tool: %v", badTools)
	}
	// before_agent_start (the extension is up now: the first prompt does
	// not wait for extensions still starting): the model sees the added
	// message and system text.
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
	p.until(isType("done"))
	body, _ := json.Marshal(e.llm.Requests()[5].Body)
	if !strings.Contains(string(body), "CAPEXT-CONTEXT") || !strings.Contains(string(body), "CAPEXT-SYSTEM") {
		t.Fatalf("before_agent_start additions missing from the request: %s", body)
	}
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var hello struct {
		Host *struct {
			UI      map[string]bool `json:"ui"`
			Hooks   []string        `json:"hooks"`
			Actions []string        `json:"actions"`
		} `json:"host"`
		Model        string `json:"model"`
		SessionStart string `json:"session_start"`
	}
	json.Unmarshal([]byte(strings.SplitN(string(b), "\n", 2)[0]), &hello)
	if hello.Host == nil || !hello.Host.UI["confirm"] || !hello.Host.UI["status"] || hello.Host.UI["panels"] ||
		!strings.Contains(strings.Join(hello.Host.Hooks, ","), "before_agent_start") || len(hello.Host.Actions) == 0 ||
		hello.Model == "" || hello.SessionStart != "startup" {
		t.Fatalf("hello_ack / session_start as recorded: %s", b)
	}
}

// The input hook handles a prompt (no model call; its display is shown)
// or rewrites it; the context hook prunes what one model call sees while
// the transcript keeps everything; steer joins the running run; an
// unknown model is refused by name.
func TestRPCInputContextSteerAndModel(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("steer", map[string]any{}),
		llmtest.ToolReply("bad_model", map[string]any{}),
		llmtest.TextReply("one"),
		llmtest.TextReply("two"),
		llmtest.TextReply("three"),
	)
	e.installGlobalExt("capext", map[string]any{"exec": capExt(t)})
	p := e.startRPC(nil)
	// The first run waits for the extension (its tool), so the hooks
	// below meet it running.
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "start"})
	frames := p.until(isType("done"))
	var badModel string
	for _, f := range frames {
		if f["type"] == "tool_result" && strings.Contains(toJSON(f), "no-such-model") {
			badModel = toJSON(f)
		}
	}
	if !strings.Contains(badModel, `unknown model \"no-such-model\"`) {
		t.Fatalf("set_model with an unknown model: %s", badModel)
	}
	// The steered message reached the model in the same run.
	if body, _ := json.Marshal(e.llm.Requests()[1].Body); !strings.Contains(string(body), "STEERED") {
		t.Fatalf("steer: %s", body)
	}

	p.send(map[string]any{"id": "2", "type": "prompt", "message": "capext:handle this"})
	frames = p.until(isType("done"))
	if am := find(frames, "assistant_message"); am == nil || !strings.Contains(toJSON(am), "handled by capext") {
		t.Fatalf("handled input: %v", types(frames))
	}
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("a handled prompt called the model: %d requests", n)
	}

	p.send(map[string]any{"id": "3", "type": "prompt", "message": "capext:upper shout this"})
	p.until(isType("done"))
	if body, _ := json.Marshal(e.llm.Requests()[3].Body); !strings.Contains(string(body), "SHOUT THIS") || strings.Contains(string(body), "capext:upper") {
		t.Fatalf("rewritten input: %s", body)
	}

	p.send(map[string]any{"id": "4", "type": "prompt", "message": "capext:prune now"})
	p.until(isType("done"))
	body, _ := json.Marshal(e.llm.Requests()[4].Body)
	var req struct {
		Messages []json.RawMessage `json:"messages"`
	}
	json.Unmarshal(body, &req)
	if len(req.Messages) != 1 || !strings.Contains(string(req.Messages[0]), "capext:prune") {
		t.Fatalf("context hook: the call saw %d messages: %s", len(req.Messages), body)
	}
	p.send(map[string]any{"id": "5", "type": "get_messages"})
	if r := p.response("5"); !strings.Contains(toJSON(r), "SHOUT THIS") || !strings.Contains(toJSON(r), "start") {
		t.Fatalf("the context hook changed the transcript: %v", r)
	}
}

// lint-on-write appends a checker's findings to a write's result, and
// the model sees them.
func TestRPCLintOnWrite(t *testing.T) {
	testenv.NeedCommand(t, "gofmt", "lint-on-write checks Go files with it")
	lint := examplestest.Build(t, "lint-on-write")
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "bad.go", "content": "package main\nfunc main( {\n"}),
		llmtest.ToolReply("write", map[string]any{"path": "good.go", "content": "package main\n\nfunc main() {}\n"}),
		llmtest.TextReply("done"),
	)
	p := e.startRPC(nil, "--ext", lint)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "write"})
	frames := p.until(isType("done"))
	var results []map[string]any
	for _, f := range frames {
		if f["type"] == "tool_result" {
			results = append(results, f)
		}
	}
	if len(results) != 2 || !strings.Contains(toJSON(results[0]), "lint-on-write found problems in bad.go") ||
		!strings.Contains(toJSON(results[0]), "expected") || results[0]["is_error"] != false {
		t.Fatalf("bad.go: %v", results)
	}
	if strings.Contains(toJSON(results[1]), "lint-on-write") {
		t.Fatalf("a clean file got findings: %v", results[1])
	}
	if body, _ := json.Marshal(e.llm.Requests()[1].Body); !strings.Contains(string(body), "lint-on-write found problems in bad.go") {
		t.Fatalf("the model did not see the findings: %s", body)
	}
}

// An extension that answers every hook with junk (input, before_agent_start,
// context, tool_result) through the real binary (zot -p, which waits for the
// extensions before the prompt): each answer is logged and ignored, the run
// goes on to its end, and the model gets zot's own prompt and tool result.
func TestPrintJunkHookAnswersRunGoesOn(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "note.txt", "content": "kept as written\n"}),
		llmtest.TextReply("finished after junk"),
	)
	e.installGlobalExt("capext", map[string]any{"exec": capExt(t), "args": []string{"-junk"}})
	stdout, stderr, code := e.runZot(e.args("-p", "write the note")...)
	if code != 0 || !strings.Contains(stdout, "finished after junk") {
		t.Fatalf("the run did not reach its answer: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e.cwd, "note.txt")); err != nil || string(b) != "kept as written\n" {
		t.Fatalf("the write: %q %v", b, err)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 model requests, got %d", len(reqs))
	}
	first, _ := json.Marshal(reqs[0].Body)
	second, _ := json.Marshal(reqs[1].Body)
	if !strings.Contains(string(first), "write the note") {
		t.Fatalf("the prompt did not reach the model as typed: %s", first)
	}
	if !strings.Contains(string(second), "note.txt") || !strings.Contains(string(second), "write the note") {
		t.Fatalf("the tool result or the transcript did not reach the model: %s", second)
	}
	// The junk was answered (and so ignored), not missed: zot logged each.
	log, _ := os.ReadFile(filepath.Join(e.home, "logs", "ext-capext.log"))
	for _, want := range []string{"input intercept", "before_agent_start", "context intercept", "not a JSON object"} {
		if !strings.Contains(string(log), want) {
			t.Fatalf("no %q in the extension's log:\n%s", want, log)
		}
	}
}

// Two tool_result hooks chain in load order: the second sees the first's
// rewrite, and the model gets both (lint-on-write's findings and capext's
// " [linted]"), not only the last one's.
func TestPrintToolResultHooksChain(t *testing.T) {
	testenv.NeedCommand(t, "gofmt", "lint-on-write checks Go files with it")
	lint := examplestest.Build(t, "lint-on-write")
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "bad.go", "content": "package main\nfunc main( {\n"}),
		llmtest.TextReply("done"),
	)
	e.installGlobalExt("capext", map[string]any{"exec": capExt(t)})
	stdout, stderr, code := e.runZot(e.args("-p", "write", "--ext", lint)...)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 2 {
		t.Fatalf("want 2 model requests, got %d", len(reqs))
	}
	body, _ := json.Marshal(reqs[1].Body)
	if !strings.Contains(string(body), "lint-on-write found problems in bad.go") || !strings.Contains(string(body), " [linted]") {
		t.Fatalf("want the findings and capext's note in the result the model got: %s", body)
	}
}

// A dialog nobody answers (a permission-gate question without timeout_ms)
// is closed after the default dialog timeout ($ZOT_EXT_DIALOG_TIMEOUT
// here; 120 s by default) and answered cancelled, as if dismissed: the
// gate refuses the command and the run goes on to its end.
func TestRPCUnansweredDialogIsCancelled(t *testing.T) {
	gate := examplestest.Build(t, "permission-gate")
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.TextReply("went on"),
	)
	e.write("keep/x", "x")
	p := e.startRPC([]string{"ZOT_EXT_DIALOG_TIMEOUT=300ms"}, "--ext", gate)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "clean"})
	frames := p.until(isType("ext_ui_request"))
	req := frames[len(frames)-1]
	frames = p.until(isType("ext_ui_closed")) // never answered
	if c := frames[len(frames)-1]; c["id"] != req["id"] {
		t.Fatalf("closed %v, asked %v", c, req)
	}
	frames = p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "the user did not approve running: rm -rf keep") {
		t.Fatalf("tool_result: %v\nframes: %v", tr, types(frames))
	}
	if am := find(frames, "assistant_message"); am == nil || !strings.Contains(toJSON(am), "went on") {
		t.Fatalf("the run did not go on: %v", types(frames))
	}
	if e.read("keep/x") != "x" {
		t.Fatal("the unanswered command ran")
	}
}
