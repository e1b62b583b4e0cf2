// Package sdk is the Go SDK for zot extensions: programs the host runs
// as subprocesses, speaking extension protocol v1 (one JSON frame per
// line, see package wire) over their stdin/stdout.
//
// It mirrors zot's own Go SDK, so an extension reads the same:
//
//	func main() {
//		e := sdk.New("hello", "1.0.0")
//		e.Command("hello", "say hi", func(args string) sdk.Response {
//			return sdk.Prompt("Greet me in one short sentence.")
//		})
//		e.Tool("weather", "Current weather for a city.",
//			json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
//			func(args json.RawMessage) sdk.ToolResult { return sdk.TextResult("sunny") })
//		e.Run()
//	}
//
// Register everything, then call Run. Run sends hello, waits for
// hello_ack (see Hello), sends the registrations in the order they were
// made, then one subscribe frame (events from On, intercepts from the
// Intercept* methods) and ready, and serves the host until shutdown
// (answered with shutdown_ack) or the end of stdin.
//
// Concurrency: every command, tool and intercept handler runs on a
// goroutine of its own, so a slow one never holds up the others. Event
// handlers (On) run on one goroutine, panel handlers (OnPanelKey,
// OnPanelClose) on another, each in arrival order, so a panel sees its
// keys in the order they were pressed. All frames go through a single
// writer: lines are never interleaved, and every method is safe to call
// from any goroutine.
//
// Failures: a panicking command or tool handler becomes an error
// response or error result carrying the panic text; a panicking
// interceptor blocks the action with a reason naming the panic. A tool
// registered with ToolCtx sees its context cancelled when the host sends
// tool_cancel (or Run returns); its result is then dropped. Unknown
// frames and non-JSON lines are logged to stderr and skipped; lines up
// to 16 MiB are accepted.
//
// Anything written to stdout besides frames corrupts the protocol: log
// with Logf, which writes to stderr (the host keeps it in the
// extension's log file).
package sdk

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/zot-editors/zot/extensions/wire"
)

// Handler types.
type (
	// CommandHandler runs a slash command; args is what the user typed
	// after the command name, trimmed.
	CommandHandler func(args string) Response
	// ToolHandler runs a tool call; args is the JSON object the model
	// produced ({} when it sent none).
	ToolHandler func(args json.RawMessage) ToolResult
	// ToolCtxHandler is a ToolHandler whose ctx is cancelled when the
	// host gives up on the call (tool_cancel) or Run returns.
	ToolCtxHandler func(ctx context.Context, args json.RawMessage) ToolResult
	// InterceptHandler is the simple tool_call guard: allow, or refuse
	// with reason (shown to the model as the tool error).
	InterceptHandler func(tool string, args json.RawMessage) (allow bool, reason string)
	// ToolCallHandler is the rich tool_call guard: block or rewrite args.
	ToolCallHandler func(tool string, args json.RawMessage) ToolCallDecision
	// TurnStartHandler gates a turn before the model is called.
	TurnStartHandler func(step int) TurnStartDecision
	// AssistantMessageHandler hides or rewrites the assistant's text
	// before the user sees it.
	AssistantMessageHandler func(text string) AssistantMessageDecision
	// EventHandler observes a lifecycle event frame (type "event").
	EventHandler func(ev wire.Frame)
)

// ErrNotRunning is returned by the frame-sending methods outside the
// window between the ready frame and the end of Run.
var ErrNotRunning = errors.New("sdk: extension is not running")

// capabilities is what hello announces: everything this SDK can do.
var capabilities = []string{"commands", "tools", "events", "panels", "tool_cancel", wire.CapUI, wire.CapHooks, wire.CapActions, wire.CapReady}

// Extension is one zot extension. Create it with New, register, Run.
type Extension struct {
	name, version string
	maxLine       int // longest accepted frame, newline excluded

	logMu sync.Mutex
	log   io.Writer

	// Writer state: one frame per Write, under wmu.
	wmu      sync.Mutex
	out      io.Writer
	live     bool // ready was sent and Run has not returned
	closed   bool // Run returned
	writeErr error

	mu         sync.Mutex
	started    bool // Run was called
	announced  bool // registrations were queued for the wire
	host       HostInfo
	regs       []wire.Frame // register_command / register_tool, in call order
	commands   map[string]CommandHandler
	tools      map[string]ToolCtxHandler
	events     []string
	handlers   map[string][]EventHandler
	toolGuard  InterceptHandler
	toolGuardX ToolCallHandler
	turnGuard  TurnStartHandler
	msgGuard   AssistantMessageHandler
	panelKey   func(panelID, key, text string)
	panelClose func(panelID string)
	// hostClosed: panels the host closed and no command has reopened.
	// Set by the reader as the frame arrives, so a render racing the
	// close handler (a tool call right after panel_close) is dropped.
	hostClosed  map[string]bool
	cancels     map[string]*call // in-flight tool calls by id
	eventQueue  serial
	panelQueue  serial
	baseCtx     context.Context
	cancelCalls context.CancelFunc

	// Additions to v1 (capabilities.go).
	hooks   map[string]any // added intercepts by event
	reqSeq  int
	waiting map[string]chan wire.Frame // requests to the host by id
}

type call struct {
	cancel    context.CancelFunc
	cancelled bool // by the host
}

// New creates an extension. name must match extension.json's name.
func New(name, version string) *Extension {
	return &Extension{
		name:     name,
		version:  version,
		maxLine:  16 << 20,
		log:      os.Stderr,
		commands: map[string]CommandHandler{},
		tools:    map[string]ToolCtxHandler{},
		handlers: map[string][]EventHandler{},
		cancels:  map[string]*call{},
	}
}

// Name is the extension's name.
func (e *Extension) Name() string { return e.name }

// SetLogOutput redirects Logf (stderr by default).
func (e *Extension) SetLogOutput(w io.Writer) {
	e.logMu.Lock()
	e.log = w
	e.logMu.Unlock()
}

// Logf writes one line to stderr, which the host keeps in the
// extension's log. Never print to stdout: it carries the protocol.
func (e *Extension) Logf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	e.logMu.Lock()
	defer e.logMu.Unlock()
	fmt.Fprintf(e.log, "[%s] %s\n", e.name, msg)
}

// Hello returns what the host sent in hello_ack. It is the zero value
// until Run has received it; every handler runs after that.
func (e *Extension) Hello() HostInfo {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.host
}

// Command registers the slash command /name. Register before Run; a
// command added while running is announced at once.
func (e *Extension) Command(name, description string, fn CommandHandler) {
	e.register(wire.Frame{Type: wire.TypeRegisterCommand, Name: name, Description: description}, func() {
		e.commands[name] = fn
	})
}

// Tool registers a tool the model can call. schema is a JSON Schema
// object for its args (nil means any object).
func (e *Extension) Tool(name, description string, schema json.RawMessage, fn ToolHandler) {
	e.ToolCtx(name, description, schema, func(_ context.Context, args json.RawMessage) ToolResult {
		return fn(args)
	})
}

// ToolCtx registers a tool whose handler gets a context cancelled when
// the host cancels the call (tool_cancel: timeout or user abort) or Run
// returns. Long-running tools should watch ctx.Done().
func (e *Extension) ToolCtx(name, description string, schema json.RawMessage, fn ToolCtxHandler) {
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	e.register(wire.Frame{Type: wire.TypeRegisterTool, Name: name, Description: description, Schema: schema}, func() {
		e.tools[name] = fn
	})
}

func (e *Extension) register(f wire.Frame, install func()) {
	e.mu.Lock()
	install()
	late := e.announced
	if !late {
		e.regs = append(e.regs, f)
	}
	e.mu.Unlock()
	if late {
		if err := e.send(f); err != nil {
			e.Logf("late %s %q not sent: %v", f.Type, f.Name, err)
		}
	}
}

// On subscribes to a lifecycle event (wire.EventSessionStart,
// EventTurnStart, EventTurnEnd, EventToolCall, EventAssistantMessage)
// and calls fn with each "event" frame for it. Call before Run. Several
// handlers may observe the same event; they run in registration order.
func (e *Extension) On(event string, fn EventHandler) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !slices.Contains(e.events, event) {
		e.events = append(e.events, event)
	}
	e.handlers[event] = append(e.handlers[event], fn)
}

// InterceptToolCall installs a guard consulted before every tool call:
// return (false, reason) to refuse it. InterceptToolCallX wins if both
// are set. Call before Run.
func (e *Extension) InterceptToolCall(fn InterceptHandler) {
	e.mu.Lock()
	e.toolGuard = fn
	e.mu.Unlock()
}

// InterceptToolCallX installs the rich tool_call guard, which can also
// rewrite the args. Call before Run.
func (e *Extension) InterceptToolCallX(fn ToolCallHandler) {
	e.mu.Lock()
	e.toolGuardX = fn
	e.mu.Unlock()
}

// InterceptTurnStart installs a gate consulted before each model call.
// Call before Run.
func (e *Extension) InterceptTurnStart(fn TurnStartHandler) {
	e.mu.Lock()
	e.turnGuard = fn
	e.mu.Unlock()
}

// InterceptAssistantMessage installs a filter for the assistant's final
// text. Call before Run.
func (e *Extension) InterceptAssistantMessage(fn AssistantMessageHandler) {
	e.mu.Lock()
	e.msgGuard = fn
	e.mu.Unlock()
}

// OnPanelKey sets the handler for keys pressed in any of this
// extension's panels. key is a wire.Key* name; for wire.KeyRune, text is
// the character typed.
func (e *Extension) OnPanelKey(fn func(panelID, key, text string)) {
	e.mu.Lock()
	e.panelKey = fn
	e.mu.Unlock()
}

// OnPanelClose sets the handler for the host closing a panel (the user
// pressed Esc or Ctrl+C there). Stop rendering that panel afterwards.
func (e *Extension) OnPanelClose(fn func(panelID string)) {
	e.mu.Lock()
	e.panelClose = fn
	e.mu.Unlock()
}

// Notify shows a note in the chat; level is wire.LevelInfo (the
// default when empty), LevelSuccess, LevelWarn or LevelError.
func (e *Extension) Notify(level, message string) error {
	if level == "" {
		level = wire.LevelInfo
	}
	return e.sendLive(wire.Frame{Type: wire.TypeNotify, Level: level, Message: message})
}

// RenderPanel redraws an open panel. A panel the host has closed is not
// redrawn (nil is returned) until a command opens it again.
func (e *Extension) RenderPanel(panelID, title string, lines []string, footer string) error {
	e.mu.Lock()
	closed := e.hostClosed[panelID]
	e.mu.Unlock()
	if closed {
		return nil
	}
	return e.sendLive(wire.Frame{Type: wire.TypePanelRender, PanelID: panelID, Title: title, Lines: lines, Footer: footer})
}

// ClosePanel closes a panel this extension opened.
func (e *Extension) ClosePanel(panelID string) error {
	return e.sendLive(wire.Frame{Type: wire.TypePanelClose, PanelID: panelID})
}

// Run serves the host over stdin/stdout until shutdown or the end of
// stdin. It returns nil on a clean end.
func (e *Extension) Run() error { return e.Serve(os.Stdin, os.Stdout) }

// Serve is Run over any pair of streams (tests, embedding).
func (e *Extension) Serve(in io.Reader, out io.Writer) error {
	e.mu.Lock()
	if e.started {
		e.mu.Unlock()
		return errors.New("sdk: Run called twice")
	}
	e.started = true
	e.baseCtx, e.cancelCalls = context.WithCancel(context.Background())
	e.mu.Unlock()

	e.wmu.Lock()
	e.out = out
	e.wmu.Unlock()
	defer e.stop()

	r := bufio.NewReaderSize(in, 64<<10)
	if err := e.send(wire.Frame{Type: wire.TypeHello, Name: e.name, Version: e.version, Capabilities: capabilities}); err != nil {
		return err
	}

	// hello_ack comes right after hello; nothing else is served before.
	for {
		f, err := e.next(r)
		if err != nil {
			return eofIsNil(err)
		}
		if f.Type == wire.TypeShutdown {
			return e.send(wire.Frame{Type: wire.TypeShutdownAck})
		}
		if f.Type != wire.TypeHelloAck {
			e.Logf("ignoring %q frame before hello_ack", f.Type)
			continue
		}
		e.mu.Lock()
		e.host = HostInfo{
			ProtocolVersion: f.ProtocolVersion, ZotVersion: f.ZotVersion,
			Provider: f.Provider, Model: f.Model, Cwd: f.Cwd,
			ExtensionDir: f.ExtensionDir, DataDir: f.DataDir,
			Capabilities: f.HostCapabilities,
		}
		e.mu.Unlock()
		break
	}

	if err := e.announce(); err != nil {
		return err
	}

	for {
		f, err := e.next(r)
		if err != nil {
			return eofIsNil(err)
		}
		if f.Type == wire.TypeShutdown {
			// Ack under the writer lock, then go quiet: nothing may
			// follow shutdown_ack.
			return e.sendFinal(wire.Frame{Type: wire.TypeShutdownAck})
		}
		e.dispatch(f)
	}
}

// announce sends registrations, subscribe and ready, and opens the
// writer to everyone else.
func (e *Extension) announce() error {
	// Lock order is wmu, then mu: a registration made meanwhile either
	// lands in this batch or is written after it.
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.mu.Lock()
	e.announced = true
	frames := slices.Clone(e.regs)
	var intercept []string
	if e.toolGuard != nil || e.toolGuardX != nil {
		intercept = append(intercept, wire.EventToolCall)
	}
	if e.turnGuard != nil {
		intercept = append(intercept, wire.EventTurnStart)
	}
	if e.msgGuard != nil {
		intercept = append(intercept, wire.EventAssistantMessage)
	}
	for _, ev := range []string{wire.EventToolResult, wire.EventBeforeAgentStart, wire.EventContext, wire.EventInput,
		wire.EventSessionBeforeFork, wire.EventSessionBeforeTree, wire.EventUserBash} {
		if e.hooks[ev] != nil {
			intercept = append(intercept, ev)
		}
	}
	if len(e.events) > 0 || len(intercept) > 0 {
		frames = append(frames, wire.Frame{Type: wire.TypeSubscribe, Events: slices.Clone(e.events), Intercept: intercept})
	}
	e.regs = nil
	e.mu.Unlock()
	frames = append(frames, wire.Frame{Type: wire.TypeReady})
	for _, f := range frames {
		if err := e.writeLocked(f); err != nil {
			return err
		}
	}
	e.live = true
	return nil
}

// next reads the next frame, skipping lines that are too long or not a
// JSON object with a type.
func (e *Extension) next(r *bufio.Reader) (wire.Frame, error) {
	for {
		line, err := readLine(r, e.maxLine)
		if errors.Is(err, errLineTooLong) {
			e.Logf("dropped a frame longer than %d bytes", e.maxLine)
			continue
		}
		if err != nil {
			return wire.Frame{}, err
		}
		if len(line) == 0 {
			continue
		}
		var f wire.Frame
		if err := json.Unmarshal(line, &f); err != nil || f.Type == "" {
			e.Logf("skipping malformed line from host (%d bytes)", len(line))
			continue
		}
		return f, nil
	}
}

func eofIsNil(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

func (e *Extension) stop() {
	e.wmu.Lock()
	e.live, e.closed = false, true
	e.wmu.Unlock()
	e.mu.Lock()
	cancel := e.cancelCalls
	e.mu.Unlock()
	cancel()
}

func (e *Extension) dispatch(f wire.Frame) {
	switch f.Type {
	case wire.TypeCommandInvoked:
		e.mu.Lock()
		fn := e.commands[f.Name]
		e.mu.Unlock()
		go e.runCommand(f.ID, f.Name, commandArgs(f.Args), fn)

	case wire.TypeToolCall:
		e.mu.Lock()
		fn := e.tools[f.Name]
		ctx, cancel := context.WithCancel(context.WithValue(e.baseCtx, toolIDKey{}, f.ID))
		c := &call{cancel: cancel}
		if f.ID != "" {
			e.cancels[f.ID] = c
		}
		e.mu.Unlock()
		go e.runTool(ctx, c, f.ID, f.Name, objectArgs(f.Args), fn)

	case wire.TypeToolCancel:
		e.mu.Lock()
		if c := e.cancels[f.ID]; c != nil {
			c.cancelled = true
			c.cancel()
		}
		e.mu.Unlock()

	case wire.TypeEventIntercept:
		go e.runIntercept(f)

	case wire.TypeEvent:
		e.mu.Lock()
		hs := slices.Clone(e.handlers[f.Event])
		e.mu.Unlock()
		for _, h := range hs {
			e.eventQueue.push(func() {
				defer e.recoverLog("event " + f.Event + " handler")
				h(f)
			})
		}

	case wire.TypePanelKey:
		e.mu.Lock()
		h := e.panelKey
		e.mu.Unlock()
		if h != nil {
			e.panelQueue.push(func() {
				defer e.recoverLog("panel key handler")
				h(f.PanelID, f.Key, f.Text)
			})
		}

	case wire.TypePanelClose:
		e.mu.Lock()
		h := e.panelClose
		if e.hostClosed == nil {
			e.hostClosed = map[string]bool{}
		}
		e.hostClosed[f.PanelID] = true
		e.mu.Unlock()
		if h != nil {
			e.panelQueue.push(func() {
				defer e.recoverLog("panel close handler")
				h(f.PanelID)
			})
		}

	case wire.TypeUIResponse, wire.TypeActionResult, wire.TypeError:
		e.answer(f)

	case wire.TypeHelloAck:
		// A repeat; the first one counted.
	default:
		e.Logf("ignoring unknown frame type %q", f.Type)
	}
}

// commandArgs decodes command_invoked's args, a JSON string.
func commandArgs(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	return string(raw)
}

// objectArgs passes a tool's args on, as {} when absent or null.
func objectArgs(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`{}`)
	}
	return raw
}

func (e *Extension) runCommand(id, name, args string, fn CommandHandler) {
	resp := func() (resp Response) {
		if fn == nil {
			return Error(fmt.Sprintf("%s: no handler for /%s", e.name, name))
		}
		defer func() {
			if r := recover(); r != nil {
				e.Logf("command /%s panicked: %v\n%s", name, r, debug.Stack())
				resp = Error(fmt.Sprintf("%s: /%s panicked: %v", e.name, name, r))
			}
		}()
		return fn(args)
	}()
	if resp.Panel != nil {
		e.mu.Lock()
		delete(e.hostClosed, resp.Panel.ID)
		e.mu.Unlock()
	}
	e.reply(resp.frame(id))
}

func (e *Extension) runTool(ctx context.Context, c *call, id, name string, args json.RawMessage, fn ToolCtxHandler) {
	defer func() {
		e.mu.Lock()
		if e.cancels[id] == c {
			delete(e.cancels, id)
		}
		e.mu.Unlock()
		c.cancel()
	}()
	res := func() (res ToolResult) {
		if fn == nil {
			return ErrorResult(fmt.Sprintf("%s: no handler for tool %q", e.name, name))
		}
		defer func() {
			if r := recover(); r != nil {
				e.Logf("tool %s panicked: %v\n%s", name, r, debug.Stack())
				res = ErrorResult(fmt.Sprintf("%s: tool %s panicked: %v", e.name, name, r))
			}
		}()
		return fn(ctx, args)
	}()
	e.mu.Lock()
	cancelled := c.cancelled
	e.mu.Unlock()
	if cancelled || ctx.Err() != nil {
		return // the host stopped waiting
	}
	e.reply(res.frame(id))
}

func (e *Extension) runIntercept(f wire.Frame) {
	e.mu.Lock()
	toolGuard, toolGuardX, turnGuard, msgGuard := e.toolGuard, e.toolGuardX, e.turnGuard, e.msgGuard
	e.mu.Unlock()

	resp := wire.Frame{Type: wire.TypeEventInterceptResponse, ID: f.ID}
	func() {
		defer func() {
			if r := recover(); r != nil {
				e.Logf("%s interceptor panicked: %v\n%s", f.Event, r, debug.Stack())
				resp = wire.Frame{Type: wire.TypeEventInterceptResponse, ID: f.ID, Block: true,
					Reason: fmt.Sprintf("extension %s: %s interceptor panicked: %v", e.name, f.Event, r)}
			}
		}()
		if e.runHook(f, &resp) {
			return
		}
		switch f.Event {
		case wire.EventToolCall:
			args := objectArgs(f.ToolArgs)
			switch {
			case toolGuardX != nil:
				d := toolGuardX(f.ToolName, args)
				resp.Block, resp.Reason = d.Block, d.Reason
				if !d.Block && len(d.ModifiedArgs) > 0 {
					resp.ModifiedArgs = d.ModifiedArgs
				}
			case toolGuard != nil:
				allow, reason := toolGuard(f.ToolName, args)
				resp.Block, resp.Reason = !allow, reason
			}
		case wire.EventTurnStart:
			if turnGuard != nil {
				d := turnGuard(f.Step)
				resp.Block, resp.Reason = d.Block, d.Reason
			}
		case wire.EventAssistantMessage:
			if msgGuard != nil {
				d := msgGuard(f.Text)
				resp.Block, resp.Reason = d.Block, d.Reason
				if !d.Block && d.ReplaceText != "" {
					s := d.ReplaceText
					resp.ReplaceText = &s
				}
			}
		}
	}()
	e.reply(resp)
}

func (e *Extension) reply(f wire.Frame) {
	if err := e.send(f); err != nil && !errors.Is(err, ErrNotRunning) {
		e.Logf("%s %s not sent: %v", f.Type, f.ID, err)
	}
}

func (e *Extension) recoverLog(what string) {
	if r := recover(); r != nil {
		e.Logf("%s panicked: %v\n%s", what, r, debug.Stack())
	}
}

// send writes one frame unless Run has returned.
func (e *Extension) send(f wire.Frame) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if e.closed || e.out == nil {
		return ErrNotRunning
	}
	return e.writeLocked(f)
}

// sendLive writes one frame between ready and the end of Run: frames an
// extension pushes on its own must not precede its registrations.
func (e *Extension) sendLive(f wire.Frame) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if !e.live {
		return ErrNotRunning
	}
	return e.writeLocked(f)
}

// sendFinal writes the last frame and closes the writer in one step.
func (e *Extension) sendFinal(f wire.Frame) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if e.closed {
		return ErrNotRunning
	}
	err := e.writeLocked(f)
	e.live, e.closed = false, true
	return err
}

func (e *Extension) writeLocked(f wire.Frame) error {
	if e.writeErr != nil {
		return e.writeErr
	}
	b, err := json.Marshal(f)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := e.out.Write(b); err != nil {
		e.writeErr = fmt.Errorf("sdk: writing to host: %w", err)
		return e.writeErr
	}
	return nil
}
