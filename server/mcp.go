package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
)

// MCPHost is the MCP host (package extensions/mcp) as the server uses it:
// tools for the registry, state for zot/mcp, restart. The server knows
// nothing else about MCP.
type MCPHost interface {
	Tools() []tools.Tool
	// AwaitTool waits for starting servers when the model calls an
	// mcp__ tool the current set lacks.
	AwaitTool(ctx context.Context, name string) tools.Tool
	Status() MCPResult
	// Prompts are the servers' prompts as slash commands (source "mcp",
	// extension: the server).
	Prompts() []CommandInfo
	// GetPrompt fetches a prompt with its arguments (words, in the
	// server's order) and returns the text to send as the prompt.
	GetPrompt(ctx context.Context, name, args string) (string, error)
	// Resources are the ready servers' resources (to attach as context).
	Resources() []MCPResource
	// ReadResource reads one resource of a server as text, with its MIME
	// type.
	ReadResource(ctx context.Context, server, uri string) (text, mime string, err error)
	// Restart restarts one server and waits until it is ready or failed.
	Restart(ctx context.Context, name string) error
	Close(ctx context.Context) error
}

// MCPConfig is what an MCPFactory gets.
type MCPConfig struct {
	Cwd  string
	Home string
	// EditorConfigs are initializationOptions.mcpConfig files: those
	// inside the workspace need trust (a repository can ship settings).
	EditorConfigs []string
	// AskTrust asks the user whether an untrusted project server may run.
	AskTrust func(ctx context.Context, req MCPTrustRequest) bool
	// Changed is called after any change of a server's state or tools.
	Changed func()
}

// MCPTrustRequest is a project MCP server asking to run.
type MCPTrustRequest struct {
	Name        string
	File        string
	CommandLine string
}

// MCPFactory starts the MCP host (in the background: it returns at once).
type MCPFactory func(cfg MCPConfig) (MCPHost, error)

// mcpTool is what the server needs of an MCP tool: its annotations.
type mcpTool interface {
	ReadOnly() bool
	Server() string
	Remote() string
}

// startMCP starts the MCP host at initialized; its servers connect in the
// background, so it never holds up the first prompt.
func (s *Server) startMCP() {
	s.mu.Lock()
	disabled := s.opts.NewMCP == nil || s.noMCP
	cfg := MCPConfig{Cwd: s.cwd, Home: s.cfg.Home, EditorConfigs: s.mcpConfigs, AskTrust: s.askMCPTrust, Changed: s.sendMCPChanged}
	s.mu.Unlock()
	if disabled {
		return
	}
	h, err := s.opts.NewMCP(cfg)
	if err != nil {
		s.logf("mcp: %v", err)
		s.showMessage(protocol.MessageTypeWarning, "zot: MCP servers could not start: "+err.Error())
		return
	}
	s.mu.Lock()
	gone := s.state == stateShutdown || s.ctx.Err() != nil
	if !gone {
		s.mcp = h
	}
	s.mu.Unlock()
	if gone {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		h.Close(ctx)
		cancel()
	}
}

func (s *Server) currentMCP() MCPHost {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mcp
}

// mcpTools are the MCP tools for the next model call; readonly mode
// offers only those marked readOnlyHint.
func (s *Server) mcpTools() []tools.Tool {
	h := s.currentMCP()
	if h == nil {
		return nil
	}
	all := h.Tools()
	if s.permissionMode() != ModeReadonly {
		return all
	}
	out := all[:0:0]
	for _, t := range all {
		if m, ok := t.(mcpTool); ok && !m.ReadOnly() {
			continue
		}
		out = append(out, t)
	}
	return out
}

// lookupMCPTool finds the MCP tool the model called, if it is one.
func (s *Server) lookupMCPTool(name string) mcpTool {
	if !strings.HasPrefix(name, "mcp__") {
		return nil
	}
	h := s.currentMCP()
	if h == nil {
		return nil
	}
	for _, t := range h.Tools() {
		if t.Name() == name {
			if m, ok := t.(mcpTool); ok {
				return m
			}
		}
	}
	return nil
}

// MCPApprovalPrefix starts an MCP tool approval's message; the tool and
// its whole arguments follow.
const MCPApprovalPrefix = "zot wants to call an MCP tool that is not marked read-only:\n\n"

// permitMCP applies the permission mode to an MCP tool: a tool not marked
// readOnlyHint is refused in readonly mode and asked about in ask mode,
// with its whole arguments shown. asked: the user answered for this call
// (no second question follows).
func (s *Server) permitMCP(ctx context.Context, call agent.ToolCallInfo, mode PermissionMode) (d agent.ToolDecision, asked bool) {
	t := s.lookupMCPTool(call.Name)
	if t == nil || t.ReadOnly() {
		return agent.ToolDecision{}, false
	}
	switch mode {
	case ModeReadonly:
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("zot is in readonly mode: the MCP tool %s is not marked read-only, so it is not allowed. Tell the user what you would do instead.", call.Name)}, false
	case ModeAsk:
	default:
		return agent.ToolDecision{}, false
	}
	s.mu.Lock()
	allowed := s.allowMCP[call.Name]
	s.mu.Unlock()
	if allowed {
		return agent.ToolDecision{}, true
	}
	args := string(call.Args)
	var v any
	if json.Unmarshal(call.Args, &v) == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		args = string(b)
	}
	msg := fmt.Sprintf("%stool %s of the MCP server %s (%s), with the arguments:\n\n%s", MCPApprovalPrefix, t.Remote(), t.Server(), call.Name, args)
	return s.mcpChoice(ctx, call, s.ask(ctx, protocol.MessageTypeWarning, msg, Deny, AllowOnce, AllowSession)), true
}

// mcpChoice turns the answer to an MCP tool approval into a decision.
func (s *Server) mcpChoice(ctx context.Context, call agent.ToolCallInfo, choice string) agent.ToolDecision {
	switch choice {
	case AllowOnce:
		return agent.ToolDecision{}
	case AllowSession:
		s.mu.Lock()
		s.allowMCP[call.Name] = true
		s.mu.Unlock()
		return agent.ToolDecision{}
	case "":
		if ctx.Err() != nil {
			return agent.ToolDecision{Block: true, Reason: "the run was aborted while waiting for the user's approval; the tool did not run."}
		}
		return agent.ToolDecision{Block: true, Reason: "the user dismissed the approval prompt (no decision, treated as \"Deny\"); the tool did not run. Ask the user how to proceed."}
	default:
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user denied calling %s (chose %q); it did not run. Ask the user how to proceed.", call.Name, choice)}
	}
}

// askMCPTrust asks the editor whether to run an untrusted project MCP
// server, showing everything it would run. A "no" is remembered for this
// process.
func (s *Server) askMCPTrust(ctx context.Context, req MCPTrustRequest) bool {
	key := "mcp\x00" + req.Name + "\x00" + req.CommandLine
	s.mu.Lock()
	if s.trust[key] {
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	msg := fmt.Sprintf("Trust and run the project MCP server %q from %s? It runs with your permissions:\n\n%s", req.Name, s.ws.display(req.File), req.CommandLine)
	yes := s.ask(ctx, protocol.MessageTypeWarning, msg, TrustNo, TrustYes) == TrustYes
	if !yes && ctx.Err() == nil {
		s.mu.Lock()
		s.trust[key] = true
		s.mu.Unlock()
	}
	return yes
}

func (s *Server) mcpResult() MCPResult {
	s.mu.Lock()
	h, disabled := s.mcp, s.opts.NewMCP == nil || s.noMCP
	s.mu.Unlock()
	if h == nil {
		return MCPResult{Servers: []MCPServerStatus{}, Disabled: disabled}
	}
	r := h.Status()
	if r.Servers == nil {
		r.Servers = []MCPServerStatus{}
	}
	return r
}

// sendMCPChanged tells the editor; the command list may have changed too
// (a server's prompts are slash commands).
func (s *Server) sendMCPChanged() {
	notifyMCPChanged.send(s, s.mcpResult())
	s.sendChanged()
}

func (s *Server) zotMCP(ctx context.Context) (MCPResult, error) {
	return s.mcpResult(), nil
}

func (s *Server) zotMCPResources(ctx context.Context) (MCPResourcesResult, error) {
	res := MCPResourcesResult{Resources: []MCPResource{}}
	if h := s.currentMCP(); h != nil {
		res.Resources = append(res.Resources, h.Resources()...)
	}
	return res, nil
}

func (p *MCPRestartParams) validate(method string) error {
	if strings.TrimSpace(p.Name) == "" {
		return fieldError(method, "name", "names the server to restart (zot/mcp lists them)")
	}
	return nil
}

func (s *Server) zotMCPRestart(ctx context.Context, p *MCPRestartParams) (MCPResult, error) {
	release(ctx) // a restart waits for the server: don't hold the queue
	h := s.currentMCP()
	if h == nil {
		return MCPResult{}, rpcError(CodeRequestFailed, "no MCP server runs (--no-mcp, initializationOptions.noMcp, or none configured)")
	}
	if err := h.Restart(ctx, p.Name); err != nil {
		return MCPResult{}, rpcError(CodeRequestFailed, "%v", err)
	}
	return s.mcpResult(), nil
}

// closeMCP stops the MCP servers (teardown).
func (s *Server) closeMCP() {
	s.mu.Lock()
	h := s.mcp
	s.mcp = nil
	s.mu.Unlock()
	if h == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		s.logf("mcp: shutdown: %v", err)
	}
}
