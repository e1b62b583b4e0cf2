// Package mcp is zot's Model Context Protocol host, beside the extension
// host: it reads Claude Code's mcpServers configuration, runs or connects
// to each server with the official Go SDK (stdio, streamable HTTP, SSE),
// keeps them alive and offers their tools to the runtime as
// mcp__<server>__<tool>.
//
// Usage:
//
//	h := mcp.NewHost(mcp.Options{Cwd: cwd, Home: home, Servers: servers, …})
//	h.Start()                        // returns at once; servers connect in parallel
//	defer h.Close(context.Background())
//	rt, _ := agent.New(agent.Config{ExtraTools: h.Tools, AwaitTool: h.AwaitTool, …})
//
// See docs/mcp.md for the configuration, naming, trust and fault rules.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/ctxwait"
)

// Server states as Status reports them.
const (
	StateStarting   = "starting"
	StateReady      = "ready"
	StateRestarting = "restarting" // it exited; a restart is scheduled
	StateFailed     = "failed"     // it keeps failing; zot/mcp/restart tries again
	StateUntrusted  = "untrusted"
	StateInvalid    = "invalid" // a bad configuration entry
	StateStopped    = "stopped"
)

// Options configures a Host.
type Options struct {
	Cwd  string // the workspace (trust is recorded per workspace)
	Home string // $ZOT_HOME; default home.Dir()
	// Servers are the configured servers (Load), in precedence-resolved
	// order; ConfigErrors are the files that could not be read, shown in
	// Status as they are.
	Servers      []ServerConfig
	ConfigErrors []error
	// ClientVersion is zot's version, sent in initialize.
	ClientVersion string
	// AskTrust is asked (in the background) whether an untrusted project
	// server may run; true records the trust and starts it. Nil leaves it
	// untrusted (`zot mcp trust NAME`).
	AskTrust func(context.Context, TrustRequest) bool
	// Changed is called (never under a lock) after any change of state
	// or of a tool list.
	Changed func()
	// Logf receives host-level messages; per-server ones go to
	// $ZOT_HOME/logs/mcp-<name>.log.
	Logf func(format string, args ...any)

	StartTimeout   time.Duration   // spawn/connect through initialize; 60 s
	RestartBackoff []time.Duration // before restarts 1..n after exits; 1 s, 5 s, 25 s, then failed
	StableAfter    time.Duration   // a server up this long has its exit count reset; 5 min
}

// TrustRequest is a project server asking to run.
type TrustRequest struct {
	Name        string
	File        string // the configuration file that names it
	Transport   string
	CommandLine string // everything that runs, or the URL
}

// Status describes one server.
type Status struct {
	Name      string   `json:"name"`
	Scope     string   `json:"scope"`
	File      string   `json:"file,omitempty"`
	Transport string   `json:"transport"`
	Command   string   `json:"command"` // CommandLine
	State     string   `json:"state"`
	Tools     []string `json:"tools"` // the names the model sees
	Prompts   []string `json:"prompts,omitempty"`
	LastError string   `json:"lastError,omitempty"`
	Restarts  int      `json:"restarts,omitempty"`
	PID       int      `json:"pid,omitempty"`
	Log       string   `json:"log,omitempty"`
}

// Host runs a workspace's MCP servers. Create it with NewHost.
type Host struct {
	o      Options
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	servers []*server // by name
	sets    map[*SessionServers]bool
	closed  bool
	wg      sync.WaitGroup

	changedCh chan struct{}
	wake      chan struct{} // closed and replaced on every change (waiters)
}

// NewHost applies defaults; nothing runs before Start.
func NewHost(o Options) *Host {
	if o.Home == "" {
		o.Home = home.Dir()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = 60 * time.Second
	}
	if o.RestartBackoff == nil {
		o.RestartBackoff = []time.Duration{time.Second, 5 * time.Second, 25 * time.Second}
	}
	if o.StableAfter <= 0 {
		o.StableAfter = 5 * time.Minute
	}
	if o.ClientVersion == "" {
		o.ClientVersion = "dev"
	}
	h := &Host{o: o, sets: map[*SessionServers]bool{}, changedCh: make(chan struct{}, 1), wake: make(chan struct{})}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	for _, c := range o.Servers {
		h.servers = append(h.servers, newServer(h, c))
	}
	sort.SliceStable(h.servers, func(i, j int) bool { return h.servers[i].cfg.Name < h.servers[j].cfg.Name })
	return h
}

// Start starts every trusted, valid server in parallel and returns at
// once: their tools appear as each becomes ready. Untrusted project
// servers are asked about (AskTrust) in the background.
func (h *Host) Start() {
	h.goBG(h.changedLoop)
	for _, s := range h.servers {
		h.startOrAsk(s)
	}
	h.changed()
}

func (h *Host) startOrAsk(s *server) {
	c := s.cfg
	switch {
	case c.Err != nil:
		s.setState(StateInvalid, c.Err.Error())
	case c.NeedsTrust() && !extensions.IsTrusted(h.o.Home, h.o.Cwd, c.TrustKey(), c.TrustHash()):
		s.setState(StateUntrusted, fmt.Sprintf("project MCP server from %s is not trusted; it would run: %s. Trust it in your editor or with `zot mcp trust %s`", c.File, c.CommandLine(), c.Name))
		if h.o.AskTrust != nil {
			// Until the user answers, the server counts as starting for
			// whoever waits for the tools (a tool call the model makes
			// meanwhile): their answer decides, not the race.
			s.setAsking(true)
			if !h.goBG(func() {
				defer s.setAsking(false) // after launch: starting by then
				req := TrustRequest{Name: c.Name, File: c.File, Transport: c.Type, CommandLine: c.CommandLine()}
				if !h.o.AskTrust(h.ctx, req) {
					return
				}
				if err := extensions.RecordTrust(h.o.Home, h.o.Cwd, c.TrustKey(), c.TrustHash()); err != nil {
					s.setState(StateUntrusted, "recording trust failed: "+err.Error())
					return
				}
				s.launch()
			}) {
				s.setAsking(false)
			}
		}
	default:
		s.launch()
	}
}

// Trust records trust for the project server name and starts it.
func (h *Host) Trust(name string) error {
	s := h.server(name)
	if s == nil {
		return fmt.Errorf("no MCP server named %q is configured here", name)
	}
	if s.cfg.Err != nil {
		return s.cfg.Err
	}
	if !s.cfg.NeedsTrust() {
		return nil
	}
	if err := extensions.RecordTrust(h.o.Home, h.o.Cwd, s.cfg.TrustKey(), s.cfg.TrustHash()); err != nil {
		return err
	}
	s.launch()
	return nil
}

// Restart stops the server name (if it runs) and starts it again, with its
// exit count reset, and waits until it is ready or fails (or ctx ends).
func (h *Host) Restart(ctx context.Context, name string) error {
	s := h.server(name)
	if s == nil {
		return fmt.Errorf("no MCP server named %q; configured: %s", name, strings.Join(h.names(), ", "))
	}
	switch st := s.status(); st.State {
	case StateInvalid:
		return fmt.Errorf("MCP server %q cannot start: %s", name, st.LastError)
	case StateUntrusted:
		return fmt.Errorf("MCP server %q is not trusted in this workspace; trust it first (`zot mcp trust %s`)", name, name)
	}
	s.restart()
	return h.waitSettled(ctx, []*server{s})
}

// WaitStarted waits until no server is starting (each is ready or
// failed), or ctx ends. Print mode uses it so its one prompt sees the
// tools; the long-running fronts never wait.
func (h *Host) WaitStarted(ctx context.Context) error {
	h.mu.Lock()
	all := slices.Clone(h.servers)
	h.mu.Unlock()
	return h.waitSettled(ctx, all)
}

func (h *Host) waitSettled(ctx context.Context, ss []*server) error {
	for {
		h.mu.Lock()
		wake := h.wake
		h.mu.Unlock()
		busy := false
		for _, s := range ss {
			if s.settling() {
				busy = true
			}
		}
		if !busy {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Status lists every configured server by name; ConfigErrors lists the
// files that could not be used.
func (h *Host) Status() []Status {
	h.mu.Lock()
	ss := slices.Clone(h.servers)
	h.mu.Unlock()
	names := toolNames(ss)
	out := make([]Status, 0, len(ss))
	for _, s := range ss {
		st := s.status()
		st.Tools = names[s]
		if st.Tools == nil {
			st.Tools = []string{}
		}
		out = append(out, st)
	}
	return out
}

// ConfigErrors are the configuration files that could not be read.
func (h *Host) ConfigErrors() []string {
	var out []string
	for _, e := range h.o.ConfigErrors {
		out = append(out, e.Error())
	}
	return out
}

// Tools are the tools of every ready (or restarting) server, for the next
// model call (agent.Config.ExtraTools).
func (h *Host) Tools() []tools.Tool {
	h.mu.Lock()
	ss := slices.Clone(h.servers)
	h.mu.Unlock()
	return buildTools(ss)
}

// AwaitTool is agent.Config.AwaitTool: the model called an mcp__ tool
// the current set lacks, perhaps of a server still starting. It waits for
// the starting servers (bounded by StartTimeout) and looks again.
func (h *Host) AwaitTool(ctx context.Context, name string) tools.Tool {
	if !strings.HasPrefix(name, "mcp__") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, h.o.StartTimeout)
	defer cancel()
	_ = h.WaitStarted(ctx)
	for _, t := range h.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// Close stops every server (stdin closed, then SIGTERM and SIGKILL to
// its process group) and waits for them, or for ctx.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	ss := slices.Clone(h.servers)
	for set := range h.sets {
		ss = append(ss, set.servers...)
	}
	h.mu.Unlock()
	h.cancel()
	for _, s := range ss {
		s.stop()
	}
	return ctxwait.Wait(ctx, h.wg.Wait)
}

func (h *Host) server(name string) *server {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range h.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

func (h *Host) names() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, s := range h.servers {
		out = append(out, s.cfg.Name)
	}
	return out
}

// goBG runs fn as a tracked goroutine unless the host closed.
func (h *Host) goBG(fn func()) bool {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return false
	}
	h.wg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.wg.Done()
		fn()
	}()
	return true
}

func (h *Host) logf(format string, args ...any) {
	if h.o.Logf != nil {
		h.o.Logf(format, args...)
	}
}

// changed wakes waiters and asks for one Changed soon (calls coalesce).
func (h *Host) changed() {
	h.mu.Lock()
	close(h.wake)
	h.wake = make(chan struct{})
	h.mu.Unlock()
	select {
	case h.changedCh <- struct{}{}:
	default:
	}
}

func (h *Host) changedLoop() {
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.changedCh:
			if h.o.Changed != nil {
				h.o.Changed()
			}
		}
	}
}

// SessionServers are servers added for one session (ACP session/new's
// mcpServers): their tools join the host's for that session only, and
// Close stops them.
type SessionServers struct {
	h       *Host
	servers []*server
}

// AddSessionServers starts servers for one session. They need no trust
// (the client that opened the session chose them) and start in the
// background like the others.
func (h *Host) AddSessionServers(cfgs []ServerConfig) (*SessionServers, error) {
	set := &SessionServers{h: h}
	for _, c := range cfgs {
		c.Scope = ScopeSession
		set.servers = append(set.servers, newServer(h, c))
	}
	sort.SliceStable(set.servers, func(i, j int) bool { return set.servers[i].cfg.Name < set.servers[j].cfg.Name })
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, errors.New("mcp: host closed")
	}
	h.sets[set] = true
	h.mu.Unlock()
	for _, s := range set.servers {
		if s.cfg.Err != nil {
			s.setState(StateInvalid, s.cfg.Err.Error())
			continue
		}
		s.launch()
	}
	return set, nil
}

// Tools are the host's tools and this session's; a session server wins
// over a configured one of the same name.
func (set *SessionServers) Tools() []tools.Tool {
	set.h.mu.Lock()
	ss := slices.Clone(set.h.servers)
	set.h.mu.Unlock()
	mine := map[string]bool{}
	for _, s := range set.servers {
		mine[s.cfg.Name] = true
	}
	ss = slices.DeleteFunc(ss, func(s *server) bool { return mine[s.cfg.Name] })
	ss = append(ss, set.servers...)
	sort.SliceStable(ss, func(i, j int) bool { return ss[i].cfg.Name < ss[j].cfg.Name })
	return buildTools(ss)
}

// AwaitTool is AwaitTool for the session: it waits for the host's and
// the session's starting servers, then looks in the session's tools.
func (set *SessionServers) AwaitTool(ctx context.Context, name string) tools.Tool {
	if !strings.HasPrefix(name, "mcp__") {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, set.h.o.StartTimeout)
	defer cancel()
	set.h.mu.Lock()
	all := append(slices.Clone(set.h.servers), set.servers...)
	set.h.mu.Unlock()
	_ = set.h.waitSettled(ctx, all)
	for _, t := range set.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// Status lists this session's servers.
func (set *SessionServers) Status() []Status {
	names := toolNames(set.servers)
	var out []Status
	for _, s := range set.servers {
		st := s.status()
		st.Tools = names[s]
		out = append(out, st)
	}
	return out
}

// Close stops this session's servers and waits for them (or ctx).
func (set *SessionServers) Close(ctx context.Context) error {
	set.h.mu.Lock()
	delete(set.h.sets, set)
	set.h.mu.Unlock()
	for _, s := range set.servers {
		s.stop()
	}
	for _, s := range set.servers {
		if err := s.waitStopped(ctx); err != nil {
			return err
		}
	}
	set.h.changed()
	return nil
}
