package rpc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/skills"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/wire"
)

// CommandHost runs extension slash commands (the extension host).
type CommandHost interface {
	Commands() []extensions.Command
	RunCommand(ctx context.Context, name, args string) (extensions.CommandResult, error)
	Reload(ctx context.Context) error
}

// CommandCompleter completes an extension command's argument
// (extensions.Host: command_complete, SEP's command/complete).
type CommandCompleter interface {
	CompleteCommand(ctx context.Context, name, partial string) ([]wire.Completion, error)
}

// completeCommand answers complete_command: candidates for a command's
// argument ({completions: [{value, description?}]}, each the whole
// argument). An extension's command asks its extension (none when it
// offers none or does not answer in 2 s); /model completes the model
// ids; other commands have none.
func (s *Server) completeCommand(ctx context.Context, c Command, ok func(any), fail func(error)) {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c.Name), "/"))
	partial := strings.TrimLeft(c.Args, " ")
	out := []wire.Completion{}
	switch {
	case name == "":
		fail(errors.New(`complete_command needs a "name" (a slash command without the slash: help lists them)`))
		return
	case name == "model":
		for _, m := range s.rt.ListModels() {
			if strings.HasPrefix(m.ID, partial) {
				out = append(out, wire.Completion{Value: m.ID})
			}
		}
	case isBuiltin(name) || strings.HasPrefix(name, "skill:"):
	default:
		cc, isCompleter := s.opts.Commands.(CommandCompleter)
		if !isCompleter {
			fail(fmt.Errorf("unknown command %q; send {\"type\":\"command\",\"name\":\"help\"} for the list", name))
			return
		}
		s.cmds.Add(1)
		go func() { // an extension's answer takes a moment: the reader goes on
			defer s.cmds.Done()
			cs, err := cc.CompleteCommand(ctx, name, partial)
			if err != nil {
				fail(err)
				return
			}
			ok(map[string]any{"completions": append(out, cs...)})
		}()
		return
	}
	ok(map[string]any{"completions": out})
}

// builtinCommand is one of zot's own slash commands over RPC.
type builtinCommand struct {
	name, description string
}

// builtinCommands are the slash commands `command` runs itself; they win
// over extension commands of the same name.
var builtinCommands = []builtinCommand{
	{"help", "list the slash commands"},
	{"clear", "drop the conversation"},
	{"compact", "summarise the conversation to free context"},
	{"model", "show the models, or switch: /model <id>"},
	{"reasoning", "show or set how much the model thinks: /reasoning off|low|medium|high"},
	{"new", "start a new session"},
	{"sessions", "list the saved sessions of this workspace"},
	{"resume", "resume a session: /resume <id>|latest"},
	{"reload-ext", "reload the extensions from disk"},
	{"skills", "list the skills; /skill:<name> [args] runs one"},
}

// CommandData is the response data of `command`: the command's
// command_response (action prompt, insert, display, open_panel or noop),
// plus started/queued when the prompt or compaction it asked for was
// queued as a run.
type CommandData struct {
	Action    string `json:"action"`
	Extension string `json:"extension,omitempty"`
	Prompt    string `json:"prompt,omitempty"`
	Insert    string `json:"insert,omitempty"`
	Display   string `json:"display,omitempty"`
	PanelID   string `json:"panel_id,omitempty"`
	Error     string `json:"error,omitempty"`
	Started   bool   `json:"started,omitempty"`
	Queued    bool   `json:"queued,omitempty"`
}

// isBuiltin reports whether name is one of zot's own commands.
func isBuiltin(name string) bool {
	for _, c := range builtinCommands {
		if c.name == name {
			return true
		}
	}
	return false
}

// command runs /name args. Built-in commands answer at once, but for
// reload-ext, which answers once the extensions are back; it and an
// extension command answer off the command loop (the reader goes on
// meanwhile).
func (s *Server) command(ctx context.Context, c Command, ok func(any), fail func(error)) {
	name := strings.ToLower(strings.TrimPrefix(strings.TrimSpace(c.Name), "/"))
	args := strings.TrimSpace(c.Args)
	if name == "" {
		fail(errors.New(`command needs a "name" (a slash command without the slash: help lists them)`))
		return
	}
	if rest, isSkill := strings.CutPrefix(name, "skill:"); isSkill {
		sk, found := s.rt.Skill(rest)
		if !found {
			fail(fmt.Errorf("no skill named %q; /skills lists them", rest))
			return
		}
		text := skills.Prompt(sk, args)
		s.enqueue(func(started any) {
			q, _ := started.(map[string]any)["queued"].(bool)
			ok(CommandData{Action: "prompt", Prompt: text, Started: true, Queued: q})
		}, fail, s.promptJob(text, nil))
		return
	}
	if isBuiltin(name) {
		s.builtin(ctx, name, args, ok, fail)
		return
	}
	if s.opts.Commands == nil {
		fail(fmt.Errorf("unknown command %q; send {\"type\":\"command\",\"name\":\"help\"} for the list", name))
		return
	}
	s.cmds.Add(1)
	go func() {
		defer s.cmds.Done()
		res, err := s.opts.Commands.RunCommand(ctx, name, args)
		if errors.Is(err, extensions.ErrUnknownCommand) {
			fail(fmt.Errorf("unknown command %q; send {\"type\":\"command\",\"name\":\"help\"} for the list", name))
			return
		}
		if err != nil {
			fail(err)
			return
		}
		data := CommandData{Action: res.Action, Extension: res.Extension, Insert: res.Insert, Display: res.Display, Error: res.Error}
		switch res.Action {
		case "prompt":
			if strings.TrimSpace(res.Prompt) == "" {
				data.Action, data.Error = "noop", strings.TrimSpace(data.Error+" (the command returned an empty prompt)")
				ok(data)
				return
			}
			data.Prompt = res.Prompt
			s.enqueue(func(started any) {
				m := started.(map[string]any)
				data.Started = true
				data.Queued, _ = m["queued"].(bool)
				ok(data)
			}, fail, s.promptJob(res.Prompt, nil))
		case "open_panel":
			if res.Panel != nil {
				data.PanelID = res.Panel.ID
			}
			ok(data)
		default:
			ok(data)
		}
	}()
}

// builtin runs one of zot's own commands.
// switchGuard is a host whose extensions may refuse a new session or a
// resume (session_before_switch: extensions.Host).
type switchGuard interface {
	BeforeSwitch(ctx context.Context, reason, which string) agent.TreeDecision
}

// beforeSwitch asks the extensions before /new and /resume; an error when
// one refused.
func (s *Server) beforeSwitch(ctx context.Context, reason, which string) error {
	g, ok := s.opts.Commands.(switchGuard)
	if !ok {
		return nil
	}
	return extensions.SwitchRefusal(g.BeforeSwitch(ctx, reason, which))
}

func (s *Server) builtin(ctx context.Context, name, args string, ok func(any), fail func(error)) {
	display := func(format string, a ...any) { ok(CommandData{Action: "display", Display: fmt.Sprintf(format, a...)}) }
	switch name {
	case "help":
		var b strings.Builder
		for _, c := range s.commandList() {
			fmt.Fprintf(&b, "/%s — %s\n", c.Name, c.Description)
		}
		display("%s", strings.TrimRight(b.String(), "\n"))
	case "clear":
		if err := s.clear(); err != nil {
			fail(err)
			return
		}
		display("Cleared the conversation.")
	case "compact":
		s.enqueue(func(started any) {
			m := started.(map[string]any)
			q, _ := m["queued"].(bool)
			ok(CommandData{Action: "noop", Started: true, Queued: q})
		}, fail, s.rt.Compact)
	case "model":
		if args == "" {
			var b strings.Builder
			cur := s.rt.State().Model
			for _, m := range s.rt.ListModels() {
				mark := "  "
				if m.ID == cur {
					mark = "* "
				}
				fmt.Fprintf(&b, "%s%s\n", mark, m.ID)
			}
			display("Models (current: %s):\n%s", cur, strings.TrimRight(b.String(), "\n"))
			return
		}
		if err := s.rt.SetModel(args); err != nil {
			fail(err)
			return
		}
		display("Model: %s", s.rt.State().Model)
	case "reasoning":
		if args != "" {
			if err := s.rt.SetReasoning(args); err != nil {
				fail(err)
				return
			}
		}
		display("Reasoning: %s (model %s)", s.rt.State().Reasoning, s.rt.State().Model)
	case "new":
		if err := s.beforeSwitch(ctx, "new", ""); err != nil {
			fail(err)
			return
		}
		if err := s.rt.NewSession(); err != nil {
			fail(err)
			return
		}
		display("Started a new session.")
	case "sessions":
		infos, err := s.rt.Sessions()
		if err != nil {
			fail(err)
			return
		}
		if len(infos) == 0 {
			display("No saved sessions for this workspace.")
			return
		}
		var b strings.Builder
		for _, in := range infos {
			fmt.Fprintf(&b, "%s  %s  %d messages  %s\n", in.ID, in.Modified.Format("2006-01-02 15:04"), in.Messages, in.Title)
		}
		display("%s", strings.TrimRight(b.String(), "\n"))
	case "resume":
		which := args
		if which == "" {
			which = "latest"
		}
		if err := s.beforeSwitch(ctx, "resume", which); err != nil {
			fail(err)
			return
		}
		if err := s.rt.Resume(which); err != nil {
			fail(err)
			return
		}
		display("Resumed session %s (%d messages).", s.rt.State().SessionID, s.rt.State().MessageCount)
	case "skills":
		s.rt.Skill("") // rediscover: a skill added since the last prompt is listed
		list := s.rt.Skills()
		if len(list) == 0 {
			display("No skills. Put one in .zot/skills/<name>/SKILL.md (or .claude/skills, .agents/skills, $ZOT_HOME/skills).")
			return
		}
		var b strings.Builder
		b.WriteString("Skills (/skill:<name> [args] runs one):\n")
		for _, sk := range list {
			fmt.Fprintf(&b, "%s — %s  [%s]\n", sk.Name, sk.Description, sk.Source)
		}
		display("%s", strings.TrimRight(b.String(), "\n"))
	case "reload-ext":
		if s.opts.Commands == nil {
			display("No extensions are loaded (--no-ext).")
			return
		}
		// It waits for the extensions to be back (seconds for a slow one):
		// off the command loop, as an extension's command, so abort and
		// ui_response are still read meanwhile.
		s.cmds.Add(1)
		go func() {
			defer s.cmds.Done()
			if err := s.opts.Commands.Reload(ctx); err != nil {
				fail(err)
				return
			}
			display("Reloaded the extensions.")
		}()
	}
}

// commandInfo is one line of /help.
type commandInfo struct{ Name, Description string }

// commandList is the built-in commands, then the extensions' (sorted).
func (s *Server) commandList() []commandInfo {
	var out []commandInfo
	taken := map[string]bool{}
	for _, c := range builtinCommands {
		out = append(out, commandInfo{c.name, c.description})
		taken[c.name] = true
	}
	if s.opts.Commands != nil {
		ext := s.opts.Commands.Commands()
		sort.SliceStable(ext, func(i, j int) bool { return ext[i].Name < ext[j].Name })
		for _, c := range ext {
			if !taken[c.Name] {
				taken[c.Name] = true
				out = append(out, commandInfo{c.Name, c.Description + " (" + c.Extension + ")"})
			}
		}
	}
	return out
}
