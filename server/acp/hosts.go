package acp

import (
	"context"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/mcp"
)

// workspaceHosts are the extension host and the MCP host (the configured
// servers) of one workspace, a session's cwd, shared by every ACP session
// open in it — as zot lsp shares its one host across its sessions: an
// extension or an MCP server runs once per process and workspace, however
// many sessions the editor opens. They stop when the last session of the
// workspace closes (or at the end of input). The servers a session/new
// passed are that session's (sessionMCP).
type workspaceHosts struct {
	srv *Server
	cwd string
	ext *extensions.Host // nil with --no-ext
	mcp *mcp.Host        // nil with --no-mcp

	refs int // sessions using them; under srv.hostsMu

	mu sync.Mutex
	// known is closed and replaced when a session of the workspace
	// becomes known to the client: a question waiting for one goes on.
	known chan struct{}
	// early are the notices sent before the client knew any session of
	// the workspace; the first one shows them.
	early []func(*session)
	// mcpTold is the last problem logged per MCP server.
	mcpTold map[string]string
	// declined are the trust questions answered "no" in this process:
	// a reload does not ask again.
	declined map[string]bool
}

// maxEarlyNotices bounds the notices kept for the first session.
const maxEarlyNotices = 32

// acquireHosts returns cwd's hosts, starting them for the first session
// of the workspace. st is that session's runtime state (the extensions'
// hello_ack names its provider and model).
func (s *Server) acquireHosts(ctx context.Context, cfg agent.Config, st agent.State) (*workspaceHosts, error) {
	s.hostsMu.Lock()
	defer s.hostsMu.Unlock()
	if w := s.hosts[cfg.CWD]; w != nil {
		w.refs++
		return w, nil
	}
	w := &workspaceHosts{srv: s, cwd: cfg.CWD, refs: 1, known: make(chan struct{}), mcpTold: map[string]string{}, declined: map[string]bool{}}
	if !s.opts.NoMCP {
		w.startMCP(cfg)
	}
	if !s.opts.NoExt {
		if err := w.startExt(ctx, cfg, st); err != nil {
			w.close()
			return nil, err
		}
	}
	s.hosts[cfg.CWD] = w
	return w, nil
}

// releaseHosts drops a session's hold; the last one stops the hosts.
func (s *Server) releaseHosts(w *workspaceHosts) {
	s.hostsMu.Lock()
	w.refs--
	last := w.refs == 0
	if last && s.hosts[w.cwd] == w {
		delete(s.hosts, w.cwd)
	}
	s.hostsMu.Unlock()
	if last {
		w.close()
	}
}

// startExt starts the workspace's extensions in the background: they
// show as starting until they say hello, and their tools and commands,
// used before, wait for them. Untrusted project extensions are asked
// about in a session of the workspace (askTrust).
func (w *workspaceHosts) startExt(ctx context.Context, cfg agent.Config, st agent.State) error {
	var builtin []string
	for _, t := range tools.Builtins(tools.NewDiskWorkspace(w.cwd)) {
		builtin = append(builtin, t.Name())
	}
	var cmds []string
	for _, c := range builtinCommands {
		cmds = append(cmds, c.Name)
	}
	h := extensions.NewHost(extensions.Options{
		Cwd: w.cwd, Home: cfg.Home, ZotVersion: agent.Version, Provider: st.Provider, Model: st.Model,
		ExtPaths: w.srv.opts.Exts, BuiltinTools: builtin, BuiltinCommands: cmds,
		UI: hostUI{w}, Watch: true, Background: true, Logf: w.srv.logf,
		AskTrust: w.askExtensionTrust,
	})
	// The host outlives session/new's request: its own context.
	if err := h.Start(context.WithoutCancel(ctx)); err != nil {
		h.Close(context.Background())
		return err
	}
	w.ext = h
	return nil
}

// startMCP starts the configured MCP servers ($ZOT_HOME/mcp.json, the
// workspace's .mcp.json and .zot/mcp.json, --mcp-config) in the
// background. An untrusted project server is asked about in a session of
// the workspace, showing everything it would run.
func (w *workspaceHosts) startMCP(cfg agent.Config) {
	servers, errs := mcp.Load(mcp.Sources{Home: cfg.Home, Cwd: w.cwd, Extra: w.srv.opts.MCPConfigs}, nil)
	for _, e := range errs {
		w.srv.logf("mcp: %v", e)
	}
	var h *mcp.Host
	h = mcp.NewHost(mcp.Options{Cwd: w.cwd, Home: cfg.Home, Servers: servers, ConfigErrors: errs, ClientVersion: agent.Version, Logf: w.srv.logf,
		AskTrust: w.askMCPTrust,
		Changed: func() {
			for _, st := range h.Status() {
				if st.State == mcp.StateFailed || st.State == mcp.StateUntrusted || st.State == mcp.StateInvalid {
					line := st.State + ": " + st.LastError
					w.mu.Lock()
					told := w.mcpTold[st.Name] == line
					w.mcpTold[st.Name] = line
					w.mu.Unlock()
					if !told {
						w.srv.logf("MCP server %s: %s", st.Name, line)
					}
				}
			}
		}})
	h.Start()
	w.mcp = h
}

// close shuts the extensions and the MCP servers down.
func (w *workspaceHosts) close() {
	var wg sync.WaitGroup
	if w.ext != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := w.ext.Close(ctx); err != nil {
				w.srv.logf("extensions: shutdown: %v", err)
			}
		}()
	}
	if w.mcp != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if err := w.mcp.Close(ctx); err != nil {
				w.srv.logf("mcp: shutdown: %v", err)
			}
		}()
	}
	wg.Wait()
}

// sessions are the open sessions of the workspace.
func (w *workspaceHosts) sessions() []*session {
	s := w.srv
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*session
	for _, ss := range s.sessions {
		if ss.hosts == w {
			out = append(out, ss)
		}
	}
	return out
}

// origin is the session (and tool call) a host call is made for; it rides
// in the context of the prompt's run and of the tool_call intercepts, and
// the extension host hands it to a dialog the extension opens meanwhile.
type origin struct {
	ss     *session
	callID string
}

type originKey struct{}

func withOrigin(ctx context.Context, ss *session, callID string) context.Context {
	return context.WithValue(ctx, originKey{}, origin{ss: ss, callID: callID})
}

// target is the session a question or a notice of the workspace goes to:
// the session whose run or tool call the host is serving (ctx's origin),
// else the one a prompt runs in (the latest started), else the session
// the client used last. callID is the tool call it is about, if any.
// nil while the client knows no session of the workspace.
func (w *workspaceHosts) target(ctx context.Context) (ss *session, callID string) {
	if o, ok := ctx.Value(originKey{}).(origin); ok && o.ss.hosts == w && w.srv.session(o.ss.id) == o.ss {
		callID = o.callID
		if callID == "" {
			callID = o.ss.runningCall()
		}
		return o.ss, callID
	}
	var bestRunning bool
	var bestSeq uint64
	for _, c := range w.sessions() {
		c.mu.Lock()
		running, seq, known := c.running, c.activeSeq, c.announced
		c.mu.Unlock()
		if !known {
			continue
		}
		if ss == nil || (running && !bestRunning) || (running == bestRunning && seq > bestSeq) {
			ss, bestRunning, bestSeq = c, running, seq
		}
	}
	return ss, ""
}

// waitTarget is target, waiting (until ctx ends) for the client to know
// a session of the workspace: the trust question of a project extension
// is asked as soon as the first session/new has been answered.
func (w *workspaceHosts) waitTarget(ctx context.Context) (*session, string) {
	for {
		w.mu.Lock()
		known := w.known
		w.mu.Unlock()
		if ss, id := w.target(ctx); ss != nil {
			return ss, id
		}
		select {
		case <-known:
		case <-ctx.Done():
			return nil, ""
		}
	}
}

// sessionKnown: ss (of this workspace) is known to the client now; the
// notices sent before go to it, and waiting questions go on.
func (w *workspaceHosts) sessionKnown(ss *session) {
	w.mu.Lock()
	early := w.early
	w.early = nil
	close(w.known)
	w.known = make(chan struct{})
	w.mu.Unlock()
	for _, f := range early {
		f(ss)
	}
}

// show runs f on the target session, or keeps it for the first session
// the client knows.
func (w *workspaceHosts) show(f func(*session)) {
	// Under w.mu, so sessionKnown cannot drain early in between.
	w.mu.Lock()
	ss, _ := w.target(context.Background())
	if ss == nil {
		if len(w.early) < maxEarlyNotices {
			w.early = append(w.early, f)
		}
		w.mu.Unlock()
		return
	}
	w.mu.Unlock()
	f(ss)
}
