package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
)

// registry is an immutable snapshot of what the extensions offer; it is
// swapped atomically, so a model call sees one consistent set.
type registry struct {
	tools     []tools.Tool
	commands  []Command
	cmdIndex  map[string]cmdEntry // lower-cased name
	intercept map[string][]*slot  // event → interceptors in load order
	observe   map[string][]*slot  // event → observers in load order
	// The slots it was built from and each one's advertised process then
	// (nil: none), so a reader can tell whether it is still current.
	slots []*slot
	advs  []*proc
}

type cmdEntry struct {
	s    *slot
	name string
	ext  string
}

// Command is a slash command an extension registered (name without "/").
type Command struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Extension   string `json:"extension"`
}

// CommandResult is an extension's command_response. Action is prompt,
// insert, display, open_panel or noop; Error, when set, is to be shown as
// an error whatever the action. For open_panel the host has already
// registered the panel and called UI.PanelOpen.
type CommandResult struct {
	Extension string          `json:"extension"`
	Action    string          `json:"action"`
	Prompt    string          `json:"prompt,omitempty"`
	Insert    string          `json:"insert,omitempty"`
	Display   string          `json:"display,omitempty"`
	Panel     *wire.PanelView `json:"panel,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// rebuild recomputes the registry from the slots in load order. Built-in
// names win, then the first extension in load order; every shadowed name
// is logged to the loser's log and listed in its Status.
func (h *Host) rebuild() {
	h.regMu.Lock()
	defer h.regMu.Unlock()
	h.mu.Lock()
	slots := slices.Clone(h.slots)
	h.mu.Unlock()
	builtinTools := map[string]bool{}
	for _, n := range h.o.BuiltinTools {
		builtinTools[n] = true
	}
	replaceable := map[string]bool{}
	for _, n := range h.o.ReplaceableTools {
		replaceable[n] = true
	}
	builtinCmds := map[string]bool{}
	for _, n := range h.o.BuiltinCommands {
		builtinCmds[strings.ToLower(strings.TrimPrefix(n, "/"))] = true
	}
	r := &registry{
		cmdIndex:  map[string]cmdEntry{},
		intercept: map[string][]*slot{},
		observe:   map[string][]*slot{},
		slots:     slots,
		advs:      make([]*proc, len(slots)),
	}
	toolOwner := map[string]string{}
	for i, s := range slots {
		s.mu.Lock()
		p, name, dir := s.adv, s.cand.Name, s.cand.Dir
		r.advs[i] = p
		var intercepts map[string]bool
		if p != nil {
			_, _, _, intercepts = p.regs()
			s.guard = intercepts[wire.EventToolCall]
		}
		guardDown := p == nil && s.guard
		s.mu.Unlock()
		if p != nil {
			if err := h.guards.set(dir, intercepts[wire.EventToolCall]); err != nil {
				h.logf("extensions: cannot save %s: %v", GuardsFile, err)
			}
		}
		if guardDown {
			r.intercept[wire.EventToolCall] = append(r.intercept[wire.EventToolCall], s)
		}
		var shadowed, replaces []string
		if p != nil {
			ts, cs, events, intercepts := p.regs()
			for _, t := range ts {
				if builtinTools[t.name] {
					shadowed = append(shadowed, fmt.Sprintf("tool %s (built-in wins)", t.name))
					continue
				}
				if o, ok := toolOwner[t.name]; ok {
					shadowed = append(shadowed, fmt.Sprintf("tool %s (extension %s wins)", t.name, o))
					continue
				}
				toolOwner[t.name] = name
				if replaceable[t.name] {
					replaces = append(replaces, "built-in tool "+t.name)
				}
				r.tools = append(r.tools, &extTool{s: s, ext: name, name: t.name, desc: t.desc, schema: t.schema})
			}
			for _, c := range cs {
				k := strings.ToLower(c.name)
				if builtinCmds[k] {
					shadowed = append(shadowed, fmt.Sprintf("command /%s (built-in wins)", c.name))
					continue
				}
				if o, ok := r.cmdIndex[k]; ok {
					shadowed = append(shadowed, fmt.Sprintf("command /%s (extension %s wins)", c.name, o.ext))
					continue
				}
				r.cmdIndex[k] = cmdEntry{s: s, name: c.name, ext: name}
				r.commands = append(r.commands, Command{Name: c.name, Description: c.desc, Extension: name})
			}
			for _, e := range observable {
				if events[e] {
					r.observe[e] = append(r.observe[e], s)
				}
				if intercepts[e] {
					r.intercept[e] = append(r.intercept[e], s)
				}
			}
		}
		s.setShadowed(shadowed, replaces)
	}
	h.reg.Store(r)
	h.replaySessionStart()
}

// current reports whether the registry reflects the slots as they are
// now: the same slots, each advertising the process it was built with. A
// slot is marked ready before the registry is rebuilt with its process;
// in between, a reader would see the registry from before the start.
func (h *Host) current() bool {
	h.mu.Lock()
	slots := h.slots
	h.mu.Unlock()
	r := h.reg.Load()
	if len(slots) != len(r.slots) {
		return false
	}
	for i, s := range slots {
		s.mu.Lock()
		adv := s.adv
		s.mu.Unlock()
		if s != r.slots[i] || adv != r.advs[i] {
			return false
		}
	}
	return true
}

// Tools returns the extension tools for the next model call; pass it as
// agent.Config.ExtraTools. A reload swaps the set atomically, never during
// a call into the extension being reloaded.
func (h *Host) Tools() []tools.Tool {
	return slices.Clone(h.reg.Load().tools)
}

// Commands lists the extension slash commands (shadowed ones excluded).
func (h *Host) Commands() []Command {
	return slices.Clone(h.reg.Load().commands)
}

// ErrUnknownCommand is returned by RunCommand for a name no extension
// offers.
var ErrUnknownCommand = errors.New("unknown extension command")

// RunCommand runs /name with args (everything after the name). It waits
// for command_response up to the extension's timeout; a crash fails it at
// once.
func (h *Host) RunCommand(ctx context.Context, name, args string) (CommandResult, error) {
	name = strings.TrimPrefix(strings.TrimSpace(name), "/")
	e, ok := h.awaitCommand(ctx, name) // it may be a command of an extension still starting
	if !ok {
		return CommandResult{}, fmt.Errorf("%w: /%s", ErrUnknownCommand, name)
	}
	p, err := e.s.acquire(ctx)
	if err != nil {
		return CommandResult{}, err
	}
	defer p.end()
	a, _ := json.Marshal(strings.TrimSpace(args))
	f, err := p.request(ctx, wire.Frame{Type: wire.TypeCommandInvoked, Name: e.name, Args: a}, p.timeout, false)
	if err != nil {
		if errors.Is(err, errTimeout) {
			return CommandResult{}, fmt.Errorf("/%s: extension %q did not answer within %s", name, p.name, p.timeout)
		}
		return CommandResult{}, fmt.Errorf("/%s: %w", name, err)
	}
	res := CommandResult{Extension: p.name, Action: f.Action, Prompt: f.Prompt, Insert: f.Insert, Display: f.Display, Panel: f.OpenPanel, Error: f.Error}
	switch res.Action {
	case wire.ActionPrompt, wire.ActionInsert, wire.ActionDisplay, wire.ActionNoop:
	case wire.ActionOpenPanel:
		if res.Panel == nil && res.Error == "" {
			res.Action, res.Error = wire.ActionNoop, "open_panel without a panel"
		}
	case "":
		res.Action = wire.ActionNoop
	default:
		if res.Error == "" {
			res.Error = fmt.Sprintf("extension answered with unknown action %q", res.Action)
		}
		res.Action = wire.ActionNoop
	}
	return res, nil
}
