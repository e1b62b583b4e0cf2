package server

import (
	"context"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/extensions/mcp"
)

// MCPHostFactory is the MCPFactory of zot's MCP host (extensions/mcp):
// $ZOT_HOME/mcp.json, the workspace's .mcp.json and .zot/mcp.json, then
// flagConfigs (--mcp-config) and the editor's mcpConfig files.
func MCPHostFactory(flagConfigs []string, logf func(format string, args ...any)) MCPFactory {
	return func(cfg MCPConfig) (MCPHost, error) {
		servers, errs := mcp.Load(mcp.Sources{Home: cfg.Home, Cwd: cfg.Cwd, Extra: flagConfigs}, nil)
		if len(cfg.EditorConfigs) > 0 {
			more, moreErrs := mcp.Load(mcp.Sources{Cwd: cfg.Cwd, Extra: cfg.EditorConfigs, ExtraNeedTrust: true}, nil)
			servers, errs = mergeServers(servers, more), append(errs, moreErrs...)
		}
		for _, e := range errs {
			logf("mcp: %v", e)
		}
		o := mcp.Options{Cwd: cfg.Cwd, Home: cfg.Home, Servers: servers, ConfigErrors: errs, ClientVersion: agent.Version,
			Changed: cfg.Changed, Logf: logf}
		if cfg.AskTrust != nil {
			o.AskTrust = func(ctx context.Context, r mcp.TrustRequest) bool {
				return cfg.AskTrust(ctx, MCPTrustRequest{Name: r.Name, File: r.File, CommandLine: r.CommandLine})
			}
		}
		h := mcp.NewHost(o)
		h.Start()
		return mcpHost{h}, nil
	}
}

// mergeServers: b's servers win over a's of the same name.
func mergeServers(a, b []mcp.ServerConfig) []mcp.ServerConfig {
	idx := map[string]int{}
	out := append([]mcp.ServerConfig(nil), a...)
	for i, s := range out {
		idx[s.Name] = i
	}
	for _, s := range b {
		if i, ok := idx[s.Name]; ok {
			out[i] = s
			continue
		}
		idx[s.Name] = len(out)
		out = append(out, s)
	}
	return out
}

// mcpHost adapts *mcp.Host to MCPHost.
type mcpHost struct{ *mcp.Host }

func (h mcpHost) Prompts() []CommandInfo {
	var out []CommandInfo
	for _, p := range h.Host.Prompts() {
		desc := p.Description
		if u := p.Usage(); u != "" {
			desc = strings.TrimSpace(desc + " — arguments: " + u)
		}
		out = append(out, CommandInfo{Name: p.Name, Description: desc, Source: "mcp", Extension: p.Server})
	}
	return out
}

func (h mcpHost) Resources() []MCPResource {
	var out []MCPResource
	for _, r := range h.Host.Resources() {
		out = append(out, MCPResource{Server: r.Server, URI: r.URI, Name: r.Name, Title: r.Title, Description: r.Description, MimeType: r.MIMEType})
	}
	return out
}

func (h mcpHost) Status() MCPResult {
	r := MCPResult{Servers: []MCPServerStatus{}, Errors: h.Host.ConfigErrors()}
	for _, s := range h.Host.Status() {
		r.Servers = append(r.Servers, MCPServerStatus{Name: s.Name, Scope: s.Scope, File: s.File, Transport: s.Transport, Command: s.Command,
			State: s.State, Tools: s.Tools, LastError: s.LastError, Restarts: s.Restarts, PID: s.PID, Log: s.Log})
	}
	return r
}
