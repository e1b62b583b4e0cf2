package acp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
)

// session is one ACP session: a runtime (one conversation, saved as one
// zot session), its workspace, its extension host and its permission
// state.
type session struct {
	srv *Server
	id  string
	cwd string
	rt  *agent.Runtime
	ws  *workspace
	// hosts are the workspace's extension and MCP hosts, shared with the
	// other sessions in cwd; set before the session is registered, then
	// fixed.
	hosts *workspaceHosts
	// bash is the terminal-backed bash (nil: the built-in runs it).
	bash *terminalBash
	// mcpServers are session/new's (and load's) MCP servers, kept for the
	// MCP host: see MCPServers.
	mcpServers []sdk.McpServer
	mcp        *sessionMCP     // nil with --no-mcp or once closed
	allowMCP   map[string]bool // MCP tools "always allowed" in this session

	mu         sync.Mutex
	mode       PermissionMode
	allowBash  bool            // "Always allow" commands in this session
	allowEdits bool            // "Always allow" edits in this session
	allowTools map[string]bool // --no-yolo: tools "always allowed" in this session
	running    bool
	idle       chan struct{} // closed when the running prompt ends
	cancelled  bool
	// forwarded are tool calls already announced to the client (the
	// tool_call went out): a permission request for one must follow it.
	forwarded map[string]chan struct{}
	calls     map[string]*toolCall
	current   string // the tool call running now (tools run one at a time)
	commands  string // the command list last announced
	announced bool   // the client knows the session: updates may flow
	activeSeq uint64 // when the client last used it (Server.activity)
	released  bool   // close let go of hosts
	panels    map[string]string
}

// MCPServers are the MCP servers the client passed in session/new,
// session/load or session/resume. This is the hand-over point to zot's MCP
// host: whoever wires it starts these per session (see docs/acp.md).
func (ss *session) MCPServers() []sdk.McpServer {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return append([]sdk.McpServer(nil), ss.mcpServers...)
}

// openSession builds a session in cwd; resume "" starts a new
// conversation, else reopens that saved session.
func (s *Server) openSession(ctx context.Context, cwd, resume string, mcp []sdk.McpServer) (*session, error) {
	return s.openSessionAs(ctx, cwd, resume, "", mcp)
}

// openSessionAs is openSession; with forkPath set it continues that
// saved session file in a copy under a new id (session/fork).
func (s *Server) openSessionAs(ctx context.Context, cwd, resume, forkPath string, mcp []sdk.McpServer) (*session, error) {
	fork := forkPath != ""
	s.mu.Lock()
	if !s.inited {
		s.mu.Unlock()
		return nil, &sdk.RequestError{Code: -32600, Message: "Invalid request: call initialize first"}
	}
	if s.closing {
		s.mu.Unlock()
		return nil, &sdk.RequestError{Code: -32603, Message: "zot acp is shutting down"}
	}
	s.mu.Unlock()
	if err := s.keyMissing(); err != nil {
		return nil, authRequired(err)
	}
	mode, _ := parseMode(s.opts.DefaultMode)
	if mode == "" {
		mode = ModeAsk
	}
	ss := &session{srv: s, cwd: cwd, mode: mode, mcpServers: mcp, allowMCP: map[string]bool{}, forwarded: map[string]chan struct{}{},
		calls: map[string]*toolCall{}, panels: map[string]string{}}
	caps := s.clientCaps()
	cfg := s.opts.Config
	cfg.CWD = cwd
	cfg.Resume, cfg.SessionPath = resume, ""
	if resume != "" {
		cfg.Sessions = true
	}
	if fork {
		cfg.Resume, cfg.SessionPath, cfg.Fork, cfg.Sessions = "", forkPath, true, true
	}
	if cfg.Home == "" {
		cfg.Home = s.home()
	}
	ss.ws = newWorkspace(ss, cwd, cfg.AddDirs, caps.Fs)
	// $ZOT_HOME and the extensions' directories: a write there asks, in
	// every mode, with or without extensions.
	cfg.WriteRules = append(slices.Clip(cfg.WriteRules), extensions.ProtectedWriteRule(extensions.ProtectedDirs(cfg.Home, cwd, s.opts.Exts)))
	cfg.Workspace = ss.ws
	cfg.Hooks = ss.hookChain()
	cfg.ExtraTools = ss.extraTools
	cfg.AwaitTool = ss.awaitTool
	cfg.AwaitExtensions = ss.awaitExtensions
	cfg.Providers = sessionProviders{ss}
	if caps.Terminal {
		cfg = ss.withTerminalBash(cfg)
	}
	rt, err := agent.New(cfg)
	if err != nil {
		return nil, requestError(err)
	}
	ss.rt = rt
	st := rt.State()
	ss.id = st.SessionID
	if resume != "" && !fork {
		// The client knows the session by the id it asked for, even when
		// zot continues in a copy (the file was open in another zot).
		ss.id = resume
	}
	if ss.id == "" {
		ss.id = newSessionID()
	}
	if st.ForkedFrom != "" && !fork {
		s.logf("session %s is open in another zot process; continuing in a copy, %s", st.ForkedFrom, st.SessionID)
	}
	hosts, err := s.acquireHosts(ctx, cfg, st)
	if err != nil {
		rt.Close()
		return nil, requestError(err)
	}
	ss.hosts = hosts
	ss.startMCP() // in the background: its tools appear as servers become ready
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ss.close()
		return nil, &sdk.RequestError{Code: -32603, Message: "zot acp is shutting down"}
	}
	if old := s.sessions[ss.id]; old != nil {
		s.mu.Unlock()
		ss.close()
		return old, nil
	}
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	return ss, nil
}

// currentHost is the workspace's extension host, nil with --no-ext.
func (ss *session) currentHost() *extensions.Host {
	if ss.hosts == nil {
		return nil
	}
	return ss.hosts.ext
}

// sessionProviders is agent.Config.Providers: the session's extensions'
// model providers.
type sessionProviders struct{ ss *session }

func (p sessionProviders) ProviderModels() []provider.Model {
	if h := p.ss.currentHost(); h != nil {
		return h.ProviderModels()
	}
	return nil
}

func (p sessionProviders) ProviderClient(name string) provider.Client {
	if h := p.ss.currentHost(); h != nil {
		return h.ProviderClient(name)
	}
	return nil
}

func (p sessionProviders) AwaitProviders(ctx context.Context) {
	if h := p.ss.currentHost(); h != nil {
		h.AwaitProviders(ctx)
	}
}

// runningCall is the tool call running now in the session's prompt, "".
func (ss *session) runningCall() string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if !ss.running {
		return ""
	}
	return ss.current
}

// touch records that the client used the session now (the target of the
// workspace's notices and questions).
func (ss *session) touch() {
	seq := ss.srv.activity.Add(1)
	ss.mu.Lock()
	ss.activeSeq = seq
	ss.mu.Unlock()
}

// extraTools is agent.Config.ExtraTools: the terminal bash, then the
// extensions' tools.
func (ss *session) extraTools() []tools.Tool {
	var out []tools.Tool
	if ss.bash != nil {
		out = append(out, ss.bash)
	}
	if h := ss.currentHost(); h != nil {
		out = append(out, h.Tools()...)
	}
	return append(out, ss.mcpTools()...)
}

// awaitExtensions is agent.Config.AwaitExtensions: a prompt waits,
// bounded, for the workspace's extensions still starting.
func (ss *session) awaitExtensions(ctx context.Context) {
	if h := ss.currentHost(); h != nil {
		h.AwaitStarting(ctx)
	}
}

func (ss *session) awaitTool(ctx context.Context, name string) tools.Tool {
	if m := ss.currentMCP(); m != nil && m.set != nil && strings.HasPrefix(name, "mcp__") {
		return m.set.AwaitTool(ctx, name)
	}
	if h := ss.currentHost(); h != nil {
		return h.AwaitTool(ctx, name)
	}
	return nil
}

// announceAfterNew tells the client the session's commands once
// session/new's answer is out: clients drop updates for a session they do
// not know yet.
func (ss *session) announceAfterNew() {
	mark, _ := json.Marshal(ss.id)
	ss.srv.out.afterResponse(append([]byte(`"sessionId":`), mark...), ss.announce)
}

// announce marks the session known to the client and sends its commands.
func (ss *session) announce() {
	ss.touch()
	ss.mu.Lock()
	ss.announced = true
	ss.mu.Unlock()
	ss.commandsChanged()
	if ss.hosts != nil {
		ss.hosts.sessionKnown(ss)
	}
}

// abort cancels the running prompt, if any.
func (ss *session) abort() {
	ss.mu.Lock()
	if ss.running {
		ss.cancelled = true
	}
	ss.mu.Unlock()
	if ss.rt != nil {
		ss.rt.Cancel()
	}
}

// waitIdle waits (at most d) for the running prompt to end.
func (ss *session) waitIdle(d time.Duration) {
	ss.mu.Lock()
	ch := ss.idle
	running := ss.running
	ss.mu.Unlock()
	if !running || ch == nil {
		return
	}
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// close stops the session's own MCP servers, closes the runtime and lets
// go of the workspace's hosts (the last session stops them): the runtime
// first, so its session_shutdown reaches the extensions while they run.
func (ss *session) close() {
	ss.closeMCP()
	if ss.rt != nil {
		ss.rt.Close()
	}
	ss.mu.Lock()
	w := ss.hosts
	released := ss.released
	ss.released = true
	ss.mu.Unlock()
	if w != nil && !released {
		ss.srv.releaseHosts(w)
	}
}

// update sends one session/update for this session.
func (ss *session) update(u sdk.SessionUpdate) {
	ctx := ss.srv.ctx
	if err := ss.srv.conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(ss.id), Update: u}); err != nil && ctx.Err() == nil {
		ss.srv.logf("session/update: %v", err)
	}
}

// modeState is the session's modes as ACP lists them.
func (ss *session) modeState() *sdk.SessionModeState {
	ss.mu.Lock()
	cur := ss.mode
	ss.mu.Unlock()
	return &sdk.SessionModeState{CurrentModeId: sdk.SessionModeId(cur), AvailableModes: []sdk.SessionMode{
		{Id: sdk.SessionModeId(ModeAsk), Name: "Ask", Description: sdk.Ptr("Edits and commands wait for your approval; reads run freely")},
		{Id: sdk.SessionModeId(ModeAuto), Name: "Auto", Description: sdk.Ptr("Edits and commands run without asking")},
		{Id: sdk.SessionModeId(ModeReadonly), Name: "Read only", Description: sdk.Ptr("zot reads and searches; edits and commands are refused")},
	}}
}

// modelState lists the models of the session's provider.
func (ss *session) modelState() *sdk.SessionModelState {
	st := ss.rt.State()
	out := &sdk.SessionModelState{CurrentModelId: sdk.ModelId(st.Model), AvailableModels: []sdk.ModelInfo{}}
	seen := false
	for _, m := range ss.rt.ListModels() {
		desc := fmt.Sprintf("%s, %dk context", m.Provider, m.ContextWindow/1000)
		if m.Reasoning {
			desc += ", reasons"
		}
		out.AvailableModels = append(out.AvailableModels, sdk.ModelInfo{ModelId: sdk.ModelId(m.ID), Name: m.ID, Description: sdk.Ptr(desc)})
		seen = seen || m.ID == st.Model
	}
	if !seen {
		out.AvailableModels = append(out.AvailableModels, sdk.ModelInfo{ModelId: sdk.ModelId(st.Model), Name: st.Model})
	}
	return out
}

func (ss *session) modelChanged() {
	if h := ss.currentHost(); h != nil {
		st := ss.rt.State()
		h.SetModelInfo(st.Provider, st.Model)
	}
	ss.configChanged()
}

func newSessionID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "zot-" + hex.EncodeToString(b[:])
}

// rawArgs decodes a tool call's arguments for rawInput.
func rawArgs(args json.RawMessage) any {
	if len(strings.TrimSpace(string(args))) == 0 {
		return map[string]any{}
	}
	var v any
	if json.Unmarshal(args, &v) != nil {
		return string(args)
	}
	return v
}
