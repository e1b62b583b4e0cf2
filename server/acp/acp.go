// Package acp is the `zot acp` front: the Agent Client Protocol (JSON-RPC
// 2.0, one message a line, over stdio) that Zed, the JetBrains IDEs,
// Emacs's agent-shell and Neovim's codecompanion and avante speak to the
// agents they host. Types and the connection come from the ACP Go SDK
// (github.com/coder/acp-go-sdk); this package maps them onto the zot
// runtime: one runtime per ACP session, one extension host and MCP host
// per workspace (cwd), shared by its sessions.
//
// Files: acp.go (Serve and the connection's lifetime), stdio.go (the line
// filter and the batched writer), agent.go (the ACP methods), session.go
// (a session's runtime and state), hosts.go (a workspace's shared
// extension and MCP hosts, and which session they talk to), ui.go (the
// extensions' questions and trust questions as session/request_permission),
// config.go (config options, session/fork's conversions), prompt.go (prompt blocks, runs
// and their session/update stream), tools.go (tool_call titles, kinds,
// locations), workspace.go (reads and writes through fs/*), terminal.go
// (bash through terminal/*), permission.go (modes and
// session/request_permission), commands.go (slash commands and the
// extensions' notices and panels). docs/acp.md is the contract.
package acp

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
)

// Options configures a Server.
type Options struct {
	// Config is the runtime configuration from the command line (the
	// flags of `zot rpc` / `zot lsp`). session/new and session/load set
	// Cwd and Resume; Workspace, Hooks and the tool wiring are the
	// session's own.
	Config agent.Config
	// Exts are the --ext paths.
	Exts []string
	// NoExt runs without any extension (--no-ext).
	NoExt bool
	// NoMCP starts no MCP servers, neither configured nor the session's
	// (--no-mcp); MCPConfigs are --mcp-config files.
	NoMCP      bool
	MCPConfigs []string
	// DefaultMode is the permission mode a new session starts in; "" is
	// ask (the editor shows every edit and command before it runs).
	DefaultMode string
	// Log receives diagnostics (stderr); nil discards them.
	Log io.Writer
	// AskEveryTool is zot's --no-yolo: every tool call goes through
	// session/request_permission, in every mode.
	AskEveryTool bool
}

// Server is one ACP connection's zot.
type Server struct {
	opts Options
	log  *log.Logger
	conn *sdk.AgentSideConnection
	out  *outWriter

	ctx    context.Context // the connection's lifetime: cancelled at the end of input
	cancel context.CancelFunc

	mu       sync.Mutex
	caps     sdk.ClientCapabilities
	inited   bool
	sessions map[string]*session
	closing  bool
	// runs counts prompts in flight, so teardown waits for their end.
	runs sync.WaitGroup

	// hosts are the workspaces' extension and MCP hosts, by cwd.
	hostsMu sync.Mutex
	hosts   map[string]*workspaceHosts
	// activity orders the sessions by last use; askSeq numbers zot's
	// own tool calls (questions).
	activity atomic.Uint64
	askSeq   atomic.Uint64
}

// newAskID is the id of a tool call zot shows for a question of its own.
func (s *Server) newAskID(kind string) string {
	return fmt.Sprintf("zot-%s-%d", kind, s.askSeq.Add(1))
}

// New returns a server; Serve runs it.
func New(opts Options) *Server {
	w := opts.Log
	if w == nil {
		w = io.Discard
	}
	return &Server{opts: opts, log: log.New(w, "zot acp: ", log.LstdFlags|log.Lmsgprefix), sessions: map[string]*session{}, hosts: map[string]*workspaceHosts{}}
}

func (s *Server) logf(format string, args ...any) { s.log.Printf(format, args...) }

// Serve speaks ACP on in/out until in ends or ctx is cancelled. It then
// aborts every run (their bash process groups and terminals are killed),
// shuts the extensions down and closes the runtimes: no child outlives it.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.ctx, s.cancel = context.WithCancel(ctx)
	defer s.cancel()
	s.out = newOutWriter(out)
	pr, pw := io.Pipe()
	s.conn = sdk.NewAgentSideConnection(s, s.out, pr)
	logw := s.opts.Log
	if logw == nil {
		logw = io.Discard
	}
	s.conn.SetLogger(slog.New(slog.NewTextHandler(logw, &slog.HandlerOptions{Level: slog.LevelWarn})))
	// Input flows only now: the connection's reader starts in its
	// constructor, and a handler that ran before s.conn was set (a quick
	// client's session/new, whose commands are announced through s.conn)
	// raced with the assignment (the race detector caught it under load).
	go filterInput(in, pw, s.out, s.logf)

	select {
	case <-s.conn.Done():
	case <-s.ctx.Done():
	}
	s.teardown()
	pr.Close()
	// A client that stopped reading cannot hold zot: the last flush gets
	// a bounded wait.
	flushed := make(chan struct{})
	go func() { s.out.close(); close(flushed) }()
	select {
	case <-flushed:
	case <-time.After(shutdownGrace):
		s.logf("the client stopped reading: output still buffered after %v is dropped", shutdownGrace)
	}
	return nil
}

// shutdownGrace bounds the final flush of output at exit.
const shutdownGrace = 2 * time.Second

// teardown aborts the runs, waits (bounded) for them to end, then closes
// every session's extensions and runtime.
func (s *Server) teardown() {
	s.mu.Lock()
	s.closing = true
	list := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		list = append(list, ss)
	}
	s.mu.Unlock()
	for _, ss := range list {
		ss.abort()
	}
	s.cancel()
	done := make(chan struct{})
	go func() { s.runs.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.logf("runs still ending after 10s; closing anyway")
	}
	var wg sync.WaitGroup
	for _, ss := range list {
		wg.Add(1)
		go func() { defer wg.Done(); ss.close() }()
	}
	wg.Wait()
}
