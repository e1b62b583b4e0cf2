package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
	"github.com/zot-editors/zot/server/servertest"
)

// The permission-gate example asks through zot/ui/request: the editor's
// answer decides (allow → the command runs; deny → the model is told).
func TestUIRequestPermissionGate(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.TextReply("ok"))
	gate := examplestest.Build(t, "permission-gate")
	os.MkdirAll(filepath.Join(e.root, "build"), 0o755)
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	cfg := e.config("--ext", gate)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	var asked []map[string]any
	ed.UI = func(p map[string]any) map[string]any {
		asked = append(asked, p)
		if strings.Contains(jsonString(p), "keep") {
			return map[string]any{"value": "Deny"}
		}
		return map[string]any{"value": "Allow once"}
	}
	ed.Initialize(nil)
	waitExt(ed, "permission-gate", "loaded")
	evs := ed.WaitDone(ed.Prompt("clean up").RunID)
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if len(results) != 2 || results[0]["is_error"] != false || !strings.Contains(servertest.ResultText(results[0]), "removed") {
		t.Fatalf("allowed: %v", results)
	}
	if results[1]["is_error"] != true || !strings.Contains(servertest.ResultText(results[1]), "the user denied running: rm -rf keep") {
		t.Fatalf("denied: %v", results[1])
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Fatal("the denied command ran")
	}
	if len(asked) != 2 || asked[0]["extension"] != "permission-gate" || asked[0]["kind"] != "select" {
		t.Fatalf("zot/ui/request params: %v", asked)
	}
}

// A client without experimental.zot.ui is asked with
// window/showMessageRequest, the options as its actions.
func TestUIRequestFallsBackToShowMessageRequest(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.TextReply("ok"))
	gate := examplestest.Build(t, "permission-gate")
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	ed := servertest.Start(t, e.config("--ext", gate))
	var actions []string
	ed.Choose = func(msg string, acts []string) string {
		if strings.Contains(msg, "[permission-gate]") && strings.Contains(msg, "rm -rf keep") {
			actions = acts
			return "Deny"
		}
		return ""
	}
	ed.Initialize(nil)
	waitExt(ed, "permission-gate", "loaded")
	evs := ed.WaitDone(ed.Prompt("clean up").RunID)
	var res servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			res = ev
		}
	}
	if res == nil || res["is_error"] != true || !strings.Contains(servertest.ResultText(res), "the user denied") {
		t.Fatalf("tool_result: %v", res)
	}
	if strings.Join(actions, "|") != "Deny|Allow once|Always allow this command" {
		t.Fatalf("showMessageRequest actions: %v", actions)
	}
}

// set_status reaches the editor as zot/ui/status and is cleared (text
// null) when the extension stops.
func TestUIStatusFromExtension(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	capext := filepath.Join(t.TempDir(), "capext")
	if err := servertest.Build("./extensions/testdata/capext", capext, false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "capext-dir")
	os.MkdirAll(dir, 0o755)
	b, _ := json.Marshal(map[string]any{"name": "capext", "exec": capext})
	os.WriteFile(filepath.Join(dir, "extension.json"), b, 0o644)
	cfg := e.config("--ext", dir)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "capext", "loaded")
	var res map[string]any
	if err := ed.Call("zot/command", map[string]any{"name": "plan"}, &res); err != nil {
		t.Fatal(err)
	}
	status := func(want any) func() bool {
		return func() bool {
			notes := ed.Notes("zot/ui/status")
			if len(notes) == 0 {
				return false
			}
			var p map[string]any
			json.Unmarshal(notes[len(notes)-1].Params, &p)
			return p["extension"] == "capext" && p["key"] == "mode" && p["text"] == want
		}
	}
	ed.Wait("status plan", status("plan"))
	if err := ed.Call("zot/extensions/reload", map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	ed.Wait("status cleared", status(nil))
}

// plan-mode over zot lsp: /plan shows "plan" in the status, the model
// gets only read-only tools and the planning instructions; a new session
// (session_start "new") starts without plan mode.
func TestPlanModeExample(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("1. read x"), llmtest.TextReply("ok"))
	plan := examplestest.Build(t, "plan-mode")
	cfg := e.config("--ext", plan)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "plan-mode", "loaded")
	status := func(want any) func() bool {
		return func() bool {
			notes := ed.Notes("zot/ui/status")
			if len(notes) == 0 {
				return false
			}
			var p map[string]any
			json.Unmarshal(notes[len(notes)-1].Params, &p)
			return p["extension"] == "plan-mode" && p["key"] == "mode" && p["text"] == want
		}
	}
	var res map[string]any
	if err := ed.Call("zot/command", map[string]any{"name": "plan"}, &res); err != nil || !strings.Contains(jsonString(res), "Plan mode on") {
		t.Fatalf("/plan: %v %v", err, res)
	}
	ed.Wait("status plan", status("plan"))
	ed.WaitDone(ed.Prompt("how would you fix x?").RunID)
	body := jsonString(e.llm.Requests()[0].Body)
	if !strings.Contains(body, "Plan mode is on") || !strings.Contains(body, `"name":"grep"`) || strings.Contains(body, `"name":"bash"`) || strings.Contains(body, `"name":"write"`) {
		t.Fatalf("plan-mode request: %s", body)
	}
	if err := ed.Call("zot/session/new", map[string]any{}, &res); err != nil {
		t.Fatal(err)
	}
	ed.Wait("status cleared by the new session", status(nil))
	ed.WaitDone(ed.Prompt("now do it").RunID)
	body = jsonString(e.llm.Requests()[1].Body)
	if strings.Contains(body, "Plan mode is on") || !strings.Contains(body, `"name":"bash"`) {
		t.Fatalf("after a new session: %s", body)
	}
}
