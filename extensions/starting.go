package extensions

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
)

// settled lets callers wait for extensions that are still starting: every
// change of state (Host.changed) closes the current channel and makes a
// new one.
type settled struct {
	mu sync.Mutex
	ch chan struct{}
}

func (w *settled) wait() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = make(chan struct{})
	}
	return w.ch
}

func (w *settled) wake() {
	w.mu.Lock()
	if w.ch != nil {
		close(w.ch)
		w.ch = nil
	}
	w.mu.Unlock()
}

// helloBudget is how long an extension may take to say hello: the
// manifest's timeout if it sets one, else Options.HelloTimeout (60 s, so
// `go run .` or `npx tsx` may compile or download first).
func (h *Host) helloBudget(m Manifest) time.Duration {
	if m.Timeout > 0 {
		return time.Duration(m.Timeout * float64(time.Second))
	}
	return h.o.HelloTimeout
}

// willStart reports whether load will start c (rather than park it as
// invalid, shadowed, disabled or untrusted).
func (h *Host) willStart(c Candidate, hash string) bool {
	return c.Err == nil && c.ShadowedBy == "" && c.Manifest.IsEnabled() &&
		(!needsTrust(c.Source) || IsTrusted(h.o.Home, h.o.Cwd, c.Name, hash))
}

// startingWhere reports whether some extension is starting for which
// matters (called under the slot's lock) holds; nil matters: any.
func (h *Host) startingWhere(matters func(*slot) bool) bool {
	h.mu.Lock()
	slots := h.slots
	h.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		hit := s.state == StateStarting && (matters == nil || matters(s))
		s.mu.Unlock()
		if hit {
			return true
		}
	}
	return false
}

// awaitStarts waits while some extension for which matters holds is
// starting (each start ends within its hello budget), until found reports
// what the caller waits for (nil: nothing but the starts), stop fires, or
// ctx ends. It reports whether it had to wait. The registry is current
// when it returns: a start's own rebuild may still be on its way (the
// slot is ready first), and a guard missing from it would let a tool call
// pass unchecked.
//
// Only the starts that matter are waited for: one slow extension (a cold
// `go run`, an npx download, one that never says hello) must not hold
// another's tool results or commands.
func (h *Host) awaitStarts(ctx context.Context, stop <-chan time.Time, matters func(*slot) bool, found func() bool) (waited bool) {
	for {
		ch := h.settled.wait()
		busy := h.startingWhere(matters)
		if waited || !h.current() {
			h.rebuild()
		}
		if !busy || (found != nil && found()) {
			return waited
		}
		waited = true
		select {
		case <-ch:
		case <-stop:
			return waited
		case <-ctx.Done():
			return waited
		case <-h.ctx.Done():
			return waited
		}
	}
}

// WaitStarting returns once no extension is starting (each one is ready
// or has failed), or ctx ends. It reports whether it had to wait.
func (h *Host) WaitStarting(ctx context.Context) (waited bool) {
	return h.awaitStarts(ctx, nil, nil, nil)
}

// AwaitStarting is agent.Config.AwaitExtensions: a prompt, before its
// input hooks and first model call, waits for the extensions still
// starting — at most Options.StartWait (2 s) — so it is offered their
// tools and runs their hooks. Past the bound it goes on without those
// still starting, and the UI gets one notice naming them; a later prompt
// does not wait for the same start again. Their guards (tool_call) and
// answer interceptors (assistant_message) are still waited for when a
// tool call or an answer needs them (BeforeTool, BeforeAssistantMessage).
func (h *Host) AwaitStarting(ctx context.Context) {
	t := time.NewTimer(h.o.StartWait)
	defer t.Stop()
	h.awaitStarts(ctx, t.C, func(s *slot) bool { return !s.leftOut }, nil)
	if ctx.Err() != nil || h.ctx.Err() != nil {
		return
	}
	h.mu.Lock()
	slots := h.slots
	h.mu.Unlock()
	var names []string
	for _, s := range slots {
		s.mu.Lock()
		if s.state == StateStarting && !s.leftOut {
			s.leftOut = true
			names = append(names, s.cand.Name)
		}
		s.mu.Unlock()
	}
	if len(names) == 0 {
		return
	}
	msg := fmt.Sprintf("extension %s is still starting after %s; this prompt goes on without it (its tools and hooks join once it is ready)", names[0], h.o.StartWait)
	if len(names) > 1 {
		msg = fmt.Sprintf("extensions %s are still starting after %s; this prompt goes on without them (their tools and hooks join once they are ready)", strings.Join(names, ", "), h.o.StartWait)
	}
	for _, s := range slots {
		if slices.Contains(names, s.name()) {
			s.log.printf("still starting after %s: a prompt went on without it", h.o.StartWait)
		}
	}
	h.o.UI.Notify(NoticeSource, "warn", msg)
}

// NoticeSource is the extension name of the host's own notices (UI.Notify).
const NoticeSource = "zot"

// startingGuard: a starting extension a tool call must wait for — it
// guarded before (a restart, a reload) or has subscribed to intercept
// tool_call while registering. Under the slot's lock.
func startingGuard(s *slot) bool {
	return s.guard || (s.starting != nil && s.starting.intercepts(wire.EventToolCall))
}

// startingRedactor: a starting extension that has subscribed to intercept
// assistant_message; an answer waits for it. Under the slot's lock.
func startingRedactor(s *slot) bool {
	return s.starting != nil && s.starting.intercepts(wire.EventAssistantMessage)
}

// AwaitTool is for a call of a tool the current set lacks: if extensions
// are starting it waits until one of them registers it, or none is
// starting, and returns the tool; nil otherwise. (agent.Config.AwaitTool)
func (h *Host) AwaitTool(ctx context.Context, name string) tools.Tool {
	var tool tools.Tool
	find := func() bool {
		for _, t := range h.Tools() {
			if t.Name() == name {
				tool = t
				return true
			}
		}
		return false
	}
	h.awaitStarts(ctx, nil, nil, find)
	// Look again even if nothing was starting now: BeforeTool may have
	// waited for a start already.
	find()
	return tool
}

// AwaitCommand reports whether the command exists, waiting first, if it
// does not yet, until an extension still starting registers it or none is
// starting. It never waits for the other starts once the command is there.
func (h *Host) AwaitCommand(ctx context.Context, name string) bool {
	_, ok := h.awaitCommand(ctx, name)
	return ok
}

func (h *Host) awaitCommand(ctx context.Context, name string) (cmdEntry, bool) {
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "/"))
	var e cmdEntry
	var ok bool
	find := func() bool {
		e, ok = h.reg.Load().cmdIndex[name]
		return ok
	}
	if find() {
		return e, true
	}
	h.awaitStarts(ctx, nil, nil, find)
	find()
	return e, ok
}

// SetModelInfo sets the provider and model hello_ack reports. Call it
// before Start: a front resolves its defaults only when it builds the
// runtime, which takes the host as its hooks.
func (h *Host) SetModelInfo(provider, model string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.started {
		h.o.Provider, h.o.Model = provider, model
	}
}
