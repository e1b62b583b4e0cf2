// Package server is `zot lsp`: the zot runtime and extension host behind a
// language server. It speaks the LSP base protocol (Content-Length framed
// JSON-RPC 2.0) on stdio with go.lsp.dev/protocol and go.lsp.dev/jsonrpc2;
// docs/protocol.md is the contract editors follow.
//
// The package is a thin adapter, one file per area, modelled on gopls's
// internal/server: lifecycle.go (initialize … exit), textsync.go (the
// overlay of unsaved buffers), prompt.go (runs and zot/event), edits.go
// (the editor-backed tools.Workspace), review.go (permission modes and
// approvals), progress.go, commands.go, panels.go, extensions.go,
// sessions.go, cancel.go, handler.go (the handler chain), protocol.go
// (the zot/* contract) and methods.go (the typed method tables).
package server

import (
	"context"
	"errors"
	"io"
	"log"
	"sync"
	"sync/atomic"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/skills"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/jsonstr"
)

// Runtime is the part of *agent.Runtime the server drives; tests may
// substitute a fake.
type Runtime interface {
	Prompt(ctx context.Context, text string, images []message.Content) (<-chan agent.Event, error)
	// PromptWith is Prompt with attachments, rewinding first when Keep >= 0.
	PromptWith(ctx context.Context, in agent.PromptInput) (<-chan agent.Event, error)
	Compact(ctx context.Context) (<-chan agent.Event, error)
	Cancel()
	State() agent.State
	Messages() []message.Message
	Clear() error
	SetModel(id string) error
	SetReasoning(level string) error
	ListModels() []provider.Model
	Sessions() ([]session.Info, error)
	Resume(which string) error
	NewSession() error
	Skills() []skills.Skill
	Skill(name string) (skills.Skill, bool)
	Close() error
}

// Options configures a Server.
type Options struct {
	// Config is the runtime configuration from the command line (the
	// flags of `zot rpc`). initialize's workspace and initializationOptions
	// override parts of it; Workspace, Hooks and ExtraTools are the
	// server's own.
	Config agent.Config
	// Exts are the --ext paths; initializationOptions.ext adds more.
	Exts []string
	// NewRuntime builds the runtime; default: agent.New.
	NewRuntime func(cfg agent.Config) (Runtime, error)
	// NewHost starts the extension host after initialized; nil runs
	// without extensions.
	NewHost HostFactory
	// Log receives diagnostics (stderr); nil discards them.
	Log io.Writer
	// NewMCP starts the MCP host at initialized; nil runs without MCP
	// servers (--no-mcp).
	NewMCP MCPFactory
	// DebugStats enables zot/debug/stats (debug.go).
	DebugStats bool
	// AskEveryTool is zot's --no-yolo: every tool call is asked about
	// (bash with its command, write and edit with their diff in ask mode,
	// any other tool with its whole arguments), in every permission mode.
	AskEveryTool bool
	// ReportRevision, when not 0, is the protocol revision initialize
	// reports instead of ProtocolRevision: only for the clients' tests of
	// the version handshake (zot lsp's ZOT_TEST_PROTOCOL_REVISION).
	ReportRevision int
}

// shutdownGrace is how long output may wait for the editor to read it
// once the input has ended or exit arrived (docs/protocol.md).
const shutdownGrace = 2 * time.Second

// ErrNoShutdown is returned by Serve when the client left (exit or end of
// input) without a shutdown request first; the process should exit 1.
var ErrNoShutdown = errors.New("the client left without a shutdown request")

type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// Server is one LSP connection's zot.
type Server struct {
	opts Options
	log  *log.Logger

	ctx   context.Context // the connection's lifetime
	conn  *conn
	out   *outQueue
	queue *dispatcher

	cancels *canceller
	overlay *overlay
	ws      *editorWorkspace
	runs    *runQueue

	mu    sync.Mutex
	state lifecycle
	caps  clientCaps
	enc   encoding
	cwd   string
	rt    Runtime
	rtErr error
	cfg   agent.Config
	exts  []string // --ext paths (the user's command line)
	// editorExts are initializationOptions.ext paths: those inside the
	// workspace need trust (a repository's settings can name them).
	editorExts []string
	host       Host
	hostErr    error
	hostReady  chan struct{}
	mode       PermissionMode
	allowBash  bool            // "Always allow for this session"
	allowTools map[string]bool // --no-yolo: tools "always allowed for this session"
	panels     map[string]string
	trust      map[string]bool // declined trust, by name+dir
	mcp        MCPHost
	noMCP      bool            // initializationOptions.noMcp
	mcpConfigs []string        // initializationOptions.mcpConfig
	allowMCP   map[string]bool // MCP tools "always allowed for this session" in ask mode
	// plain is what the client has of the standard tier (codeaction.go).
	plain plainCaps
	// progressToken maps live work-done progress tokens to their run.
	progressToken map[string]string
	editorTools   []tools.Tool
	exited        chan struct{}
	// handling counts requests being handled, so the answers to what
	// arrived before the input ended still go out.
	handling sync.WaitGroup
	// arrived counts messages read; processed those answered (in order,
	// see barrier).
	arrived   atomic.Int64
	procMu    sync.Mutex
	processed int64
	procCh    chan struct{}
	// hostStarted: startHost was launched (hostReady will close).
	hostStarted bool
	exitOnce    sync.Once
}

// New returns a server; Serve runs it.
func New(opts Options) *Server {
	if opts.NewRuntime == nil {
		opts.NewRuntime = func(cfg agent.Config) (Runtime, error) { return agent.New(cfg) }
	}
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	s := &Server{
		opts:          opts,
		log:           log.New(logw, "zot lsp: ", log.LstdFlags|log.Lmsgprefix),
		cancels:       newCanceller(),
		mode:          ModeAuto,
		panels:        map[string]string{},
		trust:         map[string]bool{},
		allowMCP:      map[string]bool{},
		progressToken: map[string]string{},
		exited:        make(chan struct{}),
		hostReady:     make(chan struct{}),
		procCh:        make(chan struct{}),
	}
	s.overlay = newOverlay()
	s.ws = newEditorWorkspace(s)
	s.runs = newRunQueue(s)
	return s
}

func (s *Server) logf(format string, args ...any) { s.log.Printf(format, args...) }

// Serve speaks LSP on in/out until the client exits or in ends. It then
// aborts any run, shuts the extensions down (no child process outlives
// it) and closes the runtime.
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx = ctx
	stream := newFrameStream(in, out, s.logf)
	s.out = stream.out
	s.conn = newConn(stream, s.logf)
	go s.runs.loop(ctx)
	s.conn.Go(ctx, s.handler())

	select {
	case <-s.conn.Done():
	case <-s.exited:
	case <-ctx.Done():
	}
	// From here on an editor that stopped reading cannot hold zot: output
	// gets a deadline, so handlers, runs and the final flush stop waiting
	// for room and the process exits within shutdownGrace plus the
	// extensions' own shutdown.
	stream.out.expireAfter(shutdownGrace)
	waitTimeout(&s.handling, shutdownGrace)
	cancel() // ends runs, trust prompts and a host still starting
	s.teardown()
	stream.out.close()
	s.mu.Lock()
	clean := s.state == stateShutdown
	s.mu.Unlock()
	if !clean {
		return ErrNoShutdown
	}
	return nil
}

// teardown stops runs, extensions and the runtime. Safe to call twice.
func (s *Server) teardown() {
	s.runs.stop(5 * time.Second)
	s.mu.Lock()
	starting := s.hostStarted
	s.mu.Unlock()
	if starting {
		// A host still starting is closed by startHost itself once it
		// sees the shutdown; wait for that so no extension outlives us.
		select {
		case <-s.hostReady:
		case <-time.After(15 * time.Second):
			s.logf("extensions: still starting after 15s; leaving")
		}
	}
	s.closeMCP()
	// The runtime first: closing it sends session_shutdown through the
	// hook chain to the extensions, which must still be up to hear it.
	s.mu.Lock()
	rt := s.rt
	s.rt = nil
	s.mu.Unlock()
	if rt != nil {
		rt.Close()
	}
	s.mu.Lock()
	host := s.host
	s.host = nil
	s.mu.Unlock()
	if host != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := host.Close(ctx); err != nil {
			s.logf("extensions: shutdown: %v", err)
		}
		cancel()
	}
}

// runtime returns the runtime, or the error that kept it from starting.
func (s *Server) runtime() (Runtime, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rt == nil {
		if s.rtErr != nil {
			return nil, errNoRuntime(s.rtErr)
		}
		return nil, errNotInitialized()
	}
	return s.rt, nil
}

// notify sends a notification to the client; errors (a client gone) are
// logged, never fatal.
func (s *Server) notify(method string, params any) {
	if s.conn == nil {
		return
	}
	if err := s.conn.Notify(s.ctx, method, params); err != nil && s.ctx.Err() == nil {
		s.logf("notify %s: %v", method, err)
	}
}

// sendRaw writes one complete JSON-RPC message as it is. It shares the
// output queue with the connection, so messages never interleave.
func (s *Server) sendRaw(body []byte) {
	if s.out == nil {
		return
	}
	if _, err := s.out.writeFrame(body); err != nil && s.ctx.Err() == nil {
		s.logf("write: %v", err)
	}
}

// sendReusable is sendRaw for a caller that reuses body's buffer: it
// returns the buffer to reuse, nil when a large body was handed to the
// output queue instead of copied (and must not be kept).
func (s *Server) sendReusable(body []byte) []byte {
	if s.out == nil {
		return body[:0]
	}
	if len(body) < ownedFrameMin {
		s.sendRaw(body)
		return body[:0]
	}
	if _, err := s.out.writeOwned(body); err != nil && s.ctx.Err() == nil {
		s.logf("write: %v", err)
	}
	return nil
}

// sendSpliced is sendRaw for an encoding with large texts kept apart.
func (s *Server) sendSpliced(body jsonstr.Spliced) {
	if s.out == nil {
		return
	}
	if _, err := s.out.writeSpliced(body); err != nil && s.ctx.Err() == nil {
		s.logf("write: %v", err)
	}
}

// call sends a request to the client and waits for its answer.
func (s *Server) call(ctx context.Context, method string, params, result any) error {
	if s.conn == nil {
		return errors.New("no client connection")
	}
	id, err := s.conn.Call(ctx, method, params, result)
	if err != nil && ctx.Err() != nil {
		// We stopped waiting (the run was aborted): say so, so the client
		// can close the review or dialog it still shows.
		s.notify(protocol.MethodCancelRequest, &protocol.CancelParams{ID: &id}) // *ID marshals as the JSON id
	}
	return err
}

func (s *Server) showMessage(typ protocol.MessageType, msg string) {
	s.notify(protocol.MethodWindowShowMessage, &protocol.ShowMessageParams{Type: typ, Message: msg})
}

// ask shows a window/showMessageRequest and returns the chosen title ("" if
// the user dismissed it or the client failed).
func (s *Server) ask(ctx context.Context, typ protocol.MessageType, msg string, actions ...string) string {
	items := make([]protocol.MessageActionItem, len(actions))
	for i, a := range actions {
		items[i] = protocol.MessageActionItem{Title: a}
	}
	var res *protocol.MessageActionItem
	err := s.call(ctx, protocol.MethodWindowShowMessageRequest, &protocol.ShowMessageRequestParams{Type: typ, Message: msg, Actions: items}, &res)
	if err != nil {
		s.logf("showMessageRequest: %v", err)
		return ""
	}
	if res == nil {
		return ""
	}
	return res.Title
}

// waitTimeout waits for wg, at most d.
func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}
