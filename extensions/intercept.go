package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
)

// errNotSubscribed: after a reload the extension no longer intercepts.
var errNotSubscribed = errors.New("not subscribed")

// errInterceptTimeout: no answer within InterceptTimeout (dialogs aside).
var errInterceptTimeout = errors.New("intercept timed out")

// intercept sends one event_intercept to the slot's process and waits for
// the response, InterceptTimeout at most (a reload swap counts against
// it).
func (s *slot) intercept(ctx context.Context, f wire.Frame) (wire.Frame, error) {
	tctx, cancel := context.WithTimeout(ctx, s.hookTimeout(f.Event))
	defer cancel()
	p, err := s.acquire(tctx)
	if err != nil {
		return wire.Frame{}, s.timeoutErr(ctx, err, f.Event)
	}
	defer p.end()
	p.mu.Lock()
	sub := p.intercept[f.Event]
	extended := p.extended
	p.mu.Unlock()
	if !sub {
		return wire.Frame{}, errNotSubscribed
	}
	if !extended {
		f.Details = nil // zot's frame byte for byte: no attribution
	}
	cancel() // the acquire budget is spent; the answer has its own
	r, err := s.interceptWait(ctx, p, f)
	if err != nil {
		return wire.Frame{}, s.timeoutErr(ctx, err, f.Event)
	}
	return r, nil
}

func (s *slot) timeoutErr(parent context.Context, err error, event string) error {
	if parent.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", s.hookTimeout(event))
	}
	return err
}

// hookTimeout is how long the slot's extension may take to answer an
// intercept of event: InterceptTimeout, unless a SEP manifest says
// otherwise (hook_timeout_ms; SEP's tool_call default is 60 s).
func (s *slot) hookTimeout(event string) time.Duration {
	s.mu.Lock()
	m := s.cand.Manifest
	s.mu.Unlock()
	return m.HookTimeout(event, s.h.o.InterceptTimeout)
}

func (h *Host) interceptors(event string) []*slot { return h.reg.Load().intercept[event] }

var _ agent.AnswerInterceptor = (*Host)(nil)

// Intercepts reports whether some extension intercepts event now (a front
// may have work to do first: zot lsp saves the agent's edits so a
// tool_result hook finds them on disk).
func (h *Host) Intercepts(event string) bool { return len(h.interceptors(event)) > 0 }

// InterceptsAssistantMessage reports whether an answer's text may be
// rewritten or suppressed: some extension intercepts assistant_message, or
// one is still starting (it may). The runtime holds the answer's deltas
// meanwhile (agent.AnswerInterceptor) and asks again as they come.
func (h *Host) InterceptsAssistantMessage() bool {
	if h.Intercepts(wire.EventAssistantMessage) {
		return true
	}
	if h.startingWhere(nil) {
		return true
	}
	// A slot is ready before the registry has its process: a registry
	// from before the start would say "no intercept" too early.
	if !h.current() {
		h.rebuild()
	}
	return h.Intercepts(wire.EventAssistantMessage)
}

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
	// A guard (tool_call interceptor) still starting — one that guarded
	// before, or has subscribed while registering — is waited for rather
	// than let the call slip by (fail closed). Other starts are not: a
	// slow extension must not hold every tool call.
	h.awaitStarts(ctx, nil, startingGuard, nil)
	if ctx.Err() != nil {
		return agent.ToolDecision{Block: true, Reason: "aborted while extensions were starting"}
	}
	for _, s := range h.interceptors(wire.EventToolCall) {
		f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventToolCall, ToolID: call.ID, ToolName: call.Name, ToolArgs: args}
		if call.Extension != "" {
			f.Details = &wire.ToolDetails{Extension: call.Extension}
		}
		r, err := s.intercept(ctx, f)
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
// one passes the text through, as in zot). One still starting is waited
// for; unresponsive ones are skipped (fail-open).
func (h *Host) BeforeAssistantMessage(ctx context.Context, text string) agent.AssistantDecision {
	var replaced *string
	// An interceptor still starting (a redactor) sees the answer before
	// the user does: it is waited for, as guards are (the answer was held
	// meanwhile, InterceptsAssistantMessage). Other starts are not: one
	// slow extension never holds every answer.
	h.awaitStarts(ctx, nil, startingRedactor, nil)
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
	switch ev.Event {
	case wire.EventSessionStart:
		h.observeSessionStart(ev.Reason)
		return
	case wire.EventModelSelect:
		h.mu.Lock()
		h.o.Model = ev.Model // later hello_acks name it
		h.mu.Unlock()
	}
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
	if ev.Usage != nil {
		f.Usage, _ = json.Marshal(ev.Usage)
	}
	if ev.Event == wire.EventModelSelect {
		f.Provider, f.Model, f.PreviousModel = ev.Provider, ev.Model, ev.PreviousModel
	}
	if t := ev.Tree; t != nil {
		f.SessionID, f.SessionFile, f.PreviousSessionID, f.PreviousSessionFile = t.SessionID, t.SessionFile, t.PreviousSessionID, t.PreviousSessionFile
		switch ev.Event {
		case wire.EventSessionFork:
			index := t.MessageIndex
			f.EntryID, f.MessageIndex = t.EntryID, &index
		case wire.EventSessionTree:
			f.NewLeafID, f.OldLeafID = t.NewLeafID, t.OldLeafID
		}
	}
	b, err := EncodeFrame(f)
	if err != nil {
		return
	}
	// An extension that negotiated the additions also learns whose tool
	// a tool_call is; others get zot's frame byte for byte.
	bExt := b
	if ev.Event == wire.EventToolCall && ev.ToolExtension != "" {
		f.Details = &wire.ToolDetails{Extension: ev.ToolExtension}
		if bExt, err = EncodeFrame(f); err != nil {
			return
		}
	}
	for _, s := range subs {
		s.mu.Lock()
		p := s.cur
		s.mu.Unlock()
		if p == nil {
			continue
		}
		out := b
		if len(bExt) != len(b) {
			p.mu.Lock()
			if p.extended {
				out = bExt
			}
			p.mu.Unlock()
		}
		p.out.push(out, true)
	}
}

// observeSessionStart sends session_start to every subscriber, and
// remembers it for extensions that subscribe later (replaySessionStart).
func (h *Host) observeSessionStart(reason string) {
	h.ssMu.Lock()
	defer h.ssMu.Unlock()
	h.ssGen++
	h.ssReason = reason
	for _, s := range h.reg.Load().observe[wire.EventSessionStart] {
		s.mu.Lock()
		p := s.cur
		s.mu.Unlock()
		if p != nil {
			h.sendSessionStartLocked(p)
		}
	}
}

// replaySessionStart sends the last session_start to subscribers that
// missed it (started after it); called after every registry rebuild.
func (h *Host) replaySessionStart() {
	h.ssMu.Lock()
	defer h.ssMu.Unlock()
	if h.ssGen == 0 {
		return
	}
	for _, s := range h.reg.Load().observe[wire.EventSessionStart] {
		s.mu.Lock()
		p := s.adv
		s.mu.Unlock()
		if p != nil {
			h.sendSessionStartLocked(p)
		}
	}
}

// sendSessionStartLocked sends p the current session_start once. An
// extension that did not negotiate the additions gets zot's frame byte
// for byte; one that did also gets the reason.
func (h *Host) sendSessionStartLocked(p *proc) {
	p.mu.Lock()
	if p.sessionGen >= h.ssGen {
		p.mu.Unlock()
		return
	}
	p.sessionGen = h.ssGen
	extended := p.extended
	p.mu.Unlock()
	f := wire.Frame{Type: wire.TypeEvent, Event: wire.EventSessionStart}
	if extended {
		f.Reason = h.ssReason
	}
	p.send(f, true)
}

// interceptChain runs one event's interceptors in load order, fail-open:
// an extension that does not answer in time, dies or answers with junk
// is skipped (logged). each returns false to stop the chain.
func (h *Host) interceptChain(ctx context.Context, f *wire.Frame, each func(s *slot, r wire.Frame) bool) {
	for _, s := range h.interceptors(f.Event) {
		// Each interceptor sees *f as the ones before it left it (each
		// updates f with what it accepted).
		r, err := s.intercept(ctx, *f)
		if errors.Is(err, errNotSubscribed) {
			continue
		}
		if err != nil {
			s.log.printf("%s intercept: %v; passed through (fail-open)", f.Event, err)
			if ctx.Err() != nil {
				return
			}
			continue
		}
		if !each(s, r) {
			return
		}
	}
}

// TransformInput runs the input interceptors: replace_text chains; handled
// ends the chain (the run does not start; display is shown).
func (h *Host) TransformInput(ctx context.Context, text string) agent.InputDecision {
	var d agent.InputDecision
	f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventInput, Text: text}
	h.interceptChain(ctx, &f, func(s *slot, r wire.Frame) bool {
		if r.Handled {
			d = agent.InputDecision{Handled: true, Display: r.Display}
			return false
		}
		if r.ReplaceText != nil && *r.ReplaceText != "" {
			t := *r.ReplaceText
			f.Text, d.Text = t, &t
		}
		return true
	})
	return d
}

// BeforeAgentStart runs the before_agent_start interceptors: each may add
// messages (an array of strings) and text to append to the system prompt.
func (h *Host) BeforeAgentStart(ctx context.Context, prompt, system string) agent.AgentStartDecision {
	var d agent.AgentStartDecision
	f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventBeforeAgentStart, Prompt: prompt, SystemPrompt: system}
	h.interceptChain(ctx, &f, func(s *slot, r wire.Frame) bool {
		if len(r.Messages) > 0 {
			var msgs []string
			if err := json.Unmarshal(r.Messages, &msgs); err != nil {
				s.log.printf("before_agent_start: messages must be an array of strings (%v); ignored", err)
			} else {
				d.Messages = append(d.Messages, msgs...)
			}
		}
		if r.SystemPrompt != "" {
			if d.AppendSystem != "" {
				d.AppendSystem += "\n\n"
			}
			d.AppendSystem += r.SystemPrompt
		}
		return true
	})
	return d
}

// TransformContext runs the context interceptors: each may return the
// whole message list for this model call; the next one sees it. nil:
// unchanged.
func (h *Host) TransformContext(ctx context.Context, msgs []message.Message) []message.Message {
	var out []message.Message
	for _, s := range h.interceptors(wire.EventContext) {
		raw, err := json.Marshal(msgs)
		if err != nil {
			return out
		}
		r, err := s.intercept(ctx, wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventContext, Messages: raw})
		if errors.Is(err, errNotSubscribed) {
			continue
		}
		if err != nil {
			s.log.printf("context intercept: %v; passed through (fail-open)", err)
			if ctx.Err() != nil {
				return out
			}
			continue
		}
		if len(r.Messages) == 0 {
			continue
		}
		var m []message.Message
		if err := json.Unmarshal(r.Messages, &m); err != nil || !validMessages(m) {
			s.log.printf("context intercept: messages are not a valid message list; ignored")
			continue
		}
		out, msgs = m, m
	}
	return out
}

// validMessages: every message has a known role and content.
func validMessages(ms []message.Message) bool {
	for _, m := range ms {
		if m.Role != message.RoleUser && m.Role != message.RoleAssistant {
			return false
		}
	}
	return true
}

// AfterTool runs the tool_result interceptors: content (non-empty)
// replaces the result's content, with is_error as sent.
func (h *Host) AfterTool(ctx context.Context, call agent.ToolCallInfo, res tools.Result) tools.Result {
	if len(h.interceptors(wire.EventToolResult)) == 0 {
		return res
	}
	blocks := func(r tools.Result) []wire.Block {
		out := []wire.Block{}
		for _, c := range r.Content {
			switch c.Type {
			case message.TypeText:
				out = append(out, wire.Block{Type: "text", Text: c.Text})
			case message.TypeImage:
				out = append(out, wire.Block{Type: "image", MimeType: c.MimeType, Data: c.Data})
			}
		}
		return out
	}
	args := call.Args
	if len(args) == 0 || !json.Valid(args) {
		args = json.RawMessage("{}")
	}
	f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventToolResult, ToolID: call.ID, ToolName: call.Name, ToolArgs: args, Content: blocks(res), IsError: res.IsError}
	if call.Extension != "" {
		f.Details = &wire.ToolDetails{Extension: call.Extension}
	}
	h.interceptChain(ctx, &f, func(s *slot, r wire.Frame) bool {
		if len(r.Content) > 0 {
			res = tools.Result{Content: convertBlocks(r.Content, r.IsError), IsError: r.IsError}
			f.Content, f.IsError = blocks(res), res.IsError
		}
		return true
	})
	return res
}

var _ agent.TreeHooks = (*Host)(nil)

// BeforeFork runs the session_before_fork interceptors in load order: the
// first that answers cancel (or block) refuses the fork. Unresponsive
// ones are skipped (fail-open, as pi's handlers that throw).
func (h *Host) BeforeFork(ctx context.Context, p agent.ForkPreparation) agent.TreeDecision {
	index := p.MessageIndex
	f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventSessionBeforeFork, EntryID: p.EntryID, SessionID: p.SessionID, MessageIndex: &index, WithFiles: p.WithFiles}
	return h.treeVerdict(ctx, &f)
}

// BeforeTree runs the session_before_tree interceptors: the first that
// answers cancel (or block) refuses the navigation; fail-open. pi's
// summary, custom_instructions and label answers are not used: zot writes
// no branch summaries and has no labels.
func (h *Host) BeforeTree(ctx context.Context, p agent.TreePreparation) agent.TreeDecision {
	prep := &wire.TreePreparation{TargetID: p.TargetID, EntriesToSummarize: p.EntriesToSummarize,
		CustomInstructions: p.CustomInstructions, ReplaceInstructions: p.ReplaceInstructions, Label: p.Label}
	if prep.EntriesToSummarize == nil {
		prep.EntriesToSummarize = []string{}
	}
	if p.OldLeafID != "" {
		prep.OldLeafID = &p.OldLeafID
	}
	if p.CommonAncestorID != "" {
		prep.CommonAncestorID = &p.CommonAncestorID
	}
	f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventSessionBeforeTree, Preparation: prep}
	return h.treeVerdict(ctx, &f)
}

// BeforeSwitch runs the session_before_switch interceptors before a new
// session (reason "new") or a resume ("resume" of which: a session id or
// "latest"): the first that answers cancel (or block) refuses; fail-open.
func (h *Host) BeforeSwitch(ctx context.Context, reason, which string) agent.TreeDecision {
	f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventSessionBeforeSwitch, Reason: reason}
	if reason == "resume" {
		f.SessionID = which
		// The session it will be (a resume that finds none fails anyway);
		// a session file (pi's switchSession) is that file.
		path, err := which, error(nil)
		if looksLikePath(which) {
			f.SessionID = ""
		} else {
			path, err = session.FindWorkspace(h.o.Home, h.o.Cwd, which)
		}
		if err == nil {
			f.SessionFile = path
			infos, _ := session.ListWorkspace(h.o.Home, h.o.Cwd)
			for _, in := range infos {
				if in.Path == path {
					f.SessionID = in.ID
				}
			}
		}
	}
	return h.treeVerdict(ctx, &f)
}

// switchRefused says which extension refused a new session or resume.
func switchRefused(d agent.TreeDecision) string {
	if d.Reason == "" {
		return fmt.Sprintf("the session switch was cancelled by extension %q", d.Extension)
	}
	return fmt.Sprintf("the session switch was cancelled by extension %q: %s", d.Extension, d.Reason)
}

// SwitchRefusal is the error a front answers a refused new session or
// resume with (nil when d does not refuse).
func SwitchRefusal(d agent.TreeDecision) error {
	if !d.Cancel {
		return nil
	}
	return errors.New(switchRefused(d))
}

func (h *Host) treeVerdict(ctx context.Context, f *wire.Frame) agent.TreeDecision {
	var d agent.TreeDecision
	h.interceptChain(ctx, f, func(s *slot, r wire.Frame) bool {
		if r.Cancel || r.Block {
			d = agent.TreeDecision{Cancel: true, Extension: s.name(), Reason: r.Reason}
			return false
		}
		return true
	})
	return d
}

var _ agent.UserBashHooks = (*Host)(nil)

// BeforeUserBash runs the user_bash interceptors in load order: the first
// block wins, and the first that answers with a result ran the command
// itself (pi's replacement; the rest are not asked). Like tool_call, and
// as SEP fixes it, the hook fails closed: an interceptor that does not
// answer within its timeout, or dies meanwhile, blocks the command with a
// reason naming it.
func (h *Host) BeforeUserBash(ctx context.Context, b agent.UserBashInfo) agent.UserBashDecision {
	for _, s := range h.interceptors(wire.EventUserBash) {
		f := wire.Frame{Type: wire.TypeEventIntercept, Event: wire.EventUserBash, Command: b.Command, Cwd: b.CWD, ExcludeFromContext: b.ExcludeFromContext}
		r, err := s.intercept(ctx, f)
		if errors.Is(err, errNotSubscribed) {
			continue
		}
		name := s.name()
		if err != nil {
			s.log.printf("user_bash intercept: %v; blocked (fail-closed)", err)
			if ctx.Err() != nil {
				return agent.UserBashDecision{Block: true, Extension: name, Reason: fmt.Sprintf("aborted while extension %q was checking the command", name)}
			}
			return agent.UserBashDecision{Block: true, Extension: name, Reason: fmt.Sprintf("blocked: extension %q could not check this command (%v); your commands fail closed while a guard is unresponsive or restarting", name, err)}
		}
		if r.Block {
			reason := r.Reason
			if reason == "" {
				reason = fmt.Sprintf("blocked by extension %q", name)
			}
			return agent.UserBashDecision{Block: true, Reason: reason, Extension: name}
		}
		if res := r.BashResult; res != nil {
			return agent.UserBashDecision{Extension: name, Result: &tools.UserRunResult{
				Output: res.Output, ExitCode: res.ExitCode, Cancelled: res.Cancelled, Truncated: res.Truncated}}
		}
	}
	return agent.UserBashDecision{}
}
