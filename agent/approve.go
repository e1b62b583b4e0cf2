package agent

import "context"

// Approver asks the user whether one tool call may run (zot's --no-yolo).
// Its decision blocks the call with a reason the model reads, or lets it
// run.
type Approver func(ctx context.Context, call ToolCallInfo) ToolDecision

// ApprovalLayer is a front's "ask before every tool call" as a layer of
// the hook chain: the rest of the chain (the extension host's guards) sees
// each call first — it may block or rewrite it — and ask then decides on
// the call as it would run. Every other hook passes through the chain.
func ApprovalLayer(ask Approver) HookLayer {
	return HookLayer{BeforeTool: func(ctx context.Context, call ToolCallInfo, next func(context.Context, ToolCallInfo) ToolDecision) ToolDecision {
		d := next(ctx, call)
		if d.Block {
			return d
		}
		if len(d.ModifiedArgs) > 0 {
			call.Args = d.ModifiedArgs
		}
		if v := ask(ctx, call); v.Block {
			return v
		}
		return d
	}}
}
