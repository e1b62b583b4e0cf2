package agent

import (
	"context"
	"errors"
	"strings"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/session"
)

const compactSystem = `You summarise a conversation between a user and a coding agent so the agent can continue the work with only your summary as context.
Write a dense, factual summary: the user's goals and constraints, decisions made, files read or changed (with paths) and what changed in them, commands run and their outcomes, errors still open, and the next steps. Keep code identifiers, paths and exact error messages verbatim. No preamble.`

const compactAsk = "Summarise the conversation above for the agent, as instructed."

// compactAskWith is the summary request with extra instructions, if any.
func compactAskWith(instructions string) string {
	if strings.TrimSpace(instructions) == "" {
		return compactAsk
	}
	return compactAsk + "\n\nAlso follow these instructions for the summary:\n" + strings.TrimSpace(instructions)
}

// compact replaces messages[:keepFrom] with one synthetic user message
// holding a model-written summary. The summary call's own usage is counted
// in the runtime's cost (zot forgets it). The hooks hear compact_start and
// compact_end around it, for /compact and automatic compaction alike.
func (r *Runtime) compact(ctx context.Context, emit func(Event), keepFrom int) error {
	return r.compactWith(ctx, emit, keepFrom, "")
}

// CompactWith is Compact with the caller's instructions for the summary
// (pi's ctx.compact customInstructions), added to zot's own.
func (r *Runtime) CompactWith(ctx context.Context, instructions string) (<-chan Event, error) {
	return r.start(ctx, func(ctx context.Context, emit func(Event)) {
		if err := r.compactWith(ctx, emit, r.messageCount(), instructions); err != nil {
			emit(errorEvent(err))
		}
	})
}

func (r *Runtime) compactWith(ctx context.Context, emit func(Event), keepFrom int, instructions string) error {
	r.observe(Lifecycle{Event: "compact_start"})
	defer r.observe(Lifecycle{Event: "compact_end"})
	all := r.transcript()
	if keepFrom > len(all) {
		keepFrom = len(all)
	}
	prefix, kept := all[:keepFrom], all[keepFrom:]
	if len(prefix) == 0 {
		emit(Event{Type: EventCompactDone, Summary: ""})
		return nil
	}
	prefix, _ = session.Repair(prefix)
	req := provider.Request{
		Model:  r.Model(),
		System: compactSystem,
		Messages: append(append([]message.Message(nil), prefix...),
			message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(compactAskWith(instructions))}, Time: now()}),
	}
	client, model, err := r.clientFor(ctx, req.Model)
	if err != nil {
		return err
	}
	req.Model = model
	resp, err := client.Stream(ctx, req, func(provider.StreamEvent) {})
	if err != nil {
		if ctx.Err() != nil {
			emit(Event{Type: EventTurnEnd, Stop: provider.StopAborted})
			return nil
		}
		return err
	}
	total := r.addUsage(resp.Usage)
	emit(Event{Type: EventUsage, Usage: resp.Usage, Cumulative: total})
	summary := strings.TrimSpace(message.TextOf(resp.Content))
	if summary == "" {
		return errors.New("compaction: the model returned an empty summary; the transcript is unchanged")
	}
	sm := message.Message{Role: message.RoleUser, Summary: true, Time: now(),
		Content: []message.Content{message.Text("[Summary of the earlier conversation]\n\n" + summary)}}
	next := append([]message.Message{sm}, kept...)
	next = mergeLeadingUsers(next)

	r.mu.Lock()
	// Messages appended while we summarised (none: runs are exclusive) would be
	// lost here; the busy flag guarantees there are none.
	r.messages = next
	r.lastIn = 0
	r.compacts++
	s := r.sess
	r.mu.Unlock()
	if s != nil {
		s.Append(session.Entry{Kind: session.KindCompact, Messages: next})
	}
	emit(Event{Type: EventCompactDone, Summary: summary})
	return nil
}

// mergeLeadingUsers joins the summary with a following user prompt, since
// providers want roles to alternate.
func mergeLeadingUsers(ms []message.Message) []message.Message {
	if len(ms) >= 2 && ms[0].Role == message.RoleUser && ms[1].Role == message.RoleUser && !hasToolResults(ms[1]) {
		merged := ms[1]
		merged.Content = append(append([]message.Content(nil), ms[0].Content...), ms[1].Content...)
		merged.Summary = true
		return append([]message.Message{merged}, ms[2:]...)
	}
	return ms
}
