// Package extensions is zot's extension host: it discovers extensions
// (manifest extension.json), starts each as a subprocess speaking zot's
// extension protocol v1 (newline-delimited JSON on stdin/stdout; frames in
// package wire), offers their tools to the runtime, routes their slash
// commands and panels, runs their interceptors and keeps them alive.
//
// Usage:
//
//	h := extensions.NewHost(extensions.Options{Cwd: cwd, Home: home.Dir(), …})
//	if err := h.Start(ctx); err != nil { … }   // parallel spawn; returns when every extension is ready or failed
//	defer h.Close(context.Background())
//	rt, _ := agent.New(agent.Config{Hooks: h, ExtraTools: h.Tools, AwaitTool: h.AwaitTool, AwaitExtensions: h.AwaitStarting, …})
//
// The public surface:
//
//   - NewHost, Start, Close: lifetime. Close sends shutdown, waits 2 s for
//     shutdown_ack/exit, then SIGTERM, then SIGKILL (3 s in total).
//   - Tools: the extension tools for the next model call (agent.Config.ExtraTools).
//   - *Host implements agent.Hooks: BeforeTool (tool_call intercepts,
//     fail-closed), BeforeTurn and BeforeAssistantMessage (fail-open),
//     Observe (one-way events, in order per extension).
//   - Commands, RunCommand: slash commands.
//   - PanelKey, PanelClosed: the editor's side of extension panels; the
//     host's side goes through the UI interface.
//   - Status, Reload, Trust: what /extensions, /reload-ext and the trust
//     prompt need. UI.Changed fires after every change of state.
//
// See docs/extensions.md for the protocol as implemented, our additions
// (tool_cancel, trust, ordering, fail-closed tool_call intercepts) and the
// fault behaviour.
package extensions

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/ctxwait"
)

// Options configures a Host. Zero durations take the protocol defaults.
type Options struct {
	Cwd        string // workspace; project extensions live in Cwd/.zot/extensions
	Home       string // $ZOT_HOME; default home.Dir()
	ZotVersion string // hello_ack
	Provider   string // hello_ack
	Model      string // hello_ack
	// ExtPaths are --ext/-e directories, loaded first (they win over
	// project and global extensions of the same name) and trusted.
	ExtPaths []string
	// EditorExtPaths are extension paths an editor passed in
	// (initializationOptions.ext), loaded after ExtPaths. Those inside the
	// workspace need trust like project extensions (a repository can
	// ship them); the others are trusted like ExtPaths.
	EditorExtPaths []string
	// BuiltinTools and BuiltinCommands win over extension names.
	BuiltinTools    []string
	BuiltinCommands []string
	// ReplaceableTools are built-in tools an extension tool of the same
	// name replaces (ls, grep, find: ours, not zot's); logged and listed
	// in the extension's Status.Replaces.
	ReplaceableTools []string

	HelloTimeout     time.Duration // no hello → killed and failed; 60 s, long enough for a cold `go run .` (manifest "timeout" overrides)
	InterceptTimeout time.Duration // event_intercept_response wait; 5 s
	ReadyFallback    time.Duration // silence after hello that counts as ready; 250 ms
	ToolTimeout      time.Duration // tool call / command default; 60 s (manifest "timeout" overrides)
	// StartWait bounds how long a prompt waits for extensions still
	// starting before its first model call; 2 s ($ZOT_EXT_START_WAIT
	// overrides the default; docs/decisions.md has the measurements).
	StartWait time.Duration
	// DialogTimeout is how long a ui_request without timeout_ms stays
	// open before it is cancelled; 120 s, SEP's rule
	// ($ZOT_EXT_DIALOG_TIMEOUT overrides the default).
	DialogTimeout  time.Duration
	RestartBackoff []time.Duration // delays before restarts 1..n after crashes; 1 s, 5 s, 25 s
	Debounce       time.Duration   // file-change debounce; 100 ms
	EventQueue     int             // one-way events queued per extension; 256
	MaxLineBytes   int             // longest frame line; 16 MiB

	// AskTrust is asked (in the background) whether an untrusted
	// project-local extension may run; true records the trust and starts
	// it. Nil leaves it untrusted until `zot ext trust NAME`.
	AskTrust func(context.Context, Status) bool
	// ConfirmGuardOff asks the user whether a guard (an extension that
	// intercepts tool_call) whose manifest a file change disabled may
	// really stop guarding. Until a yes it keeps guarding; nil never
	// confirms (an explicit Reload or a restart of zot applies it).
	ConfirmGuardOff func(context.Context, Status) bool
	// UI receives notifications and panels; nil drops them.
	UI UI
	// Watch enables hot reload on file changes (fsnotify).
	Watch bool
	// Background makes Start return once the extensions are discovered:
	// they start in the background (state "starting", UI.Changed as each
	// becomes ready or fails), so a slow one never holds up the session.
	// Meanwhile a prompt waits for them at most StartWait (AwaitStarting);
	// a tool or command not registered yet waits until a starting
	// extension registers it (AwaitTool, RunCommand); a tool call waits
	// for starting guards only (BeforeTool). One slow start never holds
	// another extension's calls.
	Background bool

	// readied, when set, is called by a start once its extension is
	// marked ready and before the registry lists it (tests hold it there).
	readied func(name string)
	// Logf receives host-level messages (watcher errors); optional.
	// Per-extension messages go to $ZOT_HOME/logs/ext-<name>.log.
	Logf func(format string, args ...any)
}

// UI is the front (LSP server, RPC, TUI) as the host sees it. Methods may
// be called from several goroutines, but calls for one extension come in
// the order the extension sent its frames. They should return quickly
// (send a notification, don't wait for the editor); they may call back
// into the Host (Status, Reload) without deadlocking.
type UI interface {
	Notify(ext, level, msg string)
	// PanelOpen: a command answered open_panel. The host already owns
	// the panel id; the front only shows it.
	PanelOpen(ext string, p wire.PanelView)
	// PanelRender: a panel_render frame (PanelID, Title, Lines, Footer).
	PanelRender(ext string, f wire.Frame)
	// PanelClose: the extension closed the panel, or died.
	PanelClose(ext, panelID string)
	// Changed: extension state or the registry changed (after a reload,
	// a crash, a trust decision) — time for zot/extensions/changed.
	Changed()
}

// maxConcurrentStarts bounds the extensions between spawn and ready at
// once (see docs/decisions.md for the measurement).
var maxConcurrentStarts = max(16, 8*runtime.GOMAXPROCS(0))

// Extension states as Status reports them.
const (
	StateStarting   = "starting"
	StateReady      = "ready"
	StateRestarting = "restarting" // crashed; a restart is scheduled
	StateFailed     = "failed"
	StateUntrusted  = "untrusted"
	StateDisabled   = "disabled"
	StateShadowed   = "shadowed" // a same-named extension earlier in load order wins
	StateInvalid    = "invalid"  // unreadable or invalid manifest
	StateStopped    = "stopped"
)

// Status describes one discovered extension.
type Status struct {
	Name        string `json:"name"`
	Version     string `json:"version,omitempty"`
	Description string `json:"description,omitempty"`
	Language    string `json:"language,omitempty"`
	Dir         string `json:"dir"`
	Source      string `json:"source"` // ext, workspace, project, global
	// Secrets are the credentials (SecretEnv) the manifest asks to
	// receive; the trust question shows them.
	Secrets     []string `json:"secrets,omitempty"`
	State       string   `json:"state"`
	Reason      string   `json:"reason,omitempty"`
	Tools       []string `json:"tools,omitempty"`    // registered tools (shadowed ones included)
	Commands    []string `json:"commands,omitempty"` // registered commands (shadowed ones included)
	Shadowed    []string `json:"shadowed,omitempty"` // e.g. "tool read (built-in wins)"
	Replaces    []string `json:"replaces,omitempty"` // e.g. "built-in tool grep"
	Diagnostics []string `json:"diagnostics,omitempty"`
	Crashes     int      `json:"crashes,omitempty"`
	PID         int      `json:"pid,omitempty"`
	LogPath     string   `json:"log"`
}

// Host runs a workspace's extensions. Create it with NewHost.
type Host struct {
	o      Options
	ctx    context.Context
	cancel context.CancelFunc

	closing atomic.Bool // set first thing in Close; read under slot locks

	mu      sync.Mutex
	slots   []*slot // load order
	started bool
	closed  bool
	bg      sync.WaitGroup

	discMu sync.Mutex // serialises rediscovery
	regMu  sync.Mutex // serialises registry rebuilds
	reg    atomic.Pointer[registry]
	hasher *Hasher    // trust hashes, cached in $ZOT_HOME
	guards *guardBook // extensions known to guard (GuardsFile)
	// startSem bounds the extensions starting (spawn → ready) at once.
	startSem chan struct{}

	panelMu sync.Mutex
	panels  map[string]*proc

	changedCh chan struct{} // coalesces UI.Changed calls
	watch     *watcher

	settled settled // wakes waiters for starting extensions

	actMu sync.Mutex
	act   Actions // the front's (SetActions); nil: none

	// session_start is replayed to extensions that subscribe after it
	// happened (they start in the background): ssGen counts them.
	ssMu     sync.Mutex
	ssGen    uint64
	ssReason string

	// The Node process of the pi extensions (pihost.go); nil until one
	// is started.
	piMu sync.Mutex
	piRT *piRuntime
	// piNoSnapshot: a runtime started from the startup snapshot died
	// before it said anything; this host starts Node without it.
	piNoSnapshot bool
}

var _ agent.Hooks = (*Host)(nil)

// NewHost applies defaults; nothing runs before Start.
func NewHost(o Options) *Host {
	if o.Home == "" {
		o.Home = home.Dir()
	}
	if o.Cwd != "" {
		if abs, err := filepath.Abs(o.Cwd); err == nil {
			o.Cwd = abs
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&o.HelloTimeout, 60*time.Second)
	def(&o.InterceptTimeout, 5*time.Second)
	def(&o.ReadyFallback, 250*time.Millisecond)
	def(&o.ToolTimeout, 60*time.Second)
	def(&o.StartWait, envDuration(EnvStartWait, 2*time.Second, o.Logf))
	def(&o.DialogTimeout, envDuration(EnvDialogTimeout, 120*time.Second, o.Logf))
	def(&o.Debounce, 100*time.Millisecond)
	if o.RestartBackoff == nil {
		o.RestartBackoff = []time.Duration{time.Second, 5 * time.Second, 25 * time.Second}
	}
	if o.EventQueue <= 0 {
		o.EventQueue = 256
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = MaxLineBytes
	}
	if o.UI == nil {
		o.UI = nopUI{}
	}
	h := &Host{o: o, panels: map[string]*proc{}, changedCh: make(chan struct{}, 1)}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	h.reg.Store(&registry{})
	h.hasher = NewHasher(o.Home)
	h.guards = loadGuards(o.Home)
	h.startSem = make(chan struct{}, maxConcurrentStarts)
	return h
}

// Start discovers and starts every extension in parallel and returns once
// each one is ready or has failed (a missing hello fails it after
// HelloTimeout, so Start cannot hang longer than that). Untrusted
// project-local extensions do not start; AskTrust, if set, is asked in
// the background. With Watch, hot reload starts too.
func (h *Host) Start(ctx context.Context) error {
	h.mu.Lock()
	if h.started || h.closed {
		h.mu.Unlock()
		return errors.New("extensions: host already started")
	}
	h.started = true
	h.mu.Unlock()
	go h.changedLoop()
	if h.o.Watch {
		w, err := newWatcher(h)
		if err != nil {
			h.logf("extensions: file watching disabled: %v", err)
		} else {
			h.watch = w
		}
	}
	return h.rediscoverAll(ctx)
}

// rediscoverAll (re)loads every extension: in the background, or waited
// for within ctx; then the start-up's garbage goes back to the OS.
func (h *Host) rediscoverAll(ctx context.Context) error {
	if h.o.Background {
		h.rediscover(h.ctx, true, false)
		h.returnStartupMemory()
		return nil
	}
	h.rediscover(ctx, true, true)
	h.returnStartupMemory()
	return ctx.Err()
}

// returnStartupMemory gives the start-up's garbage (manifests, hello
// frames, schemas, trust hashes) back to the OS once every extension has
// started. An idle host allocates nothing, so no GC would run to free it,
// and it stayed resident: 2 MiB of the idle RSS at 100 extensions.
func (h *Host) returnStartupMemory() {
	h.mu.Lock()
	none := len(h.slots) == 0
	h.mu.Unlock()
	if none {
		return
	}
	h.goBG(func() {
		h.WaitStarting(h.ctx)
		if h.ctx.Err() == nil {
			debug.FreeOSMemory()
		}
	})
}

// Close stops every extension (shutdown, then SIGTERM/SIGKILL within 3 s)
// and the watcher. Pending calls fail at once.
func (h *Host) Close(ctx context.Context) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.closing.Store(true)
	slots := slices.Clone(h.slots)
	h.mu.Unlock()
	h.cancel()
	if h.watch != nil {
		h.watch.close()
	}
	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.shutdown()
		}()
	}
	if err := ctxwait.Wait(ctx, func() { wg.Wait(); h.bg.Wait(); h.stopPiNode() }); err != nil {
		return err
	}
	for _, s := range slots {
		s.log.close()
	}
	return nil
}

func (h *Host) isClosed() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.closed
}

// goBG runs fn as a tracked background goroutine unless the host closed.
func (h *Host) goBG(fn func()) {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.bg.Add(1)
	h.mu.Unlock()
	go func() {
		defer h.bg.Done()
		fn()
	}()
}

func (h *Host) logf(format string, args ...any) {
	if h.o.Logf != nil {
		h.o.Logf(format, args...)
	}
}

// changed asks for one UI.Changed soon. Calls coalesce, and UI.Changed
// runs on its own goroutine, never under a host lock.
func (h *Host) changed() {
	h.settled.wake()
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
			h.o.UI.Changed()
		}
	}
}

// Status lists every discovered extension in load order.
func (h *Host) Status() []Status {
	h.mu.Lock()
	slots := slices.Clone(h.slots)
	h.mu.Unlock()
	out := make([]Status, 0, len(slots))
	for _, s := range slots {
		out = append(out, s.status())
	}
	return out
}

// Reload re-reads every manifest and restarts every extension (what
// /reload-ext does): new directories load, removed ones stop, crash counts
// reset. Each restart waits for that extension's in-flight calls first.
// It returns when every extension is back (ready, failed or parked), also
// with Options.Background — whoever asked for the reload reports what it
// did — or when ctx ends; the restarts go on then, as they belong to the
// host, not to the request.
func (h *Host) Reload(ctx context.Context) error {
	if h.isClosed() {
		return errors.New("extensions: host closed")
	}
	done := make(chan struct{})
	h.goBG(func() {
		defer close(done)
		h.rediscover(h.ctx, true, true)
		h.returnStartupMemory()
	})
	select {
	case <-done:
		if h.isClosed() {
			return errors.New("extensions: host closed")
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-h.ctx.Done():
		return errors.New("extensions: host closed")
	}
}

// Trust records trust for the project-local extension name (with the hash
// of its current manifest and code) and starts it. Global and --ext
// extensions are trusted already.
func (h *Host) Trust(name string) error {
	var c *Candidate
	for _, cand := range h.discover() {
		if cand.Name == name && cand.Err == nil && cand.ShadowedBy == "" {
			c = &cand
			break
		}
	}
	if c == nil {
		return fmt.Errorf("no extension named %q in this workspace", name)
	}
	if !needsTrust(c.Source) {
		return nil
	}
	hash, err := h.hasher.Hash(c.Dir, c.Manifest, c.Raw)
	if err != nil {
		return err
	}
	h.hasher.Save()
	if err := RecordTrust(h.o.Home, h.o.Cwd, c.Name, hash); err != nil {
		return err
	}
	h.mu.Lock()
	started := h.started && !h.closed
	h.mu.Unlock()
	if started {
		h.rediscover(h.ctx, false, true)
	}
	return nil
}

// discover lists the candidates with this host's paths.
func (h *Host) discover() []Candidate {
	return DiscoverAll(h.o.Cwd, h.o.Home, h.o.ExtPaths, h.o.EditorExtPaths)
}

type nopUI struct{}

func (nopUI) Notify(string, string, string)    {}
func (nopUI) PanelOpen(string, wire.PanelView) {}
func (nopUI) PanelRender(string, wire.Frame)   {}
func (nopUI) PanelClose(string, string)        {}
func (nopUI) Changed()                         {}
