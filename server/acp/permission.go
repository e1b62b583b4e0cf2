package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
)

// PermissionMode and its modes are the agent's (one definition for every
// front).
type PermissionMode = agent.PermissionMode

const (
	ModeAuto     = agent.ModeAuto
	ModeAsk      = agent.ModeAsk
	ModeReadonly = agent.ModeReadonly
)

var parseMode = agent.ParsePermissionMode

func (ss *session) permissionMode() PermissionMode {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.mode
}

// setMode switches the permission mode and tells the client; leaving a
// mode forgets its "always allow" answers.
func (ss *session) setMode(m PermissionMode) {
	ss.mu.Lock()
	if m != ss.mode {
		ss.allowBash, ss.allowEdits, ss.allowTools = false, false, nil
	}
	ss.mode = m
	ss.mu.Unlock()
	ss.update(sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(m)}})
	ss.configChanged()
}

// Permission option ids (session/request_permission).
const (
	optAllowOnce   = "allow_once"
	optAllowAlways = "allow_always"
	optRejectOnce  = "reject_once"
)

// decision is the user's answer to a permission request.
type decision int

const (
	allowed decision = iota
	allowedAlways
	rejected
	cancelled // the run was cancelled, or the client failed to answer
)

// askPermission is the one place zot asks the ACP user: the tool call
// (with its diff or command) and allow once / allow always / reject once.
// always is the label of the "allow always" option, "" to leave it out.
func (ss *session) askPermission(ctx context.Context, call sdk.ToolCallUpdate, always string) (decision, string) {
	// Reject first: a client that takes the first option as the
	// default, or a user who presses Enter, refuses.
	opts := []sdk.PermissionOption{
		{OptionId: optRejectOnce, Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
		{OptionId: optAllowOnce, Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
	}
	if always != "" {
		opts = append(opts, sdk.PermissionOption{OptionId: optAllowAlways, Name: always, Kind: sdk.PermissionOptionKindAllowAlways})
	}
	res, err := ss.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id), ToolCall: call, Options: opts})
	if err != nil {
		if ctx.Err() == nil {
			ss.srv.logf("session/request_permission: %v", err)
			return cancelled, "the editor failed to answer the permission request (" + err.Error() + ")"
		}
		return cancelled, ""
	}
	if res.Outcome.Selected == nil {
		return cancelled, ""
	}
	switch string(res.Outcome.Selected.OptionId) {
	case optAllowOnce:
		return allowed, "Allow once"
	case optAllowAlways:
		if always != "" {
			return allowedAlways, always
		}
	case optRejectOnce:
		return rejected, "Reject"
	}
	return rejected, string(res.Outcome.Selected.OptionId)
}

// writingTools are refused in readonly mode.
var writingTools = map[string]bool{"write": true, "edit": true, "bash": true}

// permit applies the mode to a tool call: readonly refuses the writing
// tools; ask shows bash's whole command and waits for the user. With
// --no-yolo (Options.AskEveryTool) every other call is asked about too,
// in every mode (in ask mode write and edit are asked with their diff).
func (ss *session) permit(ctx context.Context, call agent.ToolCallInfo) agent.ToolDecision {
	ss.mu.Lock()
	mode, allow, allowTool := ss.mode, ss.allowBash, ss.allowTools[call.Name]
	ss.mu.Unlock()
	every := ss.srv.opts.AskEveryTool
	if d, asked := ss.permitMCP(ctx, call, mode); asked || d.Block {
		return d
	}
	if mode == ModeReadonly && writingTools[call.Name] {
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("zot is in readonly mode: %s is not allowed. Tell the user what you would do instead.", call.Name)}
	}
	switch {
	case call.Name == "bash" && (mode == ModeAsk || every):
		if allow {
			return agent.ToolDecision{}
		}
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(call.Args, &a)
		tc := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(call.ID), Title: sdk.Ptr(bashTitle(a.Command)), Kind: sdk.Ptr(sdk.ToolKindExecute),
			Status: sdk.Ptr(sdk.ToolCallStatusPending), RawInput: rawArgs(call.Args),
			// The whole command, never a prefix: the user sees what runs.
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("```sh\n" + a.Command + "\n```"))}}
		switch d, choice := ss.askPermission(ctx, tc, "Always allow commands in this session"); d {
		case allowed:
		case allowedAlways:
			ss.mu.Lock()
			ss.allowBash = true
			ss.mu.Unlock()
		case rejected:
			return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user rejected running this command (chose %q); it did not run.", choice)}
		default:
			if choice != "" {
				return agent.ToolDecision{Block: true, Reason: choice + "; the command did not run."}
			}
			return agent.ToolDecision{Block: true, Reason: "the run was cancelled while waiting for the user's approval; the command did not run."}
		}
	case every && !allowTool && !(mode == ModeAsk && (call.Name == "write" || call.Name == "edit")):
		args := string(call.Args)
		if args == "" {
			args = "{}"
		}
		tc := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(call.ID), Title: sdk.Ptr(call.Name), Status: sdk.Ptr(sdk.ToolCallStatusPending),
			RawInput: rawArgs(call.Args),
			// The whole call: the tool and every argument.
			Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock("`" + call.Name + "` " + args))}}
		switch d, choice := ss.askPermission(ctx, tc, "Always allow "+call.Name+" in this session"); d {
		case allowed:
		case allowedAlways:
			ss.mu.Lock()
			if ss.allowTools == nil {
				ss.allowTools = map[string]bool{}
			}
			ss.allowTools[call.Name] = true
			ss.mu.Unlock()
		case rejected:
			return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user rejected this %s call (chose %q); it did not run.", call.Name, choice)}
		default:
			if choice != "" {
				return agent.ToolDecision{Block: true, Reason: choice + "; the call did not run."}
			}
			return agent.ToolDecision{Block: true, Reason: "the run was cancelled while waiting for the user's approval; the call did not run."}
		}
	}
	return agent.ToolDecision{}
}

// reviewEdit asks about an edit in ask mode, the diff inside the tool
// call; nil means go ahead.
func (ss *session) reviewEdit(ctx context.Context, path, shown, oldText, newText string, existed bool) error {
	ss.mu.Lock()
	mode, allow := ss.mode, ss.allowEdits
	id := ss.current
	ss.mu.Unlock()
	if mode == ModeReadonly {
		return fmt.Errorf("zot is in readonly mode: %s was not changed. Tell the user what you would change instead", shown)
	}
	if mode != ModeAsk || allow {
		return nil
	}
	tc := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Kind: sdk.Ptr(sdk.ToolKindEdit), Status: sdk.Ptr(sdk.ToolCallStatusPending),
		Locations: []sdk.ToolCallLocation{{Path: path}},
		Content:   []sdk.ToolCallContent{sdk.ToolDiffContent(path, newText, oldText)}}
	if !existed {
		tc.Content = []sdk.ToolCallContent{sdk.ToolDiffContent(path, newText)} // a new file: no oldText
	}
	if c := ss.call(id); c != nil {
		tc.Title = sdk.Ptr(c.title)
		tc.RawInput = c.rawInput
	}
	switch d, choice := ss.askPermission(ctx, tc, "Always allow edits in this session"); d {
	case allowed:
		return nil
	case allowedAlways:
		ss.mu.Lock()
		ss.allowEdits = true
		ss.mu.Unlock()
		return nil
	case rejected:
		return fmt.Errorf("the user rejected this change to %s (chose %q); no change was made", shown, choice)
	default:
		if choice != "" {
			return fmt.Errorf("%s; no change was made to %s", choice, shown)
		}
		return fmt.Errorf("the run was cancelled during the review of %s; no change was made", shown)
	}
}

// askWrite asks, in every mode, before a write outside the workspace or
// into a protected directory: the question names the path, every reason
// and the whole change.
func (ss *session) askWrite(ctx context.Context, path, question string) bool {
	ss.mu.Lock()
	id := ss.current
	ss.mu.Unlock()
	title := "Write " + path
	if c := ss.call(id); c != nil {
		title = c.title
	}
	tc := sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Kind: sdk.Ptr(sdk.ToolKindEdit), Status: sdk.Ptr(sdk.ToolCallStatusPending),
		Title:     sdk.Ptr(title),
		Locations: []sdk.ToolCallLocation{{Path: path}},
		Content:   []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(question))}}
	d, _ := ss.askPermission(ctx, tc, "")
	return d == allowed || d == allowedAlways
}

// hookChain is the agent.Hooks the runtime sees: the session's extension
// host under zot acp's layer, which orders the client's view (the
// tool_call is out before any permission request about it), lets the
// host's guards see the call, then applies the permission mode. Every
// other hook reaches the host through the chain.
func (ss *session) hookChain() agent.Hooks {
	return agent.ChainHooks(func() agent.Hooks {
		if h := ss.currentHost(); h != nil {
			return h
		}
		return nil // not a typed nil: no host
	}, agent.HookLayer{BeforeTool: ss.beforeTool})
}

func (ss *session) beforeTool(ctx context.Context, call agent.ToolCallInfo, next func(context.Context, agent.ToolCallInfo) agent.ToolDecision) agent.ToolDecision {
	ss.waitForwarded(ctx, call.ID, 5*time.Second)
	ss.mu.Lock()
	ss.current = call.ID
	ss.mu.Unlock()
	// A question the extension asks meanwhile is about this call.
	d := next(withOrigin(ctx, ss, call.ID), call)
	if d.Block {
		return d
	}
	if len(d.ModifiedArgs) > 0 {
		call.Args = d.ModifiedArgs
	}
	if p := ss.permit(ctx, call); p.Block {
		return p
	}
	ss.update(sdk.UpdateToolCall(sdk.ToolCallId(call.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)))
	return agent.ToolDecision{ModifiedArgs: d.ModifiedArgs}
}

// markForwarded records that a tool call's tool_call update went out.
func (ss *session) markForwarded(id string) {
	ss.mu.Lock()
	ch, ok := ss.forwarded[id]
	if !ok {
		ch = make(chan struct{})
		ss.forwarded[id] = ch
	}
	ss.mu.Unlock()
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// waitForwarded waits (at most max) until the tool_call for id is out.
func (ss *session) waitForwarded(ctx context.Context, id string, max time.Duration) {
	ss.mu.Lock()
	ch, ok := ss.forwarded[id]
	if !ok {
		ch = make(chan struct{})
		ss.forwarded[id] = ch
	}
	ss.mu.Unlock()
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-ch:
	case <-ctx.Done():
	case <-t.C:
	}
}
