//go:build unix

package acp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/mcptest"
)

// session/new's mcpServers (stdio and streamable HTTP) run for that
// session: their tools reach the model, a tool not marked read-only asks
// permission with its whole arguments, and another session does not see
// them.
func TestSessionMCPServers(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("mcp__everything__echo", map[string]any{"message": "from acp"}),
		llmtest.ToolReply("mcp__web__toggle-simulated-logging", map[string]any{"why": "a test"}),
		llmtest.TextReply("done"),
		llmtest.TextReply("second session"),
	)
	bin := mcptest.Bin(t, "mcp-server-everything")
	url := mcptest.EverythingHTTP(t)
	p := e.start()
	c, init := e.connect(p, sdk.ClientCapabilities{})
	if !init.AgentCapabilities.McpCapabilities.Http || !init.AgentCapabilities.McpCapabilities.Sse {
		t.Fatalf("mcpCapabilities: %s", jsonOf(init.AgentCapabilities))
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.root, McpServers: []sdk.McpServer{
		{Stdio: &sdk.McpServerStdio{Name: "everything", Command: bin, Args: []string{"stdio"}, Env: []sdk.EnvVariable{}}},
		{Http: &sdk.McpServerHttpInline{Type: "http", Name: "web", Url: url, Headers: []sdk.HttpHeader{{Name: "X-Test", Value: "1"}}}},
	}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	c.mustPrompt(s.SessionId, "use the MCP tools")
	reqs := e.llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model calls", len(reqs))
	}
	if b, _ := json.Marshal(reqs[1].Body["messages"]); !strings.Contains(string(b), "from acp") {
		t.Fatalf("the model did not get echo's result: %s", b)
	}
	if b, _ := json.Marshal(reqs[2].Body["messages"]); !strings.Contains(string(b), "logging") {
		t.Fatalf("the model did not get toggle-simulated-logging's result: %s", b)
	}
	c.mu.Lock()
	perms := append([]sdk.RequestPermissionRequest(nil), c.perms...)
	c.mu.Unlock()
	if len(perms) != 1 || !strings.Contains(jsonOf(perms[0]), "toggle-simulated-logging (MCP server web)") || !strings.Contains(jsonOf(perms[0]), "a test") {
		t.Fatalf("permission requests (echo is read-only, toggle is not): %s", jsonOf(perms))
	}

	s2 := c.newSession(e.root)
	c.mustPrompt(s2.SessionId, "hi")
	var names []string
	for _, x := range e.llm.Requests()[3].Body["tools"].([]any) {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	if strings.Contains(strings.Join(names, " "), "mcp__") {
		t.Fatalf("another session sees the first one's MCP servers: %v", names)
	}
}
