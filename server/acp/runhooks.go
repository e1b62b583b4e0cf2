package acp

import (
	"context"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

// The runtime's RunHooks (the tool_result, before_agent_start, context
// and input hooks extensions may add) go to the session's host.
var _ agent.RunHooks = hooks{}

func (h hooks) TransformInput(ctx context.Context, text string) agent.InputDecision {
	if host := h.ss.currentHost(); host != nil {
		return host.TransformInput(ctx, text)
	}
	return agent.InputDecision{}
}

func (h hooks) BeforeAgentStart(ctx context.Context, prompt, system string) agent.AgentStartDecision {
	if host := h.ss.currentHost(); host != nil {
		return host.BeforeAgentStart(ctx, prompt, system)
	}
	return agent.AgentStartDecision{}
}

func (h hooks) TransformContext(ctx context.Context, msgs []message.Message) []message.Message {
	if host := h.ss.currentHost(); host != nil {
		return host.TransformContext(ctx, msgs)
	}
	return nil
}

func (h hooks) AfterTool(ctx context.Context, call agent.ToolCallInfo, res tools.Result) tools.Result {
	if host := h.ss.currentHost(); host != nil {
		return host.AfterTool(ctx, call, res)
	}
	return res
}
