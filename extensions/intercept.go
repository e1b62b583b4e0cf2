package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/extensions/wire"
)

// errNotSubscribed: after a reload the extension no longer intercepts.
var errNotSubscribed = errors.New("not subscribed")

// intercept sends one event_intercept to the slot's process and waits for
// the response, InterceptTimeout at most (a reload swap counts against
// it).
func (s *slot) intercept(ctx context.Context, f wire.Frame) (wire.Frame, error) {
	tctx, cancel := context.WithTimeout(ctx, s.h.o.InterceptTimeout)
	defer cancel()
	p, err := s.acquire(tctx)
	if err != nil {
		return wire.Frame{}, s.timeoutErr(ctx, err)
	}
	defer p.end()
	p.mu.Lock()
	sub := p.intercept[f.Event]
	p.mu.Unlock()
	if !sub {
		return wire.Frame{}, errNotSubscribed
	}
	r, err := p.request(tctx, f, 0, false)
	if err != nil {
		return wire.Frame{}, s.timeoutErr(ctx, err)
	}
	return r, nil
}

func (s *slot) timeoutErr(parent context.Context, err error) error {
	if parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", s.h.o.InterceptTimeout)
	}
	return err
}

func (h *Host) interceptors(event string) []*slot { return h.reg.Load().intercept[event] }

// BeforeTool runs the tool_call interceptors in load order: the first block
// wins, modified_args chain (each sees the previous rewrite). An
// interceptor that does not answer within InterceptTimeout, or dies
// meanwhile, BLOCKS the call (fail-closed) with a reason naming it.
func (h *Host) BeforeTool(ctx context.Context, call agent.ToolCallInfo) agent.ToolDecision {
	args := call.Args
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	rewritten := false
	// An extension still starting may be a guard (tool_call interceptor):
	// fail closed by waiting for it rather than letting the call slip by.
	h.WaitStarting(ctx)
	if ctx.Err() != nil {
		return agent.ToolDecision{Block: true, Reason: "aborted while extensions were starting"}
	}
	for _, s := range h.interceptors(wire.EventToolCall) {
		r, err := s.intercept(ctx, wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventToolCall, ToolID: call.ID, ToolName: call.Name, ToolArgs: args})
		if errors.Is(err, errNotSubscribed) {
			continue
		}
		name := s.name()
		if err != nil && ctx.Err() != nil {
			return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("aborted while extension %q was checking the call", name)}
		}
		if err != nil {
			reason := fmt.Sprintf("blocked: extension %q could not check this tool call (%v); tool calls fail closed while a guard is unresponsive or restarting", name, err)
			s.mu.Lock()
			down := s.cur == nil
			s.mu.Unlock()
			if down {
				reason = fmt.Sprintf("blocked: the guard extension %q is not running (%v); %s. Tell the user; do not try to work around it", name, err, guardDownReason(name, ""))
			}
			s.log.printf("tool_call intercept for %s: %v; blocked (fail-closed)", call.Name, err)
			return agent.ToolDecision{Block: true, Reason: reason}
		}
		if r.Block {
			reason := r.Reason
			if reason == "" {
				reason = fmt.Sprintf("blocked by extension %q", name)
			}
			return agent.ToolDecision{Block: true, Reason: reason}
		}
		if m := bytes.TrimSpace(r.ModifiedArgs); len(m) > 0 {
			if isJSONObject(m) {
				args, rewritten = json.RawMessage(m), true
			} else {
				s.log.printf("tool_call intercept: modified_args is not a JSON object; ignored")
			}
		}
	}
	if rewritten {
		return agent.ToolDecision{ModifiedArgs: args}
	}
	return agent.ToolDecision{}
}

func isJSONObject(b []byte) bool {
	var m map[string]json.RawMessage
	return len(b) > 0 && b[0] == '{' && json.Unmarshal(b, &m) == nil
}

// BeforeTurn runs the turn_start interceptors in load order; the first
// block wins. Unresponsive interceptors are skipped (fail-open).
func (h *Host) BeforeTurn(ctx context.Context, step int) agent.TurnDecision {
	for _, s := range h.interceptors(wire.EventTurnStart) {
		r, err := s.intercept(ctx, wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventTurnStart, Step: step})
		if errors.Is(err, errNotSubscribed) {
			continue
		}
		if err != nil {
			s.log.printf("turn_start intercept: %v; allowed (fail-open)", err)
			continue
		}
		if r.Block {
			reason := r.Reason
			if reason == "" {
				reason = fmt.Sprintf("turn blocked by extension %q", s.name())
			}
			return agent.TurnDecision{Block: true, Reason: reason}
		}
	}
	return agent.TurnDecision{}
}

// BeforeAssistantMessage runs the assistant_message interceptors in load
// order: the first block wins, a non-empty replace_text chains (an empty
// one passes the text through, as in zot). Unresponsive ones are
// skipped (fail-open).
func (h *Host) BeforeAssistantMessage(ctx context.Context, text string) agent.AssistantDecision {
	var replaced *string
	for _, s := range h.interceptors(wire.EventAssistantMessage) {
		r, err := s.intercept(ctx, wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventAssistantMessage, Text: text})
		if errors.Is(err, errNotSubscribed) {
			continue
		}
		if err != nil {
			s.log.printf("assistant_message intercept: %v; passed through (fail-open)", err)
			continue
		}
		if r.Block {
			return agent.AssistantDecision{Block: true, Reason: r.Reason}
		}
		// zot rewrites only on a non-empty replace_text: "" passes through.
		if r.ReplaceText != nil && *r.ReplaceText != "" {
			t := *r.ReplaceText
			text, replaced = t, &t
		}
	}
	return agent.AssistantDecision{ReplaceText: replaced}
}

// Observe queues a one-way event for every subscribed extension. It never
// blocks: each extension has its own ordered queue and writer; a full
// queue drops its oldest event (logged).
func (h *Host) Observe(ev agent.Lifecycle) {
	subs := h.reg.Load().observe[ev.Event]
	if len(subs) == 0 {
		return
	}
	f := wire.Frame{Type: wire.TypeEvent, Event: ev.Event, Step: ev.Step, Stop: ev.Stop, ToolID: ev.ToolID, ToolName: ev.ToolName, Text: ev.Text}
	if ev.Event == wire.EventToolCall {
		f.ToolArgs = ev.ToolArgs
		if len(f.ToolArgs) == 0 || !json.Valid(f.ToolArgs) {
			f.ToolArgs = json.RawMessage("{}")
		}
	}
	b, err := EncodeFrame(f)
	if err != nil {
		return
	}
	for _, s := range subs {
		s.mu.Lock()
		p := s.cur
		s.mu.Unlock()
		if p != nil {
			p.out.push(b, true)
		}
	}
}
