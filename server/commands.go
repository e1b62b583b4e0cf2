package server

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/skills"
)

// builtinCommands are zot's own slash commands; they win over extension
// commands of the same name.
var builtinCommands = []CommandInfo{
	{Name: "help", Description: "list the slash commands"},
	{Name: "clear", Description: "drop the conversation"},
	{Name: "compact", Description: "summarise the conversation to free context"},
	{Name: "model", Description: "show the models, or switch: /model <id>"},
	{Name: "reasoning", Description: "show or set how much the model thinks: /reasoning off|low|medium|high"},
	{Name: "mode", Description: "show or set the permission mode: /mode auto|ask|readonly"},
	{Name: "new", Description: "start a new session"},
	{Name: "sessions", Description: "list the saved sessions of this workspace"},
	{Name: "resume", Description: "resume a session: /resume <id>|latest"},
	{Name: "reload-ext", Description: "reload the extensions from disk"},
	{Name: "skills", Description: "list the skills; /skill:<name> [args] runs one"},
}

// BuiltinCommandNames are the names of zot's own slash commands, which
// win over extension commands.
func BuiltinCommandNames() []string {
	var out []string
	for _, c := range builtinCommands {
		out = append(out, c.Name)
	}
	return out
}

// skillPrefix names a skill as a command: /skill:<name> args sends the
// skill's body as the prompt.
const skillPrefix = "skill:"

func init() {
	for i := range builtinCommands {
		builtinCommands[i].Source = "builtin"
	}
}

// commandList is the built-in commands, then the extensions' (sorted), the
// MCP servers' prompts and the skills.
func (s *Server) commandList() []CommandInfo {
	out := append([]CommandInfo(nil), builtinCommands...)
	taken := map[string]bool{}
	for _, c := range out {
		taken[c.Name] = true
	}
	if host := s.currentHost(); host != nil {
		ext := host.Commands()
		sort.SliceStable(ext, func(i, j int) bool { return ext[i].Name < ext[j].Name })
		for _, c := range ext {
			if taken[c.Name] {
				continue
			}
			taken[c.Name] = true
			c.Source = "extension"
			out = append(out, c)
		}
	}
	if h := s.currentMCP(); h != nil {
		for _, c := range h.Prompts() {
			if !taken[c.Name] {
				taken[c.Name] = true
				out = append(out, c)
			}
		}
	}
	if rt, err := s.runtime(); err == nil {
		for _, sk := range rt.Skills() {
			out = append(out, CommandInfo{Name: skillPrefix + sk.Name, Description: sk.Description, Source: "skill"})
		}
	}
	return out
}

func (s *Server) zotSkills(ctx context.Context) (SkillsResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return SkillsResult{}, err
	}
	list := rt.Skills()
	if list == nil {
		list = []skills.Skill{}
	}
	return SkillsResult{Skills: list}, nil
}

// skillCommand runs /skill:<name> args: the skill's body is the prompt.
func (s *Server) skillCommand(name, args string) (CommandResult, error) {
	rt, err := s.runtime()
	if err != nil {
		return CommandResult{}, err
	}
	sk, ok := rt.Skill(name)
	if !ok {
		return CommandResult{}, fieldError(MethodCommand, "name", "names no skill (%q); /skills lists them", name)
	}
	text := skills.Prompt(sk, args)
	started := s.runs.enqueue(&run{kind: "prompt", title: "/" + skillPrefix + sk.Name, start: func(ctx context.Context) (<-chan agent.Event, error) {
		return rt.Prompt(ctx, text, nil)
	}})
	return CommandResult{Action: "prompt", Prompt: text, RunID: started.RunID, Queued: started.Queued}, nil
}

// skillList is /skills' text.
func skillList(list []skills.Skill) string {
	if len(list) == 0 {
		return "No skills. Put one in .zot/skills/<name>/SKILL.md (or .claude/skills, .agents/skills, $ZOT_HOME/skills)."
	}
	var b strings.Builder
	b.WriteString("Skills (/skill:<name> [args] runs one):\n")
	for _, sk := range list {
		fmt.Fprintf(&b, "%s — %s  [%s]\n", sk.Name, sk.Description, sk.Source)
	}
	return strings.TrimRight(b.String(), "\n")
}

func (s *Server) zotCommands(ctx context.Context) (CommandsResult, error) {
	return CommandsResult{Commands: s.commandList()}, nil
}

func (p *CommandParams) validate(method string) error {
	if p.command() == "" {
		return fieldError(method, "name", "is required: a command from zot/commands")
	}
	return nil
}

// command is the command's name without the slash.
func (p *CommandParams) command() string {
	return strings.TrimPrefix(strings.TrimSpace(p.Name), "/")
}

func (s *Server) zotCommand(ctx context.Context, p *CommandParams) (CommandResult, error) {
	name, args := p.command(), strings.TrimSpace(p.Args)
	// A command may wait on an extension's process, a reload, or (right
	// after initialize) the host starting: let other messages through.
	release(ctx)
	if rest, ok := strings.CutPrefix(name, skillPrefix); ok {
		return s.skillCommand(rest, args)
	}
	for _, c := range builtinCommands {
		if c.Name == name {
			return s.builtinCommand(ctx, name, args)
		}
	}
	if h := s.currentMCP(); h != nil && strings.HasPrefix(name, "mcp__") {
		if slices.ContainsFunc(h.Prompts(), func(c CommandInfo) bool { return c.Name == name }) {
			text, err := h.GetPrompt(ctx, name, args)
			if err != nil {
				return CommandResult{}, rpcError(CodeRequestFailed, "%v", err)
			}
			return s.commandAction(CommandResponse{Action: "prompt", Prompt: text})
		}
	}
	host := s.waitHost(ctx)
	if host != nil {
		known := slices.ContainsFunc(host.Commands(), func(c CommandInfo) bool { return c.Name == name })
		if w, ok := host.(startWaiter); ok && !known {
			known = w.AwaitCommand(ctx, name) // an extension still starting may register it
		}
		if known {
			resp, err := host.RunCommand(ctx, name, args)
			if err != nil {
				return CommandResult{}, err
			}
			return s.commandAction(resp)
		}
	}
	return CommandResult{}, fieldError(MethodCommand, "name", "names no command (%q); zot/commands lists them", name)
}

func (p *CommandCompleteParams) validate(method string) error {
	if strings.TrimPrefix(strings.TrimSpace(p.Name), "/") == "" {
		return fieldError(method, "name", "is required: a command from zot/commands")
	}
	return nil
}

// zotCommandComplete completes a command's argument: an extension's
// command asks its extension (command_complete, SEP's command/complete;
// none when it offers none or is slow), /model the model ids, /mode the
// permission modes. Any other command has none.
func (s *Server) zotCommandComplete(ctx context.Context, p *CommandCompleteParams) (CommandCompleteResult, error) {
	name, partial := strings.TrimPrefix(strings.TrimSpace(p.Name), "/"), strings.TrimLeft(p.Args, " ")
	res := CommandCompleteResult{Completions: []CommandCompletion{}}
	prefixed := func(values ...string) {
		for _, v := range values {
			if strings.HasPrefix(v, partial) {
				res.Completions = append(res.Completions, CommandCompletion{Value: v})
			}
		}
	}
	switch name {
	case "model":
		rt, err := s.runtime()
		if err != nil {
			return res, err
		}
		for _, m := range rt.ListModels() {
			prefixed(m.ID)
		}
		return res, nil
	case "mode":
		prefixed("auto", "ask", "readonly")
		return res, nil
	}
	release(ctx) // an extension's answer takes a moment: let other messages through
	host := s.waitHost(ctx)
	if !slices.ContainsFunc(s.commandList(), func(c CommandInfo) bool { return c.Name == name }) {
		return res, fieldError(MethodCommandComplete, "name", "names no command (%q); zot/commands lists them", name)
	}
	if c, ok := host.(commandCompleter); ok {
		cs, _ := c.CompleteCommand(ctx, name, partial) // (a built-in, a skill or an MCP prompt: none)
		res.Completions = append(res.Completions, cs...)
	}
	return res, nil
}

// commandAction maps an extension's command_response onto the editor.
func (s *Server) commandAction(resp CommandResponse) (CommandResult, error) {
	res := CommandResult{Action: resp.Action, Error: resp.Error}
	switch resp.Action {
	case "prompt":
		rt, err := s.runtime()
		if err != nil {
			return CommandResult{}, err
		}
		if strings.TrimSpace(resp.Prompt) == "" {
			res.Action, res.Error = "noop", strings.TrimSpace(res.Error+" (the command returned an empty prompt)")
			return res, nil
		}
		text := resp.Prompt
		started := s.runs.enqueue(&run{kind: "prompt", title: firstLine(text), start: func(ctx context.Context) (<-chan agent.Event, error) {
			return rt.Prompt(ctx, text, nil)
		}})
		res.Prompt, res.RunID, res.Queued = text, started.RunID, started.Queued
	case "insert":
		res.Insert = resp.Insert
	case "display":
		res.Display = resp.Display
	case "open_panel":
		// The host has opened the panel (HostUI.OpenPanel sends
		// zot/panel/open); the result only names it.
		if resp.Panel == nil {
			res.Action = "noop"
			break
		}
		res.PanelID = resp.Panel.PanelID
	case "noop", "":
		res.Action = "noop"
	default:
		res.Error = strings.TrimSpace(res.Error + fmt.Sprintf(" (unknown action %q)", resp.Action))
		res.Action = "noop"
	}
	return res, nil
}

func (s *Server) builtinCommand(ctx context.Context, name, args string) (CommandResult, error) {
	fail := func(err error) (CommandResult, error) { return CommandResult{}, err }
	display := func(format string, a ...any) (CommandResult, error) {
		return CommandResult{Action: "display", Display: fmt.Sprintf(format, a...)}, nil
	}
	switch name {
	case "help":
		var b strings.Builder
		for _, c := range s.commandList() {
			fmt.Fprintf(&b, "/%s — %s\n", c.Name, c.Description)
		}
		return display("%s", strings.TrimRight(b.String(), "\n"))
	case "mode":
		if args == "" {
			return display("Permission mode: %s (auto | ask | readonly)", s.permissionMode())
		}
		m, ok := parseMode(args)
		if !ok {
			return fail(fieldError(MethodCommand, "args", "must be auto, ask or readonly, not %q", args))
		}
		s.setMode(m)
		return display("Permission mode: %s", m)
	case "reload-ext":
		if _, err := s.zotExtensionsReload(ctx); err != nil {
			return fail(err)
		}
		res := s.extensionsResult()
		loaded := 0
		for _, e := range res.Extensions {
			if e.State == "loaded" {
				loaded++
			}
		}
		return display("Reloaded extensions: %d loaded of %d.", loaded, len(res.Extensions))
	}
	rt, err := s.runtime()
	if err != nil {
		return fail(err)
	}
	switch name {
	case "clear":
		if err := rt.Clear(); err != nil {
			return fail(err)
		}
		return display("Cleared the conversation.")
	case "skills":
		rt.Skill("") // rediscover: a skill added since the last prompt is listed
		return display("%s", skillList(rt.Skills()))
	case "compact":
		started := s.runs.enqueue(&run{kind: "compact", title: "compacting the conversation", start: rt.Compact})
		return CommandResult{Action: "noop", RunID: started.RunID, Queued: started.Queued}, nil
	case "model":
		if args == "" {
			var b strings.Builder
			cur := rt.State().Model
			for _, m := range rt.ListModels() {
				mark := "  "
				if m.ID == cur {
					mark = "* "
				}
				fmt.Fprintf(&b, "%s%s\n", mark, m.ID)
			}
			return display("Models (current: %s):\n%s", cur, strings.TrimRight(b.String(), "\n"))
		}
		if err := rt.SetModel(args); err != nil {
			return fail(err)
		}
		return display("Model: %s", rt.State().Model)
	case "reasoning":
		if args != "" {
			if err := rt.SetReasoning(args); err != nil {
				return fail(err)
			}
		}
		return display("Reasoning: %s (model %s)", rt.State().Reasoning, rt.State().Model)
	case "new":
		if err := rt.NewSession(); err != nil {
			return fail(err)
		}
		s.sessionChanged()
		return display("Started a new session.")
	case "sessions":
		infos, err := rt.Sessions()
		if err != nil {
			return fail(err)
		}
		if len(infos) == 0 {
			return display("No saved sessions for this workspace.")
		}
		var b strings.Builder
		for _, in := range infos {
			fmt.Fprintf(&b, "%s  %s  %d messages  %s\n", in.ID, in.Modified.Format("2006-01-02 15:04"), in.Messages, in.Title)
		}
		return display("%s", strings.TrimRight(b.String(), "\n"))
	case "resume":
		which := args
		if which == "" {
			which = "latest"
		}
		if err := rt.Resume(which); err != nil {
			return fail(err)
		}
		s.sessionChanged()
		if n := forkNotice(rt.State()); n != "" {
			return display("%s", n)
		}
		return display("Resumed session %s (%d messages).", rt.State().SessionID, rt.State().MessageCount)
	}
	return fail(fieldError(MethodCommand, "name", "names no command (%q)", name))
}
