package extensions

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent/tools"
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

// starting reports whether any extension is starting.
func (h *Host) starting() bool {
	h.mu.Lock()
	slots := h.slots
	h.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		st := s.state
		s.mu.Unlock()
		if st == StateStarting {
			return true
		}
	}
	return false
}

// WaitStarting returns once no extension is starting (each one is ready
// or has failed; a start ends within its hello budget), or ctx ends. It
// reports whether it had to wait. The registry is current when it returns:
// a start's own rebuild may still be on its way (the slot is ready first),
// and a guard missing from it would let a tool call pass unchecked.
func (h *Host) WaitStarting(ctx context.Context) (waited bool) {
	for {
		ch := h.settled.wait()
		if !h.starting() {
			if waited || !h.current() {
				h.rebuild()
			}
			return waited
		}
		waited = true
		select {
		case <-ch:
		case <-ctx.Done():
			return waited
		case <-h.ctx.Done():
			return waited
		}
	}
}

// AwaitTool is for a call of a tool the current set lacks: if extensions
// are starting it waits for them and returns the tool if one of them
// registered it; nil otherwise. (agent.Config.AwaitTool)
func (h *Host) AwaitTool(ctx context.Context, name string) tools.Tool {
	// Look again even if nothing was starting now: BeforeTool may have
	// waited for the start already.
	h.WaitStarting(ctx)
	for _, t := range h.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

// AwaitCommand reports whether the command exists, waiting first for
// extensions still starting if it does not yet.
func (h *Host) AwaitCommand(ctx context.Context, name string) bool {
	name = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(name), "/"))
	if _, ok := h.reg.Load().cmdIndex[name]; ok {
		return true
	}
	if !h.WaitStarting(ctx) {
		return false
	}
	_, ok := h.reg.Load().cmdIndex[name]
	return ok
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
