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

// zot rpc --no-yolo refuses tool calls with the reason.
func TestNoYoloRPCRefusesTools(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "touch ran"}),
		llmtest.TextReply("refused"),
	)
	p := e.startRPC(nil, "--no-yolo")
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "touch it"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr["content"]), "--no-yolo") {
		t.Fatalf("tool_result: %v", tr)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "ran")); !os.IsNotExist(err) {
		t.Fatalf("bash ran under --no-yolo: %v", err)
	}
}
