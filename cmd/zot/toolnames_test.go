package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

// An extension that registers grep (one of our built-ins, not zot's)
// replaces ours; one that registers read (zot's own) does not. `zot ext
// list --probe` reports both.
func TestExtensionGrepWinsReadDoesNot(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("grep", map[string]any{"text": "from the model"}),
		llmtest.ToolReply("read", map[string]any{"path": "a.txt"}),
		llmtest.TextReply("done"),
	)
	e.write("a.txt", "the real file\n")
	e.installGlobalExt("mygrep", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "mygrep", "-tools", "grep,read", "-prefix", "extension grep"}})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "search"})
	frames := p.until(isType("done"))
	var results []string
	for _, f := range frames {
		if f["type"] == "tool_result" {
			results = append(results, toJSON(f["content"]))
		}
	}
	if len(results) != 2 || !strings.Contains(results[0], "extension grep: from the model") || !strings.Contains(results[1], "the real file") {
		t.Fatalf("tool results: %v\nstderr: %s", results, p.errb.String())
	}
	// The model is offered one grep, the extension's, and zot's read.
	var body struct {
		Tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
		} `json:"tools"`
	}
	json.Unmarshal([]byte(requestText(t, e, 1)), &body)
	descs := map[string][]string{}
	for _, tl := range body.Tools {
		descs[tl.Name] = append(descs[tl.Name], tl.Description)
	}
	if len(descs["grep"]) != 1 || descs["grep"][0] != "fake grep" || len(descs["read"]) != 1 || descs["read"][0] == "fake read" {
		t.Fatalf("tools offered: %v", descs)
	}
	p.in.Close()
	p.cmd.Wait()

	out, errOut, code := e.runZot("ext", "list", "--probe")
	for _, want := range []string{"replaces the built-in tool grep", "shadowed tool read (built-in wins)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("probe output lacks %q (exit %d):\n%s\n%s", want, code, out, errOut)
		}
	}
}
