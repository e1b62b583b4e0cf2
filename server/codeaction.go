package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent/home"
)

// The standard-LSP tier (docs/protocol.md, "Any LSP editor"): an editor
// that speaks LSP and nothing of zot's gets code actions that run a
// prompt. Listing them never calls the model: the list is built from the
// request (its range and diagnostics), the buffer's instruction lines and
// the configured project actions; workspace/executeCommand runs one
// (executecommand.go).

// Code action kinds zot offers. A fix is a quickfix; every other action
// rewrites code (or, explain, only talks about it) and is a refactor.
const (
	kindQuickFix = "quickfix"
	kindRewrite  = "refactor.rewrite"
	kindExplain  = "refactor"
)

// The actions of the code action list (actionArgs.Action).
const (
	actionFix         = "fix"
	actionInstruction = "instruction"
	actionExplain     = "explain"
	actionTests       = "tests"
	actionDocument    = "document"
	actionRefactor    = "refactor"
	actionProject     = "project"
	actionSkill       = "skill"
)

// builtinActions are offered on every range, in this order, after the
// instruction lines and the fixes.
var builtinActions = []struct{ action, title, kind string }{
	{actionExplain, "zot: explain", kindExplain},
	{actionTests, "zot: add tests", kindRewrite},
	{actionDocument, "zot: document", kindRewrite},
	{actionRefactor, "zot: refactor", kindRewrite},
}

// triggerAutomatic is CodeActionTriggerKind.Automatic: the editor asks on
// its own (VS Code's light bulb as the cursor moves), not the user.
const triggerAutomatic = 2

// maxFixActions bounds the "fix this" actions of one request: a file with
// a thousand warnings on one selection gets a list a user can read.
const maxFixActions = 20

// codeActionParams is textDocument/codeAction's params. Diagnostics stay
// raw too: an action names the ones it fixes with the client's own JSON.
type codeActionParams struct {
	TextDocument struct {
		URI string `json:"uri"`
	} `json:"textDocument"`
	Range   protocol.Range `json:"range"`
	Context struct {
		Diagnostics []json.RawMessage `json:"diagnostics"`
		Only        []string          `json:"only"`
		TriggerKind int               `json:"triggerKind"`
	} `json:"context"`
}

func (p *codeActionParams) validate(method string) error {
	if p.TextDocument.URI == "" {
		return fieldError(method, "textDocument.uri", "is required")
	}
	if rangeBefore(p.Range.End, p.Range.Start) {
		return fieldError(method, "range", "ends before it starts")
	}
	return nil
}

func rangeBefore(a, b protocol.Position) bool {
	return a.Line < b.Line || (a.Line == b.Line && a.Character < b.Character)
}

// lspDiagnostic is the part of an LSP Diagnostic a fix's prompt uses.
type lspDiagnostic struct {
	Range    protocol.Range  `json:"range"`
	Severity int             `json:"severity,omitempty"`
	Code     json.RawMessage `json:"code,omitempty"`
	Source   string          `json:"source,omitempty"`
	Message  string          `json:"message"`
}

// CodeAction is an LSP CodeAction as zot sends it.
type CodeAction struct {
	Title       string            `json:"title"`
	Kind        string            `json:"kind,omitempty"`
	Diagnostics []json.RawMessage `json:"diagnostics,omitempty"`
	Command     *LSPCommand       `json:"command,omitempty"`
	// Data carries the action to codeAction/resolve when the client
	// resolves the command lazily.
	Data *ActionArgs `json:"data,omitempty"`
}

// LSPCommand is an LSP Command.
type LSPCommand struct {
	Title     string `json:"title"`
	Command   string `json:"command"`
	Arguments []any  `json:"arguments,omitempty"`
}

// ActionArgs is the one argument of the zot.codeAction command: what to
// ask and about which code.
type ActionArgs struct {
	Action string         `json:"action"`
	URI    string         `json:"uri"`
	Range  protocol.Range `json:"range"`
	// Title is the action's title (the run's name, the transcript's heading).
	Title string `json:"title"`
	// Diagnostic is the problem a fix is about.
	Diagnostic *lspDiagnostic `json:"diagnostic,omitempty"`
	// Instruction is the instruction line of a "run this instruction".
	Instruction *InstructionLine `json:"instruction,omitempty"`
	// Prompt is a project action's prompt template.
	Prompt string `json:"prompt,omitempty"`
	// Skill names the skill a skill action runs on the code.
	Skill string `json:"skill,omitempty"`
}

// InstructionLine is a `zot: …` comment line in the buffer.
type InstructionLine struct {
	Line int    `json:"line"` // 0-based
	Text string `json:"text"` // the whole line as it was listed
	Do   string `json:"do"`   // the instruction after "zot:"
}

// ProjectAction is a code action from the configuration
// (initializationOptions.codeActions, $ZOT_HOME/code-actions.json).
type ProjectAction struct {
	Title  string `json:"title"`
	Prompt string `json:"prompt"`
	// Kind is the action's code action kind (default refactor.rewrite).
	Kind string `json:"kind,omitempty"`
}

// validateProjectActions checks configured actions; field names the list.
func validateProjectActions(method, field string, acts []ProjectAction) error {
	for i, a := range acts {
		if strings.TrimSpace(a.Title) == "" {
			return fieldError(method, fmt.Sprintf("%s[%d].title", field, i), "is required: the action's name in the editor's menu")
		}
		if strings.TrimSpace(a.Prompt) == "" {
			return fieldError(method, fmt.Sprintf("%s[%d].prompt", field, i), "is required: the prompt the action sends ({{selection}}, {{file}}, {{diagnostics}} and {{line}} are filled in)")
		}
	}
	return nil
}

// homeCodeActionsFile is the user's own code actions, for every workspace.
const homeCodeActionsFile = "code-actions.json"

// loadHomeActions reads $ZOT_HOME/code-actions.json (a JSON array of
// {title, prompt}); a missing file is no actions, a bad one a warning.
func loadHomeActions(zotHome string) ([]ProjectAction, string) {
	if zotHome == "" {
		zotHome = home.Dir()
	}
	path := filepath.Join(zotHome, homeCodeActionsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, ""
	}
	var acts []ProjectAction
	if err := json.Unmarshal(b, &acts); err != nil {
		return nil, fmt.Sprintf("zot: %s is not a JSON array of {\"title\", \"prompt\"}: %v; its code actions are not offered", path, err)
	}
	if err := validateProjectActions(path, "", acts); err != nil {
		return nil, fmt.Sprintf("zot: %v; its code actions are not offered", err)
	}
	return acts, ""
}

// plainCaps is what zot knows of a client's standard-LSP features.
type plainCaps struct {
	// resolve: the client sends codeAction/resolve (resolveSupport).
	resolve bool
	// lazyCommand: the client resolves a code action's command lazily.
	lazyCommand bool
	// showDocument: window/showDocument.
	showDocument bool
	// projectActions are the configured actions (initializationOptions
	// first, then $ZOT_HOME's).
	projectActions []ProjectAction
}

// codeActionCaps is the part of the client's capabilities the standard
// tier reads.
type codeActionCaps struct {
	Capabilities struct {
		TextDocument struct {
			CodeAction struct {
				ResolveSupport *struct {
					Properties []string `json:"properties"`
				} `json:"resolveSupport"`
			} `json:"codeAction"`
		} `json:"textDocument"`
		Window struct {
			ShowDocument struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
		} `json:"window"`
	} `json:"capabilities"`
}

// readPlainCaps reads the standard tier's part of initialize's params.
func readPlainCaps(rawParams json.RawMessage, fromOptions []ProjectAction, zotHome string) (plainCaps, string) {
	var c codeActionCaps
	_ = json.Unmarshal(rawParams, &c) // initialize already decoded these params
	pc := plainCaps{showDocument: c.Capabilities.Window.ShowDocument.Support}
	if rs := c.Capabilities.TextDocument.CodeAction.ResolveSupport; rs != nil {
		pc.resolve = true
		pc.lazyCommand = slices.Contains(rs.Properties, "command")
	}
	homeActs, warn := loadHomeActions(zotHome)
	pc.projectActions = append(slices.Clone(fromOptions), homeActs...)
	return pc, warn
}

// Command names of workspace/executeCommand.
const (
	CommandCodeAction = "zot.codeAction"
	CommandAbort      = "zot.abort"
)

// CodeActionOptions is codeActionProvider.
type CodeActionOptions struct {
	CodeActionKinds []string `json:"codeActionKinds"`
	ResolveProvider bool     `json:"resolveProvider,omitempty"`
}

// ExecuteCommandOptions is executeCommandProvider.
type ExecuteCommandOptions struct {
	Commands []string `json:"commands"`
}

// standardCapabilities fills the standard tier's server capabilities.
func standardCapabilities(c *ServerCapabilities, pc plainCaps) {
	c.CodeActionProvider = &CodeActionOptions{CodeActionKinds: []string{kindQuickFix, kindExplain, kindRewrite}, ResolveProvider: pc.resolve}
	c.ExecuteCommandProvider = &ExecuteCommandOptions{Commands: []string{CommandCodeAction, CommandAbort}}
}

// instructionRe matches a whole-line comment `zot: <instruction>` with any
// common comment leader: // # -- ; % /* */ <!-- --> (* *).
var instructionRe = regexp.MustCompile(`^\s*(?://+|#+|--+|;+|%+|/\*+|<!--|\(\*)\s*[Zz][Oo][Tt]:\s*(.*?)\s*(?:\*+/|-->|\*\))?\s*$`)

// instructionOf is the instruction of a line, "" when it is not one.
func instructionOf(line string) string {
	if nextZot(line, 0) < 0 {
		return ""
	}
	m := instructionRe.FindStringSubmatch(line)
	if m == nil {
		return ""
	}
	return m[1]
}

// codeAction lists zot's actions for a range: fast, and without the model.
func (s *Server) codeAction(ctx context.Context, p *codeActionParams) ([]CodeAction, error) {
	s.mu.Lock()
	pc := s.plain
	s.mu.Unlock()
	path := uriPath(p.TextDocument.URI)
	if path == "" {
		return []CodeAction{}, nil // not a file: nothing zot can edit
	}
	var acts []CodeAction
	add := func(title, kind string, diags []json.RawMessage, args ActionArgs) {
		if !kindWanted(kind, p.Context.Only) {
			return
		}
		args.Title = title
		a := CodeAction{Title: title, Kind: kind, Diagnostics: diags}
		if pc.lazyCommand {
			a.Data = &args
		} else {
			a.Command = actionCommand(args)
			if pc.resolve {
				a.Data = &args
			}
		}
		acts = append(acts, a)
	}
	base := ActionArgs{URI: p.TextDocument.URI, Range: p.Range}

	// The instruction lines of the range.
	if text, ok := s.documentText(path); ok {
		lines := instructionLines(text, int(p.Range.Start.Line), int(lastLine(p.Range)))
		for _, in := range lines {
			title := "zot: run this instruction"
			if len(lines) > 1 {
				title = fmt.Sprintf("zot: run this instruction (line %d)", in.Line+1)
			}
			a := base
			a.Action, a.Instruction = actionInstruction, &in
			add(title, kindRewrite, nil, a)
		}
	}
	// A fix per diagnostic.
	for i, raw := range p.Context.Diagnostics {
		if i == maxFixActions {
			break
		}
		var d lspDiagnostic
		if json.Unmarshal(raw, &d) != nil || strings.TrimSpace(d.Message) == "" {
			continue
		}
		a := base
		a.Action, a.Diagnostic = actionFix, &d
		add("zot: fix this: "+firstLine(d.Message), kindQuickFix, []json.RawMessage{raw}, a)
	}
	if p.Context.TriggerKind == triggerAutomatic {
		// Only what is about this place: the actions offered everywhere
		// would light the bulb on every line.
		if acts == nil {
			acts = []CodeAction{}
		}
		return acts, nil
	}
	for _, b := range builtinActions {
		a := base
		a.Action = b.action
		add(b.title, b.kind, nil, a)
	}
	for _, pa := range pc.projectActions {
		a := base
		a.Action, a.Prompt = actionProject, pa.Prompt
		kind := pa.Kind
		if kind == "" {
			kind = kindRewrite
		}
		add(pa.Title, kind, nil, a)
	}
	// The skills: each runs on the selection (or the code at the cursor)
	// as /skill:<name> does on the prompt. Extension commands are not
	// offered: nothing in zot's register_command says that a command takes
	// a selection.
	if rt, err := s.runtime(); err == nil {
		for i, sk := range rt.Skills() {
			if i == maxSkillActions {
				break
			}
			a := base
			a.Action, a.Skill = actionSkill, sk.Name
			add("zot: skill "+sk.Name, kindRewrite, nil, a)
		}
	}
	if acts == nil {
		acts = []CodeAction{}
	}
	return acts, nil
}

// maxSkillActions bounds the skills listed as actions.
const maxSkillActions = 30

// codeActionResolve fills in the command of an action listed without it.
func (s *Server) codeActionResolve(ctx context.Context, a *CodeAction) (CodeAction, error) {
	if a.Command == nil && a.Data != nil {
		a.Command = actionCommand(*a.Data)
	}
	return *a, nil
}

func actionCommand(args ActionArgs) *LSPCommand {
	return &LSPCommand{Title: args.Title, Command: CommandCodeAction, Arguments: []any{args}}
}

// kindWanted: an action of kind is in the client's `only` filter (kinds
// are hierarchical: "refactor" asks for "refactor.rewrite" too).
func kindWanted(kind string, only []string) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(kind, o+".") {
			return true
		}
	}
	return false
}

// lastLine is the last line a range covers: an end at character 0 of a
// later line selects nothing of that line.
func lastLine(r protocol.Range) uint32 {
	if r.End.Character == 0 && r.End.Line > r.Start.Line {
		return r.End.Line - 1
	}
	return r.End.Line
}

// documentText is the open buffer's text, else the file's.
func (s *Server) documentText(path string) (string, bool) {
	if d, ok := s.ws.bufferView(path); ok {
		return d.text, true
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	return string(b), true
}

// instructionLines finds the instruction lines among lines first..last
// of text. Only those lines are looked at, and only the ones with a
// "zot:" in them are parsed: listing stays fast in a large file.
func instructionLines(text string, first, last int) []InstructionLine {
	from, ok := lineStart(text, first)
	if !ok {
		return nil
	}
	to, ok := lineStart(text, last+1)
	if !ok {
		to = len(text)
	}
	chunk := text[from:to]
	var out []InstructionLine
	line, counted := first, 0 // line is the line of chunk[counted]
	for i := nextZot(chunk, 0); i >= 0; {
		start := strings.LastIndexByte(chunk[:i], '\n') + 1
		end := strings.IndexByte(chunk[i:], '\n')
		if end < 0 {
			end = len(chunk)
		} else {
			end += i
		}
		line += strings.Count(chunk[counted:start], "\n")
		counted = start
		text := strings.TrimSuffix(chunk[start:end], "\r")
		if do := instructionOf(text); do != "" {
			out = append(out, InstructionLine{Line: line, Text: text, Do: do})
		}
		i = nextZot(chunk, end)
	}
	return out
}

// nextZot is the index of the next "zot:" (any case) in s from i, -1 if
// none: a scan for ':' (fast) and a look behind it, without allocating.
func nextZot(s string, i int) int {
	for i < len(s) {
		j := strings.IndexByte(s[i:], ':')
		if j < 0 {
			return -1
		}
		c := i + j
		if c >= 3 && strings.EqualFold(s[c-3:c], "zot") {
			return c - 3
		}
		i = c + 1
	}
	return -1
}

// savesAtRunEnd: the end of a run saves the buffers zot changed only for a
// client that saves them itself (zot/save) or never took them into a
// buffer (no applyEdit). A plain LSP editor keeps zot's edits in its
// buffers, unsaved and undoable, as after any language server's code
// action: writing the file behind it would make the editor see it
// changed on disk. bash still gets them on disk first (Sync).
func (s *Server) savesAtRunEnd() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.zot.Save || !s.caps.applyEdit
}
