package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/childproc"
)

// stdioTerminate is how long a stdio server has to exit once its stdin
// is closed, before SIGTERM (and SIGKILL as long again after).
const stdioTerminate = 2 * time.Second

// logRotateBytes: a log bigger than this starts over when the server starts.
const logRotateBytes = 16 << 20

// server is one configured server and the goroutine that keeps it
// connected.
type server struct {
	h       *Host
	cfg     ServerConfig
	logPath string
	groups  childproc.Groups // the stdio server's process group
	seq     atomic.Uint64    // progress tokens

	mu       sync.Mutex
	state    string
	asking   bool // the user is being asked to trust it (AskTrust)
	lastErr  string
	exits    int // since the last manual restart or stable run
	restarts int // in this process, for Status
	pid      int
	cs       *sdk.ClientSession
	tools    []*sdk.Tool
	prompts  []*sdk.Prompt
	// resources are listed once at connect and on list_changed; a
	// server with thousands of them lists them all (paged by the SDK).
	resources []*sdk.Resource
	running   bool
	cancel    context.CancelFunc
	kick      chan struct{}
	loopDone  chan struct{}
	progress  map[string]*progressSink
}

func newServer(h *Host, c ServerConfig) *server {
	return &server{
		h: h, cfg: c, state: StateStopped,
		logPath:  filepath.Join(h.o.Home, "logs", "mcp-"+sanitize(c.Name)+".log"),
		kick:     make(chan struct{}, 1),
		progress: map[string]*progressSink{},
	}
}

func (s *server) setState(state, lastErr string) {
	s.mu.Lock()
	s.state = state
	if lastErr != "" {
		s.lastErr = lastErr // kept once ready again: "last error"
	}
	s.mu.Unlock()
	s.h.changed()
}

// setAsking marks the trust question open or answered.
func (s *server) setAsking(on bool) {
	s.mu.Lock()
	s.asking = on
	s.mu.Unlock()
	s.h.changed()
}

// settling: starting, or waiting for the user's trust answer (which
// may start it).
func (s *server) settling() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == StateStarting || s.asking
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Scope: s.cfg.Scope, File: s.cfg.File, Transport: s.cfg.Type, Command: s.cfg.CommandLine(),
		State: s.state, LastError: s.lastErr, Restarts: s.restarts, PID: s.pid}
	if s.cfg.Type == TransportStdio {
		st.Log = s.logPath
	}
	if s.cfg.Type == "" {
		st.Transport = TransportStdio
	}
	for _, p := range s.prompts {
		st.Prompts = append(st.Prompts, PromptName(s.cfg.Name, p.Name))
	}
	return st
}

// launch starts the connection loop unless it runs.
func (s *server) launch() {
	s.mu.Lock()
	if s.running {
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(s.h.ctx)
	s.running, s.cancel, s.loopDone = true, cancel, make(chan struct{})
	s.state, s.exits = StateStarting, 0
	done := s.loopDone
	s.mu.Unlock()
	if !s.h.goBG(func() { s.loop(ctx, done) }) {
		cancel()
		s.mu.Lock()
		s.running, s.state = false, StateStopped
		s.mu.Unlock()
		close(done)
	}
	s.h.changed()
}

// restart asks the loop to reconnect now, with the exit count reset.
func (s *server) restart() {
	s.mu.Lock()
	running := s.running
	if running {
		s.exits, s.state = 0, StateStarting
	}
	s.mu.Unlock()
	if !running {
		s.launch()
		return
	}
	select {
	case s.kick <- struct{}{}:
	default:
	}
	s.h.changed()
}

func (s *server) stop() {
	s.mu.Lock()
	if s.cancel != nil {
		s.cancel()
	}
	s.mu.Unlock()
}

func (s *server) waitStopped(ctx context.Context) error {
	s.mu.Lock()
	done := s.loopDone
	s.mu.Unlock()
	if done == nil {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// loop connects, waits for the connection to end and reconnects with
// backoff, until ctx ends.
func (s *server) loop(ctx context.Context, done chan struct{}) {
	defer func() {
		s.groups.KillAll()
		s.mu.Lock()
		s.running, s.cs, s.pid = false, nil, 0
		s.state = StateStopped
		s.mu.Unlock()
		close(done)
		s.h.changed()
	}()
	for {
		cs, err := s.connect(ctx)
		if ctx.Err() != nil {
			if cs != nil {
				cs.Close()
			}
			return
		}
		if err == nil {
			s.mu.Lock()
			s.cs, s.state = cs, StateReady
			s.mu.Unlock()
			s.h.changed()
			up := time.Now()
			waitCh := make(chan error, 1)
			go func() { waitCh <- cs.Wait() }()
			select {
			case <-ctx.Done():
				s.closeSession(cs)
				return
			case <-s.kick:
				s.log("restart requested")
				s.closeSession(cs)
				continue
			case werr := <-waitCh:
				s.closeSession(cs)
				err = s.exitError("exited", werr)
				if time.Since(up) >= s.h.o.StableAfter {
					s.mu.Lock()
					s.exits = 0
					s.mu.Unlock()
				}
			}
		}
		s.log("%v", err)
		s.mu.Lock()
		s.exits++
		s.restarts++
		n := s.exits
		s.mu.Unlock()
		backoff := s.h.o.RestartBackoff
		if n > len(backoff) {
			s.setState(StateFailed, err.Error())
			s.log("giving up after %d failed starts; zot/mcp/restart (or `zot mcp list` after a fix) tries again", n)
			select {
			case <-ctx.Done():
				return
			case <-s.kick:
				continue
			}
		}
		s.setState(StateRestarting, err.Error())
		t := time.NewTimer(backoff[n-1])
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-s.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// closeSession ends a session and the server's process group.
func (s *server) closeSession(cs *sdk.ClientSession) {
	s.mu.Lock()
	if s.cs == cs {
		s.cs = nil
	}
	s.pid = 0
	s.mu.Unlock()
	_ = cs.Close()
	s.groups.KillAll()
}

// exitError describes why a connection ended, with the last line the
// server wrote to stderr (the usual reason).
func (s *server) exitError(what string, err error) error {
	msg := what
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, sdk.ErrConnectionClosed) {
		msg += ": " + err.Error()
	}
	if line := s.lastLogLine(); line != "" {
		msg += "; stderr: " + line
	}
	return errors.New(msg)
}

// connect starts (stdio) or reaches (http, sse) the server and completes
// initialize within StartTimeout, then lists its tools and prompts.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	cctx, cancel := context.WithTimeout(ctx, s.h.o.StartTimeout)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "zot", Version: s.h.o.ClientVersion}, &sdk.ClientOptions{
		ToolListChangedHandler: func(ctx context.Context, req *sdk.ToolListChangedRequest) {
			go s.refreshTools(req.Session)
		},
		PromptListChangedHandler: func(ctx context.Context, req *sdk.PromptListChangedRequest) {
			go s.refreshPrompts(req.Session)
		},
		ResourceListChangedHandler: func(ctx context.Context, req *sdk.ResourceListChangedRequest) {
			go s.refreshResources(req.Session)
		},
		// No LoggingMessageHandler: MCP logging is deprecated (SEP-2577);
		// a server's log is its stderr, which goes to its log file.
		ProgressNotificationHandler: s.onProgress,
	})
	if s.h.o.Cwd != "" {
		// The workspace is the one root (as Claude Code does): servers
		// that scope themselves by roots (server-filesystem) see it.
		// Roots are deprecated only from protocol 2026-07-28 on; the
		// servers in use today still read them (docs/decisions.md).
		//lint:ignore SA1019 the servers users run today scope themselves by roots
		client.AddRoots(&sdk.Root{URI: (&url.URL{Scheme: "file", Path: filepath.ToSlash(s.h.o.Cwd)}).String(), Name: filepath.Base(s.h.o.Cwd)})
	}
	transport, err := s.transport()
	if err != nil {
		return nil, err
	}
	cs, err := client.Connect(cctx, transport, nil)
	if err != nil {
		s.groups.KillAll()
		s.mu.Lock()
		s.pid = 0
		s.mu.Unlock()
		if cctx.Err() != nil && ctx.Err() == nil {
			return nil, s.exitError(fmt.Sprintf("no answer to initialize within %s", s.h.o.StartTimeout), nil)
		}
		return nil, s.exitError("could not start", err)
	}
	s.listAll(cctx, cs)
	if cctx.Err() != nil && ctx.Err() == nil {
		cs.Close()
		s.groups.KillAll()
		return nil, s.exitError(fmt.Sprintf("no answer to tools/list within %s", s.h.o.StartTimeout), nil)
	}
	return cs, nil
}

func (s *server) listAll(ctx context.Context, cs *sdk.ClientSession) {
	caps := cs.InitializeResult().Capabilities
	if caps == nil {
		return
	}
	if caps.Tools != nil {
		s.listTools(ctx, cs)
	}
	if caps.Prompts != nil {
		s.listPrompts(ctx, cs)
	}
	if caps.Resources != nil {
		s.listResources(ctx, cs)
	}
}

func (s *server) listTools(ctx context.Context, cs *sdk.ClientSession) {
	var ts []*sdk.Tool
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			s.log("tools/list: %v", err)
			return
		}
		ts = append(ts, t)
	}
	slices.SortStableFunc(ts, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	s.mu.Lock()
	s.tools = ts
	s.mu.Unlock()
}

func (s *server) listPrompts(ctx context.Context, cs *sdk.ClientSession) {
	var ps []*sdk.Prompt
	for p, err := range cs.Prompts(ctx, nil) {
		if err != nil {
			s.log("prompts/list: %v", err)
			return
		}
		ps = append(ps, p)
	}
	slices.SortStableFunc(ps, func(a, b *sdk.Prompt) int { return strings.Compare(a.Name, b.Name) })
	s.mu.Lock()
	s.prompts = ps
	s.mu.Unlock()
}

// refreshTools answers notifications/tools/list_changed: the next model
// call sees the new list.
func (s *server) refreshTools(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.h.ctx, s.h.o.StartTimeout)
	defer cancel()
	s.listTools(ctx, cs)
	s.log("tools/list_changed: %d tools", len(s.snapshot().tools))
	s.h.changed()
}

func (s *server) refreshPrompts(cs *sdk.ClientSession) {
	ctx, cancel := context.WithTimeout(s.h.ctx, s.h.o.StartTimeout)
	defer cancel()
	s.listPrompts(ctx, cs)
	s.h.changed()
}

type serverSnapshot struct {
	state, lastErr string
	cs             *sdk.ClientSession
	tools          []*sdk.Tool
}

func (s *server) snapshot() serverSnapshot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return serverSnapshot{state: s.state, lastErr: s.lastErr, cs: s.cs, tools: s.tools}
}

func (s *server) onProgress(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	s.mu.Lock()
	sink := s.progress[fmt.Sprint(p.ProgressToken)]
	s.mu.Unlock()
	if sink != nil {
		sink.send(p)
	}
}

// progressSink is one call's progress route. Notifications arrive on the
// SDK's goroutines and may race the call's own end (over HTTP they
// travel apart from the response), so close waits for a send in flight
// and later sends are dropped: the call's callback never runs after
// the tool returned.
type progressSink struct {
	mu     sync.Mutex
	fn     func(*sdk.ProgressNotificationParams)
	closed bool
}

func (k *progressSink) send(p *sdk.ProgressNotificationParams) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.closed {
		k.fn(p)
	}
}

func (k *progressSink) close() {
	k.mu.Lock()
	k.closed = true
	k.mu.Unlock()
}

// track routes progress for token to fn until the returned func runs;
// once it has run, fn is never called again.
func (s *server) track(fn func(*sdk.ProgressNotificationParams)) (string, func()) {
	token := fmt.Sprintf("zot-%d", s.seq.Add(1))
	sink := &progressSink{fn: fn}
	s.mu.Lock()
	s.progress[token] = sink
	s.mu.Unlock()
	return token, func() {
		s.mu.Lock()
		delete(s.progress, token)
		s.mu.Unlock()
		sink.close()
	}
}

// transport builds the SDK transport for the configuration.
func (s *server) transport() (sdk.Transport, error) {
	switch s.cfg.Type {
	case TransportHTTP, TransportSSE:
		hc := &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: http.DefaultTransport}}
		if s.cfg.Type == TransportSSE {
			return sseTransport{inner: &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}}, nil
		}
		return &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc}, nil
	}
	cmd := exec.Command(s.cfg.Command, s.cfg.Args...)
	cmd.Dir = s.cfg.Cwd
	if cmd.Dir == "" {
		cmd.Dir = s.h.o.Cwd
	}
	cmd.Env = serverEnv(os.Environ(), s.cfg.Env)
	// Its own process group (a Job Object on Windows), so stopping it
	// also stops whatever it spawned (npx's node, a shell's children).
	childproc.Prepare(cmd)
	stderr, err := s.openLog()
	if err != nil {
		return nil, fmt.Errorf("open log %s: %w", s.logPath, err)
	}
	cmd.Stderr = stderr
	return &stdioTransport{s: s, cmd: cmd, stderr: stderr, inner: &sdk.CommandTransport{Command: cmd, TerminateDuration: stdioTerminate}}, nil
}

// sseTransport gives the legacy SSE transport's event stream a context
// that outlives connect. The SDK binds the stream (its GET) to the context
// Connect gets, and connect's has the start timeout and is cancelled when
// connect returns, which closed every SSE session as soon as it was up.
// The timeout still bounds connecting (it cancels the stream then); once
// connected, the stream ends when the session is closed.
type sseTransport struct {
	inner *sdk.SSEClientTransport
}

func (t sseTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	streamCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, cancel)
	conn, err := t.inner.Connect(streamCtx)
	if !stop() && err == nil {
		// ctx ended as the stream came up: the stream is cancelled.
		conn.Close()
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return &closeCancels{Connection: conn, cancel: cancel}, nil
}

// closeCancels is a connection whose Close also ends its stream's context.
type closeCancels struct {
	sdk.Connection
	cancel context.CancelFunc
}

func (c *closeCancels) Close() error {
	err := c.Connection.Close()
	c.cancel()
	return err
}

// stdioTransport records the started process's group (so nothing it
// spawns outlives zot) before initialize begins.
type stdioTransport struct {
	s      *server
	cmd    *exec.Cmd
	stderr *os.File
	inner  *sdk.CommandTransport
}

func (t *stdioTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	// The SDK starts the command in Connect: started where childproc
	// starts every child, so it dies with zot, even a killed one.
	var conn sdk.Connection
	err := childproc.StartWith(t.cmd, func() (err error) {
		conn, err = t.inner.Connect(ctx)
		return err
	})
	t.stderr.Close() // the child has its own copy
	if err != nil {
		return nil, err
	}
	pid := t.cmd.Process.Pid
	g, err := childproc.Attach(t.cmd)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cannot put the server's process in its own group: %w", err)
	}
	t.s.groups.Add(g)
	t.s.mu.Lock()
	t.s.pid = pid
	t.s.mu.Unlock()
	t.s.log("started pid %d: %s", pid, t.s.cfg.CommandLine())
	return conn, nil
}

// serverEnv is zot's environment without its own credentials
// (extensions.SecretEnv), plus the configured env (which may name them).
func serverEnv(environ []string, extra map[string]string) []string {
	out := make([]string, 0, len(environ)+len(extra))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(extensions.SecretEnv, name) {
			continue
		}
		if _, over := extra[name]; over {
			continue
		}
		out = append(out, kv)
	}
	for _, k := range sortedKeys(extra) {
		out = append(out, k+"="+extra[k])
	}
	return out
}

type headerTransport struct {
	headers map[string]string
	base    http.RoundTripper
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range t.headers {
			r.Header.Set(k, v)
		}
	}
	return t.base.RoundTrip(r)
}

// openLog opens the server's log for appending (its stderr and zot's
// lines about it), starting over when it grew too big.
func (s *server) openLog() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(s.logPath), 0o700); err != nil {
		return nil, err
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_APPEND
	if fi, err := os.Stat(s.logPath); err == nil && fi.Size() > logRotateBytes {
		flags |= os.O_TRUNC
	}
	return os.OpenFile(s.logPath, flags, 0o600)
}

// log appends one line of zot's own to the server's log.
func (s *server) log(format string, args ...any) {
	f, err := s.openLog()
	if err != nil {
		s.h.logf("mcp %s: "+format, append([]any{s.cfg.Name}, args...)...)
		return
	}
	defer f.Close()
	fmt.Fprintf(f, "%s zot: %s\n", time.Now().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// lastLogLine is the last line the server itself wrote to stderr.
func (s *server) lastLogLine() string {
	if s.cfg.Type != TransportStdio {
		return ""
	}
	f, err := os.Open(s.logPath)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	const tail = 8 << 10
	off := max(fi.Size()-tail, 0)
	buf := make([]byte, fi.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return ""
	}
	lines := strings.Split(string(buf), "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		l := strings.TrimSpace(lines[i])
		if l == "" || strings.Contains(l, " zot: ") {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		return l
	}
	return ""
}
