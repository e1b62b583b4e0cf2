package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
)

// Retry and edit-and-resend rewind the transcript to just before a user
// prompt and send a prompt from there. The session file keeps what came
// after as the old branch (an x-rewind line records the cut; docs/protocol.md,
// "Retry and edit").

// isPrompt reports a user message the user (or an extension) wrote: not
// tool results, not a compaction summary.
func isPrompt(m message.Message) bool {
	if m.Role != message.RoleUser || m.Summary {
		return false
	}
	for _, c := range m.Content {
		if c.Type == message.TypeToolResult {
			return false
		}
	}
	return len(m.Content) > 0
}

// idle refuses retry and resend while a run is going or queued: the index
// the client names would move under it.
func (s *Server) idle(method string) error {
	if cur, queued := s.runs.status(); cur != "" || queued > 0 {
		return rpcError(CodeRequestFailed, "%s: a run is in progress; stop it first (zot/abort with clearQueue)", method)
	}
	return nil
}

// splitPrompt takes a stored prompt message apart again: the user's text
// (its first text block), its images and its context blocks. Other text
// blocks (added by extensions before the run) are left out: the run adds
// them again.
func splitPrompt(m message.Message) (text string, imgs, attached []message.Content) {
	first := true
	for _, c := range m.Content {
		switch {
		case isContextBlock(c):
			attached = append(attached, c)
		case c.Type == message.TypeText && first:
			text, first = c.Text, false
		case c.Type == message.TypeImage:
			imgs = append(imgs, c)
		}
	}
	return text, imgs, attached
}

func (s *Server) zotRetry(ctx context.Context) (RunStarted, error) {
	if err := s.idle(MethodRetry); err != nil {
		return RunStarted{}, err
	}
	rt, err := s.runtime()
	if err != nil {
		return RunStarted{}, err
	}
	msgs := rt.Messages()
	at := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if isPrompt(msgs[i]) {
			at = i
			break
		}
	}
	if at < 0 {
		return RunStarted{}, rpcError(CodeRequestFailed, "%s: there is no prompt to retry in this conversation", MethodRetry)
	}
	text, imgs, attached := splitPrompt(msgs[at])
	r := &run{kind: "prompt", title: firstLine(text), start: func(ctx context.Context) (<-chan agent.Event, error) {
		return rt.PromptWith(ctx, agent.PromptInput{Text: text, Images: imgs, Attached: attached, Keep: at})
	}}
	return s.runs.enqueue(r), nil
}

func (p *ResendParams) validate(method string) error {
	if p.MessageIndex < 0 {
		return fieldError(method, "messageIndex", "must be the index of a user message (zot/messages, or user_message's messageIndex), not %d", p.MessageIndex)
	}
	return p.PromptParams.validate(method)
}

func (s *Server) zotResend(ctx context.Context, p *ResendParams) (RunStarted, error) {
	if err := s.idle(MethodResend); err != nil {
		return RunStarted{}, err
	}
	rt, err := s.runtime()
	if err != nil {
		return RunStarted{}, err
	}
	msgs := rt.Messages()
	if p.MessageIndex >= len(msgs) {
		return RunStarted{}, rpcError(CodeRequestFailed, "%s: messageIndex %d is past the conversation's %d messages (it changed: read zot/messages again)", MethodResend, p.MessageIndex, len(msgs))
	}
	if m := msgs[p.MessageIndex]; !isPrompt(m) {
		what := m.Role + " message"
		if m.Summary {
			what = "compaction summary"
		} else if m.Role == message.RoleUser {
			what = "tool results message"
		}
		return RunStarted{}, rpcError(CodeRequestFailed, "%s: message %d is a %s, not a prompt of the user (it changed: read zot/messages again)", MethodResend, p.MessageIndex, what)
	}
	r, err := s.promptRun(ctx, MethodResend, &p.PromptParams, p.MessageIndex)
	if err != nil {
		return RunStarted{}, err
	}
	return s.runs.enqueue(r), nil
}

// notApplied answers an apply that did not happen: a refusal or a rejected
// review is a result the user reads; a cancelled request is cancelled
// (RequestCancelled, as every cancelled request), not a rejection.
func (s *Server) notApplied(ctx context.Context, err error) (ApplyCodeResult, error) {
	if ctx.Err() != nil {
		return ApplyCodeResult{}, ctx.Err()
	}
	return ApplyCodeResult{Applied: false, Message: err.Error()}, nil
}

// applyTool names an apply in the review request (no tool call made it).
const applyTool = "apply"

func (p *ApplyCodeParams) validate(method string) error {
	if uriPath(p.URI) == "" {
		return fieldError(method, "uri", "must be a file: URI, not %q", p.URI)
	}
	if p.Range != nil && (p.Range.End.Line < p.Range.Start.Line || (p.Range.End.Line == p.Range.Start.Line && p.Range.End.Character < p.Range.Start.Character)) {
		return fieldError(method, "range", "ends before it starts")
	}
	return nil
}

// zotApplyCode puts a code block of an answer into a file through the
// model's edit path: the write rules, review in ask mode, refusal in
// readonly mode, the user's typing re-based, workspace/applyEdit.
func (s *Server) zotApplyCode(ctx context.Context, p *ApplyCodeParams) (ApplyCodeResult, error) {
	path := uriPath(p.URI)
	shown := s.ws.display(path)
	cur := s.ws.snapshot(path)
	existed := cur.exists || cur.open
	proposed := p.Text
	if p.Range != nil {
		if !existed {
			return ApplyCodeResult{}, rpcError(CodeRequestFailed, "%s: %s does not exist, so it has no range to replace", MethodApplyCode, shown)
		}
		s.mu.Lock()
		enc := s.enc
		s.mu.Unlock()
		li := newLineIndex(cur.text)
		from, to := li.offset(p.Range.Start, enc), li.offset(p.Range.End, enc)
		proposed = cur.text[:from] + p.Text + cur.text[to:]
	} else if existed && p.Text != "" && !strings.HasSuffix(p.Text, "\n") && strings.HasSuffix(cur.text, "\n") {
		proposed += "\n" // a code block loses the file's final newline
	}
	if proposed == cur.text {
		return ApplyCodeResult{Applied: true, Message: fmt.Sprintf("%s already has this text", shown)}, nil
	}
	// The review waits for the user: let the next messages (typing,
	// zot/abort) be handled meanwhile.
	release(ctx)
	if err := s.ws.CheckWrite(ctx, applyTool, path, func() string { return proposed }); err != nil {
		return s.notApplied(ctx, err)
	}
	ctx = withCall(ctx, "", applyTool)
	if err := s.ws.change(ctx, path, cur.text, proposed, existed); err != nil {
		return s.notApplied(ctx, err)
	}
	// Left unsaved in the editor, as the user's own edit would be.
	added, removed := lineDelta(cur.text, proposed)
	return ApplyCodeResult{Applied: true, Message: fmt.Sprintf("applied to %s (+%d −%d lines)", shown, added, removed)}, nil
}
