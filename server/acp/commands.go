package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/extensions/wire"
)

// command is one slash command as available_commands_update lists it.
type command struct {
	Name, Description, Hint string
	Extension               string // "" for zot's own
}

// builtinCommands are zot's own slash commands in ACP; they win over
// extension commands of the same name. (zot lsp's /new, /resume and
// /sessions switching are the client's session picker here.)
var builtinCommands = []command{
	{Name: "help", Description: "list the slash commands"},
	{Name: "clear", Description: "drop the conversation (the session stays)"},
	{Name: "compact", Description: "summarise the conversation to free context"},
	{Name: "model", Description: "show the models, or switch: /model <id>", Hint: "model id"},
	{Name: "reasoning", Description: "show or set how much the model thinks: /reasoning off|low|medium|high", Hint: "off, low, medium or high"},
	{Name: "mode", Description: "show or set the permission mode: /mode auto|ask|readonly", Hint: "auto, ask or readonly"},
	{Name: "extensions", Description: "list the extensions and their state"},
	{Name: "reload-ext", Description: "reload the extensions from disk"},
	{Name: "checkpoints", Description: "list the checkpoints: the workspace before each prompt"},
	{Name: "checkpoint-diff", Description: "show what changed since a checkpoint: /checkpoint-diff <id>", Hint: "checkpoint id"},
	{Name: "restore", Description: "restore a checkpoint: /restore <id> code|conversation|both", Hint: "checkpoint id, then code, conversation or both"},
}

// commandList is the built-in commands, then the extensions' (sorted).
func (ss *session) commandList() []command {
	out := append([]command(nil), builtinCommands...)
	taken := map[string]bool{}
	for _, c := range out {
		taken[c.Name] = true
	}
	if h := ss.currentHost(); h != nil {
		ext := h.Commands()
		sort.SliceStable(ext, func(i, j int) bool { return ext[i].Name < ext[j].Name })
		for _, c := range ext {
			if taken[c.Name] {
				continue
			}
			taken[c.Name] = true
			out = append(out, command{Name: c.Name, Description: c.Description, Extension: c.Extension})
		}
	}
	return out
}

// commandsChanged sends available_commands_update when the list changed
// since the last one sent.
func (ss *session) commandsChanged() {
	list := ss.commandList()
	key, _ := json.Marshal(list)
	ss.mu.Lock()
	same := ss.commands == string(key)
	if ss.announced {
		ss.commands = string(key)
	}
	announced := ss.announced
	ss.mu.Unlock()
	if same || !announced {
		return // unchanged, or the client does not know the session yet
	}
	cmds := make([]sdk.AvailableCommand, 0, len(list))
	for _, c := range list {
		ac := sdk.AvailableCommand{Name: c.Name, Description: c.Description}
		if c.Extension != "" {
			ac.Description += " (extension " + c.Extension + ")"
			ac.Meta = map[string]any{"zot": map[string]any{"extension": c.Extension}}
		}
		if c.Hint != "" {
			ac.Input = &sdk.AvailableCommandInput{Unstructured: &sdk.UnstructuredCommandInput{Hint: c.Hint}}
		}
		cmds = append(cmds, ac)
	}
	ss.update(sdk.SessionUpdate{AvailableCommandsUpdate: &sdk.SessionAvailableCommandsUpdate{AvailableCommands: cmds}})
}

// slashCommand recognises "/name args" when name is a command; other
// text starting with a slash (a path) is a prompt.
func (ss *session) slashCommand(text string) (name, args string, ok bool) {
	t := strings.TrimSpace(text)
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	name, args, _ = strings.Cut(t[1:], " ")
	if i := strings.IndexAny(name, "\n\t"); i >= 0 {
		name, args = name[:i], strings.TrimSpace(t[1+i:]+" "+args)
	}
	args = strings.TrimSpace(args)
	for _, c := range ss.commandList() {
		if c.Name == name {
			return name, args, true
		}
	}
	if h := ss.currentHost(); h != nil && name != "" {
		// An extension still starting may be about to register it.
		if h.AwaitCommand(ss.srv.ctx, name) {
			return name, args, true
		}
	}
	return "", "", false
}

// runCommand runs a slash command as the prompt's turn.
func (ss *session) runCommand(ctx context.Context, name, args string) (sdk.PromptResponse, error) {
	done := sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}
	say := func(format string, a ...any) (sdk.PromptResponse, error) {
		ss.update(sdk.UpdateAgentMessageText(fmt.Sprintf(format, a...)))
		return done, nil
	}
	switch name {
	case "help":
		var b strings.Builder
		b.WriteString("Commands:\n")
		for _, c := range ss.commandList() {
			fmt.Fprintf(&b, "- `/%s` — %s", c.Name, c.Description)
			if c.Extension != "" {
				fmt.Fprintf(&b, " (extension %s)", c.Extension)
			}
			b.WriteString("\n")
		}
		return say("%s", b.String())
	case "clear":
		if err := ss.rt.Clear(); err != nil {
			return sdk.PromptResponse{}, requestError(err)
		}
		return say("Conversation cleared.")
	case "compact":
		ch, err := ss.rt.Compact(ctx)
		if err != nil {
			return sdk.PromptResponse{}, requestError(err)
		}
		return ss.stream(ch)
	case "model":
		if args == "" {
			var b strings.Builder
			fmt.Fprintf(&b, "Model: `%s`. Available:\n", ss.rt.State().Model)
			for _, m := range ss.rt.ListModels() {
				fmt.Fprintf(&b, "- `%s`\n", m.ID)
			}
			return say("%s", b.String())
		}
		if err := ss.rt.SetModel(args); err != nil {
			return say("%v", err)
		}
		ss.modelChanged()
		return say("Model: `%s`.", args)
	case "reasoning":
		if args != "" {
			if err := ss.rt.SetReasoning(args); err != nil {
				return say("%v", err)
			}
			ss.configChanged()
		}
		return say("Reasoning: %s.", ss.rt.Reasoning())
	case "mode":
		if args != "" {
			m, ok := parseMode(args)
			if !ok {
				return say("Unknown mode %q: auto, ask or readonly.", args)
			}
			ss.setMode(m)
		}
		return say("Permission mode: %s.", ss.permissionMode())
	case "extensions":
		h := ss.currentHost()
		if h == nil {
			return say("No extensions (zot runs with --no-ext).")
		}
		sts := h.Status()
		if len(sts) == 0 {
			return say("No extensions installed.")
		}
		var b strings.Builder
		for _, st := range sts {
			fmt.Fprintf(&b, "- %s %s: %s", st.Name, st.Version, st.State)
			if st.Reason != "" {
				fmt.Fprintf(&b, " (%s)", st.Reason)
			}
			b.WriteString("\n")
		}
		return say("%s", b.String())
	case "reload-ext":
		h := ss.currentHost()
		if h == nil {
			return say("No extensions (zot runs with --no-ext).")
		}
		if err := h.Reload(ctx); err != nil {
			return say("Reload failed: %v", err)
		}
		ss.commandsChanged()
		return say("Extensions reloaded.")
	}
	if text, ok := ss.checkpointCommand(ctx, name, args); ok {
		return say("%s", text)
	}
	h := ss.currentHost()
	if h == nil {
		return say("Unknown command /%s.", name)
	}
	res, err := h.RunCommand(ctx, name, args)
	if err != nil {
		if ctx.Err() != nil {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
		return say("/%s failed: %v", name, err)
	}
	if res.Error != "" {
		return say("/%s: %s", name, res.Error)
	}
	switch res.Action {
	case "prompt":
		ch, err := ss.rt.Prompt(ctx, res.Prompt, nil)
		if err != nil {
			return sdk.PromptResponse{}, requestError(err)
		}
		return ss.stream(ch)
	case "insert":
		// ACP cannot put text in the editor's input box: show it.
		return say("/%s suggests this prompt (copy it to send it):\n\n%s", name, res.Insert)
	case "panel":
		if res.Panel != nil {
			ss.showPanel(res.Extension, *res.Panel)
		}
		return done, nil
	}
	if res.Display != "" {
		return say("%s", res.Display)
	}
	return done, nil
}

// notice shows an extension's notify (or zot's own note) as an agent
// message chunk marked in _meta as a notice, set apart from the answer.
func (ss *session) notice(level, ext, msg string) {
	text := "\n\n> "
	if ext != "" {
		text += "[" + ext + "] "
	}
	if level != "" && level != "info" {
		text += level + ": "
	}
	text += strings.ReplaceAll(strings.TrimSpace(msg), "\n", "\n> ") + "\n\n"
	ss.update(sdk.SessionUpdate{AgentMessageChunk: &sdk.SessionUpdateAgentMessageChunk{
		Content: sdk.TextBlock(text),
		Meta:    map[string]any{"zot": map[string]any{"notice": map[string]any{"level": level, "extension": ext, "message": msg}}},
	}})
}

// showPanel renders an extension panel as a message: its title, lines and
// footer, and a note that keys need zot lsp (ACP has no panel).
func (ss *session) showPanel(ext string, v wire.PanelView) {
	ss.renderPanel(ext, v.ID, v.Title, v.Lines, v.Footer)
}

func (ss *session) renderPanel(ext, id, title string, lines []string, footer string) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n\n**%s** (panel of extension %s)\n\n```\n%s\n```\n", title, ext, strings.Join(lines, "\n"))
	if footer != "" {
		fmt.Fprintf(&b, "%s\n", footer)
	}
	b.WriteString("\n_This panel is shown read-only here: its keys need `zot lsp` (the VS Code or Neovim client)._\n\n")
	text := b.String()
	ss.mu.Lock()
	same := ss.panels[id] == text
	ss.panels[id] = text
	ss.mu.Unlock()
	if same {
		return
	}
	ss.update(sdk.SessionUpdate{AgentMessageChunk: &sdk.SessionUpdateAgentMessageChunk{
		Content: sdk.TextBlock(text),
		Meta:    map[string]any{"zot": map[string]any{"panel": map[string]any{"id": id, "extension": ext, "title": title, "lines": lines, "footer": footer}}},
	}})
}
