package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/mcptest"
)

// toolsOffered lists the tool names of model request i.
func toolsOffered(t *testing.T, e *env, i int) []string {
	t.Helper()
	reqs := e.llm.Requests()
	if len(reqs) <= i {
		t.Fatalf("only %d model calls", len(reqs))
	}
	var names []string
	ts, _ := reqs[i].Body["tools"].([]any)
	for _, x := range ts {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	return names
}

// toolResultSent is the tool_result request i carries, as JSON.
func toolResultSent(t *testing.T, e *env, i int) string {
	t.Helper()
	reqs := e.llm.Requests()
	if len(reqs) <= i {
		t.Fatalf("only %d model calls", len(reqs))
	}
	msgs := reqs[i].Body["messages"].([]any)
	last := msgs[len(msgs)-1]
	b, _ := json.Marshal(last)
	return string(b)
}

func everythingConfig(t *testing.T, dir string) string {
	p := filepath.Join(dir, "everything.json")
	doc := fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": ["stdio"]}}}`, mcptest.Bin(t, "mcp-server-everything"))
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPrintCallsEverythingTools(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("mcp__everything__get-tiny-image", map[string]any{}),
		llmtest.ToolReply("mcp__everything__get-structured-content", map[string]any{"location": "Chicago"}),
		llmtest.ToolReply("mcp__everything__echo", map[string]any{"message": "round trip"}),
		llmtest.TextReply("done"),
	)
	cfg := everythingConfig(t, t.TempDir())
	out, errOut, code := e.runZot(e.args("-p", "use the tools", "--mcp-config", cfg)...)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d, out %q, stderr:\n%s", code, out, errOut)
	}
	offered := strings.Join(toolsOffered(t, e, 0), " ")
	for _, want := range []string{"read", "mcp__everything__echo", "mcp__everything__get-sum", "mcp__everything__trigger-long-running-operation"} {
		if !strings.Contains(offered, want) {
			t.Fatalf("the first model call lacks %s: %s", want, offered)
		}
	}
	// The schema reached the model as the server wrote it.
	for _, x := range e.llm.Requests()[0].Body["tools"].([]any) {
		m := x.(map[string]any)
		if m["name"] == "mcp__everything__get-sum" {
			if b, _ := json.Marshal(m["input_schema"]); !strings.Contains(string(b), `"a"`) || !strings.Contains(string(b), `"b"`) {
				t.Fatalf("get-sum schema: %s", b)
			}
		}
	}
	if img := toolResultSent(t, e, 1); !strings.Contains(img, `"image"`) || !strings.Contains(img, "image/png") {
		t.Fatalf("the model did not receive the image: %s", img)
	}
	if sc := toolResultSent(t, e, 2); !strings.Contains(sc, "temperature") {
		t.Fatalf("structured content: %s", sc)
	}
	if echo := toolResultSent(t, e, 3); !strings.Contains(echo, "round trip") {
		t.Fatalf("echo: %s", echo)
	}
	if !strings.Contains(errOut, "mcp__everything__echo") {
		t.Fatalf("stderr lacks the tool activity: %s", errOut)
	}
}

func TestPrintFilesystemFromClaudeCodeProjectConfig(t *testing.T) {
	e := newEnv(t,
		llmtest.TextReply("no tools for me"),
		llmtest.ToolReply("mcp__filesystem__read_text_file", map[string]any{"path": "notes.txt"}),
		llmtest.TextReply("read it"),
	)
	bin := mcptest.Bin(t, "mcp-server-filesystem")
	e.write("notes.txt", "the secret is 42\n")
	// Claude Code's own project file, unchanged: the server is rooted at
	// the workspace through ${PWD}-free relative args ("." is the cwd).
	e.write(".mcp.json", fmt.Sprintf(`{"mcpServers": {"filesystem": {"command": %q, "args": ["."]}}}`, bin))

	_, errOut, code := e.runZot(e.args("-p", "hi")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "MCP server filesystem: untrusted") || !strings.Contains(errOut, "zot mcp trust filesystem") {
		t.Fatalf("an untrusted project server must be refused with a clear message: %s", errOut)
	}
	for _, n := range toolsOffered(t, e, 0) {
		if strings.HasPrefix(n, "mcp__") {
			t.Fatalf("an untrusted server's tool was offered: %s", n)
		}
	}

	out, errOut, code := e.runZot("mcp", "trust", "--cwd", e.cwd, "filesystem")
	if code != 0 || !strings.Contains(out, "trusted MCP server filesystem") {
		t.Fatalf("zot mcp trust: exit %d, %s %s", code, out, errOut)
	}
	out, errOut, code = e.runZot(e.args("-p", "read notes")...)
	if code != 0 || !strings.Contains(out, "read it") {
		t.Fatalf("exit %d, out %q, stderr:\n%s", code, out, errOut)
	}
	if res := toolResultSent(t, e, 2); !strings.Contains(res, "the secret is 42") {
		t.Fatalf("the model did not receive the file: %s", res)
	}

	out, errOut, code = e.runZot("mcp", "list", "--cwd", e.cwd)
	if code != 0 || !strings.Contains(out, "filesystem") || !strings.Contains(out, "project") || !strings.Contains(out, "ready") {
		t.Fatalf("zot mcp list: exit %d\n%s%s", code, out, errOut)
	}
}

func TestPrintBadMCPConfigNamesFileServerField(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("still answering"))
	bad := e.write("bad.json", `{"mcpServers": {"db": {"command": "x", "env": {"TOKEN": 7}}}}`)
	out, errOut, code := e.runZot(e.args("-p", "hi", "--mcp-config", bad)...)
	if code != 0 || !strings.Contains(out, "still answering") {
		t.Fatalf("a bad server must not stop zot: exit %d, %s", code, errOut)
	}
	for _, want := range []string{bad, `server "db"`, `field "env"`} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	_, errOut, code = e.runZot(e.args("-p", "hi", "--mcp-config", filepath.Join(e.cwd, "nope.json"))...)
	if !strings.Contains(errOut, "nope.json") {
		t.Fatalf("a missing --mcp-config must be named: exit %d, %s", code, errOut)
	}
}

func TestNoMCPStartsNothing(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	cfg := everythingConfig(t, t.TempDir())
	if _, errOut, code := e.runZot(e.args("-p", "hi", "--no-mcp", "--mcp-config", cfg)...); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, n := range toolsOffered(t, e, 0) {
		if strings.HasPrefix(n, "mcp__") {
			t.Fatalf("--no-mcp offered %s", n)
		}
	}
}

func TestRPCMCPProgressAndAbort(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("mcp__everything__trigger-long-running-operation", map[string]any{"duration": 600, "steps": 6000}),
		llmtest.TextReply("after abort"),
	)
	cfg := everythingConfig(t, t.TempDir())
	p := e.startRPC(nil, "--mcp-config", cfg)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "run it"})
	p.until(isType("tool_progress"))
	p.send(map[string]any{"id": "2", "type": "abort"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true {
		t.Fatalf("want an error tool_result, got %v", types(frames))
	}
	if b, _ := json.Marshal(tr); !strings.Contains(string(b), "notifications/cancelled") {
		t.Fatalf("tool_result: %s", b)
	}
	// The server lives on: the next prompt's model call still offers it.
	p.send(map[string]any{"id": "3", "type": "prompt", "message": "still there?"})
	p.until(isType("done"))
	if s := strings.Join(toolsOffered(t, e, 1), " "); !strings.Contains(s, "mcp__everything__echo") {
		t.Fatalf("tools after the abort: %s", s)
	}
}
