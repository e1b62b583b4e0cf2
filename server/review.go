package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/internal/ospath"
	"github.com/zot-editors/zot/internal/textdiff"
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

func (s *Server) permissionMode() PermissionMode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// sessionChanged forgets what was "always allowed for this session": a new
// or resumed session is not the one the user allowed it in; nor has its
// model read the files this one read.
func (s *Server) sessionChanged() {
	s.mu.Lock()
	s.allowBash, s.allowTools = false, nil
	s.mu.Unlock()
	s.ws.forgetReads()
}

// setMode switches the permission mode; leaving ask forgets "always allow".
func (s *Server) setMode(m PermissionMode) {
	s.mu.Lock()
	if m != s.mode {
		s.allowBash, s.allowTools = false, nil
		s.allowMCP = map[string]bool{}
	}
	s.mode = m
	s.mu.Unlock()
}

// BashApprovalPrefix starts a bash approval's message; the command follows
// in full.
const BashApprovalPrefix = "zot wants to run a command:\n\n"

// Bash approval choices (window/showMessageRequest actions), asked Deny
// first: the default of a security question keeps the user safe.
const (
	AllowOnce    = "Allow once"
	AllowSession = "Always allow for this session"
	Deny         = "Deny"
)

// Edit review choices of the showMessageRequest fallback.
const (
	ReviewApply  = "Apply"
	ReviewReject = "Reject"
)

// writingTools are refused in readonly mode.
var writingTools = map[string]bool{"write": true, "edit": true, "bash": true}

// ToolApprovalPrefix starts the approval of a tool call other than bash
// under --no-yolo; the tool's name and whole arguments follow.
const ToolApprovalPrefix = "zot wants to run a tool:\n\n"

// permit applies the permission mode to a tool call: readonly refuses the
// writing tools; ask asks the user before bash. write and edit are
// reviewed later, in the workspace, where the new text is known. With
// --no-yolo (Options.AskEveryTool) every other call is asked about too.
func (s *Server) permit(ctx context.Context, call agent.ToolCallInfo) agent.ToolDecision {
	s.mu.Lock()
	mode, allowBash, allowTool := s.mode, s.allowBash, s.allowTools[call.Name]
	every := s.opts.AskEveryTool
	s.mu.Unlock()
	if d, asked := s.permitMCP(ctx, call, mode); asked || d.Block {
		return d
	}
	if mode == ModeReadonly && writingTools[call.Name] {
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("zot is in readonly mode: %s is not allowed. Tell the user what you would do instead.", call.Name)}
	}
	switch {
	case call.Name == "bash" && (mode == ModeAsk || every):
		if allowBash {
			return agent.ToolDecision{}
		}
		var a struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(call.Args, &a)
		// The whole command, never a prefix: padding must not hide a
		// payload from the user who approves it. Fronts whose dialogs
		// cannot hold it show it in a document first (docs/protocol.md).
		choice := s.ask(ctx, protocol.MessageTypeWarning, BashApprovalPrefix+a.Command, Deny, AllowOnce, AllowSession)
		return s.approvalDecision(ctx, choice, "running this command", func() { s.allowBash = true })
	case every && !allowTool && !(mode == ModeAsk && (call.Name == "write" || call.Name == "edit")):
		// (In ask mode write and edit are reviewed with their diff.)
		args := string(call.Args)
		if args == "" {
			args = "{}"
		}
		choice := s.ask(ctx, protocol.MessageTypeWarning, ToolApprovalPrefix+call.Name+" "+args, Deny, AllowOnce, AllowSession)
		return s.approvalDecision(ctx, choice, "this "+call.Name+" call", func() {
			if s.allowTools == nil {
				s.allowTools = map[string]bool{}
			}
			s.allowTools[call.Name] = true
		})
	}
	return agent.ToolDecision{}
}

// approvalDecision turns the user's choice in an approval dialog into the
// tool decision; always (under s.mu) remembers "Always allow".
func (s *Server) approvalDecision(ctx context.Context, choice, what string, always func()) agent.ToolDecision {
	switch choice {
	case AllowOnce:
		return agent.ToolDecision{}
	case AllowSession:
		s.mu.Lock()
		always()
		s.mu.Unlock()
		return agent.ToolDecision{}
	case "":
		if ctx.Err() != nil {
			return agent.ToolDecision{Block: true, Reason: "the run was aborted while waiting for the user's approval; the call did not run."}
		}
		return agent.ToolDecision{Block: true, Reason: "the user dismissed the approval prompt (no decision, treated as \"Deny\"); the call did not run. Ask the user how to proceed."}
	default:
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user denied %s (chose %q); it did not run. Ask the user how to proceed.", what, choice)}
	}
}

// reviewChange asks the user about an edit in ask mode and returns the
// text they accepted (their own version if they changed it).
func (s *Server) reviewChange(ctx context.Context, path, oldText, newText string) (string, error) {
	if s.permissionMode() != ModeAsk {
		return newText, nil
	}
	s.mu.Lock()
	useReview := s.caps.zot.ReviewEdit
	s.mu.Unlock()
	shown := s.ws.display(path)
	id, tool := s.ws.callOf(ctx)
	if useReview {
		res, err := requestReviewEdit.call(ctx, s, &ReviewEditParams{URI: ospath.ToURI(path), OldText: oldText, NewText: newText, ToolCallID: id, Tool: tool})
		if err == nil {
			switch strings.ToLower(res.Decision) {
			case "accept":
				if res.Text != nil {
					return *res.Text, nil
				}
				return newText, nil
			case "reject":
				msg := fmt.Sprintf("the user rejected this change to %s in review (decision: reject); no change was made", shown)
				if res.Message != "" {
					msg += ". The user said: " + res.Message
				}
				return "", fmt.Errorf("%s", msg)
			default:
				return "", fmt.Errorf("the review of the change to %s gave no valid decision (%q); no change was made", shown, res.Decision)
			}
		}
		if ctx.Err() != nil {
			return "", fmt.Errorf("the run was aborted during the review of %s; no change was made", shown)
		}
		s.logf("%s failed (%v); asking with showMessageRequest", MethodReviewEdit, err)
	}
	added, removed := lineDelta(oldText, newText)
	msg := fmt.Sprintf("zot wants to change %s (+%d −%d lines). Apply the change?", shown, added, removed)
	if oldText == "" {
		msg = fmt.Sprintf("zot wants to create %s (%d lines). Create it?", shown, added)
	}
	// A plain client that can open documents sees the whole change first:
	// the user approves what they can read, not a line count.
	if diff := s.showProposal(ctx, path, oldText, newText); diff != "" {
		msg += " (The whole change is open: " + diff + ")"
	}
	switch choice := s.ask(ctx, protocol.MessageTypeInfo, msg, ReviewApply, ReviewReject); choice {
	case ReviewApply:
		return newText, nil
	case "":
		if ctx.Err() != nil {
			return "", fmt.Errorf("the run was aborted during the review of %s; no change was made", shown)
		}
		return "", fmt.Errorf("the user dismissed the review of the change to %s (treated as reject); no change was made", shown)
	default:
		return "", fmt.Errorf("the user rejected this change to %s (chose %q); no change was made", shown, choice)
	}
}

// lineDelta counts added and removed lines between two texts.
func lineDelta(a, b string) (added, removed int) {
	for _, h := range textdiff.LineHunks(a, b) {
		old := a[h.Start:h.End]
		removed += countLines(old)
		added += countLines(h.Text)
	}
	return
}

func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n")
	if !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// hookChain is the agent.Hooks the runtime sees: the extension host (the
// current one: it starts after initialized and is replaced on restart)
// under zot lsp's layer, which orders the editor's view (tool_call is on
// the wire before any dialog about it), lets the host's guards see the
// call, then applies the permission mode; and saves the agent's edits
// before tool_result hooks read the disk. Every other hook reaches the
// host through the chain.
func (s *Server) hookChain() agent.Hooks {
	return agent.ChainHooks(func() agent.Hooks {
		if h := s.currentHost(); h != nil {
			return h
		}
		return nil // not a typed nil: no host yet
	}, agent.HookLayer{BeforeTool: s.beforeTool, AfterTool: s.afterTool,
		BeforeAssistantMessage: s.beforeAssistantMessage, InterceptsAssistantMessage: s.interceptsAnswer})
}

func (s *Server) beforeTool(ctx context.Context, call agent.ToolCallInfo, next func(context.Context, agent.ToolCallInfo) agent.ToolDecision) agent.ToolDecision {
	if call.Requester == "" {
		// (An extension's exec has no tool card of the turn to wait for,
		// and is not the model's running call.)
		s.runs.waitForwarded(ctx, call.ID, 5*time.Second)
		s.ws.beginCall(call.ID, call.Name)
	}
	// waitHost: the host's interceptors (guards) see every call, even
	// one made while the host is being created.
	s.waitHost(ctx)
	d := next(ctx, call)
	if d.Block {
		return d
	}
	if len(d.ModifiedArgs) > 0 {
		call.Args = d.ModifiedArgs
	}
	if p := s.permit(ctx, call); p.Block {
		return p
	}
	return agent.ToolDecision{ModifiedArgs: d.ModifiedArgs}
}

// interceptsAnswer: an answer is held while the host is being created
// (its extensions may rewrite it), else as the host says.
func (s *Server) interceptsAnswer(next func() bool) bool {
	return s.hostStarting() || next()
}

// beforeAssistantMessage: an answer held while the host was being created
// (interceptsAnswer) is judged by its extensions.
func (s *Server) beforeAssistantMessage(ctx context.Context, text string, next func(context.Context, string) agent.AssistantDecision) agent.AssistantDecision {
	s.waitHost(ctx)
	return next(ctx, text)
}

func (p *SetPermissionModeParams) validate(method string) error {
	if _, ok := parseMode(p.Mode); !ok {
		return fieldError(method, "mode", "must be auto, ask or readonly, not %q", p.Mode)
	}
	return nil
}

func (s *Server) zotSetPermissionMode(ctx context.Context, p *SetPermissionModeParams) (SetPermissionModeResult, error) {
	m, _ := parseMode(p.Mode)
	s.setMode(m)
	return SetPermissionModeResult{Mode: m}, nil
}
