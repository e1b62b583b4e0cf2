// Package rpc is the `zot rpc` front: zot's newline-delimited JSON protocol
// (shared/seeds/001) over stdin/stdout, on the same runtime as every other
// front. One prompt or compaction runs at a time; later ones queue; abort
// fires at once; at stdin EOF the running and queued runs finish (so
// `echo '{"type":"prompt",…}' | zot rpc` prints the whole run), then Serve
// returns.
package rpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
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

	jobs    chan job // never full: reserve refuses past MaxQueued
	mu      sync.Mutex
	pending int // queued + running jobs

	dlg  dialogs                // extension dialogs waiting for ui_response (extui.go)
	outp atomic.Pointer[writer] // s.out for the extension goroutines
}

type job struct {
	start func(context.Context) (<-chan agent.Event, error)
}

// New makes a server for rt.
func New(rt *agent.Runtime, opts Options) *Server {
	return &Server{rt: rt, opts: opts, jobs: make(chan job, MaxQueued+1)}
}

// ErrUnauthorized ends a session whose first line was not a valid hello.
var ErrUnauthorized = errors.New("rpc: unauthorized: the first command must be hello with the ZOTCORE_RPC_TOKEN token")

// Serve reads commands from in and writes responses and events to out
// until in reaches EOF (nil: after the running and queued runs finish) or
// authentication fails (the running run is aborted).
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
	defer s.out.close()
	defer s.live.Store(nil)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); s.worker(ctx) }()
	eof := false
	defer func() {
		// At EOF the input is over, not the work: zot finishes what was
		// asked (an abort sent before EOF has already acted). Otherwise
		// (auth failure, read error) stop the running run.
		if !eof {
			s.rt.Cancel()
			cancel()
		}
		s.cmds.Wait() // a command may still queue its prompt
		close(s.jobs)
		wg.Wait()
	}()

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
			c, rest, jerr := decodeCommand(line)
			if jerr != nil {
				if !authed {
					s.reply(Response{Command: "hello", Error: ErrUnauthorized.Error()})
					return ErrUnauthorized
				}
				s.reply(badCommand(rest, jerr))
			} else if !authed {
				if c.Type != "hello" || c.Token != s.opts.Token {
					s.reply(Response{ID: c.ID, Command: c.Type, Error: ErrUnauthorized.Error()})
					return ErrUnauthorized
				}
				authed = true
				s.handle(ctx, c)
			} else {
				s.handle(ctx, c)
			}
		}
		if err == io.EOF {
			eof = true
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

func (s *Server) handle(ctx context.Context, c Command) {
	ok := func(data any) { s.reply(Response{ID: c.ID, Command: c.Type, Success: true, Data: data}) }
	fail := func(err error) { s.reply(Response{ID: c.ID, Command: c.Type, Error: err.Error()}) }
	switch c.Type {
	case "hello":
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
	case "abort":
		s.rt.Cancel()
		ok(nil)
	case "get_state":
		ok(s.rt.State())
	case "get_messages":
		msgs := s.rt.Messages()
		wire := make([]message.WireMessage, 0, len(msgs))
		for _, m := range msgs {
			wire = append(wire, message.MessageToWire(m))
		}
		ok(map[string]any{"messages": wire})
	case "clear":
		if err := s.rt.Clear(); err != nil {
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
	case "ui_response":
		if err := s.uiResponse(c); err != nil {
			fail(err)
			return
		}
		ok(nil)
	case "command":
		s.command(ctx, c, ok, fail)
	case "":
		fail(errors.New(`missing "type"; commands: ` + commandTypes))
	default:
		fail(fmt.Errorf("unknown command %q; commands: %s", c.Type, commandTypes))
	}
}

const commandTypes = "hello, prompt, abort, compact, get_state, get_messages, clear, set_model, set_reasoning, get_models, ui_response, command, ping"

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

// enqueue queues a run, or refuses it when MaxQueued runs already wait.
// It never blocks: the channel has room for every reserved run.
func (s *Server) enqueue(ok func(any), fail func(error), start func(context.Context) (<-chan agent.Event, error)) {
	s.mu.Lock()
	if waiting := s.pending - 1; waiting >= MaxQueued {
		s.mu.Unlock()
		fail(fmt.Errorf("queue full (%d waiting): wait for a done event or send abort", waiting))
		return
	}
	queued := s.pending > 0
	s.pending++
	s.mu.Unlock()
	// Reply before the run can emit, so the response precedes its events.
	ok(startedData(queued))
	s.jobs <- job{start: start}
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

// worker runs queued prompts one at a time and streams their events.
func (s *Server) worker(ctx context.Context) {
	for j := range s.jobs {
		if ctx.Err() == nil {
			ch, err := j.start(ctx)
			if err != nil {
				s.out.event(agent.Event{Type: agent.EventError, Message: err.Error()})
				s.out.event(agent.Event{Type: agent.EventDone})
			} else {
				for ev := range ch {
					s.out.event(ev)
				}
			}
		}
		s.mu.Lock()
		s.pending--
		s.mu.Unlock()
	}
}

func (s *Server) reply(r Response) {
	r.Type = "response"
	s.out.write(r)
}
