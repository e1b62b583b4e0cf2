package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
)

// The guard example blocks a dangerous bash call in print mode; the
// model sees the refusal and the command never runs.
func TestPrintWithGuardExtension(t *testing.T) {
	guard := examplestest.Build(t, "guard")
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf victim && echo deleted"}),
		llmtest.TextReply("I was stopped."),
	)
	e.write("victim/keep.txt", "precious\n")
	out, errOut, code := e.runZot(e.args("-p", "clean up", "--ext", guard)...)
	if code != 0 || !strings.Contains(out, "I was stopped.") {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	if e.read("victim/keep.txt") != "precious\n" {
		t.Fatal("the guarded command ran")
	}
	body, _ := json.Marshal(e.llm.Requests()[1].Body)
	if !strings.Contains(string(body), "rm -rf") || !strings.Contains(string(body), "refused") {
		t.Fatalf("the model did not see the refusal: %s", body)
	}
}

// An extension tool (python, no SDK) is callable over zot rpc.
func TestRPCExtensionTool(t *testing.T) {
	py := examplestest.Build(t, "python")
	e := newEnv(t,
		llmtest.ToolReply("word_count", map[string]any{"text": "one two three"}),
		llmtest.TextReply("three words"),
	)
	p := e.startRPC(nil, "--ext", py)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "count"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr["content"]), "3") {
		t.Fatalf("tool_result: %v (%v)", tr, types(frames))
	}
}
