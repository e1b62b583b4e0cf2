// Package agent is the zot runtime: the model/tool loop, sessions and
// compaction. Its exported API is the in-process Go SDK and mirrors zot's
// (shared/seeds/001): New, Prompt, Cancel, Compact, SetModel, State,
// Messages, Cost, ListModels, Close. The fronts (print mode, `zot rpc`,
// `zot lsp`) are thin adapters over it.
package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/skills"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/secrets"
)

// DevVersion is the version of a build that was not told its own.
const DevVersion = "0.1.0"

// Version is zot's version, reported by hello, hello_ack and initialize's
// serverInfo. Release builds set it with
// -ldflags "-X github.com/zot-editors/zot/agent.Version=…" (scripts/release.sh);
// cmd/zot fills it from the module version for `go install …@vX`.
var Version = DevVersion

// ErrBusy is returned when a prompt or compaction is already running.
var ErrBusy = errors.New("busy: a prompt or compaction is already running (abort it or wait for done)")

// ErrClosed is returned after Close.
var ErrClosed = errors.New("runtime closed")

// MaxPromptBytes is the largest prompt the fronts accept: its text and its
// images' base64 data together. Providers refuse larger requests
// (Anthropic's limit is 32 MB for the whole request), and a prompt is
// held several times while it is sent and recorded.
const MaxPromptBytes = 16 << 20

// CheckPromptSize is the error for a prompt of n bytes past
// MaxPromptBytes, nil otherwise.
func CheckPromptSize(n int) error {
	if n <= MaxPromptBytes {
		return nil
	}
	return fmt.Errorf("the prompt is %.1f MiB; the largest zot accepts is %d MiB (text and images together): attach less", float64(n)/(1<<20), MaxPromptBytes>>20)
}

const defaultMaxSteps = 50

// Runtime runs one conversation. It is safe for concurrent use; one prompt
// or compaction runs at a time.
type Runtime struct {
	cfg      Config
	client   provider.Client
	catalog  *provider.Catalog
	ws       tools.Workspace
	builtins []tools.Tool
	redact   *secrets.Redactor // the provider key and zot's secret env values

	mu        sync.Mutex
	model     provider.Model
	reasoning string // as asked for; "" is the model's default
	messages  []message.Message
	usage     message.Usage
	busy      bool
	cancel    context.CancelFunc
	closed    bool
	sess      *session.Writer
	started   bool // session_start observed
	// restoredFrom is the model a resumed session's own replaced, until
	// model_select tells the hooks (after session_start).
	restoredFrom string
	// keepModel: the model was asked for by name (--model); a session
	// resumed at start keeps it rather than restore its own.
	keepModel bool
	forked    string // the locked session the current one was copied from
	lastIn    int    // input tokens of the last model call, for auto-compaction
	compacts  int
	execSeq   atomic.Int64   // ids of extensions' exec calls (exec.go)
	clientErr error          // why there is no client of zot's own provider (an extension's model runs)
	fallback  provider.Model // --model "x/y": zot's own model of that id, when no extension provides x

	// Extension actions (extend.go).
	steer      []string        // added before the next model call
	followUps  []string        // prompts that continue the running run
	nextTurn   []string        // added to the next prompt's message
	active     map[string]bool // tool names offered; nil = all
	custom     []session.Custom
	runSystem  string // appended to the system prompt for this run
	lastStop   string // the running run's last turn_end stop
	accepting  bool   // the running prompt still takes steer / follow-up messages
	runUsage   message.Usage
	skills     []skills.Skill
	skillCache skills.Cache    // SKILL.md files parsed at the last discovery
	warned     map[string]bool // skill warnings already given

	ckpt      checkpoints // the workspace's checkpoints (checkpoints.go)
	restoring bool        // a checkpoint restore is running: no run starts
}

// State is a snapshot of the runtime, as get_state reports it.
type State struct {
	Provider     string        `json:"provider"`
	Model        string        `json:"model"`
	Reasoning    string        `json:"reasoning"` // the level requests are sent with
	Cwd          string        `json:"cwd"`
	MessageCount int           `json:"message_count"`
	Busy         bool          `json:"busy"`
	Usage        message.Usage `json:"usage"`
	SessionID    string        `json:"session_id,omitempty"`
	// ForkedFrom is set when the session asked for was open in another zot
	// process: this session is a copy of it, written separately.
	ForkedFrom string `json:"forked_from,omitempty"`
}

// New builds a runtime. It never contacts the provider: a missing API key
// is reported here, a wrong one at the first prompt.
func New(cfg Config) (*Runtime, error) {
	if cfg.Home == "" {
		cfg.Home = home.Dir()
	}
	if cfg.CWD == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		cfg.CWD = wd
	}
	abs, err := filepath.Abs(cfg.CWD)
	if err != nil {
		return nil, err
	}
	cfg.CWD = abs
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = defaultMaxSteps
	}
	cat, err := provider.LoadCatalog(cfg.Home)
	if err != nil {
		return nil, err
	}
	if cfg.Provider == "" {
		// The provider of --model when the catalogue knows it (a zot
		// user's models.json names GPT models without --provider).
		cfg.Provider = cat.ProviderOf(cfg.Model)
	}
	modelID := cfg.Model
	if modelID == "" {
		modelID = cat.Default(cfg.Provider)
	}
	model, err := cat.Resolve(cfg.Provider, modelID, cfg.BaseURL)
	var fallback provider.Model
	if ext, ok := (&Runtime{cfg: cfg}).pendingExtModel(modelID); ok && !cat.Known(cfg.Provider, modelID) {
		// An extension's model ("provider/model"): its extension has not
		// started yet; the first model call finds its client. An id the
		// base URL's server serves (OpenRouter's "vendor/model") is the
		// fallback when no extension registers that provider.
		if err == nil {
			fallback = model
		}
		model, err = ext, nil
	}
	if err != nil {
		return nil, err
	}
	level, err := provider.ParseReasoning(cfg.Reasoning)
	if err != nil {
		return nil, err
	}
	if err := cat.CheckReasoning(model, level); err != nil {
		return nil, err
	}
	r := &Runtime{cfg: cfg, catalog: cat, model: model, reasoning: level, keepModel: cfg.Model != "", fallback: fallback}
	r.client = cfg.Client
	r.redact = secrets.NewRedactor(cfg.APIKey)
	if r.client == nil {
		// A models.json entry's own base URL counts too: an Ollama model
		// served on loopback needs no key.
		keyBase := cfg.BaseURL
		if keyBase == "" {
			keyBase = model.BaseURL
		}
		key, err := provider.APIKey(cfg.Provider, cfg.APIKey, keyBase, cfg.Home)
		if err == nil {
			if key != provider.LocalPlaceholderKey {
				r.redact = secrets.NewRedactor(cfg.APIKey, key)
			}
			r.client, err = provider.New(provider.Options{
				Provider: cfg.Provider, APIKey: key, BaseURL: cfg.BaseURL,
				HTTPClient: cfg.HTTPClient, Catalog: cat,
				FirstByteTimeout: cfg.FirstByteTimeout, IdleTimeout: cfg.IdleTimeout,
			})
		}
		if err != nil {
			if model.Provider == cfg.Provider || model.Provider == "" {
				return nil, err
			}
			// The session runs on an extension's model: its provider's
			// key is the extension's business. zot's own models fail
			// with this error when chosen.
			r.clientErr = err
		}
	}
	r.ws = cfg.Workspace
	if r.ws == nil {
		r.ws = tools.NewDiskWorkspace(cfg.CWD, cfg.AddDirs...)
	}
	if len(cfg.WriteRules) > 0 {
		g, ok := r.ws.(tools.WriteGuard)
		if !ok { // fail closed: protected paths must not go unchecked
			return nil, fmt.Errorf("agent: the workspace (%T) does not check writes, so its write rules cannot apply", r.ws)
		}
		g.SetWriteRules(cfg.WriteRules...)
	}
	r.warned = map[string]bool{}
	r.refreshSkills()
	if !cfg.NoTools {
		r.builtins = tools.Builtins(r.ws)
		if !cfg.NoSkills {
			// zot's five come first: read, write, edit, bash, skill.
			r.builtins = slices.Insert(r.builtins, 4, tools.NewSkill(r.Skills))
		}
		if len(cfg.Tools) > 0 {
			if r.builtins, err = tools.Select(r.builtins, cfg.Tools); err != nil {
				return nil, err
			}
		}
	}
	if cfg.SessionPath != "" {
		if _, err := os.Stat(cfg.SessionPath); err != nil {
			return nil, fmt.Errorf("--session: %w", err)
		}
		if err := r.continuePath(cfg.SessionPath); err != nil {
			return nil, fmt.Errorf("--session %s: %w", cfg.SessionPath, err)
		}
	} else if cfg.Sessions {
		if err := r.openSession(cfg.Resume); err != nil {
			return nil, err
		}
	}
	// A session resumed later (/resume) brings its own model back.
	r.keepModel = false
	return r, nil
}

// restoreModel switches to the model a resumed session was written with,
// when it is another model of this provider that the catalogue knows
// (and that takes the reasoning level in effect); the hooks hear
// model_select once the session has started. Caller holds r.mu, or r is
// not shared yet.
func (r *Runtime) restoreModel(l *session.Loaded) {
	if r.keepModel || l.Model == "" || l.Model == r.model.ID || l.Provider != "" && l.Provider != r.cfg.Provider {
		return
	}
	m, err := r.catalog.Resolve(r.cfg.Provider, l.Model, r.cfg.BaseURL)
	if err != nil || r.catalog.CheckReasoning(m, r.reasoning) != nil {
		return
	}
	if r.restoredFrom == "" {
		r.restoredFrom = r.model.ID
	}
	r.model = m
}

// observeRestoredModel sends model_select for a model restoreModel
// switched to, after the session's session_start.
func (r *Runtime) observeRestoredModel() {
	r.mu.Lock()
	prev, cur := r.restoredFrom, r.model.ID
	r.restoredFrom = ""
	r.mu.Unlock()
	if prev != "" && prev != cur {
		r.observe(Lifecycle{Event: "model_select", Provider: r.cfg.Provider, Model: cur, PreviousModel: prev})
	}
}

func (r *Runtime) openSession(resume string) error {
	if resume == "" {
		w, err := r.createSession(session.Dir(r.cfg.Home, r.cfg.CWD))
		if err != nil {
			return err
		}
		r.useSession(w)
		return nil
	}
	path, err := session.FindWorkspace(r.cfg.Home, r.cfg.CWD, resume)
	if err != nil {
		return err
	}
	return r.continuePath(path)
}

// continuePath resumes the session file at path, or with Config.Fork
// continues it in a copy in CWD's session directory.
func (r *Runtime) continuePath(path string) error {
	if !r.cfg.Fork {
		return r.resumePath(path)
	}
	l, err := session.Load(path)
	if err != nil {
		return err
	}
	r.restoreModel(l)
	return r.forkSession(l, session.Dir(r.cfg.Home, r.cfg.CWD))
}

// createSession starts a new session file in dir.
func (r *Runtime) createSession(dir string) (*session.Writer, error) {
	return session.CreateMeta(dir, r.sessionMeta())
}

func (r *Runtime) sessionMeta() session.Meta {
	return session.Meta{Cwd: r.cfg.CWD, Provider: r.cfg.Provider, Model: r.model.ID, Version: Version}
}

// resumePath continues the session file at path: appending to it, or to
// its migration when it is in our earlier format, or to a copy when
// another process writes it.
func (r *Runtime) resumePath(path string) error {
	l, err := session.Load(path)
	if err != nil {
		return err
	}
	r.restoreModel(l)
	r.forked = ""
	var w *session.Writer
	if l.Legacy {
		dir := session.Dir(r.cfg.Home, r.cfg.CWD)
		if l.Info.Cwd != "" {
			dir = session.Dir(r.cfg.Home, l.Info.Cwd)
		}
		w, err = session.Migrate(l, dir, r.sessionMeta())
		if errors.Is(err, session.ErrLocked) {
			return r.forkSession(l, dir)
		}
		if err != nil {
			return err
		}
		r.useSession(w)
		r.messages, r.usage = l.Messages, l.Usage
		r.custom = l.Custom
		return nil
	}
	w, err = session.Open(path)
	if errors.Is(err, session.ErrLocked) {
		return r.forkSession(l, filepath.Dir(path))
	}
	if err != nil {
		return err
	}
	r.useSession(w)
	r.messages, r.usage = l.Messages, l.Usage
	r.custom = l.Custom
	if len(l.Tail) > 0 {
		// Persist the repair of the last turn (the process died with tool
		// calls unanswered) so the file is whole for zot as well; repairs
		// further back are redone on every load.
		w.Append(session.Entry{Kind: session.KindMessage, Message: &message.Message{Role: message.RoleUser, Content: l.Tail, Time: now()}})
	}
	return nil
}

// forkSession continues a session another window writes in a copy of it,
// instead of interleaving two conversations in one transcript.
func (r *Runtime) forkSession(l *session.Loaded, dir string) error {
	w, err := r.createSession(dir)
	if err != nil {
		return err
	}
	r.useSession(w)
	r.messages, r.usage = l.Messages, l.Usage
	r.forked = l.Info.ID
	r.custom = l.Custom
	if err := w.AppendTranscript(l.Messages, l.Usage); err != nil {
		return err
	}
	// The extensions' entries follow the conversation into the copy.
	for _, c := range l.Custom {
		w.AppendCustom(c)
	}
	return nil
}

// useSession makes w the session file; secrets are masked in what it gets.
func (r *Runtime) useSession(w *session.Writer) {
	w.SetRedact(r.redact.Bytes)
	r.sess = w
}

// Prompt starts a run. The returned channel carries the run's events and
// is closed after done; the caller must drain it. ErrBusy while another
// run is in progress.
func (r *Runtime) Prompt(ctx context.Context, text string, images []message.Content) (<-chan Event, error) {
	return r.PromptWith(ctx, PromptInput{Text: text, Images: images, Keep: -1})
}

// PromptInput is a prompt with what the editor attached to it.
type PromptInput struct {
	Text   string
	Images []message.Content
	// Attached are context blocks (the editor's attachments, expanded):
	// they follow the text in the user's message, after the input hooks
	// (which see only the user's own words).
	Attached []message.Content
	// Keep >= 0 first cuts the transcript to its first Keep messages
	// (retry, edit and resend; see Rewind); -1 keeps it whole.
	Keep int
}

// PromptWith starts a run as Prompt does, with attachments, and, when
// in.Keep >= 0, rewinds the transcript first (in the run, so nothing runs
// between the cut and the new prompt).
func (r *Runtime) PromptWith(ctx context.Context, in PromptInput) (<-chan Event, error) {
	content := []message.Content{}
	if in.Text != "" {
		content = append(content, message.Text(in.Text))
	}
	content = append(content, in.Images...)
	if len(content) == 0 && len(in.Attached) == 0 {
		return nil, errors.New("empty prompt: give text or images")
	}
	if in.Keep >= 0 {
		if err := r.Rewind(in.Keep); err != nil {
			return nil, err
		}
	}
	return r.start(ctx, func(ctx context.Context, emit func(Event)) {
		r.refreshSkills()
		// Recorded beside the model request: what can change the
		// workspace waits for it (awaitCheckpoint).
		r.startCheckpoint(ctx, in.Text)
		if r.cfg.AwaitExtensions != nil {
			r.cfg.AwaitExtensions(ctx)
		}
		r.mu.Lock()
		r.runUsage, r.lastStop, r.runSystem = message.Usage{}, "", ""
		r.mu.Unlock()
		r.observeSessionStart()
		content, ok := r.transformInput(ctx, content, emit)
		if !ok {
			return
		}
		content = append(content, in.Attached...)
		r.observe(Lifecycle{Event: "agent_start"})
		r.mu.Lock()
		r.accepting = true
		r.mu.Unlock()
		r.run(ctx, content, emit)
		r.mu.Lock()
		u, stop := r.runUsage, r.lastStop
		// What arrives from now on starts a new run (the front's
		// business): nothing queued here would be read.
		r.accepting = false
		left := append(r.steer, r.followUps...)
		r.steer, r.followUps, r.runSystem = nil, nil, ""
		r.mu.Unlock()
		if len(left) > 0 && ctx.Err() == nil {
			// The run ended with messages queued (an error stopped it):
			// they ride with the next prompt rather than vanish.
			r.mu.Lock()
			r.nextTurn = append(r.nextTurn, left...)
			r.mu.Unlock()
		}
		if ctx.Err() != nil {
			stop = "aborted"
		}
		r.observe(Lifecycle{Event: "agent_end", Stop: stop, Usage: &u})
	})
}

// Compact summarises the transcript into one synthetic user message. Same
// lifecycle as Prompt; the last event before done is compact_done.
func (r *Runtime) Compact(ctx context.Context) (<-chan Event, error) {
	return r.start(ctx, func(ctx context.Context, emit func(Event)) {
		if err := r.compact(ctx, emit, r.messageCount()); err != nil {
			emit(errorEvent(err))
		}
	})
}

func (r *Runtime) start(ctx context.Context, body func(context.Context, func(Event))) (<-chan Event, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, ErrClosed
	}
	if r.busy || r.restoring {
		r.mu.Unlock()
		return nil, ErrBusy
	}
	runCtx, cancel := context.WithCancel(ctx)
	r.busy, r.cancel = true, cancel
	r.mu.Unlock()

	ch := make(chan Event, 32) // small: an Event is ~300 bytes and the channel is made per run
	go func() {
		defer close(ch)
		emit := func(e Event) { ch <- redactEvent(r.redact, e) }
		body(runCtx, emit)
		r.endCheckpoint() // listed once the run is done
		r.endRun()
		r.mu.Lock()
		r.busy, r.cancel = false, nil
		r.mu.Unlock()
		cancel()
		emit(Event{Type: EventDone})
	}()
	return ch, nil
}

// Cancel cancels the running prompt or compaction, if any. The run ends
// with turn_end{stop:"aborted"} and done.
func (r *Runtime) Cancel() {
	r.mu.Lock()
	c := r.cancel
	r.mu.Unlock()
	if c != nil {
		c()
	}
}

// Busy reports whether a run is in progress.
func (r *Runtime) Busy() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.busy
}

// SetModel switches the model within the provider, or to an extension
// provider's model ("provider/model").
func (r *Runtime) SetModel(id string) error {
	m, err := r.catalog.Resolve(r.cfg.Provider, id, r.cfg.BaseURL)
	if ext, ok := r.extModel(id); ok && !r.catalog.Known(r.cfg.Provider, id) {
		m, err = ext, nil // an extension's provider wins over a base URL's guess
	}
	if err != nil {
		return err
	}
	r.mu.Lock()
	prev := r.model.ID
	r.model = m
	r.mu.Unlock()
	if prev != m.ID {
		r.observe(Lifecycle{Event: "model_select", Provider: r.cfg.Provider, Model: m.ID, PreviousModel: prev})
	}
	return nil
}

// SetReasoning sets the thinking level (off, low, medium, high; "" for the
// model's default) for the next model calls. A level other than off on a
// model that does not reason is an error naming the models that do.
func (r *Runtime) SetReasoning(level string) error {
	level, err := provider.ParseReasoning(level)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.catalog.CheckReasoning(r.model, level); err != nil {
		return err
	}
	r.reasoning = level
	return nil
}

// Reasoning is the level the next model call is sent with.
func (r *Runtime) Reasoning() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return provider.EffectiveReasoning(r.model, r.reasoning)
}

// Model is the current model.
func (r *Runtime) Model() provider.Model {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.model
}

// State snapshots the runtime.
func (r *Runtime) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	prov := r.cfg.Provider
	if r.model.Provider != "" && r.cfg.Providers != nil {
		prov = r.model.Provider // an extension's model: its provider
	}
	s := State{Provider: prov, Model: r.model.ID, Reasoning: provider.EffectiveReasoning(r.model, r.reasoning), Cwd: r.cfg.CWD,
		MessageCount: len(r.messages), Busy: r.busy, Usage: r.usage}
	if r.sess != nil {
		s.SessionID = r.sess.ID()
		s.ForkedFrom = r.forked
	}
	return s
}

// Messages returns a copy of the transcript.
func (r *Runtime) Messages() []message.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]message.Message(nil), r.messages...)
}

// transcript returns the transcript as it is now, without copying it: the
// runtime only ever appends to r.messages or replaces it, never writes a
// message in place, and the capacity is capped so an append past the view
// cannot write into it. Each model call reads the whole transcript; a copy
// per call made the host's CPU per prompt grow with the conversation.
// Callers must not modify the elements.
func (r *Runtime) transcript() []message.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.messages[:len(r.messages):len(r.messages)]
}

func (r *Runtime) messageCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.messages)
}

// Cost is the cumulative usage, compactions included.
func (r *Runtime) Cost() message.Usage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.usage
}

// ListModels lists the models known for the current provider.
func (r *Runtime) ListModels() []provider.Model {
	ms := r.catalog.Models(r.cfg.Provider)
	if r.cfg.Providers != nil {
		ms = append(ms, r.cfg.Providers.ProviderModels()...)
	}
	return ms
}

// CWD is the workspace directory.
func (r *Runtime) CWD() string { return r.cfg.CWD }

// ProviderName is the configured provider.
func (r *Runtime) ProviderName() string { return r.cfg.Provider }

// Clear drops the transcript (like /clear). ErrBusy during a run.
func (r *Runtime) Clear() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy {
		return ErrBusy
	}
	r.messages, r.lastIn = nil, 0
	if r.sess != nil {
		r.sess.Append(session.Entry{Kind: session.KindCompact, Messages: []message.Message{}})
	}
	return nil
}

// Rewind cuts the transcript to its first keep messages, for a retry or
// an edited earlier prompt. The session file keeps the messages after the
// cut (the old branch) and records the cut as an x-rewind line. ErrBusy
// during a run.
func (r *Runtime) Rewind(keep int) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy {
		return ErrBusy
	}
	if keep < 0 || keep > len(r.messages) {
		return fmt.Errorf("cannot rewind to %d messages: the conversation has %d", keep, len(r.messages))
	}
	r.messages, r.lastIn = r.messages[:keep:keep], 0
	if r.sess != nil {
		if err := r.sess.Append(session.Entry{Kind: session.KindRewind, Keep: keep}); err != nil {
			return err
		}
	}
	return nil
}

// NewSession starts a fresh session file (and transcript). ErrBusy during a run.
func (r *Runtime) NewSession() error {
	if err := r.newSession(); err != nil {
		return err
	}
	r.ObserveSessionStart("new")
	return nil
}

func (r *Runtime) newSession() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy {
		return ErrBusy
	}
	r.messages, r.usage, r.lastIn = nil, message.Usage{}, 0
	r.forked = ""
	r.custom, r.nextTurn = nil, nil
	if r.sess != nil {
		r.sess.Close()
		r.sess = nil
		w, err := r.createSession(session.Dir(r.cfg.Home, r.cfg.CWD))
		if err != nil {
			return err
		}
		r.useSession(w)
	}
	return nil
}

// Resume replaces the transcript with a stored session ("latest" or an id).
func (r *Runtime) Resume(which string) error {
	path, err := session.FindWorkspace(r.cfg.Home, r.cfg.CWD, which)
	if err != nil {
		return err
	}
	if err := r.resume(path); err != nil {
		return err
	}
	r.ObserveSessionStart("resume")
	return nil
}

// ResumeFile replaces the transcript with the session stored at path
// (pi's ctx.switchSession takes a session file). A file that is not a
// session is an error and leaves the current session as it was.
func (r *Runtime) ResumeFile(path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no session file %s: %w", path, err)
	}
	// Load skips lines it cannot read (a torn last line), so a file
	// without a session's header or a message is not one.
	l, err := session.Load(path)
	if err == nil && !l.Legacy && l.Meta.ID == "" && len(l.Messages) == 0 {
		err = errors.New("no session header or message in it")
	}
	if err != nil {
		return fmt.Errorf("%s is not a zot session file: %w", path, err)
	}
	if err := r.resume(path); err != nil {
		return err
	}
	r.ObserveSessionStart("resume")
	return nil
}

func (r *Runtime) resume(path string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.busy {
		return ErrBusy
	}
	if r.sess != nil {
		r.sess.Close()
		r.sess = nil
	}
	r.custom, r.nextTurn = nil, nil
	return r.resumePath(path)
}

// Sessions lists the stored sessions of this workspace, newest first:
// zot's and ours, in both layouts.
func (r *Runtime) Sessions() ([]session.Info, error) {
	return session.ListWorkspace(r.cfg.Home, r.cfg.CWD)
}

// Close aborts any run and closes the session file; the hooks hear
// session_shutdown first.
func (r *Runtime) Close() error {
	r.mu.Lock()
	wasClosed := r.closed
	r.mu.Unlock()
	if !wasClosed {
		r.observe(Lifecycle{Event: "session_shutdown"})
	}
	r.mu.Lock()
	r.closed = true
	c := r.cancel
	s := r.sess
	r.mu.Unlock()
	if c != nil {
		c()
	}
	r.endRun()
	r.closeCheckpoints()
	if s != nil {
		return s.Close()
	}
	return nil
}

// endRun lets the tools release what a run left behind (bash's background
// jobs are killed).
func (r *Runtime) endRun() {
	for _, t := range r.builtins {
		if e, ok := t.(tools.RunEnder); ok {
			e.EndRun()
		}
	}
}

// appendMessage adds a message to the transcript and persists it at once;
// it returns the message's index in the transcript.
func (r *Runtime) appendMessage(m message.Message) int {
	r.mu.Lock()
	r.messages = append(r.messages, m)
	i := len(r.messages) - 1
	s := r.sess
	r.mu.Unlock()
	if s != nil {
		s.Append(session.Entry{Kind: session.KindMessage, Message: &m})
	}
	return i
}

// addUsage accounts a model call's usage and returns the new total.
func (r *Runtime) addUsage(u message.Usage) message.Usage {
	r.mu.Lock()
	r.usage = r.usage.Add(u)
	r.runUsage = r.runUsage.Add(u)
	total := r.usage
	s := r.sess
	r.mu.Unlock()
	if s != nil {
		s.Append(session.Entry{Kind: session.KindUsage, Usage: &u, Cumulative: &total})
	}
	return total
}

func errorEvent(err error) Event {
	return Event{Type: EventError, Message: err.Error()}
}

func now() time.Time { return time.Now().UTC() }
