package extensions

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/zot-editors/zot/extensions/wire"
)

// toolReg is a register_tool as accepted.
type toolReg struct {
	name, desc string
	schema     json.RawMessage
	compiled   *jsonschema.Resolved
}

// cmdReg is a register_command as accepted.
type cmdReg struct {
	name, desc string
}

// Event names an extension may observe, and the subset it may intercept.
var (
	observable = []string{wire.EventSessionStart, wire.EventTurnStart, wire.EventTurnEnd, wire.EventToolCall, wire.EventAssistantMessage,
		// Additions to v1 (the intercept-only ones are listed so the
		// registry indexes them).
		wire.EventAgentStart, wire.EventAgentEnd, wire.EventSessionShutdown, wire.EventModelSelect, wire.EventCompactStart, wire.EventCompactEnd,
		wire.EventToolResult, wire.EventBeforeAgentStart, wire.EventContext, wire.EventInput,
		wire.EventSessionFork, wire.EventSessionTree, wire.EventSessionBeforeFork, wire.EventSessionBeforeTree, wire.EventUserBash, wire.EventSessionBeforeSwitch}
	interceptable = []string{wire.EventToolCall, wire.EventTurnStart, wire.EventAssistantMessage,
		wire.EventToolResult, wire.EventBeforeAgentStart, wire.EventContext, wire.EventInput,
		wire.EventSessionBeforeFork, wire.EventSessionBeforeTree, wire.EventUserBash, wire.EventSessionBeforeSwitch}
)

// handle routes one frame from the extension.
func (p *proc) handle(f wire.Frame) {
	p.mu.Lock()
	gotHello := p.gotHello
	p.mu.Unlock()
	if !gotHello {
		if f.Type != wire.TypeHello {
			p.log.printf("skipped %q frame before hello", f.Type)
			return
		}
		p.onHello(f)
		return
	}
	changed := false
	switch f.Type {
	case wire.TypeHello:
		p.log.printf("skipped a second hello frame")
	case wire.TypeRegisterCommand:
		changed = p.addCommand(f)
	case wire.TypeRegisterTool:
		changed = p.addTool(f)
	case wire.TypeSubscribe:
		changed = p.addSubscribe(f)
	case wire.TypeReady:
		p.markReady("")
	case wire.TypeToolResult, wire.TypeCommandResponse, wire.TypeEventInterceptResponse:
		p.deliver(f)
	case wire.TypePanelRender:
		p.s.h.panelRender(p, f)
	case wire.TypePanelClose:
		p.s.h.panelClosedByExt(p, f.PanelID)
	case wire.TypeNotify:
		p.ui.notify(f.Level, f.Message)
	case wire.TypeShutdownAck:
		p.ackOnce.Do(func() { close(p.ackCh) })
	case wire.TypeUIRequest:
		go p.onUIRequest(f)
	case wire.TypeCancel:
		p.onCancel(f)
	case wire.TypeSetStatus:
		p.onSetStatus(f)
	case wire.TypeSetWidget:
		p.onSetWidget(f)
	case wire.TypeSetEditorText:
		p.onSetEditorText(f)
	case wire.TypeGetEditorText:
		go p.onGetEditorText(f)
	case wire.TypeToolUpdate:
		p.onToolUpdate(f)
	case wire.TypeSendMessage, wire.TypeSetActiveTools, wire.TypeGetTools, wire.TypeSetModel, wire.TypeAppendEntry, wire.TypeGetEntries,
		wire.TypeFork, wire.TypeNavigateTree, wire.TypeGetTree, wire.TypeNewSession,
		wire.TypeAbort, wire.TypeGetThinking, wire.TypeSetThinking, wire.TypeGetMessages, wire.TypeGetCommands,
		wire.TypeCompact, wire.TypeReload, wire.TypeSwitchSession, wire.TypeRequestShutdown:
		go p.onAction(f)
	case wire.TypeBusPublish:
		p.onBusPublish(f)
	case wire.TypeKVGet, wire.TypeKVSet, wire.TypeKVDelete, wire.TypeKVList:
		p.onKV(f)
	case wire.TypeExec:
		go p.onExec(f)
	case wire.TypePing:
		p.onPing(f)
	case wire.TypePong:
		p.onPong(f)
	case wire.TypeCompletions, wire.TypeProviderResult:
		p.deliver(f)
	case wire.TypeRegisterProvider:
		changed = p.onRegisterProvider(f)
	case wire.TypeUnregisterProvider:
		changed = p.onUnregisterProvider(f)
	case wire.TypeProviderDelta:
		p.onProviderDelta(f)
	default:
		p.logBad("skipped unknown frame type %q", f.Type)
	}
	if changed {
		p.mu.Lock()
		ready := p.ready
		p.mu.Unlock()
		if ready { // a late registration: offer it at the next model call, tell the editors
			p.s.h.rebuild()
			p.s.h.changed()
		}
	}
}

func (p *proc) onHello(f wire.Frame) {
	p.mu.Lock()
	p.hello, p.gotHello = f, true
	p.caps, p.extended = f.Capabilities, negotiated(f.Capabilities)
	extended := p.extended
	if slices.Contains(f.Capabilities, wire.CapReady) {
		p.promisedReady.Store(true)
	}
	p.mu.Unlock()
	if f.Name != "" && f.Name != p.name {
		p.log.printf("hello names %q but the manifest says %q; using the manifest's name", f.Name, p.name)
	}
	if p.bridge == nil && slices.Contains(f.Capabilities, wire.CapPing) {
		// (A SEP extension's bridge pings it in SEP's frames.)
		if d := envDuration(EnvSEPPing, 60*time.Second, p.s.h.o.Logf); d > 0 {
			go p.pingLoop(d)
		}
	}
	h := p.s.h
	h.mu.Lock()
	provider, model := h.o.Provider, h.o.Model
	h.mu.Unlock()
	ack := wire.Frame{
		Type:            wire.TypeHelloAck,
		ProtocolVersion: wire.ProtocolVersion,
		ZotVersion:      h.o.ZotVersion,
		Provider:        provider,
		Model:           model,
		Cwd:             h.o.Cwd,
		ExtensionDir:    p.dir,
		DataDir:         p.dir,
	}
	if extended {
		// Only to an extension that asked: zot's own get byte-identical
		// hello_acks.
		ack.HostCapabilities = h.hostCapabilities()
	}
	p.send(ack, false)
	close(p.helloCh)
}

// markReady: a ready frame (auto "") or the host's fallback (auto says
// which) ends the registration window.
func (p *proc) markReady(auto string) {
	p.readyOnce.Do(func() {
		p.mu.Lock()
		p.ready, p.autoReady = true, auto
		p.mu.Unlock()
		close(p.readyCh)
	})
}

func (p *proc) diag(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.log.printf("%s", msg)
	p.mu.Lock()
	if len(p.diags) < 50 {
		p.diags = append(p.diags, msg)
	}
	p.mu.Unlock()
}

func (p *proc) addCommand(f wire.Frame) bool {
	name := strings.TrimPrefix(strings.TrimSpace(f.Name), "/")
	if !ValidCommandName(name) {
		p.diag("register_command: invalid name %q (letters, digits, ':', '.', '_', '-'); ignored", f.Name)
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.commands {
		if strings.EqualFold(c.name, name) {
			p.log.printf("register_command: /%s registered twice; keeping the first", name)
			return false
		}
	}
	p.commands = append(p.commands, cmdReg{name: name, desc: f.Description})
	return true
}

func (p *proc) addTool(f wire.Frame) bool {
	if !ValidToolName(f.Name) {
		p.diag("register_tool: invalid name %q (1-64 of letters, digits, '_', '-'); ignored", f.Name)
		return false
	}
	schema := bytes.TrimSpace(f.Schema)
	if len(schema) == 0 || bytes.Equal(schema, []byte("null")) {
		schema = []byte(`{"type":"object","properties":{}}`)
	}
	if schema[0] != '{' {
		p.diag("register_tool %s: schema must be a JSON object; ignored", f.Name)
		return false
	}
	// zot passes schemas to the model unchecked, so a schema our validator
	// cannot use still registers the tool (existing extensions must run
	// unmodified); its args are then not checked before the call.
	compiled, err := compileSchema(schema)
	if err != nil {
		p.diag("register_tool %s: schema not usable for validation (%v); args will not be checked", f.Name, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.tools {
		if t.name == f.Name {
			p.log.printf("register_tool: %s registered twice; keeping the first", f.Name)
			return false
		}
	}
	p.tools = append(p.tools, &toolReg{name: f.Name, desc: f.Description, schema: json.RawMessage(schema), compiled: compiled})
	return true
}

func (p *proc) addSubscribe(f wire.Frame) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range f.Events {
		if !slices.Contains(observable, e) {
			p.log.printf("subscribe: unknown event %q ignored", e)
			continue
		}
		p.events[e] = true
	}
	for _, e := range f.Intercept {
		if !slices.Contains(interceptable, e) {
			p.log.printf("subscribe: event %q cannot be intercepted; ignored", e)
			continue
		}
		p.intercept[e] = true
	}
	return true
}

// deliver hands a reply to the call waiting for its id.
func (p *proc) deliver(f wire.Frame) {
	p.mu.Lock()
	ch, ok := p.pending[f.ID]
	delete(p.pending, f.ID)
	delete(p.reqCtx, f.ID)
	p.mu.Unlock()
	if !ok {
		p.logBad("skipped %s for unknown or expired id %q", f.Type, f.ID)
		return
	}
	if f.Type == wire.TypeCommandResponse && f.Action == wire.ActionOpenPanel && f.OpenPanel != nil && f.Error == "" {
		// Opened here, on the reader goroutine, so the open reaches the
		// UI before any panel_render the extension sends after it.
		p.s.h.panelOpened(p, *f.OpenPanel)
	}
	ch <- f
}

// intercepts reports whether the process subscribed to intercept event.
func (p *proc) intercepts(event string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.intercept[event]
}

// toolNamed returns the registration of a tool this process offers.
func (p *proc) toolNamed(name string) *toolReg {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.tools {
		if t.name == name {
			return t
		}
	}
	return nil
}

// regs snapshots what the process registered.
func (p *proc) regs() (tools []*toolReg, cmds []cmdReg, events, intercept map[string]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.tools), slices.Clone(p.commands), clone(p.events), clone(p.intercept)
}

func clone(m map[string]bool) map[string]bool {
	out := make(map[string]bool, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// compileSchema resolves a tool's schema for validation. External $refs
// are refused (no loader): a tool schema must be self-contained, as the
// model resolves none either. google/jsonschema-go rather than
// santhosh-tekuri/jsonschema: the latter's package init compiles its
// meta-schemas, 7.7 ms of every zot start (docs/decisions.md).
func compileSchema(raw []byte) (*jsonschema.Resolved, error) {
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

// validateArgs checks the model's args against the tool's schema and
// returns a message the model can act on.
func (t *toolReg) validateArgs(args json.RawMessage) error {
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %v", err)
	}
	if t.compiled == nil {
		return nil
	}
	if err := t.compiled.Validate(inst); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "validating root: "))
	}
	return nil
}

// ObservableEvents are the event names an extension may subscribe to
// (the intercept-only hooks included), InterceptableEvents those it may
// intercept: the conformance matrix's rows come from them, so an event
// added here without a row fails it.
func ObservableEvents() []string    { return slices.Clone(observable) }
func InterceptableEvents() []string { return slices.Clone(interceptable) }
