package sep

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/extensions/wire"
)

// Config is what a Bridge needs from the host.
type Config struct {
	Name     string
	Manifest Manifest
	// HostIn carries the host's frames to the extension; HostOut takes
	// the extension's frames to the host (the pipes the host would give
	// a zot extension).
	HostIn  io.Reader
	HostOut io.WriteCloser
	// ChildIn and ChildOut are the SEP process's stdin and stdout.
	ChildIn  io.WriteCloser
	ChildOut io.Reader
	// KV is the extension's store (kv/*); nil disables the kv group.
	KV *KV
	// Publish fans a bus/publish out to the other extensions; nil
	// disables the bus group.
	Publish func(topic string, payload json.RawMessage)
	// Kill ends the process (two missed pings, a failed handshake).
	Kill func()
	// Logf writes to the extension's log (zot ext logs).
	Logf func(format string, args ...any)
	// PingInterval is the idle time before a ping; 0 disables pings.
	PingInterval time.Duration
	// Trace, when set, receives every message of the session, one line
	// each: {"to":"ext"|"host","msg":…}. It is closed when the bridge
	// ends.
	Trace io.WriteCloser
	// Trusted is initialize's workspace.trusted.
	Trusted bool
	// SessionID, when set, is initialize's session.id.
	SessionID string
	// Flags is initialize's flags: the values the user gave (zot's
	// --flag name=value, an editor's piFlags), "true"/"false" as
	// booleans; nil sends {}.
	Flags map[string]any
}

// Bridge translates one SEP extension's JSON-RPC into the host's frames
// and back. It holds no host logic: every capability (tools, hooks,
// dialogs, actions) is served by the host behind HostIn/HostOut, exactly
// as for a zot extension; what SEP adds that zot frames lack (kv, bus,
// ping, the context tiers) is handled here.
type Bridge struct {
	c Config

	hostMu  sync.Mutex // serialises frames to the host
	traceMu sync.Mutex

	// The queue of lines to the child: requests and replies are never
	// dropped; past MaxQueuedEvents observe events the oldest is shed and
	// an events_lost marker goes out before the next line (SEP).
	qMu          sync.Mutex
	qCond        *sync.Cond
	queue        []outLine
	queuedEvents int
	lost         int
	qClosed      bool
	writerDone   chan struct{}
	subs         map[string]bool // subscribed events (SEP names)

	mu        sync.Mutex
	nextID    int64
	pending   map[int64]pendingCall // host → ext requests in flight
	toolRPC   map[string]int64      // zot tool call id → its tool/execute id
	hostCalls map[string]hostCall   // ext → host requests waiting for the host
	tokens    map[string]string     // context token → tier
	tokenList []string              // issue order, to bound tokens
	seq       int64                 // event sequence number
	ack       wire.Frame            // hello_ack
	version   int                   // negotiated protocol version
	enabled   map[string]bool       // capabilities_enabled
	uiCaps    []string              // ui_capabilities sent
	pingOut   bool                  // a ping is unanswered
	missed    int                   // pings missed in a row
	active    time.Time             // last line from the child
	done      chan struct{}
	doneOnce  sync.Once
}

// MaxQueuedEvents bounds the observe events waiting for a slow
// extension (SEP: 1024).
const MaxQueuedEvents = 1024

type outLine struct {
	b     []byte
	event bool
}

type pendingCall struct {
	method string
	zotID  string // the host frame's id this call answers
	event  string // hook: zot's intercept name
	// track records the call in toolRPC before the request is written, so
	// a tool/update or a cancel that follows at once finds it.
	track bool
}

type hostCall struct {
	id     json.RawMessage // the extension's request id
	method string
	kind   string   // ui/request kind; "clamp" for tools/set_active's get_tools
	names  []string // tools/set_active: the names asked for
}

// maxTokens bounds remembered context tokens (event tokens are issued
// per event; an old one is simply unknown, which is refused too).
const maxTokens = 4096

// New makes a Bridge; Run starts it.
func New(c Config) *Bridge {
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	b := &Bridge{
		c:          c,
		writerDone: make(chan struct{}),
		subs:       map[string]bool{},
		pending:    map[int64]pendingCall{},
		toolRPC:    map[string]int64{},
		hostCalls:  map[string]hostCall{},
		tokens:     map[string]string{},
		done:       make(chan struct{}),
		active:     time.Now(),
	}
	b.qCond = sync.NewCond(&b.qMu)
	return b
}

// Run pumps both directions until the child's stdout closes. It first
// says hello to the host for the extension (the host's handshake starts
// there); the SEP initialize follows the host's hello_ack.
func (b *Bridge) Run() {
	b.toHost(wire.Frame{Type: wire.TypeHello, Name: b.c.Name, Version: b.c.Manifest.Version,
		Capabilities: []string{wire.CapUI, wire.CapHooks, wire.CapActions, wire.CapReady, wire.CapExec, wire.CapComplete, wire.CapProviders}})
	hostDone := make(chan struct{})
	go b.writeLoop()
	go func() {
		defer close(hostDone)
		b.hostLoop()
	}()
	if b.c.PingInterval > 0 {
		go b.pingLoop()
	}
	b.childLoop()
	b.doneOnce.Do(func() { close(b.done) })
	b.c.HostOut.Close()
	<-hostDone
	<-b.writerDone
	b.traceMu.Lock()
	if b.c.Trace != nil {
		b.c.Trace.Close()
		b.c.Trace = nil
	}
	b.traceMu.Unlock()
}

// trace records one message of the session (Config.Trace).
func (b *Bridge) trace(to string, line []byte) {
	b.traceMu.Lock()
	defer b.traceMu.Unlock()
	if b.c.Trace == nil {
		return
	}
	rec, err := json.Marshal(struct {
		To  string          `json:"to"`
		Msg json.RawMessage `json:"msg"`
	}{to, json.RawMessage(strings.TrimSpace(string(line)))})
	if err == nil {
		_, _ = b.c.Trace.Write(append(rec, '\n'))
	}
}

// ---- host → extension ----

func (b *Bridge) hostLoop() {
	defer func() { // the writer drains what is queued, then closes stdin
		b.qMu.Lock()
		b.qClosed = true
		b.qCond.Signal()
		b.qMu.Unlock()
	}()
	r := bufio.NewReaderSize(b.c.HostIn, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			var f wire.Frame
			if json.Unmarshal(line, &f) == nil {
				b.fromHost(f)
			}
		}
		if err != nil {
			return
		}
	}
}

func (b *Bridge) fromHost(f wire.Frame) {
	switch f.Type {
	case wire.TypeHelloAck:
		b.initialize(f)
	case wire.TypeToolCall:
		args := f.Args
		if len(args) == 0 || string(args) == "null" {
			args = json.RawMessage("{}")
		}
		b.call("tool/execute", pendingCall{zotID: f.ID, track: true}, map[string]any{
			"call_id": f.ID, "tool": f.Name, "arguments": args, "context": b.context("command"),
		})
	case wire.TypeToolCancel:
		b.mu.Lock()
		id, ok := b.toolRPC[f.ID]
		b.mu.Unlock()
		if ok {
			b.notify("$/cancel", map[string]any{"id": id})
		}
	case wire.TypeCommandInvoked:
		var text string
		_ = json.Unmarshal(f.Args, &text)
		p := map[string]any{"command": f.Name, "context": b.context("command")}
		if text != "" {
			p["arguments"] = map[string]any{"args": text}
		}
		b.call("command/execute", pendingCall{zotID: f.ID}, p)
	case wire.TypeProviderComplete:
		tools := f.ToolSpecs
		if len(tools) == 0 || string(tools) == "null" {
			tools = json.RawMessage("[]")
		}
		// tracked: tool_cancel cancels it as it does a tool call
		b.call("provider/complete", pendingCall{zotID: f.ID, track: true}, map[string]any{
			"request_id": f.ID, "provider": f.Name, "model": f.Model, "messages": f.Messages, "tools": tools,
			"stream": true, "context": b.context("command"),
		})
	case wire.TypeCommandComplete:
		b.call("command/complete", pendingCall{zotID: f.ID}, map[string]any{
			"command": f.Name, "partial": f.Text, "context": b.context("command"),
		})
	case wire.TypeEvent:
		b.event(f)
	case wire.TypeEventIntercept:
		b.hook(f)
	case wire.TypeShutdown:
		b.call("shutdown", pendingCall{}, struct{}{})
	case wire.TypeUIResponse, wire.TypeActionResult, wire.TypeError:
		b.hostAnswered(f)
	}
}

// initialize sends SEP's handshake with what hello_ack told.
func (b *Bridge) initialize(ack wire.Frame) {
	enabled := map[string]bool{
		"tools": true, "commands": true, "ui": true, "session": true,
		"kv": b.c.KV != nil, "bus": b.c.Publish != nil,
		"exec":      ack.HostCapabilities != nil && slices.Contains(ack.HostCapabilities.Features, wire.CapExec),
		"providers": ack.HostCapabilities != nil && slices.Contains(ack.HostCapabilities.Features, wire.CapProviders),
	}
	for g, on := range enabled {
		enabled[g] = on && b.c.Manifest.Enabled(g)
	}
	ui := []string{"notify"}
	mode := "headless"
	if hc := ack.HostCapabilities; hc != nil {
		u := hc.UI
		for k, on := range map[string]bool{"select": u.Select, "confirm": u.Confirm, "input": u.Input, "set_status": u.Status, "set_widget": u.Widget} {
			if on {
				ui = append(ui, k)
			}
		}
		if u.Status {
			ui = append(ui, "set_title") // shown as a status item
		}
		if u.Confirm || u.Select || u.Input {
			mode = "widget" // an editor's panel
		}
	}
	slices.Sort(ui)
	b.mu.Lock()
	b.ack, b.enabled, b.uiCaps = ack, enabled, ui
	b.mu.Unlock()
	p := map[string]any{
		"protocol_version":     ProtocolVersion,
		"host":                 map[string]any{"name": "zot", "version": orDefault(ack.ZotVersion, "dev")},
		"workspace":            map[string]any{"root": ack.Cwd, "trusted": b.c.Trusted},
		"mode":                 mode,
		"ui_capabilities":      ui,
		"flags":                flagsOrEmpty(b.c.Flags),
		"capabilities_enabled": enabled,
	}
	if b.c.SessionID != "" {
		p["session"] = map[string]any{"id": b.c.SessionID}
	}
	b.call("initialize", pendingCall{}, p)
}

func flagsOrEmpty(f map[string]any) map[string]any {
	if f == nil {
		return map[string]any{}
	}
	return f
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// context issues a context token of a tier.
func (b *Bridge) context(tier string) map[string]string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.nextID++
	tok := tier[:1] + strconv.FormatInt(b.nextID, 36)
	b.tokens[tok] = tier
	b.tokenList = append(b.tokenList, tok)
	if len(b.tokenList) > maxTokens {
		delete(b.tokens, b.tokenList[0])
		b.tokenList = b.tokenList[1:]
	}
	return map[string]string{"token": tok, "tier": tier}
}

// event forwards an observed event with its fields as the payload.
func (b *Bridge) event(f wire.Frame) {
	payload := framePayload(f)
	b.mu.Lock()
	b.seq++
	seq := b.seq
	b.mu.Unlock()
	b.send("event", map[string]any{"event": EventName(f.Event), "seq": seq, "context": b.context("event"), "payload": payload}, true)
}

// framePayload is a host frame's fields without type and event.
func framePayload(f wire.Frame) map[string]any {
	var m map[string]any
	raw, _ := json.Marshal(f)
	_ = json.Unmarshal(raw, &m)
	delete(m, "type")
	delete(m, "event")
	if m == nil {
		m = map[string]any{}
	}
	return m
}

// hook turns an event_intercept into a hook request; input is what SEP's
// hooks read (tool/arguments for tool_call, text for input, …).
func (b *Bridge) hook(f wire.Frame) {
	var in map[string]any
	switch f.Event {
	case wire.EventToolCall:
		args := f.ToolArgs
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		in = map[string]any{"tool": f.ToolName, "arguments": args, "call_id": f.ToolID}
	case wire.EventToolResult:
		in = map[string]any{"tool": f.ToolName, "call_id": f.ToolID, "content": blocksText(f.Content), "is_error": f.IsError}
	case wire.EventInput, wire.EventAssistantMessage:
		in = map[string]any{"text": f.Text}
	case wire.EventBeforeAgentStart:
		in = map[string]any{"prompt": f.Prompt, "system_prompt": f.SystemPrompt}
	case wire.EventContext:
		in = map[string]any{"messages": f.Messages}
	case wire.EventUserBash:
		in = map[string]any{"command": f.Command, "cwd": f.Cwd, "exclude_from_context": f.ExcludeFromContext}
	default:
		in = framePayload(f)
	}
	b.call("hook", pendingCall{zotID: f.ID, event: f.Event}, map[string]any{
		"hook": HookName(f.Event), "context": b.context("event"), "input": in,
	})
}

func blocksText(bl []wire.Block) string {
	var sb strings.Builder
	for _, x := range bl {
		if x.Type == "text" {
			sb.WriteString(x.Text)
		}
	}
	return sb.String()
}

// call sends a request to the extension and returns its id.
func (b *Bridge) call(method string, pc pendingCall, params any) int64 {
	pc.method = method
	b.mu.Lock()
	b.nextID++
	id := b.nextID
	b.pending[id] = pc
	if pc.track {
		b.toolRPC[pc.zotID] = id
	}
	b.mu.Unlock()
	raw, _ := json.Marshal(params)
	b.toChild(Message{JSONRPC: "2.0", ID: json.RawMessage(strconv.FormatInt(id, 10)), Method: method, Params: raw})
	return id
}

func (b *Bridge) notify(method string, params any) { b.send(method, params, false) }

func (b *Bridge) send(method string, params any, event bool) {
	raw, _ := json.Marshal(params)
	b.enqueue(Message{JSONRPC: "2.0", Method: method, Params: raw}, event)
}

func (b *Bridge) reply(id json.RawMessage, result any, e *Error) {
	m := Message{JSONRPC: "2.0", ID: id}
	if e != nil {
		m.Error = e
	} else {
		m.Result, _ = json.Marshal(result)
	}
	b.toChild(m)
}

func (b *Bridge) toChild(m Message) { b.enqueue(m, false) }

// enqueue queues a line for the child; an observe event past the cap
// sheds the oldest queued event.
func (b *Bridge) enqueue(m Message, event bool) {
	line, _ := json.Marshal(m)
	b.qMu.Lock()
	defer b.qMu.Unlock()
	if b.qClosed {
		return
	}
	if event {
		if b.queuedEvents >= MaxQueuedEvents {
			for i, l := range b.queue {
				if l.event {
					b.queue = append(b.queue[:i], b.queue[i+1:]...)
					b.queuedEvents--
					b.lost++
					break
				}
			}
		}
		b.queuedEvents++
	}
	b.queue = append(b.queue, outLine{append(line, '\n'), event})
	b.qCond.Signal()
}

// writeLoop writes queued lines to the child in order, an events_lost
// marker (no seq: the gap is the signal) first after a shed.
func (b *Bridge) writeLoop() {
	defer close(b.writerDone)
	defer b.c.ChildIn.Close()
	for {
		b.qMu.Lock()
		for len(b.queue) == 0 && !b.qClosed {
			b.qCond.Wait()
		}
		if len(b.queue) == 0 {
			b.qMu.Unlock()
			return
		}
		lost := b.lost
		b.lost = 0
		var next outLine
		if lost == 0 {
			next = b.queue[0]
			b.queue = b.queue[1:]
			if next.event {
				b.queuedEvents--
			}
		}
		b.qMu.Unlock()
		if lost > 0 {
			raw, _ := json.Marshal(map[string]any{"event": "events_lost", "context": b.context("event"), "payload": map[string]int{"lost": lost}})
			line, _ := json.Marshal(Message{JSONRPC: "2.0", Method: "event", Params: raw})
			next = outLine{b: append(line, '\n')}
		}
		b.trace("ext", next.b)
		_, _ = b.c.ChildIn.Write(next.b)
	}
}

func (b *Bridge) toHost(f wire.Frame) {
	line, _ := json.Marshal(f)
	b.hostMu.Lock()
	defer b.hostMu.Unlock()
	_, _ = b.c.HostOut.Write(append(line, '\n'))
}

// ---- extension → host ----

func (b *Bridge) childLoop() {
	r := bufio.NewReaderSize(b.c.ChildOut, 64<<10)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			b.mu.Lock()
			b.active, b.missed = time.Now(), 0
			b.mu.Unlock()
			m, derr := Decode(line)
			if derr != nil {
				b.c.Logf("sep: %s: %s", derr.Message, preview(line))
				if len(m.ID) > 0 && m.Method != "" {
					b.reply(m.ID, nil, derr)
				} else if derr.Code == CodeParseError || derr.Code == CodeInvalidRequest {
					b.reply(json.RawMessage("null"), nil, derr)
				}
			} else {
				b.trace("host", line)
				b.fromChild(m)
			}
		}
		if err != nil {
			return
		}
	}
}

func preview(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

func (b *Bridge) fromChild(m Message) {
	if m.IsResponse() {
		b.answered(m)
		return
	}
	e := b.serve(m)
	if e != nil {
		if m.IsRequest() {
			b.reply(m.ID, nil, e)
		} else {
			b.c.Logf("sep: %s: %s", m.Method, e.Message)
		}
	}
}

// answered handles the extension's reply to a host request.
func (b *Bridge) answered(m Message) {
	id, err := strconv.ParseInt(string(m.ID), 10, 64)
	b.mu.Lock()
	pc, ok := b.pending[id]
	delete(b.pending, id)
	if pc.method == "ping" {
		b.pingOut = false
	}
	if pc.method == "tool/execute" || pc.method == "provider/complete" {
		delete(b.toolRPC, pc.zotID)
	}
	b.mu.Unlock()
	if err != nil || !ok {
		b.c.Logf("sep: a reply to no request (id %s)", m.ID)
		return
	}
	switch pc.method {
	case "initialize":
		b.initialized(m)
	case "tool/execute":
		var r struct {
			Content string `json:"content"`
			IsError bool   `json:"is_error"`
		}
		var shape struct {
			Content *string `json:"content"`
		}
		if m.Error != nil {
			r.Content, r.IsError = m.Error.Message, true
			if m.Error.Code == CodeCancelled {
				r.Content = "cancelled: " + m.Error.Message
			}
		} else if json.Unmarshal(m.Result, &r) != nil || json.Unmarshal(m.Result, &shape) != nil || shape.Content == nil {
			b.c.Logf("sep: tool/execute: the result is not {content, is_error?}: %s", preview(m.Result))
			r.Content, r.IsError = "the extension's tool result is not {content, is_error}", true
		}
		b.toHost(wire.Frame{Type: wire.TypeToolResult, ID: pc.zotID, Content: []wire.Block{{Type: "text", Text: r.Content}}, IsError: r.IsError})
	case "command/execute":
		var r struct {
			Content string `json:"content"`
		}
		f := wire.Frame{Type: wire.TypeCommandResponse, ID: pc.zotID, Action: wire.ActionNoop}
		if m.Error != nil {
			f.Action, f.Error = "", m.Error.Message
		} else if json.Unmarshal(m.Result, &r) == nil && r.Content != "" {
			f.Action, f.Display = wire.ActionDisplay, r.Content
		}
		b.toHost(f)
	case "hook":
		b.toHost(hookAnswer(pc, m, b.c.Logf))
	case "provider/complete":
		b.toHost(providerAnswer(pc, m, b.c.Logf))
	case "command/complete":
		// Best effort (SEP): an error or junk is no completions.
		var r struct {
			Completions []wire.Completion `json:"completions"`
		}
		if m.Error != nil {
			b.c.Logf("sep: command/complete: %s", m.Error.Error())
		} else if json.Unmarshal(m.Result, &r) != nil || slices.ContainsFunc(r.Completions, func(c wire.Completion) bool { return c.Value == "" }) {
			b.c.Logf("sep: command/complete: the reply is not {completions: [{value, description?}]}: %s", preview(m.Result))
			r.Completions = nil
		}
		b.toHost(wire.Frame{Type: wire.TypeCompletions, ID: pc.zotID, Completions: r.Completions})
	case "shutdown":
		b.toHost(wire.Frame{Type: wire.TypeShutdownAck})
	}
}

// hookAnswer turns a HookOutcome into event_intercept_response. An error
// reply blocks tool_call (fail closed) and lets the others through.
func hookAnswer(pc pendingCall, m Message, logf func(string, ...any)) wire.Frame {
	f := wire.Frame{Type: wire.TypeEventInterceptResponse, ID: pc.zotID}
	var o struct {
		Action string          `json:"action"`
		Reason string          `json:"reason"`
		Patch  json.RawMessage `json:"patch"`
	}
	if m.Error != nil {
		if failsClosed(pc.event) {
			f.Block, f.Reason = true, "the guard's hook failed: "+m.Error.Message
		}
		return f
	}
	if err := json.Unmarshal(m.Result, &o); err != nil || (o.Action != "continue" && o.Action != "block" && o.Action != "modify") {
		logf("sep: hook %s: the reply is not a HookOutcome (action continue, block or modify): %s", HookName(pc.event), preview(m.Result))
		if failsClosed(pc.event) {
			f.Block, f.Reason = true, "the guard's hook answered something that is not continue, block or modify"
		}
		return f
	}
	switch o.Action {
	case "block":
		f.Block, f.Reason = true, o.Reason
	case "modify":
		var p map[string]json.RawMessage
		if json.Unmarshal(o.Patch, &p) != nil || p == nil {
			logf("sep: hook %s: modify without an object patch; ignored", HookName(pc.event))
			if failsClosed(pc.event) { // a guard's junk answer fails closed
				f.Block, f.Reason = true, "the guard's hook answered modify without a patch"
			}
			return f
		}
		switch pc.event {
		case wire.EventToolCall:
			if a, ok := p["arguments"]; ok {
				f.ModifiedArgs = a
			} else {
				f.ModifiedArgs = o.Patch
			}
		case wire.EventToolResult:
			var c string
			if json.Unmarshal(p["content"], &c) == nil {
				f.Content = []wire.Block{{Type: "text", Text: c}}
			}
			_ = json.Unmarshal(p["is_error"], &f.IsError)
		case wire.EventInput, wire.EventAssistantMessage:
			var t string
			if json.Unmarshal(p["text"], &t) == nil {
				f.ReplaceText = &t
			}
		case wire.EventBeforeAgentStart:
			_ = json.Unmarshal(p["system_prompt"], &f.SystemPrompt)
			f.Messages = p["messages"]
		case wire.EventContext:
			f.Messages = p["messages"]
		case wire.EventUserBash:
			// modify: the extension ran the command itself; its result
			// (pi's BashResult) replaces zot's run.
			var r wire.BashResult
			if raw, ok := p["result"]; !ok || json.Unmarshal(raw, &r) != nil {
				logf("sep: hook user_bash: modify needs patch.result {output, exit_code, cancelled?, truncated?}: %s", preview(o.Patch))
				f.Block, f.Reason = true, "the guard's user_bash hook answered modify without a result"
				return f
			}
			f.BashResult = &r
		}
	}
	return f
}

// failsClosed: SEP's hooks whose failure (an error, junk, a timeout or a
// crash) blocks rather than continues.
func failsClosed(event string) bool {
	return event == wire.EventToolCall || event == wire.EventUserBash
}

// initialized reads the handshake reply: the negotiated version and the
// registrations, handed to the host as zot registrations and ready.
func (b *Bridge) initialized(m Message) {
	var r struct {
		ProtocolVersion int `json:"protocol_version"`
		Extension       struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		} `json:"extension"`
		Registrations registrations `json:"registrations"`
	}
	switch {
	case m.Error != nil:
		b.fail("initialize failed: %s", m.Error.Error())
		return
	case json.Unmarshal(m.Result, &r) != nil:
		b.fail("initialize result is not {protocol_version, extension, registrations}: %s", preview(m.Result))
		return
	case r.ProtocolVersion < 1:
		b.fail("initialize result: protocol_version must be an integer ≥ 1, not %d", r.ProtocolVersion)
		return
	}
	b.mu.Lock()
	b.version = min(ProtocolVersion, r.ProtocolVersion)
	b.mu.Unlock()
	if r.Extension.Name != "" && r.Extension.Name != b.c.Name {
		b.c.Logf("sep: the extension calls itself %q; the manifest says %q (the manifest's name is used)", r.Extension.Name, b.c.Name)
	}
	b.c.Logf("sep: initialized, protocol version %d", b.version)
	b.register(r.Registrations, true)
	b.toHost(wire.Frame{Type: wire.TypeReady})
}

type registrations struct {
	Tools []struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"tools"`
	Commands []struct {
		Name        string `json:"name"`
		Description string `json:"description"`
	} `json:"commands"`
	Subscriptions []string `json:"subscriptions"`
	Hooks         []string `json:"hooks"`
	Providers     []struct {
		Name   string `json:"name"`
		Models []struct {
			ID          string `json:"id"`
			DisplayName string `json:"display_name"`
		} `json:"models"`
	} `json:"providers"`
}

// register hands registrations to the host. first: the handshake's,
// where no hooks declared means SEP's "run every hook".
func (b *Bridge) register(r registrations, first bool) {
	for _, t := range r.Tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object"}`)
		}
		b.toHost(wire.Frame{Type: wire.TypeRegisterTool, Name: t.Name, Description: t.Description, Schema: schema})
	}
	for _, c := range r.Commands {
		b.toHost(wire.Frame{Type: wire.TypeRegisterCommand, Name: c.Name, Description: c.Description})
	}
	for _, p := range r.Providers {
		f := wire.Frame{Type: wire.TypeRegisterProvider, Name: p.Name}
		for _, m := range p.Models {
			f.Models = append(f.Models, wire.ProviderModel{ID: m.ID, DisplayName: m.DisplayName})
		}
		b.toHost(f)
	}
	hooks := append(slices.Clone(r.Hooks), b.c.Manifest.Events()...)
	events := slices.Clone(r.Subscriptions)
	b.mu.Lock()
	for _, e := range append(slices.Clone(events), b.c.Manifest.Events()...) {
		b.subs[e] = true
	}
	b.mu.Unlock()
	if first && len(r.Hooks) == 0 {
		hooks = append(hooks, defaultHooks...)
	}
	var sub wire.Frame
	sub.Type = wire.TypeSubscribe
	for _, h := range hooks {
		if z, ok := zotHooks[h]; ok && !slices.Contains(sub.Intercept, z) {
			sub.Intercept = append(sub.Intercept, z)
		}
	}
	for _, e := range append(events, b.c.Manifest.Events()...) {
		if z, ok := zotEvents[e]; ok && !slices.Contains(sub.Events, z) {
			sub.Events = append(sub.Events, z)
		}
	}
	if len(sub.Intercept) > 0 || len(sub.Events) > 0 {
		b.toHost(sub)
	}
}

// fail ends an extension whose handshake zot cannot use.
func (b *Bridge) fail(format string, args ...any) {
	b.c.Logf("sep: "+format, args...)
	if b.c.Kill != nil {
		b.c.Kill()
	}
}

// serve handles one request or notification from the extension.
func (b *Bridge) serve(m Message) *Error {
	group, _, _ := strings.Cut(m.Method, "/")
	b.mu.Lock()
	enabled := b.enabled
	b.mu.Unlock()
	need := map[string]string{"ui": "ui", "kv": "kv", "bus": "bus", "session": "session", "exec": "exec", "provider": "providers", "tools": "tools"}
	if g, ok := need[group]; ok && enabled != nil && !enabled[g] {
		return Errorf(CodeCapabilityDisabled, "%s needs the %q capability, which is not enabled for this extension", m.Method, g)
	}
	switch m.Method {
	case "ping":
		b.reply(m.ID, struct{}{}, nil)
	case "log":
		var p struct {
			Level   string          `json:"level"`
			Message string          `json:"message"`
			Fields  json.RawMessage `json:"fields"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Message == "" {
			return Errorf(CodeInvalidParams, "log needs {level, message}")
		}
		if len(p.Fields) > 0 {
			b.c.Logf("[%s] %s %s", p.Level, p.Message, p.Fields)
		} else {
			b.c.Logf("[%s] %s", p.Level, p.Message)
		}
		b.replyEmpty(m)
	case "registry/update":
		var r registrations
		if err := json.Unmarshal(m.Params, &r); err != nil {
			return Errorf(CodeInvalidParams, "registry/update: %v", err)
		}
		b.register(r, false)
		b.replyEmpty(m)
	case "tool/update":
		var p struct {
			CallID   string   `json:"call_id"`
			Message  string   `json:"message"`
			Progress *float64 `json:"progress"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.CallID == "" {
			return Errorf(CodeInvalidParams, "tool/update needs a call_id")
		}
		if p.Progress != nil && (*p.Progress < 0 || *p.Progress > 1) {
			return Errorf(CodeInvalidParams, "tool/update progress is a fraction from 0 to 1, not %g", *p.Progress)
		}
		text := p.Message
		if p.Progress != nil {
			text = strings.TrimSpace(fmt.Sprintf("%s (%.0f%%)", text, *p.Progress*100))
		}
		b.mu.Lock()
		_, running := b.toolRPC[p.CallID]
		b.mu.Unlock()
		if running { // SEP: an update for an unknown call is ignored
			b.toHost(wire.Frame{Type: wire.TypeToolUpdate, ID: p.CallID, Text: text})
		}
		b.replyEmpty(m)
	case "$/cancel":
		// The host sends the extension no request that outlives a turn
		// except dialogs (answered by the user); nothing to cancel.
	case "ui/request":
		return b.uiRequest(m)
	case "tools/set_active":
		var p struct {
			Tools []string `json:"tools"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Tools == nil {
			return Errorf(CodeInvalidParams, "tools/set_active needs {tools: [names]}")
		}
		if len(p.Tools) == 0 {
			// zot reads an empty active set as "all tools": refuse rather
			// than widen.
			return Errorf(CodeInvalidParams, "tools/set_active needs at least one tool name (zot cannot turn every tool off)")
		}
		// Clamp first: ask which tools exist (the user's --tools and
		// settings already narrowed them), then set the intersection.
		b.toHostCall(m, "clamp", wire.Frame{Type: wire.TypeGetTools}, p.Tools...)
	case "session/send_message", "session/send_user_message", "session/append_entry", "session/set_model", "session/state":
		return b.session(m)
	case "kv/get", "kv/set", "kv/delete", "kv/list":
		if b.c.KV == nil {
			return Errorf(CodeCapabilityDisabled, "kv is not available")
		}
		res, e := b.c.KV.Serve(m.Method, m.Params)
		if e != nil {
			return e
		}
		b.reply(m.ID, res, nil)
	case "bus/publish":
		var p struct {
			Topic   string          `json:"topic"`
			Payload json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.Topic == "" || len(p.Payload) == 0 || p.Payload[0] != '{' {
			return Errorf(CodeInvalidParams, "bus/publish needs {topic, payload: {…}}")
		}
		b.c.Publish(p.Topic, p.Payload)
		if m.IsRequest() {
			b.reply(m.ID, struct{}{}, nil)
		}
	case "exec/run":
		return b.execRun(m)
	case "provider/delta":
		var p struct {
			RequestID string          `json:"request_id"`
			Event     json.RawMessage `json:"event"`
		}
		var ev struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(m.Params, &p) != nil || p.RequestID == "" || json.Unmarshal(p.Event, &ev) != nil || ev.Type == "" {
			return Errorf(CodeInvalidParams, "provider/delta needs {request_id, event: {type, …}}")
		}
		b.toHost(wire.Frame{Type: wire.TypeProviderDelta, ID: p.RequestID, Delta: p.Event})
		b.replyEmpty(m)
	default:
		return Errorf(CodeMethodNotFound, "method not found: %s", m.Method)
	}
	return nil
}

// replyEmpty answers a request that has no result of its own with {} (SEP's
// notifications sent as requests: log, registry/update, tool/update).
func (b *Bridge) replyEmpty(m Message) {
	if m.IsRequest() {
		b.reply(m.ID, struct{}{}, nil)
	}
}

// BusEvent delivers another extension's bus/publish.
// SEP delivers it as an event named bus/event, to subscribers only.
func (b *Bridge) BusEvent(from, topic string, payload json.RawMessage) {
	b.mu.Lock()
	sub := b.subs["bus/event"]
	b.seq++
	seq := b.seq
	b.mu.Unlock()
	if !sub {
		return
	}
	b.send("event", map[string]any{"event": "bus/event", "seq": seq, "context": b.context("event"),
		"payload": map[string]any{"from": from, "topic": topic, "payload": payload}}, true)
}

// session serves session/*: command tier only.
func (b *Bridge) session(m Message) *Error {
	var p struct {
		Context struct {
			Token string `json:"token"`
			Tier  string `json:"tier"`
		} `json:"context"`
		Text      string          `json:"text"`
		Role      string          `json:"role"`
		DeliverAs string          `json:"deliver_as"`
		Entry     json.RawMessage `json:"entry"`
		Model     string          `json:"model"`
		Provider  string          `json:"provider"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return Errorf(CodeInvalidParams, "%s: %v", m.Method, err)
	}
	b.mu.Lock()
	tier, known := b.tokens[p.Context.Token]
	b.mu.Unlock()
	switch {
	case p.Context.Token == "":
		return Errorf(CodeInvalidParams, "%s needs the context {token, tier} of the call it acts in", m.Method)
	case !known:
		return Errorf(CodeContextViolation, "%s: context token %q is unknown or stale (from before a restart)", m.Method, p.Context.Token)
	case tier != "command":
		// An event or hook handler runs while the turn waits for it: a
		// session mutation from there would wait on that same turn.
		return Errorf(CodeContextViolation, "%s is refused from an event-tier context (a hook or event); only commands and tools may change the session", m.Method)
	}
	var f wire.Frame
	switch m.Method {
	case "session/send_message", "session/send_user_message":
		if p.Text == "" {
			return Errorf(CodeInvalidParams, "%s needs a text", m.Method)
		}
		f = wire.Frame{Type: wire.TypeSendMessage, Text: p.Text, Deliver: p.DeliverAs}
		if f.Deliver == "" {
			f.Deliver = wire.DeliverFollowUp
		}
	case "session/append_entry":
		var e struct {
			Kind string `json:"kind"`
		}
		if json.Unmarshal(p.Entry, &e) != nil {
			return Errorf(CodeInvalidParams, "session/append_entry needs an entry object")
		}
		f = wire.Frame{Type: wire.TypeAppendEntry, Kind: orDefault(e.Kind, "sep"), Data: p.Entry}
	case "session/set_model":
		if p.Model == "" {
			return Errorf(CodeInvalidParams, "session/set_model needs a model")
		}
		model := p.Model
		if p.Provider != "" && !strings.Contains(model, "/") {
			model = p.Provider + "/" + model
		}
		f = wire.Frame{Type: wire.TypeSetModel, Model: model}
	case "session/state":
		f = wire.Frame{Type: wire.TypeGetEntries}
	}
	b.toHostCall(m, "", f)
	return nil
}

// uiRequest maps SEP's ui/request kinds onto the host's dialogs, notify,
// status and widgets.
func (b *Bridge) uiRequest(m Message) *Error {
	var p struct {
		Kind    string          `json:"kind"`
		Prompt  string          `json:"prompt"`
		Options []string        `json:"options"`
		Default string          `json:"default"`
		Message string          `json:"message"`
		Level   string          `json:"level"`
		Status  *string         `json:"status"`
		Widget  json.RawMessage `json:"widget"`
		Title   *string         `json:"title"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil {
		return Errorf(CodeInvalidParams, "ui/request: %v", err)
	}
	b.mu.Lock()
	caps := b.uiCaps
	b.mu.Unlock()
	if len(p.Options) > 0 && p.Kind != "select" {
		return Errorf(CodeInvalidParams, "ui/request %s takes no options (only select does)", p.Kind)
	}
	if p.Kind != "" && !slices.Contains(caps, p.Kind) && slices.Contains([]string{"select", "confirm", "input", "set_status", "set_widget", "set_title"}, p.Kind) {
		return Errorf(CodeNoUI, "this front cannot show ui/request %s", p.Kind)
	}
	done := func() *Error {
		if m.IsRequest() {
			b.reply(m.ID, struct{}{}, nil)
		}
		return nil
	}
	switch p.Kind {
	case "select", "confirm", "input":
		if p.Prompt == "" {
			return Errorf(CodeInvalidParams, "ui/request %s needs a prompt", p.Kind)
		}
		if p.Kind == "select" && len(p.Options) == 0 {
			return Errorf(CodeInvalidParams, "ui/request select needs options")
		}
		if !m.IsRequest() {
			return Errorf(CodeInvalidRequest, "ui/request %s is a request (it has an answer)", p.Kind)
		}
		b.toHostCall(m, p.Kind, wire.Frame{Type: wire.TypeUIRequest, Kind: p.Kind, Title: p.Prompt, Options: p.Options, Default: p.Default})
		return nil
	case "notify":
		if p.Message == "" {
			return Errorf(CodeInvalidParams, "ui/request notify needs a message")
		}
		b.toHost(wire.Frame{Type: wire.TypeNotify, Level: orDefault(p.Level, wire.LevelInfo), Message: p.Message})
		return done()
	case "set_status":
		if p.Status == nil {
			return Errorf(CodeInvalidParams, "ui/request set_status needs a status")
		}
		b.toHost(wire.Frame{Type: wire.TypeSetStatus, Key: "status", Text: *p.Status})
		return done()
	case "set_title":
		if p.Title == nil {
			return Errorf(CodeInvalidParams, "ui/request set_title needs a title")
		}
		b.toHost(wire.Frame{Type: wire.TypeSetStatus, Key: "title", Text: *p.Title})
		return done()
	case "set_widget":
		var w map[string]json.RawMessage
		if json.Unmarshal(p.Widget, &w) != nil {
			return Errorf(CodeInvalidParams, "ui/request set_widget needs a widget (a render block)")
		}
		key := "widget"
		var id string
		if json.Unmarshal(w["widget_id"], &id) == nil && id != "" {
			key = id
		}
		b.toHost(wire.Frame{Type: wire.TypeSetWidget, Key: key, Lines: RenderLines(p.Widget)})
		return done()
	}
	return Errorf(CodeInvalidParams, "ui/request: unknown kind %q (select, confirm, input, notify, set_status, set_widget, set_title)", p.Kind)
}

// toHostCall sends the host a frame that gets an answer, remembering
// which extension request it answers.
func (b *Bridge) toHostCall(m Message, kind string, f wire.Frame, names ...string) {
	b.mu.Lock()
	b.nextID++
	f.ID = "sep-" + strconv.FormatInt(b.nextID, 10)
	if m.IsRequest() || kind == "clamp" {
		b.hostCalls[f.ID] = hostCall{id: m.ID, method: m.Method, kind: kind, names: names}
	}
	b.mu.Unlock()
	b.toHost(f)
}

// hostAnswered turns the host's answer (ui_response, action_result,
// error) into the reply the extension waits for.
func (b *Bridge) hostAnswered(f wire.Frame) {
	b.mu.Lock()
	hc, ok := b.hostCalls[f.ID]
	delete(b.hostCalls, f.ID)
	b.mu.Unlock()
	if !ok {
		if f.Type == wire.TypeError {
			b.c.Logf("sep: the host refused a %s: %s", f.Ref, f.Error)
		}
		return
	}
	if hc.method == "exec/run" {
		b.execAnswered(hc, f)
		return
	}
	if f.Error != "" && !(f.Type == wire.TypeUIResponse && f.Cancelled) {
		code := CodeInternalError
		if strings.Contains(f.Error, "no ") && hc.method == "ui/request" {
			code = CodeNoUI
		}
		b.reply(hc.id, nil, &Error{Code: code, Message: f.Error})
		return
	}
	switch hc.method {
	case "ui/request":
		res := map[string]any{}
		if f.Cancelled {
			res["cancelled"] = true
		} else {
			switch hc.kind {
			case "confirm":
				var ok bool
				_ = json.Unmarshal(f.Value, &ok)
				res["confirmed"] = ok
			case "select":
				var v string
				_ = json.Unmarshal(f.Value, &v)
				res["value"] = v
			case "input":
				var v string
				_ = json.Unmarshal(f.Value, &v)
				res["text"] = v
			}
		}
		b.reply(hc.id, res, nil)
	case "tools/set_active":
		if hc.kind == "clamp" {
			known := map[string]bool{}
			for _, t := range f.Tools {
				known[t.Name] = true
			}
			var keep []string
			for _, n := range hc.names {
				if known[n] {
					keep = append(keep, n)
				}
			}
			if len(keep) == 0 {
				if len(hc.id) > 0 {
					b.reply(hc.id, nil, Errorf(CodeInvalidParams, "none of %v is an enabled tool here", hc.names))
				}
				return
			}
			b.toHostCall(Message{ID: hc.id, Method: hc.method}, "", wire.Frame{Type: wire.TypeSetActiveTools, Names: keep})
			return
		}
		active := []string{}
		for _, t := range f.Tools {
			if t.Active {
				active = append(active, t.Name)
			}
		}
		b.reply(hc.id, map[string]any{"active": active}, nil)
	case "session/state":
		entries := f.Entries
		if entries == nil {
			entries = []wire.Entry{}
		}
		b.mu.Lock()
		model, provider := b.ack.Model, b.ack.Provider
		b.mu.Unlock()
		b.reply(hc.id, map[string]any{"state": map[string]any{"entries": entries, "model": model, "provider": provider}}, nil)
	default:
		b.reply(hc.id, struct{}{}, nil)
	}
}

// ---- ping ----

// pingLoop pings an idle extension; two pings missed in a row are a
// crash: the process is killed and the host restarts it.
func (b *Bridge) pingLoop() {
	t := time.NewTicker(b.c.PingInterval)
	defer t.Stop()
	for {
		select {
		case <-b.done:
			return
		case <-t.C:
		}
		b.mu.Lock()
		idle := time.Since(b.active) >= b.c.PingInterval
		if b.pingOut {
			b.missed++
		}
		missed, out := b.missed, b.pingOut
		b.mu.Unlock()
		if missed >= 2 {
			b.c.Logf("sep: no answer to two pings in a row; treating the extension as crashed")
			if b.c.Kill != nil {
				b.c.Kill()
			}
			return
		}
		if idle && !out {
			b.mu.Lock()
			b.pingOut = true
			b.mu.Unlock()
			b.call("ping", pendingCall{}, struct{}{})
		}
	}
}

// ---- exec/run ----

// execRun runs a command through the host's exec: the bash tool's
// guards, approval and process rules. SEP's command and args become one
// shell command line — quoted, so what the user is asked about is
// exactly what runs — and cwd a leading cd. Command tier only: the
// guards and the approval it waits for are what an event's turn is
// waiting on.
func (b *Bridge) execRun(m Message) *Error {
	if !m.IsRequest() {
		return Errorf(CodeInvalidRequest, "exec/run is a request (it has an answer)")
	}
	var p struct {
		Command string   `json:"command"`
		Args    []string `json:"args"`
		Cwd     string   `json:"cwd"`
		Context struct {
			Token string `json:"token"`
		} `json:"context"`
	}
	if err := json.Unmarshal(m.Params, &p); err != nil || strings.TrimSpace(p.Command) == "" {
		return Errorf(CodeInvalidParams, "exec/run needs {command, args?, cwd?, context}")
	}
	b.mu.Lock()
	tier, known := b.tokens[p.Context.Token]
	b.mu.Unlock()
	switch {
	case p.Context.Token == "":
		return Errorf(CodeInvalidParams, "exec/run needs the context {token, tier} of the call it acts in")
	case !known:
		return Errorf(CodeContextViolation, "exec/run: context token %q is unknown or stale (from before a restart)", p.Context.Token)
	case tier != "command":
		return Errorf(CodeContextViolation, "exec/run is refused from an event-tier context (a hook or event): the guards and the user's approval it waits for are what that turn is waiting on; run it from a tool or command")
	}
	line := p.Command
	if len(p.Args) > 0 {
		quoted := make([]string, len(p.Args))
		for i, a := range p.Args {
			quoted[i] = ShellQuote(a)
		}
		line += " " + strings.Join(quoted, " ")
	}
	if p.Cwd != "" {
		line = "cd " + ShellQuote(p.Cwd) + " && " + line
	}
	b.toHostCall(m, "", wire.Frame{Type: wire.TypeExec, Command: line})
	return nil
}

// ShellQuote quotes s for a POSIX shell (single quotes).
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '@' || r == '+' ||
			(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// execAnswered turns exec's action_result into exec/run's result; a
// block (a guard, the user's denial, readonly) is -32000 Blocked.
func (b *Bridge) execAnswered(hc hostCall, f wire.Frame) {
	if f.Error != "" {
		code := CodeInternalError
		if strings.HasPrefix(f.Error, "blocked: ") {
			code = CodeBlocked
		}
		b.reply(hc.id, nil, &Error{Code: code, Message: f.Error})
		return
	}
	res := map[string]any{"stdout": "", "stderr": "", "exit_code": 0}
	if f.Stdout != nil {
		res["stdout"] = *f.Stdout
	}
	if f.Stderr != nil {
		res["stderr"] = *f.Stderr
	}
	if f.ExitCode != nil {
		res["exit_code"] = *f.ExitCode
	}
	b.reply(hc.id, res, nil)
}

// providerAnswer turns provider/complete's reply into provider_result.
func providerAnswer(pc pendingCall, m Message, logf func(string, ...any)) wire.Frame {
	f := wire.Frame{Type: wire.TypeProviderResult, ID: pc.zotID}
	if m.Error != nil {
		f.Error = m.Error.Message
		if m.Error.Code == CodeCancelled {
			f.Error = "cancelled: " + m.Error.Message
		}
		return f
	}
	var r struct {
		Content   *string `json:"content"`
		ToolCalls []struct {
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_calls"`
		FinishReason string          `json:"finish_reason"`
		Usage        json.RawMessage `json:"usage"`
	}
	if err := json.Unmarshal(m.Result, &r); err != nil {
		logf("sep: provider/complete: the reply is not {content, tool_calls, finish_reason, usage}: %s", preview(m.Result))
		f.Error = "the extension's provider answered something that is not a completion result"
		return f
	}
	for _, tc := range r.ToolCalls {
		if tc.ID == "" || tc.Name == "" {
			logf("sep: provider/complete: a tool call without id or name: %s", preview(m.Result))
			f.Error = "the extension's provider returned a tool call without id or name"
			return f
		}
		f.ToolCalls = append(f.ToolCalls, wire.ProviderToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.Arguments})
	}
	if r.Content != nil {
		f.Text = *r.Content
	}
	f.Stop, f.Usage = r.FinishReason, r.Usage
	return f
}
