package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zot-editors/zot/extensions/wire"
)

// Asker is the one seam through which extensions ask the user and show
// state ("ask the user", shared/DESIGN.md). A front's UI implements it in
// its own terms — zot lsp with zot/ui/* (fallback
// window/showMessageRequest), zot rpc with events and a response command
// — and the host never knows which front it runs under. A UI without it
// offers no dialogs, status or widgets (zot -p): ui_request is cancelled
// at once and set_status / set_widget get an error frame.
type Asker interface {
	// UICapabilities says which dialogs and views this front serves.
	UICapabilities() wire.UICapabilities
	// Ask shows a dialog and returns the user's answer. It must return
	// when ctx ends (the request timed out, the run was aborted, the
	// extension died), closing the dialog.
	Ask(ctx context.Context, ext string, req UIRequest) UIAnswer
	// SetStatus shows text under key (per extension); "" clears it.
	SetStatus(ext, key, text string)
	// SetWidget shows lines under key above the chat input; nil clears.
	SetWidget(ext, key string, lines []string)
}

// ChatInput is the front's chat input (the prompt the user is
// composing), which extensions set and read (set_editor_text,
// get_editor_text). A front offers it with UICapabilities.EditorText.
type ChatInput interface {
	// SetInput replaces the input's text with text, or (paste) inserts
	// text at the cursor. It must not wait for the user.
	SetInput(ext, text string, paste bool)
	// GetInput returns the input's text now. It must return when ctx
	// ends.
	GetInput(ctx context.Context) (string, error)
}

// UIRequest is a ui_request as the front sees it.
type UIRequest struct {
	Kind        string   // wire.UIConfirm, UISelect, UIInput, UIEditor (Default: the prefill)
	Title       string   // may be empty
	Message     string   // may be empty
	Options     []string // select
	Placeholder string   // input
	Default     string   // input: prefilled; select: preselected
}

// UIAnswer is the user's answer: Confirmed for confirm, Value for select
// (one of Options) and input; Cancelled when the dialog was dismissed.
type UIAnswer struct {
	Confirmed bool
	Value     string
	Cancelled bool
}

// hostCapabilities is hello_ack.host_capabilities for this front.
func (h *Host) hostCapabilities() *wire.HostCapabilities {
	// reload is the host's own: every front serves it.
	c := &wire.HostCapabilities{Hooks: slices.Clone(interceptable), Actions: []string{wire.TypeReload}}
	if a, ok := h.o.UI.(Asker); ok {
		c.UI = a.UICapabilities()
	}
	if act := h.actions(); act != nil {
		c.Actions = append(c.Actions, wire.TypeSendMessage, wire.TypeSetActiveTools, wire.TypeGetTools, wire.TypeSetModel, wire.TypeAppendEntry, wire.TypeGetEntries,
			wire.TypeFork, wire.TypeNavigateTree, wire.TypeGetTree, wire.TypeNewSession)
		if _, ok := act.(SessionControl); ok {
			c.Actions = append(c.Actions, wire.TypeCompact, wire.TypeSwitchSession, wire.TypeRequestShutdown)
		}
	}
	c.Features = h.features()
	return c
}

// negotiated reports whether hello asked for the additions to v1.
func negotiated(caps []string) bool {
	return slices.Contains(caps, wire.CapUI) || slices.Contains(caps, wire.CapHooks) || slices.Contains(caps, wire.CapActions)
}

// sendError tells the extension a frame it sent cannot be served. A
// frame with an id gets its own answer instead (ui_response, action_result).
func (p *proc) sendError(ref, id, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	p.log.printf("%s: %s", ref, msg)
	p.send(wire.Frame{Type: wire.TypeError, Ref: ref, ID: id, Error: msg}, false)
}

// onUIRequest serves a ui_request on its own goroutine: the reader never
// waits for the user.
func (p *proc) onUIRequest(f wire.Frame) {
	if f.ID == "" {
		p.sendError(f.Type, "", "ui_request needs an id (ui_response answers it)")
		return
	}
	reply := func(a UIAnswer, errText string) {
		r := wire.Frame{Type: wire.TypeUIResponse, ID: f.ID, Cancelled: a.Cancelled, Error: errText}
		if !a.Cancelled {
			if f.Kind == wire.UIConfirm {
				r.Value = json.RawMessage(fmt.Sprint(a.Confirmed))
			} else {
				r.Value, _ = json.Marshal(a.Value)
			}
		}
		p.send(r, false)
	}
	h := p.s.h
	asker, _ := h.o.UI.(Asker)
	var caps wire.UICapabilities
	if asker != nil {
		caps = asker.UICapabilities()
	}
	var served bool
	switch f.Kind {
	case wire.UIConfirm:
		served = caps.Confirm
	case wire.UISelect:
		served = caps.Select
		if len(f.Options) == 0 {
			reply(UIAnswer{Cancelled: true}, "ui_request select needs options")
			return
		}
	case wire.UIInput:
		served = caps.Input
	case wire.UIEditor:
		// A front without a multi-line box asks it as input (its Ask
		// says which its client shows).
		served = caps.Editor || caps.Input
	default:
		reply(UIAnswer{Cancelled: true}, fmt.Sprintf("unknown ui_request kind %q (confirm, select, input, editor)", f.Kind))
		return
	}
	if !served {
		// Nobody can answer (zot -p): cancelled at once, never a hang.
		reply(UIAnswer{Cancelled: true}, fmt.Sprintf("this front has no %s dialog (no UI)", f.Kind))
		return
	}
	if size := len(f.Title) + len(f.Message) + len(f.Placeholder) + len(f.Default) + len(strings.Join(f.Options, "")); size > wire.MaxActionBytes {
		reply(UIAnswer{Cancelled: true}, fmt.Sprintf("ui_request is %d bytes; the limit is %d", size, wire.MaxActionBytes))
		return
	}
	// The dialog belongs to whatever the host is waiting on this
	// extension for (a tool_call intercept asking the user): when that is
	// aborted, the dialog closes, and the front sees that request's
	// context values (zot acp asks in the session whose tool call it is).
	pending := p.pendingContexts()
	ctx, cancel := context.WithCancel(valuesOf{p.s.h.ctx, pending})
	for _, rctx := range pending {
		stop := context.AfterFunc(rctx, cancel)
		defer stop()
	}
	stopDead := context.AfterFunc(deadContext(p), cancel)
	defer stopDead()
	defer p.cancellable(f.ID, cancel)()
	// Without timeout_ms a dialog still ends: after DialogTimeout (120 s,
	// SEP's rule) it is cancelled, as if dismissed, so a dialog in a
	// window the user closed cannot hold the run (or a guard's paused
	// intercept timeout) for good.
	wait, ownTimeout := h.o.DialogTimeout, f.TimeoutMS > 0
	if ownTimeout {
		wait = time.Duration(f.TimeoutMS) * time.Millisecond
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	timedOut := timer.C
	req := UIRequest{Kind: f.Kind, Title: f.Title, Message: f.Message, Options: f.Options, Placeholder: f.Placeholder, Default: f.Default}
	// The texts shown are capped; options and default are values the
	// answer carries back, bounded by the request's limit only.
	for _, t := range []struct {
		field string
		text  *string
		limit int
	}{{"title", &req.Title, MaxLabelBytes}, {"message", &req.Message, MaxDialogTextBytes}, {"placeholder", &req.Placeholder, MaxLabelBytes}} {
		if shown, cut := clipText(*t.text, t.limit, p.name); cut {
			p.logWhole("ui_request "+f.ID+" "+t.field, *t.text)
			*t.text = shown
		}
	}
	p.dialogOpened()
	defer p.dialogClosed()
	ans := make(chan UIAnswer, 1)
	go func() {
		ans <- asker.Ask(ctx, p.name, req)
	}()
	select {
	case a := <-ans:
		cancel()
		if f.Kind == wire.UISelect && !a.Cancelled && !slices.Contains(f.Options, a.Value) {
			a = UIAnswer{Cancelled: true}
		}
		reply(a, "")
	case <-timedOut:
		cancel()
		<-ans
		// timeout_ms: the default, else cancelled (pi's timed dialogs).
		// The default timeout: cancelled, the answer to a dismissal.
		if !ownTimeout {
			p.log.printf("ui_request %s: no answer within %s; cancelled", f.ID, wait)
			reply(UIAnswer{Cancelled: true}, "")
		} else if f.Default != "" && f.Kind != wire.UIConfirm {
			reply(UIAnswer{Value: f.Default}, "")
		} else {
			reply(UIAnswer{Cancelled: true}, "")
		}
	case <-ctx.Done():
		<-ans
		if !p.isDead() {
			reply(UIAnswer{Cancelled: true}, "")
		}
	}
}

// onCancel: the extension withdrew an open dialog or exec (pi's
// AbortSignal). A dialog closes in the front, as on a timeout, and is
// answered cancelled; an exec's process group is stopped. An id with
// nothing open (answered meanwhile) is nothing to do.
func (p *proc) onCancel(f wire.Frame) {
	p.mu.Lock()
	cancel := p.dialogCancel[f.ID]
	p.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// valuesOf is a context whose values are its own, else those of the
// requests a dialog is asked for; its deadline and cancellation are its
// own.
type valuesOf struct {
	context.Context
	requests []context.Context
}

func (c valuesOf) Value(key any) any {
	if v := c.Context.Value(key); v != nil {
		return v
	}
	for _, r := range c.requests {
		if v := r.Value(key); v != nil {
			return v
		}
	}
	return nil
}

// cancellable makes cancel {id} (the extension withdrawing an open
// ui_request or exec: pi's AbortSignal) call cancel, until the returned
// func forgets it.
func (p *proc) cancellable(id string, cancel context.CancelFunc) (forget func()) {
	p.mu.Lock()
	if p.dialogCancel == nil {
		p.dialogCancel = map[string]context.CancelFunc{}
	}
	p.dialogCancel[id] = cancel
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		delete(p.dialogCancel, id)
		p.mu.Unlock()
	}
}

// deadContext is a context cancelled when p dies.
func deadContext(p *proc) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-p.dead:
		case <-ctx.Done():
		}
		cancel()
	}()
	return ctx
}

// dialogOpened / dialogClosed count the dialogs this extension has open:
// while one is, its intercept timeout is paused (the user is deciding).
func (p *proc) dialogOpened() {
	p.mu.Lock()
	p.dialogs++
	p.mu.Unlock()
}

func (p *proc) dialogClosed() {
	p.mu.Lock()
	p.dialogs--
	if p.dialogs == 0 && p.dialogsDone != nil {
		close(p.dialogsDone)
		p.dialogsDone = nil
	}
	p.mu.Unlock()
}

// dialogWait returns nil when no dialog is open, else a channel closed
// when the last one closes.
func (p *proc) dialogWait() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dialogs == 0 {
		return nil
	}
	if p.dialogsDone == nil {
		p.dialogsDone = make(chan struct{})
	}
	return p.dialogsDone
}

// pendingContexts are the contexts of the host's requests this extension
// has not answered yet.
func (p *proc) pendingContexts() []context.Context {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]context.Context, 0, len(p.reqCtx))
	for _, c := range p.reqCtx {
		out = append(out, c)
	}
	return out
}

// onSetStatus / onSetWidget: validated, then through the ordered UI
// queue, where a flood coalesces per key (last value wins).
func (p *proc) onSetStatus(f wire.Frame) {
	if !p.viewOK(f, func(c wire.UICapabilities) bool { return c.Status }, len(f.Text)) {
		return
	}
	text, cut := clipText(f.Text, MaxLabelBytes, p.name)
	if cut {
		p.logWhole(fmt.Sprintf("set_status %q", f.Key), f.Text)
	}
	p.ui.push(uiItem{kind: uiStatus, id: f.Key, msg: text})
}

func (p *proc) onSetWidget(f wire.Frame) {
	if !p.viewOK(f, func(c wire.UICapabilities) bool { return c.Widget }, len(strings.Join(f.Lines, "\n"))) {
		return
	}
	lines, cut := clipWidget(f.Lines, p.name)
	if len(lines) == 0 {
		lines = nil
	}
	if cut {
		p.logWhole(fmt.Sprintf("set_widget %q (%d lines)", f.Key, len(f.Lines)), strings.Join(f.Lines, "\n"))
	}
	p.ui.push(uiItem{kind: uiWidget, id: f.Key, view: wire.PanelView{Lines: lines}})
}

func (p *proc) viewOK(f wire.Frame, has func(wire.UICapabilities) bool, size int) bool {
	if f.Key == "" {
		p.sendError(f.Type, f.ID, "%s needs a key", f.Type)
		return false
	}
	if size > wire.MaxActionBytes {
		p.sendError(f.Type, f.ID, "%s %q is %d bytes; the limit is %d", f.Type, f.Key, size, wire.MaxActionBytes)
		return false
	}
	asker, ok := p.s.h.o.UI.(Asker)
	if !ok || !has(asker.UICapabilities()) {
		p.sendError(f.Type, f.ID, "this front cannot show %s (no UI)", strings.TrimPrefix(f.Type, "set_"))
		return false
	}
	return true
}

// getEditorTimeout bounds get_editor_text's question to the front: an
// editor that does not answer gives "" rather than holding the extension.
const getEditorTimeout = 5 * time.Second

// chatInput is the front's chat input, nil when it offers none.
func (h *Host) chatInput() ChatInput {
	asker, ok := h.o.UI.(Asker)
	if !ok || !asker.UICapabilities().EditorText {
		return nil
	}
	ci, _ := h.o.UI.(ChatInput)
	return ci
}

// onSetEditorText sets or pastes into the user's chat input. A front
// without one (zot -p, zot acp) ignores it, logged once per extension:
// pi's setEditorText cannot fail.
func (p *proc) onSetEditorText(f wire.Frame) {
	if len(f.Text) > wire.MaxActionBytes {
		p.sendError(f.Type, f.ID, "set_editor_text is %d bytes; the limit is %d", len(f.Text), wire.MaxActionBytes)
		return
	}
	ci := p.s.h.chatInput()
	if ci == nil {
		if p.noInputLogged.CompareAndSwap(false, true) {
			p.log.printf("set_editor_text: this front has no chat input; ignored (and so are the next ones)")
		}
		return
	}
	ci.SetInput(p.name, f.Text, f.Paste)
}

// onGetEditorText answers get_editor_text with the chat input's text:
// "" where the front has none or does not answer.
func (p *proc) onGetEditorText(f wire.Frame) {
	if f.ID == "" {
		p.sendError(f.Type, "", "get_editor_text needs an id (action_result answers it)")
		return
	}
	var text string
	if ci := p.s.h.chatInput(); ci != nil {
		ctx, cancel := context.WithTimeout(p.s.h.ctx, getEditorTimeout)
		go func() { // the extension's end ends the question
			select {
			case <-p.dead:
				cancel()
			case <-ctx.Done():
			}
		}()
		t, err := ci.GetInput(ctx)
		cancel()
		if err != nil {
			p.log.printf("get_editor_text: the front did not answer (%v); answered \"\"", err)
		} else {
			text = t
		}
	}
	if p.isDead() {
		return
	}
	p.send(wire.Frame{Type: wire.TypeActionResult, ID: f.ID, Text: text}, false)
}

// onToolUpdate streams a tool's progress into the same tool_progress
// event the built-in bash tool streams.
func (p *proc) onToolUpdate(f wire.Frame) {
	p.mu.Lock()
	fn := p.progress[f.ID]
	p.mu.Unlock()
	if fn == nil {
		p.sendError(f.Type, f.ID, "no tool call %q is running", f.ID)
		return
	}
	if len(f.Text) > wire.MaxActionBytes {
		p.sendError(f.Type, f.ID, "tool_update is %d bytes; the limit is %d", len(f.Text), wire.MaxActionBytes)
		return
	}
	fn(f.Text)
}
