package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/mcptest"
)

// --no-tools takes zot's built-in tools away and keeps the extensions' and
// the MCP servers' (as zot and pi do): the model is offered exactly those,
// and an extension tool it calls runs.
func TestNoToolsKeepsExtensionAndMCPTools(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("echo", map[string]any{"text": "hi"}), llmtest.TextReply("echoed"))
	e.installGlobalExt("echoer", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "echoer", "-tools", "echo"}})
	cfg := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"fake": {"command": %q}}}`, mcptest.Fake(t))), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := e.runZot(e.args("-p", "echo hi", "--no-tools", "--mcp-config", cfg)...)
	if code != 0 || !strings.Contains(out, "echoed") {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
	}
	offered := toolsOffered(t, e, 0)
	for _, builtin := range []string{"read", "write", "edit", "bash", "skill", "ls", "grep", "find"} {
		if slices.Contains(offered, builtin) {
			t.Errorf("--no-tools offered the built-in %s: %v", builtin, offered)
		}
	}
	if !slices.Contains(offered, "echo") || !slices.Contains(offered, "mcp__fake__write") {
		t.Fatalf("--no-tools dropped the extension or MCP tools: %v", offered)
	}
	if r := toolResultSent(t, e, 1); !strings.Contains(r, "echo: hi") {
		t.Fatalf("the extension tool did not run: %s", r)
	}
}

// zot -h says what --no-tools does.
func TestNoToolsHelpSaysExtensionToolsStay(t *testing.T) {
	e := newEnv(t)
	out, errOut, _ := e.runZot("-h")
	if help := out + errOut; !strings.Contains(help, "extension and MCP tools stay") {
		t.Fatalf("help:\n%s", help)
	}
}
