package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

// toolResults are the tool_result blocks of the i-th request.
func toolResults(t *testing.T, e *env, i int) []string {
	t.Helper()
	var out []string
	for _, m := range request(t, e, i).Messages {
		for _, c := range m.Content {
			if c.Type == "tool_result" {
				b, _ := json.Marshal(c)
				out = append(out, string(b))
			}
		}
	}
	return out
}

// zot -p --no-yolo without a terminal cannot ask: every tool call is
// refused, and the model is told why.
func TestNoYoloPrintWithoutTerminalRefusesTools(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "made.txt", "content": "x"}),
		llmtest.TextReply("could not write"),
	)
	out, errOut, code := e.runZot(e.args("--no-session", "--no-yolo", "-p", "make a file")...)
	if code != 0 || strings.TrimSpace(out) != "could not write" {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "made.txt")); !os.IsNotExist(err) {
		t.Fatalf("the write ran under --no-yolo without anyone asked: %v", err)
	}
	res := toolResults(t, e, 1)
	if len(res) != 1 || !strings.Contains(res[0], "--no-yolo") || !strings.Contains(res[0], "no terminal") || !strings.Contains(res[0], `"is_error":true`) {
		t.Fatalf("the model was not told why: %v", res)
	}
	if !strings.Contains(errOut, "no terminal") {
		t.Fatalf("stderr does not say the call was refused: %s", errOut)
	}
}

// zot rpc --no-yolo asks before every tool call with an ext_ui_request
// (extension "zot") naming the tool and its whole arguments: Deny refuses
// the call and tells the model; "Allow bash for this session" runs it and
// the next bash call without asking again.
func TestNoYoloRPCAsksThroughDialogs(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "touch denied"}),
		llmtest.TextReply("refused"),
		llmtest.ToolReply("bash", map[string]any{"command": "touch allowed"}),
		llmtest.ToolReply("bash", map[string]any{"command": "touch again"}),
		llmtest.TextReply("done"),
	)
	p := e.startRPC(nil, "--no-yolo")
	answer := func(choice string) map[string]any {
		t.Helper()
		frames := p.until(isType("ext_ui_request"))
		req := frames[len(frames)-1]
		if req["extension"] != "zot" || req["kind"] != "select" || !strings.Contains(toJSON(req["message"]), "touch ") {
			t.Fatalf("ext_ui_request: %v", req)
		}
		if opts, _ := req["options"].([]any); len(opts) == 0 || opts[0] != "Deny" {
			t.Fatalf("the first option (the default) is not Deny: %v", req["options"])
		}
		p.send(map[string]any{"id": "ans-" + toJSON(req["id"]), "type": "ui_response", "ui_id": req["id"], "value": choice})
		return req
	}
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "touch it"})
	answer("Deny")
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr["content"]), "the user denied this bash call") {
		t.Fatalf("tool_result: %v", tr)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "denied")); !os.IsNotExist(err) {
		t.Fatalf("bash ran though denied: %v", err)
	}

	p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
	answer("Allow bash for this session")
	frames = p.until(isType("done"))
	for _, f := range frames {
		if f["type"] == "ext_ui_request" {
			t.Fatalf("asked again after allowing bash for the session: %v", f)
		}
	}
	for _, name := range []string{"allowed", "again"} {
		if _, err := os.Stat(filepath.Join(e.cwd, name)); err != nil {
			t.Fatalf("the allowed bash did not run (%s): %v", name, err)
		}
	}
}
