// Package rpc is the `zot rpc` front: zot's newline-delimited JSON protocol
// (shared/seeds/001) over stdin/stdout, on the same runtime as every other
// front. One prompt or compaction runs at a time; later ones queue; abort
// fires at once, on the running run or on the accepted one that has not
// started yet; at stdin EOF the running and queued runs finish (so
// `echo '{"type":"prompt",…}' | zot rpc` prints the whole run), then Serve
// returns. When Serve's context is done (zot rpc: SIGTERM) it stops at
// once: the running run is aborted, the queued ones are dropped, and
// Serve returns without waiting for the end of input.
package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/bigjson"
	"github.com/zot-editors/zot/internal/lineread"
)

// ProtocolVersion is the RPC schema's major version.
const ProtocolVersion = 1

// bigLine is the line size from which memory is collected as soon as
// the line was handled.
const bigLine = 4 << 20

// maxLine bounds one command line (images arrive base64 inline).
const maxLine = 64 << 20

// MaxQueued is how many prompts and compactions may wait behind the
// running one. Past it they are refused with "queue full (N waiting)":
// the reader never blocks on the queue, so abort, ping and the end of
// input are always read.
const MaxQueued = 64

// Command is one client → server line.
type Command struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    string          `json:"type"`
	Token   string          `json:"token,omitempty"`
	Message string          `json:"message,omitempty"`
	Images  []Image         `json:"images,omitempty"`
	Model   string          `json:"model,omitempty"`
	Level   string          `json:"level,omitempty"` // set_reasoning
	// ui_response: the ext_ui_request's id (else the command's id), and
	// the answer: value (true/false for confirm, a string otherwise) or
	// cancelled.
	UIID      string          `json:"ui_id,omitempty"`
	Value     json.RawMessage `json:"value,omitempty"`
	Cancelled bool            `json:"cancelled,omitempty"`
	Name      string          `json:"name,omitempty"` // command
	Args      string          `json:"args,omitempty"` // command
	// restore and checkpoint_diff (checkpoints.go).
	Checkpoint string `json:"checkpoint,omitempty"`
	Mode       string `json:"mode,omitempty"`
	// bash: the user's own shell command (pi's RPC bash; pi's `!!` with
	// exclude_from_context).
	Command            string `json:"command,omitempty"`
	ExcludeFromContext bool   `json:"exclude_from_context,omitempty"`
	// hello: the ext_ui_request kinds the client shows beyond confirm,
	// select and input ("editor": a multi-line box).
	UIKinds []string `json:"ui_kinds,omitempty"`
	// editor_text: the client's input box holds Text now.
	Text *string `json:"text,omitempty"`
}

// Image is a prompt attachment.
type Image struct {
	MimeType string `json:"mime_type"`
	Data     string `json:"data"`
}

// Response answers one command; ID echoes the command's id.
type Response struct {
	Type    string          `json:"type"`
	ID      json.RawMessage `json:"id,omitempty"`
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// Options configures a Server.
type Options struct {
	// Token, when set, must arrive in a hello command as the first line.
	Token string
	// Commands runs the extensions' slash commands for `command`; nil:
	// built-in commands only.
	Commands CommandHost
}

// stopGrace bounds how long a stop (SIGTERM, failed auth) waits for the
// aborted run to end and the output to be flushed: a client that stopped
// reading cannot keep the process alive.
const stopGrace = 5 * time.Second

// errInputEnded refuses a run asked for once the input has ended (an
// extension's send_message while zot finishes or stops).
var errInputEnded = errors.New("the rpc session's input has ended (stdin closed or zot is stopping): no new run is started")

// Server serves one runtime over one pair of streams.
type Server struct {
	rt   *agent.Runtime
	opts Options
	out  *writer
	// live is out while Serve runs, for notifications from other
	// goroutines (extensions); nil before and after. early holds the
	// notifications sent before Serve started.
	live   atomic.Pointer[writer]
	liveMu sync.Mutex
	early  []ExtNotify
	served bool
	cmds   sync.WaitGroup // extension commands being answered

	// The run queue. mu guards these fields and the jobs' marks; cond
	// wakes the worker when a job is queued or the input ends.
	mu      sync.Mutex
	cond    sync.Cond
	queue   []*job // accepted, not yet taken by the worker
	current *job   // taken by the worker, until its done is written
	pending int    // accepted and not ended: reserved + queue + current
	adding  int    // accepted whose response is being written (not in queue yet)
	ended   bool   // no new run is accepted (the input ended, or stopping)
	dropped bool   // stopping: runs not started are dropped

	// stopping tells the reader to handle no more commands; handling is
	// held while it handles one.
	stopping atomic.Bool
	handling sync.Mutex

	dlg dialogs // extension dialogs waiting for ui_response (extui.go)
	// input is the client's input box as zot knows it: what extensions
	// set there and what the client reported with editor_text.
	input chatInput
	// editorKind: the client's hello announced ui_kinds "editor".
	editorKind atomic.Bool
	outp       atomic.Pointer[writer] // s.out for the extension goroutines

	// shutdown is closed by an extension's ctx.shutdown (Shutdown): Serve
	// then ends as at the end of input.
	shutdown     chan struct{}
	shutdownOnce sync.Once
}

// job is one accepted prompt or compaction. aborted and cancel are
// guarded by Server.mu.
type job struct {
	start func(context.Context) (<-chan agent.Event, error)
	// unstarted (optional) hears why the job ended before it started
	// (an extension's compaction waits for its end).
	unstarted func(why string)

	aborted bool               // an abort named it (before or after it started)
	cancel  context.CancelFunc // the run's context, once the worker starts it
}

// New makes a server for rt.
func New(rt *agent.Runtime, opts Options) *Server {
	s := &Server{rt: rt, opts: opts, shutdown: make(chan struct{})}
	s.cond.L = &s.mu
	return s
}

// ErrUnauthorized ends a session whose first line was not a valid hello.
var ErrUnauthorized = errors.New("rpc: unauthorized: the first command must be hello with the ZOTCORE_RPC_TOKEN token")

// Serve reads commands from in and writes responses and events to out
// until in reaches EOF (nil: after the running and queued runs finish),
// authentication fails (the running run is aborted), or ctx is done (nil:
// the running run is aborted, the queued ones are dropped and Serve
// returns without waiting for in, whose reader is left blocked).
func (s *Server) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	s.out = newWriter(out)
	s.outp.Store(s.out)
	s.liveMu.Lock()
	for _, n := range s.early {
		s.out.write(n)
	}
	s.early, s.served = nil, true
	s.live.Store(s.out)
	s.liveMu.Unlock()
	// The runs' context ends only by stop, after the queue was dropped:
	// were it ctx's child, a run ended by ctx would let the worker take a
	// queued run before stop drops the queue.
	runCtx, cancelRuns := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelRuns()
	ctx, cancelCmds := context.WithCancel(ctx)
	defer cancelCmds()
	cancel := func() { cancelRuns(); cancelCmds() }

	workerDone := make(chan struct{})
	go func() { defer close(workerDone); s.worker(runCtx) }()
	readDone := make(chan error, 1)
	go func() { readDone <- s.read(ctx, in) }()

	select {
	case err := <-readDone:
		if err != nil {
			// Auth failure, read error: stop the running run.
			s.stop(cancel, workerDone)
			return err
		}
	case <-s.shutdown:
		// An extension's ctx.shutdown: as at EOF, what was asked
		// finishes; no command is read after this one (the reader is
		// left blocked on the input, as when ctx ends).
		s.stopping.Store(true)
	case <-ctx.Done():
		s.stop(cancel, workerDone)
		return nil
	}
	// At EOF the input is over, not the work: zot finishes what was asked
	// (an abort sent before EOF has already acted), unless ctx ends first.
	finished := make(chan struct{})
	go func() {
		s.cmds.Wait() // a command may still queue its prompt
		s.endInput(false)
		<-workerDone
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
		s.stop(cancel, workerDone)
		return nil
	}
	s.live.Store(nil)
	s.out.close()
	return nil
}

// read reads and handles commands until EOF (nil), a failed hello or a
// read error, or until Serve stops (nil).
func (s *Server) read(ctx context.Context, in io.Reader) error {
	r := bufio.NewReaderSize(in, 64*1024)
	authed := s.opts.Token == ""
	for {
		line, err := readLine(r)
		if len(line) >= bigLine {
			// The pieces the line was read in are garbage now (as large
			// as the line): collect them before the command is handled
			// and its run allocates a request body, which then reuses
			// their memory instead of growing the process (zot lsp
			// collects after a large message too).
			debug.FreeOSMemory()
		}
		if len(line) > 0 {
			stopped, herr := s.handleLine(ctx, line, &authed)
			if stopped {
				return nil
			}
			if herr != nil {
				return herr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if errors.Is(err, lineread.ErrTooLong) {
				s.reply(Response{Error: fmt.Sprintf("line longer than %d bytes dropped", maxLine)})
				continue
			}
			return err
		}
	}
}

// handleLine handles one line unless Serve is stopping (stopped).
func (s *Server) handleLine(ctx context.Context, line []byte, authed *bool) (stopped bool, err error) {
	s.handling.Lock()
	defer s.handling.Unlock()
	if s.stopping.Load() {
		return true, nil
	}
	c, rest, jerr := decodeCommand(line)
	if jerr != nil {
		if !*authed {
			s.reply(Response{Command: "hello", Error: ErrUnauthorized.Error()})
			return false, ErrUnauthorized
		}
		s.reply(badCommand(rest, jerr))
		return false, nil
	}
	if !*authed {
		if c.Type != "hello" || c.Token != s.opts.Token {
			s.reply(Response{ID: c.ID, Command: c.Type, Error: ErrUnauthorized.Error()})
			return false, ErrUnauthorized
		}
		*authed = true
	}
	s.handle(ctx, c)
	return false, nil
}

// stop ends Serve at once: no more commands are handled, the running run
// is aborted, the queued ones are dropped, and what was written is
// flushed, all within stopGrace (a client that stopped reading, with the
// output full, holds the steps that write; then Serve returns anyway).
func (s *Server) stop(cancel func(), workerDone <-chan struct{}) {
	s.stopping.Store(true)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.endInput(true) // first: the worker must not take a queued run as the running one ends
		cancel()         // the running run, extension commands, a reload
		s.rt.Cancel()
		// A command being handled finishes; after it the reader sees
		// stopping and handles no more, so no command starts after
		// cmds.Wait. (Set again under the lock: once it is held, no
		// command is being handled.)
		s.handling.Lock()
		s.stopping.Store(true)
		s.handling.Unlock()
		s.cmds.Wait()
		<-workerDone
		s.live.Store(nil)
		s.out.close()
	}()
	t := time.NewTimer(stopGrace)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		cancel()
		s.live.Store(nil)
	}
}

// endInput accepts no new runs; with drop, the queued ones are dropped
// (never started, no events).
func (s *Server) endInput(drop bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if drop {
		s.dropped = true
		s.pending -= len(s.queue)
		for _, j := range s.queue {
			if j.unstarted != nil {
				j.unstarted("zot rpc is stopping")
			}
		}
		clear(s.queue)
		s.queue = nil
	}
	s.cond.Broadcast()
}

func (s *Server) handle(ctx context.Context, c Command) {
	ok := func(data any) { s.reply(Response{ID: c.ID, Command: c.Type, Success: true, Data: data}) }
	fail := func(err error) { s.reply(Response{ID: c.ID, Command: c.Type, Error: err.Error()}) }
	switch c.Type {
	case "hello":
		s.editorKind.Store(slices.Contains(c.UIKinds, wire.UIEditor))
		st := s.rt.State()
		ok(map[string]any{"protocol_version": ProtocolVersion, "version": agent.Version, "provider": st.Provider, "model": st.Model})
	case "ping":
		ok(map[string]any{"pong": true})
	case "prompt":
		if strings.TrimSpace(c.Message) == "" && len(c.Images) == 0 {
			fail(errors.New("prompt needs a non-empty message (or images)"))
			return
		}
		size := len(c.Message)
		for _, im := range c.Images {
			size += len(im.Data)
		}
		if err := agent.CheckPromptSize(size); err != nil {
			fail(err)
			return
		}
		imgs := make([]message.Content, 0, len(c.Images))
		for i, im := range c.Images {
			if im.MimeType == "" || im.Data == "" {
				fail(fmt.Errorf("images[%d] needs mime_type and data (base64)", i))
				return
			}
			imgs = append(imgs, message.Image(im.MimeType, im.Data))
		}
		s.enqueue(ok, fail, s.promptJob(c.Message, imgs))
	case "compact":
		s.enqueue(ok, fail, s.rt.Compact)
	case "bash":
		if strings.TrimSpace(c.Command) == "" {
			fail(errors.New(`bash needs a "command", e.g. {"type":"bash","command":"ls -la"}`))
			return
		}
		command, exclude := c.Command, c.ExcludeFromContext
		// A run of its own in the queue, as a prompt: abort kills it.
		s.enqueue(ok, fail, func(ctx context.Context) (<-chan agent.Event, error) {
			return s.rt.UserBash(ctx, command, exclude)
		})
	case "abort":
		s.abort()
		ok(nil)
	case "get_state":
		st := s.rt.State()
		s.mu.Lock()
		// Busy as clear sees it: from a run's acceptance to its done.
		st.Busy = st.Busy || s.pending > 0
		s.mu.Unlock()
		ok(st)
	case "get_messages":
		msgs := s.rt.Messages()
		wire := make([]message.WireMessage, 0, len(msgs))
		for _, m := range msgs {
			wire = append(wire, message.MessageToWire(m))
		}
		ok(map[string]any{"messages": wire})
	case "clear":
		if err := s.clear(); err != nil {
			fail(err)
			return
		}
		ok(nil)
	case "set_model":
		if c.Model == "" {
			fail(errors.New("set_model needs a model id; list them with get_models"))
			return
		}
		if err := s.rt.SetModel(c.Model); err != nil {
			fail(err)
			return
		}
		ok(map[string]any{"model": c.Model})
	case "set_reasoning":
		if c.Level == "" {
			fail(errors.New(`set_reasoning needs a "level": off, low, medium or high`))
			return
		}
		if err := s.rt.SetReasoning(c.Level); err != nil {
			fail(err)
			return
		}
		ok(map[string]any{"reasoning": s.rt.Reasoning()})
	case "get_models":
		ok(map[string]any{"models": s.rt.ListModels()})
	case "editor_text":
		if c.Text == nil {
			fail(errors.New(`editor_text needs "text" (what the input box holds now)`))
			return
		}
		s.input.set(*c.Text)
		ok(nil)
	case "ui_response":
		if err := s.uiResponse(c); err != nil {
			fail(err)
			return
		}
		ok(nil)
	case "command":
		s.command(ctx, c, ok, fail)
	case "complete_command":
		s.completeCommand(ctx, c, ok, fail)
	case "checkpoints", "restore", "checkpoint_diff":
		s.checkpointCommand(ctx, c, ok, fail)
	case "":
		fail(errors.New(`missing "type"; commands: ` + commandTypes))
	default:
		fail(fmt.Errorf("unknown command %q; commands: %s", c.Type, commandTypes))
	}
}

const commandTypes = "hello, prompt, bash, abort, compact, get_state, get_messages, clear, set_model, set_reasoning, get_models, ui_response, editor_text, command, complete_command, checkpoints, restore, checkpoint_diff, ping"

// promptJob starts a prompt run.
func (s *Server) promptJob(text string, imgs []message.Content) func(context.Context) (<-chan agent.Event, error) {
	return func(ctx context.Context) (<-chan agent.Event, error) {
		return s.rt.Prompt(ctx, text, imgs)
	}
}

// Notify sends an extension's notify as an ext_notify event, so RPC hosts
// can show it. One sent before Serve starts is held until it does; after
// Serve ends it is dropped (the caller also logs it on stderr).
func (s *Server) Notify(extension, level, msg string) {
	n := ExtNotify{Type: "ext_notify", Extension: extension, Level: level, Message: msg}
	if w := s.live.Load(); w != nil {
		w.write(n)
		return
	}
	s.liveMu.Lock()
	defer s.liveMu.Unlock()
	if w := s.live.Load(); w != nil {
		w.write(n)
	} else if !s.served && len(s.early) < maxEarlyNotify {
		s.early = append(s.early, n)
	}
}

// maxEarlyNotify bounds the notifications kept until Serve starts.
const maxEarlyNotify = 256

// ExtNotify is the ext_notify event: an extension's notify.
type ExtNotify struct {
	Type      string `json:"type"`
	Extension string `json:"extension"`
	Level     string `json:"level"`
	Message   string `json:"message"`
}

// startedData answers prompt/compact at once: started means accepted; queued
// says it waits behind the running one.
func startedData(queued bool) map[string]any {
	if queued {
		return map[string]any{"started": true, "queued": true}
	}
	return map[string]any{"started": true}
}

// enqueue queues a run, or refuses it when MaxQueued runs already wait or
// the input has ended (errInputEnded). It never blocks on the queue.
func (s *Server) enqueue(ok func(any), fail func(error), start func(context.Context) (<-chan agent.Event, error)) {
	s.enqueueJob(ok, fail, &job{start: start})
}

// enqueueJob is enqueue of a job (one with unstarted set: it hears a
// drop).
func (s *Server) enqueueJob(ok func(any), fail func(error), j *job) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		fail(errInputEnded)
		return
	}
	if waiting := s.pending - 1; waiting >= MaxQueued {
		s.mu.Unlock()
		fail(fmt.Errorf("queue full (%d waiting): wait for a done event or send abort", waiting))
		return
	}
	queued := s.pending > 0
	s.pending++
	s.adding++ // the worker does not finish while a response is being written
	s.mu.Unlock()
	// Reply before the run can emit, so the response precedes its events.
	ok(startedData(queued))
	s.mu.Lock()
	s.adding--
	if s.dropped {
		s.pending--
		if j.unstarted != nil {
			j.unstarted("zot rpc is stopping")
		}
	} else {
		s.queue = append(s.queue, j)
	}
	s.cond.Broadcast()
	s.mu.Unlock()
}

// abort aborts the running run, or, when none has started yet, the
// accepted one that runs next: it is marked, and the worker ends it
// aborted instead of starting it. Queued runs behind it are kept.
func (s *Server) abort() {
	s.mu.Lock()
	j := s.current
	if j == nil && len(s.queue) > 0 {
		j = s.queue[0]
	}
	var cancel context.CancelFunc
	if j != nil {
		j.aborted = true
		cancel = j.cancel
	}
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.rt.Cancel()
}

// clear drops the conversation. It fails as busy from a prompt's
// acceptance until its done (queued runs and one aborted before it
// started included), so it never clears under a run about to start.
func (s *Server) clear() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending > 0 {
		return agent.ErrBusy
	}
	return s.rt.Clear()
}

// decodeCommand decodes one line. A large string (a 16 MiB prompt) is
// unquoted in place, in the line's own memory, which the command then
// shares (bigjson): no copy. On an error, rest is the line to report it
// from (badCommand names the id and the field from it).
func decodeCommand(line []byte) (c Command, rest []byte, err error) {
	rest, err = bigjson.Unmarshal(line, &c)
	return c, rest, err
}

// badCommand answers a line that is JSON but not a command, echoing its
// id and naming the field of the wrong type when it can.
func badCommand(line []byte, err error) Response {
	r := Response{Error: "parse error: each line must be one JSON object: " + err.Error()}
	var probe map[string]json.RawMessage
	if json.Unmarshal(line, &probe) != nil {
		return r
	}
	if id := probe["id"]; len(id) > 0 && (id[0] == '"' || id[0] == '-' || id[0] >= '0' && id[0] <= '9') {
		r.ID = id
	}
	json.Unmarshal(probe["type"], &r.Command)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		r.Error = fmt.Sprintf("%q must be %s, not %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		if r.Command != "" {
			r.Error = r.Command + ": " + r.Error
		}
	}
	return r
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	default:
		return "a number"
	}
}

// worker runs queued prompts one at a time and streams their events,
// until the input has ended and the queue is empty.
func (s *Server) worker(ctx context.Context) {
	for {
		j := s.next()
		if j == nil {
			return
		}
		s.runJob(ctx, j)
	}
}

// next takes the next job, waiting for one; nil once no more will come.
func (s *Server) next() *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(s.queue) == 0 && (!s.ended || s.adding > 0) {
		s.cond.Wait()
	}
	if len(s.queue) == 0 {
		return nil
	}
	j := s.queue[0]
	s.queue[0] = nil
	s.queue = s.queue[1:]
	s.current = j
	return j
}

// runJob runs one job. One aborted before it started (or taken while
// Serve stops) is not started: it ends as an aborted run does, with
// turn_end {"stop":"aborted"} and done.
func (s *Server) runJob(ctx context.Context, j *job) {
	jctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	aborted := j.aborted || ctx.Err() != nil
	if !aborted {
		// From here abort cancels jctx: no window before the runtime has
		// registered the run (rt.Cancel alone is a no-op until then).
		j.cancel = cancel
	}
	s.mu.Unlock()
	if aborted {
		if j.unstarted != nil {
			j.unstarted("aborted before it started")
		}
		s.out.event(agent.Event{Type: agent.EventTurnEnd, Stop: provider.StopAborted})
		s.finish(j)
		return
	}
	ch, err := j.start(jctx)
	if err != nil {
		s.out.event(agent.Event{Type: agent.EventError, Message: err.Error()})
		s.finish(j)
		return
	}
	for ev := range ch {
		if ev.Type != agent.EventDone { // the last event; finish writes it
			s.out.event(ev)
		}
	}
	s.finish(j)
}

// finish writes j's done and, in the same step, counts it out: a command
// read after done sees the run over (clear succeeds, abort names the
// next run, a prompt is not "queued"), one read before sees it running.
func (s *Server) finish(j *job) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.out.event(agent.Event{Type: agent.EventDone})
	if s.current == j {
		s.current = nil
	}
	s.pending--
}

func (s *Server) reply(r Response) {
	r.Type = "response"
	s.out.write(r)
}
