package main

import (
	"context"
	"fmt"
	"io"
	"slices"
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
	}
	return 0, false
}

// newRuntime builds the runtime with the extension host wired in: its
// tools join the registry, its interceptors see every run. Notifications
// go to stderr (print and RPC modes have no panel UI). watch turns on hot
// reload, for long-running modes.
func newRuntime(ctx context.Context, c *common, cfg agent.Config, watch bool, stderr io.Writer) (*agent.Runtime, func(), error) {
	if cfg.Home == "" {
		cfg.Home = home.Dir()
	}
	cwd := cfg.Cwd
	if cwd == "" {
		cwd = "."
	}
	// Writes into $ZOT_HOME and extension directories need the user's
	// approval (refused here: print and RPC modes cannot ask), with or
	// without extensions running.
	cfg.WriteRules = append(slices.Clip(cfg.WriteRules), extensions.ProtectedWriteRule(extensions.ProtectedDirs(cfg.Home, cwd, c.exts)))
	if c.noExt {
		cfg.Hooks = c.withApproval(nil)
		rt, err := agent.New(cfg)
		return rt, func() {}, err
	}
	var builtin []string
	for _, t := range tools.Builtins(tools.NewDiskWorkspace(".")) {
		builtin = append(builtin, t.Name())
	}
	ui := &stderrUI{w: stderr, told: map[string]string{}}
	// A long-running session (rpc) starts its extensions in the background
	// so a slow one (a cold `go run .`) never holds up the first prompt;
	// print mode's one prompt waits for them, so it sees their tools.
	host := extensions.NewHost(extensions.Options{
		Cwd: cwd, Home: cfg.Home, ZotVersion: agent.Version, Provider: cfg.Provider, Model: cfg.Model,
		ExtPaths: c.exts, BuiltinTools: builtin, UI: ui, Watch: watch, Background: watch,
	})
	ui.status = host.Status
	cfg.Hooks = c.withApproval(host)
	cfg.ExtraTools = host.Tools
	cfg.AwaitTool = host.AwaitTool
	rt, err := agent.New(cfg)
	if err != nil {
		return nil, func() {}, err
	}
	// hello_ack names the provider and model in every mode, the defaults
	// included: they are known once the runtime is built.
	st := rt.State()
	host.SetModelInfo(st.Provider, st.Model)
	if err := host.Start(ctx); err != nil {
		host.Close(context.WithoutCancel(ctx))
		rt.Close()
		return nil, func() {}, err
	}
	ui.Changed()
	if st.ForkedFrom != "" {
		fmt.Fprintf(stderr, "zot: session %s is open in another zot process; continuing in a new session %s, a copy of it (%d messages)\n", st.ForkedFrom, st.SessionID, st.MessageCount)
	}
	return rt, func() { host.Close(context.WithoutCancel(ctx)) }, nil
}

// stderrUI prints extension notifications and extensions that fail to
// start (once per state and reason); panels need an editor.
type stderrUI struct {
	mu     sync.Mutex
	w      io.Writer
	status func() []extensions.Status
	told   map[string]string // name → the failure last printed
}

func (u *stderrUI) Notify(ext, level, msg string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	fmt.Fprintf(u.w, "[%s] %s: %s\n", ext, level, msg)
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
