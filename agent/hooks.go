package agent

import (
	"context"
	"encoding/json"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

// Hooks lets the extension host observe and steer a run. Every method is
// called from the run's goroutine; a nil Hooks means no extensions.
type Hooks interface {
	// BeforeTool runs before a tool executes: block it (the model sees
	// Reason as the tool's error) or rewrite its args.
	BeforeTool(ctx context.Context, call ToolCallInfo) ToolDecision
	// BeforeTurn runs before each model call: block the turn (Reason is
	// shown to the user as an error event).
	BeforeTurn(ctx context.Context, step int) TurnDecision
	// BeforeAssistantMessage runs on the assembled assistant text of a
	// model call: suppress it or replace the user-visible text. The
	// transcript keeps the original.
	BeforeAssistantMessage(ctx context.Context, text string) AssistantDecision
	// Observe receives lifecycle notifications in order: session_start,
	// turn_start, tool_call, turn_end, assistant_message. It must not block.
	Observe(ev Lifecycle)
}

// AnswerInterceptor is implemented by hooks that can say, before a model
// call, whether BeforeAssistantMessage may rewrite or suppress its answer:
// an extension intercepts assistant_message, or one still starting may.
// The runtime then holds the answer's streamed events until the decision,
// so neither the original text nor a prefix of it reaches a front; hooks
// without it, or answering false, cost nothing (the deltas stream).
type AnswerInterceptor interface {
	InterceptsAssistantMessage() bool
}

// ToolCallInfo names a tool call for the hooks.
type ToolCallInfo struct {
	ID   string
	Name string
	Args json.RawMessage
	// Extension names the extension providing the tool ("" for zot's
	// own, or one not known yet): seed 000's tool result attribution.
	Extension string
	// Requester names the extension whose exec/run this bash call is
	// (Runtime.Exec); "" for the model's calls. Such a call is not part
	// of the model's turn: no tool card waits for it.
	Requester string
}

// ToolDecision is a BeforeTool verdict. The zero value allows unchanged.
type ToolDecision struct {
	Block        bool
	Reason       string
	ModifiedArgs json.RawMessage
}

// TurnDecision is a BeforeTurn verdict. The zero value allows.
type TurnDecision struct {
	Block  bool
	Reason string
}

// AssistantDecision is a BeforeAssistantMessage verdict. The zero value
// passes the text through.
type AssistantDecision struct {
	Block       bool
	Reason      string
	ReplaceText *string
}

// Lifecycle is a one-way notification for extensions, named as in zot's
// extension protocol: session_start, turn_start, turn_end, tool_call,
// assistant_message; and our additions agent_start, agent_end,
// session_shutdown, model_select, compact_start, compact_end.
type Lifecycle struct {
	Event    string
	Step     int             // turn_start
	Stop     string          // turn_end, agent_end
	ToolID   string          // tool_call
	ToolName string          // tool_call
	ToolArgs json.RawMessage // tool_call
	// ToolExtension is the extension providing the tool (tool_call; ""
	// for zot's own).
	ToolExtension string
	Text          string         // assistant_message
	Reason        string         // session_start: startup | new | resume
	Usage         *message.Usage // agent_end: this run's usage
	// model_select
	Provider, Model, PreviousModel string
	// session_fork, session_tree
	Tree *TreeChange
}

// TreeChange is what session_fork and session_tree report: the session
// before and now, and where in the tree the conversation is.
type TreeChange struct {
	// EntryID and MessageIndex: the prompt a fork was made from.
	EntryID      string
	MessageIndex int
	// The session now and before (the same for a navigation that stayed
	// in its session).
	SessionID, SessionFile                 string
	PreviousSessionID, PreviousSessionFile string
	// NewLeafID and OldLeafID (session_tree): the last entry of the
	// conversation after and before; "" for an empty one (pi's null).
	NewLeafID, OldLeafID string
}

// TreeHooks are pi's cancellable session-tree hooks
// (session_before_fork, session_before_tree). Optional, as RunHooks.
type TreeHooks interface {
	BeforeFork(ctx context.Context, p ForkPreparation) TreeDecision
	BeforeTree(ctx context.Context, p TreePreparation) TreeDecision
}

// ForkPreparation is what session_before_fork tells the extensions.
type ForkPreparation struct {
	EntryID      string // the prompt forked from
	SessionID    string
	MessageIndex int
	WithFiles    bool
}

// TreePreparation is what session_before_tree tells the extensions (pi's
// TreePreparation). Empty ids are pi's null.
type TreePreparation struct {
	TargetID         string
	OldLeafID        string
	CommonAncestorID string
	// EntriesToSummarize are the old branch's entries past the common
	// ancestor, oldest first.
	EntriesToSummarize  []string
	CustomInstructions  string
	ReplaceInstructions bool
	Label               string
}

// TreeDecision is a BeforeFork / BeforeTree verdict. The zero value
// allows.
type TreeDecision struct {
	Cancel    bool
	Extension string // who cancelled
	Reason    string
}

// RunHooks are the hooks added to protocol v1 (pi's before_agent_start,
// context, tool_result and input). A Hooks value may implement them; the
// runtime asks with a type assertion, so older hosts need nothing new.
type RunHooks interface {
	// TransformInput sees the user's prompt text before a run starts.
	TransformInput(ctx context.Context, text string) InputDecision
	// BeforeAgentStart may add text to the prompt's user message and
	// append to the system prompt for this run.
	BeforeAgentStart(ctx context.Context, prompt, system string) AgentStartDecision
	// TransformContext may rewrite the messages sent to the model for one
	// call; nil keeps them. The transcript is not changed.
	TransformContext(ctx context.Context, msgs []message.Message) []message.Message
	// AfterTool may replace a tool's result before the model sees it.
	AfterTool(ctx context.Context, call ToolCallInfo, res tools.Result) tools.Result
}

// InputDecision is a TransformInput verdict. The zero value keeps the text.
type InputDecision struct {
	Text    *string // the new prompt text
	Handled bool    // no run: Display is shown instead
	Display string
}

// AgentStartDecision is a BeforeAgentStart verdict.
type AgentStartDecision struct {
	Messages     []string // added to the prompt's user message, in order
	AppendSystem string   // appended to the system prompt for this run
}

// UserBashHooks is the user_bash hook (pi's and SEP's): it sees a shell
// command the user typed (`!cmd`, `!!cmd`, zot rpc's bash) before it
// runs. Optional, as RunHooks; the host fails it closed (a guard that
// does not answer blocks the command, as for tool_call).
type UserBashHooks interface {
	BeforeUserBash(ctx context.Context, b UserBashInfo) UserBashDecision
}

// UserBashInfo is what user_bash tells the extensions (pi's
// UserBashEvent).
type UserBashInfo struct {
	Command string
	CWD     string
	// ExcludeFromContext: `!!`, the output stays out of the conversation.
	ExcludeFromContext bool
}

// UserBashDecision is a BeforeUserBash verdict. The zero value runs the
// command. Block refuses it (Reason is shown); Result is an extension's
// own run of it (pi's full replacement), shown and kept as if zot had run
// it.
type UserBashDecision struct {
	Block     bool
	Reason    string
	Result    *tools.UserRunResult
	Extension string // who blocked or answered
}
