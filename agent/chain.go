package agent

import (
	"context"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

// HookLayer is a front's part of the hook chain (approval under
// --no-yolo, review in zot lsp, permission in zot acp). Each field that is
// set wraps that one hook: it runs in place of the rest of the chain and
// calls next to reach it (the next layer, then the host). A field left nil
// forwards, so a layer names only what it changes and a hook added to the
// host later reaches every front without a line in any of them.
type HookLayer struct {
	BeforeTool             func(ctx context.Context, call ToolCallInfo, next func(context.Context, ToolCallInfo) ToolDecision) ToolDecision
	BeforeTurn             func(ctx context.Context, step int, next func(context.Context, int) TurnDecision) TurnDecision
	BeforeAssistantMessage func(ctx context.Context, text string, next func(context.Context, string) AssistantDecision) AssistantDecision
	Observe                func(ev Lifecycle, next func(Lifecycle))
	TransformInput         func(ctx context.Context, text string, next func(context.Context, string) InputDecision) InputDecision
	BeforeAgentStart       func(ctx context.Context, prompt, system string, next func(context.Context, string, string) AgentStartDecision) AgentStartDecision
	TransformContext       func(ctx context.Context, msgs []message.Message, next func(context.Context, []message.Message) []message.Message) []message.Message
	AfterTool              func(ctx context.Context, call ToolCallInfo, res tools.Result, next func(context.Context, ToolCallInfo, tools.Result) tools.Result) tools.Result
	// InterceptsAssistantMessage may say an answer can be rewritten
	// before the host knows (zot lsp: its host is still being created).
	InterceptsAssistantMessage func(next func() bool) bool
}

// HookChain is the one way the host's hooks reach the runtime: the base
// (the extension host, looked up at each call, since a front may start or
// replace it later; nil or a nil result means no extensions) under the
// front's layers, the first layer outermost. It implements every hook,
// Hooks and RunHooks: the runtime finds the optional ones by type
// assertion, so a wrapper that implemented only Hooks would switch them
// off without a word. A base without RunHooks gets their zero verdicts.
type HookChain struct {
	base   func() Hooks
	layers []HookLayer
}

var (
	_ Hooks             = (*HookChain)(nil)
	_ RunHooks          = (*HookChain)(nil)
	_ AnswerInterceptor = (*HookChain)(nil)
)

// ChainHooks builds the chain over base with the front's layers.
func ChainHooks(base func() Hooks, layers ...HookLayer) *HookChain {
	return &HookChain{base: base, layers: layers}
}

// StaticHooks is a base that never changes (zot rpc and zot -p: the host
// is built before the runtime); nil means no extensions.
func StaticHooks(h Hooks) func() Hooks {
	return func() Hooks { return h }
}

func (c *HookChain) host() Hooks {
	if c.base == nil {
		return nil
	}
	return c.base()
}

func (c *HookChain) runHost() RunHooks {
	rh, _ := c.host().(RunHooks)
	return rh
}

// Intercepts reports whether the host's extensions intercept event (the
// layers are the front's own code); a host that cannot tell is taken to.
func (c *HookChain) Intercepts(event string) bool {
	h := c.host()
	if h == nil {
		return false
	}
	if ic, ok := h.(interface{ Intercepts(string) bool }); ok {
		return ic.Intercepts(event)
	}
	return true
}

// each hook below walks the layers from i (0 = outermost), then the host.

func (c *HookChain) BeforeTool(ctx context.Context, call ToolCallInfo) ToolDecision {
	return c.beforeTool(0)(ctx, call)
}

func (c *HookChain) beforeTool(i int) func(context.Context, ToolCallInfo) ToolDecision {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].BeforeTool; f != nil {
			next := c.beforeTool(i + 1)
			return func(ctx context.Context, call ToolCallInfo) ToolDecision { return f(ctx, call, next) }
		}
	}
	return func(ctx context.Context, call ToolCallInfo) ToolDecision {
		if h := c.host(); h != nil {
			return h.BeforeTool(ctx, call)
		}
		return ToolDecision{}
	}
}

func (c *HookChain) BeforeTurn(ctx context.Context, step int) TurnDecision {
	return c.beforeTurn(0)(ctx, step)
}

func (c *HookChain) beforeTurn(i int) func(context.Context, int) TurnDecision {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].BeforeTurn; f != nil {
			next := c.beforeTurn(i + 1)
			return func(ctx context.Context, step int) TurnDecision { return f(ctx, step, next) }
		}
	}
	return func(ctx context.Context, step int) TurnDecision {
		if h := c.host(); h != nil {
			return h.BeforeTurn(ctx, step)
		}
		return TurnDecision{}
	}
}

func (c *HookChain) BeforeAssistantMessage(ctx context.Context, text string) AssistantDecision {
	return c.beforeAssistantMessage(0)(ctx, text)
}

func (c *HookChain) beforeAssistantMessage(i int) func(context.Context, string) AssistantDecision {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].BeforeAssistantMessage; f != nil {
			next := c.beforeAssistantMessage(i + 1)
			return func(ctx context.Context, text string) AssistantDecision { return f(ctx, text, next) }
		}
	}
	return func(ctx context.Context, text string) AssistantDecision {
		if h := c.host(); h != nil {
			return h.BeforeAssistantMessage(ctx, text)
		}
		return AssistantDecision{}
	}
}

func (c *HookChain) Observe(ev Lifecycle) { c.observe(0)(ev) }

func (c *HookChain) observe(i int) func(Lifecycle) {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].Observe; f != nil {
			next := c.observe(i + 1)
			return func(ev Lifecycle) { f(ev, next) }
		}
	}
	return func(ev Lifecycle) {
		if h := c.host(); h != nil {
			h.Observe(ev)
		}
	}
}

func (c *HookChain) TransformInput(ctx context.Context, text string) InputDecision {
	return c.transformInput(0)(ctx, text)
}

func (c *HookChain) transformInput(i int) func(context.Context, string) InputDecision {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].TransformInput; f != nil {
			next := c.transformInput(i + 1)
			return func(ctx context.Context, text string) InputDecision { return f(ctx, text, next) }
		}
	}
	return func(ctx context.Context, text string) InputDecision {
		if h := c.runHost(); h != nil {
			return h.TransformInput(ctx, text)
		}
		return InputDecision{}
	}
}

func (c *HookChain) BeforeAgentStart(ctx context.Context, prompt, system string) AgentStartDecision {
	return c.beforeAgentStart(0)(ctx, prompt, system)
}

func (c *HookChain) beforeAgentStart(i int) func(context.Context, string, string) AgentStartDecision {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].BeforeAgentStart; f != nil {
			next := c.beforeAgentStart(i + 1)
			return func(ctx context.Context, prompt, system string) AgentStartDecision {
				return f(ctx, prompt, system, next)
			}
		}
	}
	return func(ctx context.Context, prompt, system string) AgentStartDecision {
		if h := c.runHost(); h != nil {
			return h.BeforeAgentStart(ctx, prompt, system)
		}
		return AgentStartDecision{}
	}
}

func (c *HookChain) TransformContext(ctx context.Context, msgs []message.Message) []message.Message {
	return c.transformContext(0)(ctx, msgs)
}

func (c *HookChain) transformContext(i int) func(context.Context, []message.Message) []message.Message {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].TransformContext; f != nil {
			next := c.transformContext(i + 1)
			return func(ctx context.Context, msgs []message.Message) []message.Message { return f(ctx, msgs, next) }
		}
	}
	return func(ctx context.Context, msgs []message.Message) []message.Message {
		if h := c.runHost(); h != nil {
			return h.TransformContext(ctx, msgs)
		}
		return nil
	}
}

func (c *HookChain) AfterTool(ctx context.Context, call ToolCallInfo, res tools.Result) tools.Result {
	return c.afterTool(0)(ctx, call, res)
}

func (c *HookChain) afterTool(i int) func(context.Context, ToolCallInfo, tools.Result) tools.Result {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].AfterTool; f != nil {
			next := c.afterTool(i + 1)
			return func(ctx context.Context, call ToolCallInfo, res tools.Result) tools.Result {
				return f(ctx, call, res, next)
			}
		}
	}
	return func(ctx context.Context, call ToolCallInfo, res tools.Result) tools.Result {
		if h := c.runHost(); h != nil {
			return h.AfterTool(ctx, call, res)
		}
		return res
	}
}

// InterceptsAssistantMessage: whether an answer may be rewritten, so the
// runtime holds its deltas (AnswerInterceptor); a host that cannot say is
// taken to intercept nothing.
func (c *HookChain) InterceptsAssistantMessage() bool { return c.interceptsAnswer(0)() }

func (c *HookChain) interceptsAnswer(i int) func() bool {
	for ; i < len(c.layers); i++ {
		if f := c.layers[i].InterceptsAssistantMessage; f != nil {
			next := c.interceptsAnswer(i + 1)
			return func() bool { return f(next) }
		}
	}
	return func() bool {
		ai, ok := c.host().(AnswerInterceptor)
		return ok && ai.InterceptsAssistantMessage()
	}
}

var _ TreeHooks = (*HookChain)(nil)

// BeforeFork and BeforeTree reach the host as they are: no front's layer
// changes them.
func (c *HookChain) BeforeFork(ctx context.Context, p ForkPreparation) TreeDecision {
	if th, ok := c.host().(TreeHooks); ok {
		return th.BeforeFork(ctx, p)
	}
	return TreeDecision{}
}

func (c *HookChain) BeforeTree(ctx context.Context, p TreePreparation) TreeDecision {
	if th, ok := c.host().(TreeHooks); ok {
		return th.BeforeTree(ctx, p)
	}
	return TreeDecision{}
}

var _ UserBashHooks = (*HookChain)(nil)

// BeforeUserBash reaches the host as it is: the user typed the command,
// so no front's approval layer asks about it; the extensions' guards do.
func (c *HookChain) BeforeUserBash(ctx context.Context, b UserBashInfo) UserBashDecision {
	if uh, ok := c.host().(UserBashHooks); ok {
		return uh.BeforeUserBash(ctx, b)
	}
	return UserBashDecision{}
}
