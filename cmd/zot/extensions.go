package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/wire"
)

// runExtra dispatches subcommands that live outside the core (lsp, ext).
func runExtra(args []string, stdin io.Reader, stdout, stderr io.Writer) (int, bool) {
	switch args[0] {
	case "lsp":
		return cmdLSP(args[1:], stdin, stdout, stderr), true
	case "acp":
		return cmdACP(args[1:], stdin, stdout, stderr), true
	case "ext":
		return cmdExt(args[1:], stdout, stderr), true
	case "mcp":
		return cmdMCP(args[1:], stdout, stderr), true
	}
	return 0, false
}

// newRuntime builds the runtime with the extension host wired in: its
// tools join the registry, its interceptors see every run. Notifications
// go to stderr (print and RPC modes have no panel UI), and to notify when
// set (RPC sends them as ext_notify events). watch turns on hot reload, for
// long-running modes. The host is nil with --no-ext.
//
// front is the mode's side of the extensions' UI and actions (nil: none,
// as in print mode); its capabilities are fixed now, its handlers are set
// once the mode serves.
func newRuntime(ctx context.Context, c *common, cfg agent.Config, watch bool, stderr io.Writer, front *lateFront, notify func(ext, level, msg string)) (*agent.Runtime, *extensions.Host, func(), error) {
	if front == nil {
		front = &lateFront{}
	}
	if cfg.Home == "" {
		cfg.Home = home.Dir()
	}
	cwd := cfg.CWD
	if cwd == "" {
		cwd = "."
	}
	// Writes into $ZOT_HOME and extension directories need the user's
	// approval (refused here: print and RPC modes cannot ask), with or
	// without extensions running.
	cfg.WriteRules = append(slices.Clip(cfg.WriteRules), extensions.ProtectedWriteRule(extensions.ProtectedDirs(cfg.Home, cwd, c.exts)))
	// MCP servers start in the background in every mode; print mode's
	// one prompt waits for them below, so it sees their tools.
	mh := startMCP(c, cwd, cfg.Home, stderr)
	closeMCP := func() {
		if mh != nil {
			mh.Close(context.WithoutCancel(ctx))
		}
	}
	waitMCP := func() {
		if mh != nil && !watch {
			wctx, cancel := context.WithTimeout(ctx, mcpPrintWait)
			_ = mh.WaitStarted(wctx)
			cancel()
		}
	}
	if cfg.Warn == nil {
		cfg.Warn = func(msg string) { fmt.Fprintln(stderr, "zot: "+msg) }
	}
	if c.noExt {
		cfg.Hooks = c.hookChain(nil)
		waitMCP()
		if mh != nil {
			cfg.ExtraTools, cfg.AwaitTool = mh.Tools, mh.AwaitTool
		}
		rt, err := agent.New(cfg)
		if err != nil {
			closeMCP()
		}
		return rt, nil, closeMCP, err
	}
	ui := &stderrUI{w: stderr, told: map[string]string{}, front: front, notify: notify}
	// A long-running session (rpc) starts its extensions in the background
	// so a slow one (a cold `go run .`) never holds up the first prompt;
	// print mode's one prompt waits for them, so it sees their tools.
	host := extensions.NewHost(extensions.Options{
		Cwd: cwd, Home: cfg.Home, ZotVersion: agent.Version, Provider: cfg.Provider, Model: cfg.Model,
		ExtPaths: c.exts, BuiltinTools: tools.Core, ReplaceableTools: tools.Replaceable, UI: ui, Watch: watch, Background: watch,
	})
	ui.status = host.Status
	cfg.Hooks = c.hookChain(host)
	cfg.ExtraTools = host.Tools
	cfg.AwaitTool = host.AwaitTool
	cfg.AwaitExtensions = host.AwaitStarting
	cfg.Providers = host
	if mh != nil {
		cfg.ExtraTools = func() []tools.Tool { return append(host.Tools(), mh.Tools()...) }
		cfg.AwaitTool = func(ctx context.Context, name string) tools.Tool {
			if strings.HasPrefix(name, "mcp__") {
				return mh.AwaitTool(ctx, name)
			}
			return host.AwaitTool(ctx, name)
		}
	}
	rt, err := agent.New(cfg)
	if err != nil {
		closeMCP()
		return nil, nil, func() {}, err
	}
	// hello_ack names the provider and model in every mode, the defaults
	// included: they are known once the runtime is built.
	st := rt.State()
	host.SetModelInfo(st.Provider, st.Model)
	host.SetActions(extensions.RuntimeActionsWith(rt, extensions.Front{StartRun: front.startRun, EnqueueRun: front.enqueueRun, Shutdown: front.shutdown}))
	if err := host.Start(ctx); err != nil {
		host.Close(context.WithoutCancel(ctx))
		closeMCP()
		rt.Close()
		return nil, nil, func() {}, err
	}
	waitMCP()
	ui.Changed()
	// session_start when the mode starts (replayed to extensions that
	// are still starting once they subscribe).
	reason := "startup"
	if st.MessageCount > 0 {
		reason = "resume"
	}
	rt.ObserveSessionStart(reason)
	if st.ForkedFrom != "" {
		fmt.Fprintf(stderr, "zot: session %s is open in another zot process; continuing in a new session %s, a copy of it (%d messages)\n", st.ForkedFrom, st.SessionID, st.MessageCount)
	}
	return rt, host, func() {
		host.Close(context.WithoutCancel(ctx))
		closeMCP()
	}, nil
}

// lateFront is a mode's side of the extensions' "ask the user" seam and
// of starting a run: the capabilities are known when the host starts,
// the handlers once the mode serves (zot rpc's server).
type lateFront struct {
	caps  wire.UICapabilities
	mu    sync.Mutex
	asker extensions.Asker
	start func(text string) error
	ready chan struct{} // closed by set
	// The mode's session controls (zot rpc's; setSession before set):
	// an extension's compaction run, its ctx.shutdown.
	enqueue func(title string, start func(context.Context) (<-chan agent.Event, error), unstarted func(string)) error
	end     func(ext string) error
}

func newLateFront(caps wire.UICapabilities) *lateFront {
	return &lateFront{caps: caps, ready: make(chan struct{})}
}

func (f *lateFront) set(a extensions.Asker, start func(string) error) {
	f.mu.Lock()
	f.asker, f.start = a, start
	f.mu.Unlock()
	close(f.ready)
}

// setSession gives the mode's session controls; call it before set.
func (f *lateFront) setSession(enqueue func(string, func(context.Context) (<-chan agent.Event, error), func(string)) error, end func(string) error) {
	f.mu.Lock()
	f.enqueue, f.end = enqueue, end
	f.mu.Unlock()
}

func (f *lateFront) enqueueRun(title string, start func(context.Context) (<-chan agent.Event, error), unstarted func(string)) error {
	f.current(context.Background())
	f.mu.Lock()
	enqueue := f.enqueue
	f.mu.Unlock()
	if enqueue == nil {
		return fmt.Errorf("this mode cannot start a compaction (zot -p runs its one prompt)")
	}
	return enqueue(title, start, unstarted)
}

// shutdown is ctx.shutdown: zot rpc exits once idle; zot -p ends after
// its prompt anyway, so there it is accepted and changes nothing.
func (f *lateFront) shutdown(ext string) error {
	f.current(context.Background())
	f.mu.Lock()
	end := f.end
	f.mu.Unlock()
	if end == nil {
		return nil
	}
	return end(ext)
}

// current waits (bounded by ctx) until the mode serves.
func (f *lateFront) current(ctx context.Context) (extensions.Asker, func(string) error) {
	if f.ready == nil {
		return nil, nil
	}
	select {
	case <-f.ready:
	case <-ctx.Done():
		return nil, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asker, f.start
}

func (f *lateFront) startRun(text string) error {
	_, start := f.current(context.Background())
	if start == nil {
		return fmt.Errorf("no run is in progress and this mode cannot start one (zot -p); use deliver next_turn")
	}
	return start(text)
}

// stderrUI prints extension notifications and extensions that fail to
// start (once per state and reason); panels need an editor. Dialogs,
// status and widgets go to the mode's front, if it has them.
type stderrUI struct {
	mu     sync.Mutex
	w      io.Writer
	status func() []extensions.Status
	told   map[string]string // name → the failure last printed
	front  *lateFront
	notify func(ext, level, msg string)
}

var _ extensions.Asker = (*stderrUI)(nil)

func (u *stderrUI) UICapabilities() wire.UICapabilities { return u.front.caps }

func (u *stderrUI) Ask(ctx context.Context, ext string, req extensions.UIRequest) extensions.UIAnswer {
	a, _ := u.front.current(ctx)
	if a == nil {
		return extensions.UIAnswer{Cancelled: true}
	}
	return a.Ask(ctx, ext, req)
}

func (u *stderrUI) SetStatus(ext, key, text string) {
	if a, _ := u.front.current(context.Background()); a != nil {
		a.SetStatus(ext, key, text)
	}
}

func (u *stderrUI) SetWidget(ext, key string, lines []string) {
	if a, _ := u.front.current(context.Background()); a != nil {
		a.SetWidget(ext, key, lines)
	}
}

// The mode's chat input (zot rpc's input box), when it has one: zot -p
// has none (its capabilities say so, and the host ignores a set).
var _ extensions.ChatInput = (*stderrUI)(nil)

func (u *stderrUI) SetInput(ext, text string, paste bool) {
	select {
	case <-u.front.ready:
		a, _ := u.front.current(context.Background())
		if ci, ok := a.(extensions.ChatInput); ok {
			ci.SetInput(ext, text, paste)
		}
	default:
		// Before the mode serves there is no input box to set (zot rpc
		// drops it too until it serves), and the extension's reader
		// must not wait.
	}
}

func (u *stderrUI) GetInput(ctx context.Context) (string, error) {
	a, _ := u.front.current(ctx)
	if ci, ok := a.(extensions.ChatInput); ok {
		return ci.GetInput(ctx)
	}
	return "", nil
}

func (u *stderrUI) Notify(ext, level, msg string) {
	u.mu.Lock()
	fmt.Fprintf(u.w, "[%s] %s: %s\n", ext, level, msg)
	u.mu.Unlock()
	if u.notify != nil {
		u.notify(ext, level, msg)
	}
}
func (u *stderrUI) PanelOpen(ext string, p wire.PanelView) {
	u.Notify(ext, "info", "panel "+p.Title+" needs an editor (zot lsp)")
}
func (u *stderrUI) PanelRender(string, wire.Frame) {}
func (u *stderrUI) PanelClose(string, string)      {}

func (u *stderrUI) Changed() {
	if u.status == nil {
		return
	}
	sts := u.status()
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, st := range sts {
		if st.State != extensions.StateFailed && st.State != extensions.StateUntrusted && st.State != extensions.StateInvalid {
			delete(u.told, st.Name)
			continue
		}
		line := fmt.Sprintf("extension %s: %s: %s\n", st.Name, st.State, st.Reason)
		if u.told[st.Name] != line {
			u.told[st.Name] = line
			fmt.Fprint(u.w, line)
		}
	}
}
