package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/skills"
)

// methodExecuteCommand is workspace/executeCommand.
const (
	methodExecuteCommand    = "workspace/executeCommand"
	methodCodeActionResolve = "codeAction/resolve"
)

// executeCommandParams is workspace/executeCommand's params.
type executeCommandParams struct {
	Command   string            `json:"command"`
	Arguments []json.RawMessage `json:"arguments"`
}

func (p *executeCommandParams) validate(method string) error {
	switch p.Command {
	case CommandCodeAction:
		if len(p.Arguments) != 1 {
			return fieldError(method, "arguments", "must hold one argument, the code action's (from textDocument/codeAction), not %d", len(p.Arguments))
		}
	case CommandAbort:
	case "":
		return fieldError(method, "command", "is required: %s or %s", CommandCodeAction, CommandAbort)
	default:
		return fieldError(method, "command", "must be %s or %s, not %q", CommandCodeAction, CommandAbort, p.Command)
	}
	return nil
}

// validate checks a code action's argument; field names it.
func (a *ActionArgs) validate(method, field string) error {
	switch a.Action {
	case actionFix:
		if a.Diagnostic == nil {
			return fieldError(method, field+".diagnostic", "is required for a fix")
		}
	case actionInstruction:
		if a.Instruction == nil || strings.TrimSpace(a.Instruction.Do) == "" {
			return fieldError(method, field+".instruction", "is required: the instruction line")
		}
	case actionProject:
		if strings.TrimSpace(a.Prompt) == "" {
			return fieldError(method, field+".prompt", "is required for a project action")
		}
	case actionSkill:
		if strings.TrimSpace(a.Skill) == "" {
			return fieldError(method, field+".skill", "is required for a skill action: the skill's name")
		}
	case actionExplain, actionTests, actionDocument, actionRefactor:
	default:
		return fieldError(method, field+".action", "must be fix, instruction, explain, tests, document, refactor, project or skill, not %q", a.Action)
	}
	if uriPath(a.URI) == "" {
		return fieldError(method, field+".uri", "must be a file: URI, not %q", a.URI)
	}
	if rangeBefore(a.Range.End, a.Range.Start) {
		return fieldError(method, field+".range", "ends before it starts")
	}
	return nil
}

// executeCommand runs a code action (a prompt, queued like zot/prompt's)
// or aborts the run. It answers at once; the run reports through progress,
// the edits through workspace/applyEdit and the answer through
// window/showMessage or a transcript (answer.go).
func (s *Server) executeCommand(ctx context.Context, p *executeCommandParams) (any, error) {
	if p.Command == CommandAbort {
		return s.runs.abort(false), nil
	}
	var a ActionArgs
	if err := decodeParams(methodExecuteCommand, p.Arguments[0], &a); err != nil {
		return nil, err
	}
	if err := a.validate(methodExecuteCommand, "arguments[0]"); err != nil {
		return nil, err
	}
	if a.Title == "" {
		a.Title = "zot: " + a.Action
	}
	text, pctx := s.actionPrompt(&a)
	if a.Action == actionSkill {
		rt, err := s.runtime()
		if err != nil {
			return nil, err
		}
		sk, ok := rt.Skill(a.Skill)
		if !ok {
			return nil, fieldError(methodExecuteCommand, "arguments[0].skill", "names no skill (%q); the skills changed since the list: ask for the code actions again", a.Skill)
		}
		text = skills.Prompt(sk, "") + cursorNote(a.Range.Start == a.Range.End)
	}
	r, err := s.promptRun(ctx, methodExecuteCommand, &PromptParams{Text: text, Context: pctx}, -1)
	if err != nil {
		return nil, err
	}
	r.title = strings.TrimPrefix(a.Title, "zot: ")
	start := r.start
	r.start = func(ctx context.Context) (<-chan agent.Event, error) {
		ch, err := start(ctx)
		if err != nil {
			s.showMessage(protocol.MessageTypeError, fmt.Sprintf("%s: %v", a.Title, err))
			return nil, err
		}
		out := make(chan agent.Event)
		go s.followAction(ctx, r.id, &a, text, ch, out)
		return out, nil
	}
	started := s.runs.enqueue(r)
	if started.Queued {
		// A plain client sees nothing of a run until it starts.
		s.showMessage(protocol.MessageTypeInfo, fmt.Sprintf("%s: queued behind %d run(s)", a.Title, started.Ahead))
	}
	return started, nil
}

// Prompts of the built-in actions; the editor context (file, selection or
// cursor) is appended as for zot/prompt.
const (
	promptExplain  = "Explain this code: what it does and how. Do not change any file."
	promptTests    = "Add tests for this code, following the project's existing tests and conventions."
	promptDocument = "Document this code: add or improve its doc comments as the language and the project do. Change nothing else."
	promptRefactor = "Refactor this code to be clearer and simpler, without changing its behaviour."
	atCursor       = " (The code at the cursor: the enclosing function or block.)"
)

// actionPrompt is the prompt of a code action and its editor context.
func (s *Server) actionPrompt(a *ActionArgs) (string, *PromptContext) {
	rng := a.Range
	pctx := &PromptContext{URI: a.URI, Range: &rng}
	empty := a.Range.Start == a.Range.End
	switch a.Action {
	case actionFix:
		d := a.Diagnostic
		from := ""
		if d.Source != "" {
			from = " reported by " + d.Source
		}
		if code := strings.Trim(string(d.Code), `"`); code != "" && code != "null" {
			from += " (" + code + ")"
		}
		// The diagnostic's lines, whole, are the selection.
		whole := protocol.Range{Start: protocol.Position{Line: d.Range.Start.Line}, End: protocol.Position{Line: lastLine(d.Range) + 1}}
		pctx.Range = &whole
		return fmt.Sprintf("Fix this problem%s at line %d: %s", from, d.Range.Start.Line+1, d.Message), pctx
	case actionInstruction:
		in := a.Instruction
		text := fmt.Sprintf("%s\n\n(This instruction is the comment on line %d of %s: `%s`. zot removes that line once your change is made: do not edit or remove it yourself.)",
			in.Do, in.Line+1, s.ws.display(uriPath(a.URI)), strings.TrimSpace(in.Text))
		if lastLine(a.Range) <= uint32(in.Line) {
			// A cursor on the instruction: the code is what follows it.
			at := protocol.Range{Start: protocol.Position{Line: uint32(in.Line)}, End: protocol.Position{Line: uint32(in.Line)}}
			pctx.Range = &at
		}
		return text, pctx
	case actionExplain:
		return promptExplain + cursorNote(empty), pctx
	case actionTests:
		return promptTests + cursorNote(empty), pctx
	case actionDocument:
		return promptDocument + cursorNote(empty), pctx
	case actionRefactor:
		return promptRefactor + cursorNote(empty), pctx
	case actionSkill:
		return "", pctx // the skill's body, read when it runs (executeCommand)
	}
	return s.expandTemplate(a), nil
}

func cursorNote(empty bool) string {
	if empty {
		return atCursor
	}
	return ""
}

// expandTemplate fills a project action's prompt: {{selection}},
// {{file}}, {{line}}, {{diagnostics}}. A template that names neither the
// selection nor the file gets the editor context appended.
func (s *Server) expandTemplate(a *ActionArgs) string {
	path := uriPath(a.URI)
	sel := ""
	if text, ok := s.documentText(path); ok {
		s.mu.Lock()
		enc := s.enc
		s.mu.Unlock()
		li := newLineIndex(text)
		if x, y := li.offset(a.Range.Start, enc), li.offset(a.Range.End, enc); x < y {
			sel = text[x:y]
		}
	}
	var diags []string
	if a.Diagnostic != nil {
		diags = append(diags, fmt.Sprintf("line %d: %s", a.Diagnostic.Range.Start.Line+1, a.Diagnostic.Message))
	}
	t := a.Prompt
	named := strings.Contains(t, "{{selection}}") || strings.Contains(t, "{{file}}")
	t = strings.NewReplacer(
		"{{selection}}", sel,
		"{{file}}", s.ws.display(path),
		"{{line}}", fmt.Sprint(a.Range.Start.Line+1),
		"{{diagnostics}}", strings.Join(diags, "\n"),
	).Replace(t)
	if named {
		return t
	}
	rng := a.Range
	return s.withContext(t, &PromptContext{URI: a.URI, Range: &rng})
}

// actionOutcome is what a code action's run did, as its events tell.
type actionOutcome struct {
	texts  []string
	tools  []string          // "edit main.go", in order
	calls  map[string]string // tool call id → name
	paths  map[string]string // tool call id → its path argument
	edited []string          // files changed by a successful edit or write
	errs   []string
	stop   string
}

func (o *actionOutcome) observe(ev agent.Event) {
	switch ev.Type {
	case agent.EventAssistantMessage:
		if t := strings.TrimSpace(message.TextOf(ev.Content)); t != "" {
			o.texts = append(o.texts, t)
		}
	case agent.EventToolCall:
		var args struct {
			Path string `json:"path"`
		}
		_ = json.Unmarshal(ev.Args, &args)
		o.calls[ev.ID], o.paths[ev.ID] = ev.Name, args.Path
		o.tools = append(o.tools, strings.TrimSpace(ev.Name+" "+args.Path))
	case agent.EventToolResult:
		if name := o.calls[ev.ID]; !ev.IsError && (name == "edit" || name == "write") {
			o.edited = append(o.edited, o.paths[ev.ID])
		}
	case agent.EventError:
		o.errs = append(o.errs, ev.Message)
	case agent.EventTurnEnd:
		o.stop = ev.Stop
		if ev.Error != "" {
			o.errs = append(o.errs, ev.Error)
		}
	}
}

// followAction forwards a code action's events and, before its done,
// removes the instruction line (when an edit landed) and shows the answer.
func (s *Server) followAction(ctx context.Context, runID string, a *ActionArgs, prompt string, in <-chan agent.Event, out chan<- agent.Event) {
	defer close(out)
	o := &actionOutcome{calls: map[string]string{}, paths: map[string]string{}}
	for ev := range in {
		if ev.Type == agent.EventDone {
			ok := o.stop != "aborted" && o.stop != "error"
			if ok && a.Instruction != nil && len(o.edited) > 0 {
				s.removeInstruction(ctx, uriPath(a.URI), a.Instruction)
			}
			s.showAnswer(ctx, runID, a, prompt, o)
		}
		o.observe(ev)
		out <- ev
	}
}

// removeInstruction deletes the instruction line from the buffer (the
// model's edit may have moved it: the nearest line with its text). A line
// the model changed or removed is left alone.
func (s *Server) removeInstruction(ctx context.Context, path string, in *InstructionLine) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	w := s.ws
	for attempt := 0; attempt < maxEditAttempts; attempt++ {
		cur := w.snapshot(path)
		if !cur.exists && !cur.open {
			return
		}
		target, ok := withoutLine(cur.text, in.Text, in.Line)
		if !ok {
			return
		}
		applied, reason, err := w.applyInEditor(ctx, path, cur, target)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// Some clients answer a stale version with an error, not
			// applied=false (eglot, whose didChange waits for an idle
			// moment): retry once the buffer's change has arrived.
			s.logf("removing the instruction line of %s: %v", w.display(path), err)
			reason = err.Error()
		}
		if applied {
			s.barrier(ctx)
			return
		}
		if reason == "" {
			if err := w.writeDisk(path, cur, target); err != nil {
				s.logf("removing the instruction line of %s: %v", w.display(path), err)
			}
			return
		}
		// The buffer moved (the user typed, or its last change has not
		// arrived yet): let the overlay catch up and retry.
		s.barrier(ctx)
		s.overlay.waitChange(ctx, path, cur.version, 2*time.Second)
	}
}

// withoutLine removes the line equal to line nearest to near (0-based)
// from text, its line ending included.
func withoutLine(text, line string, near int) (string, bool) {
	best, bestStart, bestEnd := -1, 0, 0
	off := 0
	for l := 0; off <= len(text); l++ {
		end := strings.IndexByte(text[off:], '\n')
		next := off + end + 1
		if end < 0 {
			end, next = len(text)-off, len(text)+1
		}
		if strings.TrimSuffix(text[off:off+end], "\r") == line {
			if d := abs(l - near); best < 0 || d < abs(best-near) {
				best, bestStart, bestEnd = l, off, min(next, len(text))
			}
		}
		if next > len(text) {
			break
		}
		off = next
	}
	if best < 0 {
		return "", false
	}
	return text[:bestStart] + text[bestEnd:], true
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
