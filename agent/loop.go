package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/tools"
)

// autoCompactRatio is the share of the context window past which the
// transcript is compacted before the next model call.
const autoCompactRatio = 0.85

// run is one prompt: model call → tool calls → results → next call, until
// the model stops, the step budget runs out, or the run is aborted.
func (r *Runtime) run(ctx context.Context, content []message.Content, emit func(Event)) {
	content = r.beforeAgentStart(ctx, content)
	if r.needsCompaction() {
		if err := r.compact(ctx, emit, r.messageCount()); err != nil {
			if ctx.Err() != nil {
				emit(Event{Type: EventTurnEnd, Stop: provider.StopAborted})
				return
			}
			emit(Event{Type: EventError, Message: "auto-compaction failed: " + err.Error()})
		}
	}
	user := message.Message{Role: message.RoleUser, Content: content, Time: now()}
	i := r.appendMessage(user)
	emit(Event{Type: EventUserMessage, Content: user.Content, Time: user.Time, Index: i})

	for step := 1; ; step++ {
		if step > r.cfg.MaxSteps {
			emit(Event{Type: EventError, Message: fmt.Sprintf("stopped after %d model calls (--max-steps); send another prompt to continue", r.cfg.MaxSteps)})
			return
		}
		if step > 1 && r.needsCompaction() {
			if err := r.compact(ctx, emit, r.promptStart()); err != nil && ctx.Err() == nil {
				emit(Event{Type: EventError, Message: "auto-compaction failed: " + err.Error()})
			}
		}
		if !r.step(ctx, step, emit) {
			// The model stopped: a follow-up an extension queued
			// (send_message follow_up) continues the run.
			r.mu.Lock()
			stop := r.lastStop
			r.mu.Unlock()
			if ctx.Err() != nil || stop == provider.StopError || stop == provider.StopAborted {
				return
			}
			text, ok := r.takeFollowUp()
			if !ok {
				return
			}
			m := textMessage(text)
			i := r.appendMessage(m)
			emit(Event{Type: EventUserMessage, Content: m.Content, Time: m.Time, Index: i})
		}
	}
}

// transformInput runs the input hooks on the prompt's text. False: an
// extension handled the prompt (its display was shown); no run.
func (r *Runtime) transformInput(ctx context.Context, content []message.Content, emit func(Event)) ([]message.Content, bool) {
	h := r.runHooks()
	if h == nil {
		return content, true
	}
	text := message.TextOf(content)
	if text == "" {
		return content, true
	}
	r.awaitCheckpointFor(h, "input")
	d := h.TransformInput(ctx, text)
	if d.Handled {
		if d.Display != "" {
			emit(Event{Type: EventAssistantMessage, Content: []message.Content{message.Text(d.Display)}, Time: now()})
		}
		return nil, false
	}
	if d.Text == nil || *d.Text == text {
		return content, true
	}
	out := []message.Content{}
	if *d.Text != "" {
		out = append(out, message.Text(*d.Text))
	}
	for _, c := range content {
		if c.Type != message.TypeText {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

// beforeAgentStart adds what next_turn queued and what the
// before_agent_start hooks add to the prompt's message, and keeps their
// system prompt addition for this run.
func (r *Runtime) beforeAgentStart(ctx context.Context, content []message.Content) []message.Content {
	for _, t := range r.takeNextTurn() {
		content = append(content, message.Text(t))
	}
	h := r.runHooks()
	if h == nil {
		return content
	}
	r.awaitCheckpointFor(h, "before_agent_start")
	d := h.BeforeAgentStart(ctx, message.TextOf(content), r.systemPrompt(r.toolset()))
	for _, t := range d.Messages {
		if t != "" {
			content = append(content, message.Text(t))
		}
	}
	if d.AppendSystem != "" {
		r.mu.Lock()
		r.runSystem = d.AppendSystem
		r.mu.Unlock()
	}
	return content
}

// step makes one model call and runs its tool calls. It reports whether
// the loop should continue.
func (r *Runtime) step(ctx context.Context, step int, emit func(Event)) bool {
	emit(Event{Type: EventTurnStart, Step: step})
	if ctx.Err() != nil {
		emit(Event{Type: EventTurnEnd, Stop: provider.StopAborted})
		return false
	}
	if h := r.cfg.Hooks; h != nil {
		if d := h.BeforeTurn(ctx, step); d.Block {
			reason := d.Reason
			if reason == "" {
				reason = "turn blocked by an extension"
			}
			r.endTurn(emit, provider.StopError, reason)
			emit(Event{Type: EventError, Message: reason})
			return false
		}
		h.Observe(Lifecycle{Event: "turn_start", Step: step})
	}

	// Messages an extension steered into the run (send_message steer)
	// join the transcript before this call.
	for _, t := range r.takeSteer() {
		m := textMessage(t)
		i := r.appendMessage(m)
		emit(Event{Type: EventUserMessage, Content: m.Content, Time: m.Time, Index: i})
	}
	toolset := r.toolset()
	system := r.systemPrompt(toolset)
	r.mu.Lock()
	if r.runSystem != "" {
		system += "\n\n" + r.runSystem
	}
	r.mu.Unlock()
	msgs := r.transcript()
	if h := r.runHooks(); h != nil {
		r.awaitCheckpointFor(h, "context")
		if m := h.TransformContext(ctx, msgs); m != nil {
			msgs = m
		}
	}
	req := provider.Request{
		Model:    r.Model(),
		System:   system,
		Messages: msgs,
		Tools:    specs(toolset),
	}
	req.Reasoning = r.Reasoning()
	// assistant_start waits for the API's answer, as zot's does: a model
	// that cannot be reached gives turn_start, turn_end (error), error,
	// done, with no answer announced.
	answering := false
	startAnswer := func() {
		if !answering {
			answering = true
			emit(Event{Type: EventAssistantStart})
		}
	}
	// While an extension may rewrite the answer, its events wait for the
	// decision (held); otherwise they stream as they come.
	held := heldAnswer{hold: r.holdsAnswer(), still: r.holdsAnswer}
	var partial []byte
	client, model, err := r.clientFor(ctx, req.Model)
	if err != nil {
		r.endTurn(emit, provider.StopError, err.Error())
		emit(Event{Type: EventError, Message: err.Error()})
		return false
	}
	req.Model = model
	resp, err := client.Stream(ctx, req, func(ev provider.StreamEvent) {
		switch {
		case ev.Open:
			startAnswer()
		case ev.TextDelta != "":
			startAnswer()
			partial = append(partial, ev.TextDelta...)
			held.emit(emit, Event{Type: EventTextDelta, Delta: ev.TextDelta})
		case ev.ThinkingDelta != "":
			startAnswer()
			held.emit(emit, Event{Type: EventThinkingDelta, Text: ev.ThinkingDelta})
		case ev.ToolUse != nil:
			startAnswer()
			held.emit(emit, toolUseEvent(*ev.ToolUse))
		}
	})
	if err != nil {
		// Held events of a cut answer are dropped: no extension judged
		// its text.
		if ctx.Err() != nil || errors.Is(err, context.Canceled) {
			// Keep the partial text in the transcript (what the user saw,
			// unless it was held); a partial answer has no tool calls.
			if len(partial) > 0 {
				r.appendMessage(message.Message{Role: message.RoleAssistant, Content: []message.Content{message.Text(string(partial))}, Time: now()})
			}
			r.endTurn(emit, provider.StopAborted, "")
			return false
		}
		r.endTurn(emit, provider.StopError, err.Error())
		emit(Event{Type: EventError, Message: err.Error()})
		return false
	}
	startAnswer()

	assistant := message.Message{Role: message.RoleAssistant, Content: resp.Content, Time: now()}
	if len(assistant.Content) == 0 {
		assistant.Content = []message.Content{}
	}
	r.appendMessage(assistant)
	r.mu.Lock()
	r.lastIn = resp.Usage.Input + resp.Usage.CacheRead + resp.Usage.CacheWrite + resp.Usage.Output
	r.mu.Unlock()
	total := r.addUsage(resp.Usage)
	view := r.judgeAnswer(ctx, assistant)
	if held.hold && ctx.Err() != nil && view.text == nil {
		// Aborted while the extensions judged it: the hook may have
		// passed the text through unjudged, so none of it is shown.
		none := ""
		view.content, view.text = withoutText(assistant.Content), &none
	}
	held.release(emit, view.text)
	emit(Event{Type: EventUsage, Usage: resp.Usage, Cumulative: total})
	r.showAnswer(assistant, view, emit)

	// As zot sends it: every tool_call of the answer, then turn_end (seed
	// 001: "one model call finished"), then the calls run and their
	// tool_results follow.
	calls := assistant.ToolCalls()
	if len(calls) == 0 {
		r.endTurn(emit, resp.Stop, "")
		return false
	}
	for _, c := range calls {
		emit(Event{Type: EventToolCall, ID: c.ID, Name: c.Name, Args: callArgs(c), Extension: toolExtension(c.Name, toolset)})
	}
	r.endTurn(emit, provider.StopToolUse, "")
	results, aborted := r.runTools(ctx, calls, toolset, emit)
	r.appendMessage(message.Message{Role: message.RoleUser, Content: results, Time: now()})
	if aborted {
		// The abort came while tools ran: say so, as an abort during the
		// model call does (turn_end aborted, then done).
		r.endTurn(emit, provider.StopAborted, "")
		return false
	}
	return true
}

// toolUseEvent is the wire event of one step of a streaming tool call.
func toolUseEvent(d provider.ToolUseDelta) Event {
	switch d.Phase {
	case provider.ToolUseStart:
		return Event{Type: EventToolUseStart, ID: d.ID, Name: d.Name}
	case provider.ToolUseArgs:
		return Event{Type: EventToolUseArgs, ID: d.ID, Delta: d.Args}
	default:
		return Event{Type: EventToolUseEnd, ID: d.ID}
	}
}

func (r *Runtime) endTurn(emit func(Event), stop, errText string) {
	r.mu.Lock()
	r.lastStop = stop
	r.mu.Unlock()
	emit(Event{Type: EventTurnEnd, Stop: stop, Error: errText})
	if h := r.cfg.Hooks; h != nil {
		h.Observe(Lifecycle{Event: "turn_end", Stop: stop})
	}
}

// answerView is an answer as the user is to see it.
type answerView struct {
	content []message.Content // assistant_message's content
	// text replaces the answer's text deltas (shown once, where the first
	// was; "" shows none); nil shows them as they streamed.
	text       *string
	suppressed bool
	reason     string // why it was suppressed ("" if not said)
}

// judgeAnswer lets the extensions have their say on the answer's text
// (BeforeAssistantMessage). The transcript keeps the original either way.
func (r *Runtime) judgeAnswer(ctx context.Context, m message.Message) answerView {
	v := answerView{content: m.Content}
	text := message.TextOf(m.Content)
	h := r.cfg.Hooks
	if h == nil || text == "" {
		return v
	}
	d := h.BeforeAssistantMessage(ctx, text)
	if d.Block {
		none := ""
		v.content, v.text, v.suppressed, v.reason = withoutText(m.Content), &none, true, d.Reason
	} else if d.ReplaceText != nil {
		v.content = append([]message.Content{message.Text(*d.ReplaceText)}, withoutText(m.Content)...)
		v.text = d.ReplaceText
	}
	return v
}

// showAnswer sends the assistant's message as judgeAnswer left it.
func (r *Runtime) showAnswer(m message.Message, v answerView, emit func(Event)) {
	if v.suppressed && v.reason != "" {
		emit(Event{Type: EventError, Message: "assistant message suppressed: " + v.reason})
	}
	if h := r.cfg.Hooks; h != nil {
		h.Observe(Lifecycle{Event: "assistant_message", Text: message.TextOf(v.content)})
	}
	emit(Event{Type: EventAssistantMessage, Content: v.content, Time: m.Time})
}

// holdsAnswer reports whether this model call's answer must be held until
// the extensions have judged it (AnswerInterceptor).
func (r *Runtime) holdsAnswer() bool {
	i, ok := r.cfg.Hooks.(AnswerInterceptor)
	return ok && i.InterceptsAssistantMessage()
}

// heldAnswer keeps a model call's streamed events (text, thinking, tool
// call deltas) while hold is set, in order. A hold that turns out needless
// (the extensions that were starting do not intercept assistant_message:
// still says so at the next event) ends: what was held goes out, and the
// rest streams.
type heldAnswer struct {
	hold   bool
	still  func() bool
	events []Event
}

func (h *heldAnswer) emit(emit func(Event), ev Event) {
	if h.hold && !h.still() {
		h.hold = false
		h.release(emit, nil)
	}
	if h.hold {
		h.events = append(h.events, ev)
		return
	}
	emit(ev)
}

// release sends the held events: the text deltas as text says (answerView.text),
// the others as they came.
func (h *heldAnswer) release(emit func(Event), text *string) {
	shown := false
	for _, ev := range h.events {
		if ev.Type == EventTextDelta && text != nil {
			if !shown && *text != "" {
				emit(Event{Type: EventTextDelta, Delta: *text})
			}
			shown = true
			continue
		}
		emit(ev)
	}
	h.events = nil
}

func withoutText(cs []message.Content) []message.Content {
	out := []message.Content{}
	for _, c := range cs {
		if c.Type != message.TypeText {
			out = append(out, c)
		}
	}
	return out
}

// callArgs is a tool call's arguments, "{}" when the model sent none.
func callArgs(c message.Content) json.RawMessage {
	if len(c.Args) == 0 {
		return json.RawMessage("{}")
	}
	return c.Args
}

// runTools executes the calls in order; their tool_call events are out
// already. Every call gets a result, even after an abort, so the
// transcript never holds an orphaned tool call.
func (r *Runtime) runTools(ctx context.Context, calls []message.Content, toolset []tools.Tool, emit func(Event)) ([]message.Content, bool) {
	results := make([]message.Content, 0, len(calls))
	for _, c := range calls {
		args := callArgs(c)
		var res tools.Result
		if ctx.Err() != nil {
			res = tools.ErrorResult("aborted by the user before the tool ran")
		} else {
			// ran: the args the tool ran with (a guard may rewrite them);
			// the tool_result hooks see those.
			var ran json.RawMessage
			res, ran = r.runTool(ctx, c.ID, c.Name, args, toolset, emit)
			if ctx.Err() != nil && !res.IsError {
				// The tool finished despite the abort; keep its result.
			} else if ctx.Err() != nil {
				res = tools.ErrorResult("aborted by the user: " + message.TextOf(res.Content))
			} else if h := r.runHooks(); h != nil {
				res = h.AfterTool(ctx, ToolCallInfo{ID: c.ID, Name: c.Name, Args: ran, Extension: toolExtension(c.Name, toolset)}, res)
			}
		}
		if res.Content == nil {
			res.Content = []message.Content{}
		}
		res.Content = redactContents(r.redact, res.Content)
		emit(Event{Type: EventToolResult, ID: c.ID, IsError: res.IsError, Content: res.Content, Extension: toolExtension(c.Name, toolset)})
		results = append(results, message.Content{Type: message.TypeToolResult, CallID: c.ID, IsError: res.IsError, Content: res.Content})
	}
	return results, ctx.Err() != nil
}

func (r *Runtime) runTool(ctx context.Context, id, name string, args json.RawMessage, toolset []tools.Tool, emit func(Event)) (tools.Result, json.RawMessage) {
	// Any tool may write (the extensions' guards too): the prompt's
	// checkpoint comes first.
	r.awaitCheckpoint()
	if h := r.cfg.Hooks; h != nil {
		ext := toolExtension(name, toolset)
		h.Observe(Lifecycle{Event: "tool_call", ToolID: id, ToolName: name, ToolArgs: args, ToolExtension: ext})
		d := h.BeforeTool(ctx, ToolCallInfo{ID: id, Name: name, Args: args, Extension: ext})
		if d.Block {
			reason := d.Reason
			if reason == "" {
				reason = "blocked by an extension"
			}
			return tools.ErrorResult(reason), args
		}
		if len(d.ModifiedArgs) > 0 {
			args = d.ModifiedArgs
		}
	}
	// The set as it is now: an extension that finished starting during
	// the model call (BeforeTool waits for those) may have registered
	// this tool, or its own grep, ls or find replacing ours.
	var tool tools.Tool
	for _, set := range [][]tools.Tool{r.toolset(), toolset} {
		for _, t := range set {
			if t.Name() == name {
				tool = t
				break
			}
		}
		if tool != nil {
			break
		}
	}
	if tool == nil && r.cfg.AwaitTool != nil {
		tool = r.cfg.AwaitTool(ctx, name)
	}
	if tool == nil {
		return tools.ErrorResult(fmt.Sprintf("unknown tool %q; available tools: %s", name, names(toolset))), args
	}
	if !json.Valid(args) {
		return tools.ErrorResult(fmt.Sprintf("the arguments for %s are not valid JSON; send a JSON object matching the tool's schema", name)), args
	}
	return tool.Run(ctx, tools.Call{ID: id, Args: args, Progress: func(text string) {
		emit(Event{Type: EventToolProgress, ID: id, Text: text})
	}}), args
}

// toolExtension names the extension providing the tool called name in the
// model call's toolset ("" for zot's own tools and names it was not
// offered). The set is the one the model saw: asking ExtraTools again
// would rebuild the extensions' list for every event.
func toolExtension(name string, toolset []tools.Tool) string {
	for _, t := range toolset {
		if t.Name() == name {
			if e, ok := t.(interface{ Extension() string }); ok {
				return e.Extension()
			}
			return ""
		}
	}
	return ""
}

// toolset is the built-in tools plus the extra (extension) tools current
// at this model call. On a name clash zot's own tools (tools.Core) win;
// an extension's ls, grep or find replaces ours. --no-tools (NoTools)
// leaves no built-ins; the extension and MCP tools stay, as in zot and pi.
func (r *Runtime) toolset() []tools.Tool {
	var out []tools.Tool
	if r.cfg.ExtraTools == nil {
		out = append([]tools.Tool(nil), r.builtins...)
	} else {
		extra := r.cfg.ExtraTools()
		extNames := make(map[string]bool, len(extra))
		for _, t := range extra {
			extNames[t.Name()] = true
		}
		out = make([]tools.Tool, 0, len(r.builtins)+len(extra))
		seen := make(map[string]bool, cap(out))
		for _, t := range r.builtins {
			if extNames[t.Name()] && !tools.IsCore(t.Name()) {
				continue // replaced by the extension's
			}
			seen[t.Name()] = true
			out = append(out, t)
		}
		for _, t := range extra {
			if !seen[t.Name()] {
				seen[t.Name()] = true
				out = append(out, t)
			}
		}
	}
	r.mu.Lock()
	active := r.active
	r.mu.Unlock()
	if active != nil {
		// An extension narrowed the set (set_active_tools).
		kept := out[:0]
		for _, t := range out {
			if active[t.Name()] {
				kept = append(kept, t)
			}
		}
		out = kept
	}
	return out
}

func specs(ts []tools.Tool) []provider.ToolSpec {
	out := make([]provider.ToolSpec, 0, len(ts))
	for _, t := range ts {
		out = append(out, provider.ToolSpec{Name: t.Name(), Description: t.Description(), Schema: t.Schema()})
	}
	return out
}

func names(ts []tools.Tool) string {
	s := ""
	for i, t := range ts {
		if i > 0 {
			s += ", "
		}
		s += t.Name()
	}
	if s == "" {
		return "(none)"
	}
	return s
}

// observeSessionStart sends session_start at the first prompt for a front
// that did not call ObserveSessionStart when it started.
func (r *Runtime) observeSessionStart() {
	r.mu.Lock()
	first := !r.started
	r.started = true
	r.mu.Unlock()
	if first && r.cfg.Hooks != nil {
		r.cfg.Hooks.Observe(Lifecycle{Event: "session_start", Reason: "startup"})
		r.observeRestoredModel()
	}
}

func (r *Runtime) needsCompaction() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.model.ContextWindow > 0 && len(r.messages) > 1 &&
		float64(r.lastIn) >= autoCompactRatio*float64(r.model.ContextWindow)
}

// promptStart is the index of the current prompt's user message: what a
// mid-run compaction keeps verbatim.
func (r *Runtime) promptStart() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.messages) - 1; i >= 0; i-- {
		m := r.messages[i]
		if m.Role == message.RoleUser && !hasToolResults(m) {
			return i
		}
	}
	return 0
}

func hasToolResults(m message.Message) bool {
	for _, c := range m.Content {
		if c.Type == message.TypeToolResult {
			return true
		}
	}
	return false
}
