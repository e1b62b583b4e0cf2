package server

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
)

// Host is the extension host as the server uses it: the agent hooks
// (interceptors and lifecycle events), the extensions' tools and commands,
// panels, state and reload. extensions.Host plugs in through an adapter
// (exthost.go); tests use a fake.
type Host interface {
	agent.Hooks
	// Tools are the extension tools current now.
	Tools() []tools.Tool
	// Commands are the extension slash commands.
	Commands() []CommandInfo
	// RunCommand invokes an extension command (command_invoked) and
	// returns its command_response. For open_panel the host shows the
	// panel itself (HostUI.OpenPanel); Panel only names it.
	RunCommand(ctx context.Context, name, args string) (CommandResponse, error)
	// PanelKey forwards a key to an open panel (panel_key).
	PanelKey(panelID, key, text string) error
	// PanelClosed tells the owner the user closed a panel (panel_close).
	PanelClosed(panelID string) error
	// Status lists every extension: loaded, failed, untrusted … and why.
	Status() []ExtensionStatus
	// Reload restarts every extension from disk.
	Reload(ctx context.Context) error
	// Close shuts every extension down (shutdown, then kill).
	Close(ctx context.Context) error
}

// commandCompleter is a Host that completes its commands' arguments
// (extensions.Host: command_complete, SEP's command/complete).
type commandCompleter interface {
	CompleteCommand(ctx context.Context, name, partial string) ([]CommandCompletion, error)
}

// serverProviders is agent.Config.Providers: the current host's
// extensions' model providers (none before the host starts, or without
// one).
type serverProviders struct{ s *Server }

func (p serverProviders) host() agent.ExtensionProviders {
	h, _ := p.s.currentHost().(agent.ExtensionProviders)
	return h
}

func (p serverProviders) ProviderModels() []provider.Model {
	if h := p.host(); h != nil {
		return h.ProviderModels()
	}
	return nil
}

func (p serverProviders) ProviderClient(name string) provider.Client {
	if h := p.host(); h != nil {
		return h.ProviderClient(name)
	}
	return nil
}

func (p serverProviders) AwaitProviders(ctx context.Context) {
	if h, _ := p.s.waitHost(ctx).(agent.ExtensionProviders); h != nil {
		h.AwaitProviders(ctx)
	}
}

// startWaiter is a Host whose extensions may still be starting: a tool or
// command not (yet) registered waits for them instead of being unknown.
// extensions.Host implements it.
type startWaiter interface {
	AwaitTool(ctx context.Context, name string) tools.Tool
	AwaitCommand(ctx context.Context, name string) bool
	// AwaitStarting is where a prompt waits, bounded, for the
	// extensions still starting (agent.Config.AwaitExtensions).
	AwaitStarting(ctx context.Context)
}

// awaitExtensions is agent.Config.AwaitExtensions.
func (s *Server) awaitExtensions(ctx context.Context) {
	if w, ok := s.waitHost(ctx).(startWaiter); ok {
		w.AwaitStarting(ctx)
	}
}

// awaitTool is agent.Config.AwaitTool.
func (s *Server) awaitTool(ctx context.Context, name string) tools.Tool {
	if strings.HasPrefix(name, "mcp__") {
		if h := s.currentMCP(); h != nil {
			if t := h.AwaitTool(ctx, name); t != nil {
				return t
			}
		}
	}
	if w, ok := s.waitHost(ctx).(startWaiter); ok {
		return w.AwaitTool(ctx, name)
	}
	return nil
}

// HostUI is how the host reaches the editor; the server implements it.
type HostUI interface {
	Notify(extension, level, message string)
	OpenPanel(p Panel)
	RenderPanel(p Panel)
	ClosePanel(extension, panelID string)
	// Changed is called after any (hot) reload.
	Changed()
}

// HostConfig is what a HostFactory gets.
type HostConfig struct {
	Cwd  string
	Home string   // $ZOT_HOME ("" = the default)
	Exts []string // --ext paths
	// EditorExts are initializationOptions.ext paths; those inside the
	// workspace are asked about like project extensions.
	EditorExts []string
	Provider   string
	Model      string
	UI         HostUI
	// AskTrust asks the user whether to run an untrusted project
	// extension; the answer is asked once per extension and process.
	AskTrust func(ctx context.Context, req TrustRequest) bool
	// ConfirmGuardOff asks whether a guard a file change disabled may
	// stop guarding.
	ConfirmGuardOff func(ctx context.Context, name, dir string) bool
	// Actions are what extensions may do to the run (send_message,
	// set_active_tools …); nil offers none.
	Actions extensions.Actions
}

// HostFactory starts the extension host.
type HostFactory func(ctx context.Context, cfg HostConfig) (Host, error)

// TrustRequest describes an extension that needs the user's trust.
type TrustRequest struct {
	Name        string
	Dir         string
	Source      string
	Description string
	// Secrets are the credentials (provider keys, RPC token) the
	// manifest asks to receive in its environment.
	Secrets []string
}

// CommandResponse is an extension's command_response.
type CommandResponse struct {
	Action  string // prompt | insert | display | open_panel | noop
	Prompt  string
	Insert  string
	Display string
	Panel   *Panel
	Error   string
}

// waitHost returns the host once it has started (or failed to), so a
// command sent right after initialize is not mistaken for a typo.
func (s *Server) waitHost(ctx context.Context) Host {
	s.mu.Lock()
	starting := s.hostStarted
	s.mu.Unlock()
	if starting {
		select {
		case <-s.hostReady:
		case <-ctx.Done():
		}
	}
	return s.currentHost()
}

// hostStarting reports whether the host is being created (waitHost would
// wait).
func (s *Server) hostStarting() bool {
	s.mu.Lock()
	started := s.hostStarted
	s.mu.Unlock()
	if !started {
		return false
	}
	select {
	case <-s.hostReady:
		return false
	default:
		return true
	}
}

// extensionMovedSession follows an extension's fork or navigate_tree: the
// session's "always allow" answers go, as on a resume, and the editor is
// told to draw the conversation again (zot/session/changed).
func (s *Server) extensionMovedSession(reason, editorText string) {
	s.sessionChanged()
	rt, err := s.runtime()
	if err != nil {
		return
	}
	st := rt.State()
	notifySessionChanged.send(s, SessionChangedParams{SessionID: st.SessionID, MessageCount: st.MessageCount, Reason: reason, EditorText: editorText})
}

func (s *Server) currentHost() Host {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.host
}

// startHost starts the extension host after initialized.
func (s *Server) startHost() {
	defer close(s.hostReady)
	if s.opts.NewHost == nil {
		return
	}
	s.mu.Lock()
	cfg := HostConfig{Cwd: s.cwd, Home: s.cfg.Home, Exts: s.exts, EditorExts: s.editorExts, Provider: s.cfg.Provider, Model: s.cfg.Model,
		UI: hostUI{s}, AskTrust: s.askTrust, ConfirmGuardOff: s.confirmGuardOff}
	rt := s.rt
	if rt != nil {
		st := rt.State()
		cfg.Provider, cfg.Model = st.Provider, st.Model
		if ar, ok := rt.(extensions.ActionRuntime); ok {
			cfg.Actions = extensions.RuntimeActionsWith(ar, extensions.Front{StartRun: s.startExtensionRun, SessionChanged: s.extensionMovedSession,
				EnqueueRun: s.enqueueExtensionRun, Shutdown: s.extensionShutdown})
		}
	}
	s.mu.Unlock()
	host, err := s.opts.NewHost(s.ctx, cfg)
	if err != nil {
		s.mu.Lock()
		s.hostErr = err
		s.mu.Unlock()
		s.logf("extensions: %v", err)
		s.showMessage(protocol.MessageTypeWarning, "zot: extensions could not start: "+err.Error())
		s.sendChanged() // loading is over: clients see error set
		return
	}
	s.mu.Lock()
	gone := s.state == stateShutdown || s.ctx.Err() != nil
	if !gone {
		s.host = host
	}
	s.mu.Unlock()
	if gone {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		host.Close(ctx)
		cancel()
		return
	}
	// session_start when the mode starts (the host replays it to
	// extensions still starting).
	if ss, ok := rt.(interface{ ObserveSessionStart(string) }); ok {
		reason := "startup"
		if rt.State().MessageCount > 0 {
			reason = "resume"
		}
		ss.ObserveSessionStart(reason)
	}
	s.sendChanged()
}

// startExtensionRun starts a run with an extension's message
// (send_message while no run is in progress), as zot/prompt would.
func (s *Server) startExtensionRun(text string) error {
	rt, err := s.runtime()
	if err != nil {
		return err
	}
	s.runs.enqueue(&run{kind: "prompt", title: firstLine(text), start: func(ctx context.Context) (<-chan agent.Event, error) {
		return rt.Prompt(ctx, text, nil)
	}})
	return nil
}

// enqueueExtensionRun runs an extension's compaction (ctx.compact) as
// zot/compact does: the editor sees its run. Only while nothing runs or
// waits, so the extension hears how it ended.
func (s *Server) enqueueExtensionRun(title string, start func(context.Context) (<-chan agent.Event, error), unstarted func(string)) error {
	if current, queued := s.runs.status(); current != "" || queued > 0 {
		return fmt.Errorf("a compaction cannot start during a run: call it when the agent is idle (ctx.waitForIdle(), or from a command)")
	}
	s.runs.enqueue(&run{kind: "compact", title: title, start: start, unstarted: unstarted})
	return nil
}

// extensionShutdown answers an extension's ctx.shutdown: the editor owns
// zot lsp's lifetime, so the server stays and the user is told (a
// warning naming the extension); the session goes on.
func (s *Server) extensionShutdown(ext string) error {
	hostUI{s}.Notify(ext, "warn", "asked zot to shut down (ctx.shutdown); zot lsp keeps serving the editor: close the chat or the editor to end the session")
	return nil
}

// askTrust asks the editor whether to run an untrusted project extension.
// A "yes" is recorded by the host (trust.json, for this code: changed code
// asks again); a "no" is remembered for this process, so a hot reload does
// not nag.
func (s *Server) askTrust(ctx context.Context, req TrustRequest) bool {
	key := req.Name + "\x00" + req.Dir
	s.mu.Lock()
	if declined := s.trust[key]; declined {
		s.mu.Unlock()
		return false
	}
	s.mu.Unlock()
	kind := "project extension"
	if req.Source == "workspace" {
		kind = "extension (an ext path inside the workspace)"
	}
	msg := fmt.Sprintf("Trust and run the %s %q (%s)? It runs with your permissions.", kind, req.Name, s.ws.display(req.Dir))
	if len(req.Secrets) > 0 {
		msg += fmt.Sprintf(" It asks to receive your %s.", strings.Join(req.Secrets, ", "))
	}
	if req.Description != "" {
		msg += " " + req.Description
	}
	yes := s.ask(ctx, protocol.MessageTypeWarning, msg, TrustNo, TrustYes) == TrustYes
	if !yes && ctx.Err() == nil {
		s.mu.Lock()
		s.trust[key] = true // declined
		s.mu.Unlock()
	}
	return yes
}

// confirmGuardOff asks whether a guard disabled by a file change (perhaps
// the agent's) may stop guarding.
func (s *Server) confirmGuardOff(ctx context.Context, name, dir string) bool {
	msg := fmt.Sprintf("The guard extension %q (%s) was disabled by a change to its manifest. Stop guarding tool calls with it?", name, s.ws.display(dir))
	return s.ask(ctx, protocol.MessageTypeWarning, msg, GuardKeep, GuardOff) == GuardOff
}

// Guard dialog choices, asked safe answer first (Keep guarding).
const (
	GuardOff  = "Disable the guard"
	GuardKeep = "Keep guarding"
)

// Trust dialog choices, asked safe answer first (Don't run).
const (
	TrustYes = "Trust and run"
	TrustNo  = "Don't run"
)

func (s *Server) extensionsResult() ExtensionsResult {
	s.mu.Lock()
	host, herr := s.host, s.hostErr
	loading := s.opts.NewHost != nil && host == nil && herr == nil && s.state == stateInitialized
	s.mu.Unlock()
	res := ExtensionsResult{Extensions: []ExtensionStatus{}, Commands: s.commandList(), Loading: loading}
	if host != nil {
		if st := host.Status(); st != nil {
			res.Extensions = st
		}
		// Started in the background: loading until none is starting.
		for _, x := range res.Extensions {
			if x.State == extensions.StateStarting {
				res.Loading = true
			}
		}
	}
	if herr != nil {
		res.Error = herr.Error()
	}
	return res
}

func (s *Server) sendChanged() { notifyExtensionsChanged.send(s, s.extensionsResult()) }

func (s *Server) zotExtensions(ctx context.Context) (ExtensionsResult, error) {
	return s.extensionsResult(), nil
}

func (s *Server) zotExtensionsReload(ctx context.Context) (ExtensionsResult, error) {
	release(ctx) // a reload waits for in-flight calls: don't hold the queue
	host := s.waitHost(ctx)
	if host == nil {
		return ExtensionsResult{}, rpcError(CodeRequestFailed, "no extension host is running%s", s.hostErrSuffix())
	}
	if err := host.Reload(ctx); err != nil {
		return ExtensionsResult{}, err
	}
	return s.extensionsResult(), nil
}

func (s *Server) hostErrSuffix() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hostErr != nil {
		return ": " + s.hostErr.Error()
	}
	if s.opts.NewHost != nil && s.state == stateInitialized {
		return " yet: it is still starting"
	}
	return ""
}

// hostUI implements HostUI for the server.
type hostUI struct{ s *Server }

func (u hostUI) Notify(extension, level, message string) {
	notifyNotify.send(u.s, NotifyParams{Extension: extension, Level: level, Message: message})
	if u.s.caps.zot.Notify {
		return // the client shows zot/notify itself; no second copy
	}
	switch level {
	case "warn", "warning":
		u.s.showMessage(protocol.MessageTypeWarning, "["+extension+"] "+message)
	case "error":
		u.s.showMessage(protocol.MessageTypeError, "["+extension+"] "+message)
	}
}

func (u hostUI) OpenPanel(p Panel)   { u.s.openPanel(p) }
func (u hostUI) RenderPanel(p Panel) { u.s.renderPanel(p) }
func (u hostUI) ClosePanel(extension, panelID string) {
	u.s.closePanel(extension, panelID)
}
func (u hostUI) Changed() { u.s.sendChanged() }
