package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/mcp"
)

// sessionMCP is a session's MCP servers: the configured ones
// ($ZOT_HOME/mcp.json, the workspace's .mcp.json and .zot/mcp.json,
// --mcp-config) and the ones session/new (or load, resume) passed, which
// run for this session only.
type sessionMCP struct {
	set *mcp.SessionServers
}

// startMCP starts the servers session/new (or load, resume) passed, for
// this session only, beside the workspace's configured ones (shared:
// workspaceHosts.startMCP).
func (ss *session) startMCP() {
	h := ss.hosts.mcp
	if h == nil {
		return
	}
	set, err := h.AddSessionServers(sessionServers(ss.MCPServers(), ss.cwd))
	if err != nil {
		ss.srv.logf("mcp: %v", err)
		return
	}
	ss.mu.Lock()
	ss.mcp = &sessionMCP{set: set}
	ss.mu.Unlock()
}

// sessionServers converts ACP's mcpServers into the host's configuration.
func sessionServers(in []sdk.McpServer, cwd string) []mcp.ServerConfig {
	entries := map[string]json.RawMessage{}
	for i, s := range in {
		var name string
		var e map[string]any
		switch {
		case s.Stdio != nil:
			env := map[string]string{}
			for _, v := range s.Stdio.Env {
				env[v.Name] = v.Value
			}
			name = s.Stdio.Name
			e = map[string]any{"command": s.Stdio.Command, "args": s.Stdio.Args, "env": env}
		case s.Http != nil:
			name = s.Http.Name
			e = map[string]any{"type": "http", "url": s.Http.Url, "headers": headers(s.Http.Headers)}
		case s.Sse != nil:
			name = s.Sse.Name
			e = map[string]any{"type": "sse", "url": s.Sse.Url, "headers": headers(s.Sse.Headers)}
		default:
			name = fmt.Sprintf("server-%d", i+1)
			e = map[string]any{"type": "acp"} // refused by the parser: zot does not offer mcpCapabilities.acp
		}
		b, _ := json.Marshal(e)
		entries[name] = b
	}
	// No ${VAR} expansion for what the client sent: it is literal.
	return mcp.ParseServers(entries, mcp.ScopeSession, cwd, func(string) (string, bool) { return "", false })
}

func headers(hs []sdk.HttpHeader) map[string]string {
	out := map[string]string{}
	for _, h := range hs {
		out[h.Name] = h.Value
	}
	return out
}

func (ss *session) currentMCP() *sessionMCP {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mcp
}

// mcpTools are the session's MCP tools; readonly mode offers only those
// marked readOnlyHint.
func (ss *session) mcpTools() []tools.Tool {
	m := ss.currentMCP()
	if m == nil || m.set == nil {
		return nil
	}
	all := m.set.Tools()
	if ss.permissionMode() != ModeReadonly {
		return all
	}
	var out []tools.Tool
	for _, t := range all {
		if ro, ok := t.(interface{ ReadOnly() bool }); ok && !ro.ReadOnly() {
			continue
		}
		out = append(out, t)
	}
	return out
}

// permitMCP asks (ask mode) or refuses (readonly) an MCP tool not marked
// readOnlyHint, with its whole arguments in the permission request.
func (ss *session) permitMCP(ctx context.Context, call agent.ToolCallInfo, mode PermissionMode) (d agent.ToolDecision, asked bool) {
	var t *mcp.Tool
	for _, x := range ss.mcpTools() {
		if x.Name() == call.Name {
			t, _ = x.(*mcp.Tool)
		}
	}
	if t == nil || t.ReadOnly() || mode == ModeAuto {
		return agent.ToolDecision{}, false
	}
	if mode == ModeReadonly {
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("zot is in readonly mode: the MCP tool %s is not marked read-only, so it is not allowed. Tell the user what you would do instead.", call.Name)}, false
	}
	ss.mu.Lock()
	always := ss.allowMCP[call.Name]
	ss.mu.Unlock()
	if always {
		return agent.ToolDecision{}, true
	}
	args := string(call.Args)
	var v any
	if json.Unmarshal(call.Args, &v) == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		args = string(b)
	}
	tc := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(call.ID), Title: sdk.Ptr(fmt.Sprintf("%s (MCP server %s)", t.Remote(), t.Server())), Kind: sdk.Ptr(sdk.ToolKindOther),
		Status: sdk.Ptr(sdk.ToolCallStatusPending), RawInput: rawArgs(call.Args),
		Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("```json\n" + args + "\n```"))}}
	switch d, choice := ss.askPermission(ctx, tc, "Always allow "+call.Name+" in this session"); d {
	case allowed:
	case allowedAlways:
		ss.mu.Lock()
		ss.allowMCP[call.Name] = true
		ss.mu.Unlock()
	case rejected:
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user rejected calling %s (chose %q); it did not run.", call.Name, choice)}, true
	default:
		if choice != "" {
			return agent.ToolDecision{Block: true, Reason: choice + "; the tool did not run."}, true
		}
		return agent.ToolDecision{Block: true, Reason: "the run was cancelled while waiting for the user's approval; the tool did not run."}, true
	}
	return agent.ToolDecision{}, true
}

// closeMCP stops the session's MCP servers.
func (ss *session) closeMCP() {
	ss.mu.Lock()
	m := ss.mcp
	ss.mcp = nil
	ss.mu.Unlock()
	if m == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.set.Close(ctx); err != nil {
		ss.srv.logf("mcp: shutdown: %v", err)
	}
}
