package agent

import "context"

// Approver asks the user whether one tool call may run (zot's --no-yolo).
// Its decision blocks the call with a reason the model reads, or lets it
// run.
type Approver func(ctx context.Context, call ToolCallInfo) ToolDecision

// WithApproval is the one place a front's "ask before every tool call"
// joins a run: inner (the extension host, or nil) sees each call first —
// its guards may block or rewrite it — and ask then decides on the call
// as it would run.
func WithApproval(inner Hooks, ask Approver) Hooks {
	return approval{inner: inner, ask: ask}
}

type approval struct {
	inner Hooks
	ask   Approver
}

func (a approval) BeforeTool(ctx context.Context, call ToolCallInfo) ToolDecision {
	var d ToolDecision
	if a.inner != nil {
		if d = a.inner.BeforeTool(ctx, call); d.Block {
			return d
		}
		if len(d.ModifiedArgs) > 0 {
			call.Args = d.ModifiedArgs
		}
	}
	if v := a.ask(ctx, call); v.Block {
		return v
	}
	return d
}

func (a approval) BeforeTurn(ctx context.Context, step int) TurnDecision {
	if a.inner == nil {
		return TurnDecision{}
	}
	return a.inner.BeforeTurn(ctx, step)
}

func (a approval) BeforeAssistantMessage(ctx context.Context, text string) AssistantDecision {
	if a.inner == nil {
		return AssistantDecision{}
	}
	return a.inner.BeforeAssistantMessage(ctx, text)
}

func (a approval) Observe(ev Lifecycle) {
	if a.inner != nil {
		a.inner.Observe(ev)
	}
}

// InterceptsAssistantMessage passes inner's answer on (AnswerInterceptor).
func (a approval) InterceptsAssistantMessage() bool {
	i, ok := a.inner.(AnswerInterceptor)
	return ok && i.InterceptsAssistantMessage()
}
