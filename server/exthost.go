package server

import (
	"context"
	"strings"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/wire"
)

// ExtensionHost is the HostFactory of zot's extension host (package
// extensions), with hot reload on file changes. logf receives host-level
// messages; per-extension logs go to $ZOT_HOME/logs.
func ExtensionHost(logf func(format string, args ...any)) HostFactory {
	return func(ctx context.Context, cfg HostConfig) (Host, error) {
		builtinCmds := BuiltinCommandNames()
		o := extensions.Options{
			Cwd: cfg.Cwd, Home: cfg.Home, ZotVersion: agent.Version, Provider: cfg.Provider, Model: cfg.Model,
			ExtPaths: cfg.Exts, EditorExtPaths: cfg.EditorExts, BuiltinTools: tools.Core, ReplaceableTools: tools.Replaceable, BuiltinCommands: builtinCmds,
			UI: extUI{cfg.UI}, Watch: true, Logf: logf,
			// Extensions start in the background, shown as "starting"
			// until hello: a slow one never holds up the others or the
			// first prompt.
			Background: true,
		}
		if cfg.AskTrust != nil {
			o.AskTrust = func(ctx context.Context, st extensions.Status) bool {
				return cfg.AskTrust(ctx, TrustRequest{Name: st.Name, Dir: st.Dir, Source: st.Source, Description: st.Description, Secrets: st.Secrets})
			}
		}
		if cfg.ConfirmGuardOff != nil {
			o.ConfirmGuardOff = func(ctx context.Context, st extensions.Status) bool {
				return cfg.ConfirmGuardOff(ctx, st.Name, st.Dir)
			}
		}
		h := extensions.NewHost(o)
		if cfg.Actions != nil {
			h.SetActions(cfg.Actions)
		}
		if err := h.Start(ctx); err != nil {
			h.Close(context.WithoutCancel(ctx))
			return nil, err
		}
		return extHost{h}, nil
	}
}

// protectedWrites is the write rule for $ZOT_HOME ("" = the default), the
// project's .zot/extensions and the extension paths: known before the host
// starts, so a prompt that runs while extensions start is checked too.
func protectedWrites(zotHome, cwd string, extPaths []string) tools.WriteRule {
	if zotHome == "" {
		zotHome = home.Dir()
	}
	return extensions.ProtectedWriteRule(extensions.ProtectedDirs(zotHome, cwd, extPaths))
}

// extHost adapts *extensions.Host to Host.
type extHost struct{ *extensions.Host }

func (h extHost) Commands() []CommandInfo {
	cs := h.Host.Commands()
	out := make([]CommandInfo, 0, len(cs))
	for _, c := range cs {
		out = append(out, CommandInfo{Name: c.Name, Description: c.Description, Source: "extension", Extension: c.Extension})
	}
	return out
}

func (h extHost) RunCommand(ctx context.Context, name, args string) (CommandResponse, error) {
	r, err := h.Host.RunCommand(ctx, name, args)
	if err != nil {
		return CommandResponse{}, err
	}
	resp := CommandResponse{Action: r.Action, Prompt: r.Prompt, Insert: r.Insert, Display: r.Display, Error: r.Error}
	if r.Panel != nil {
		resp.Panel = panelOf(r.Extension, *r.Panel)
	}
	return resp, nil
}

func (h extHost) CompleteCommand(ctx context.Context, name, partial string) ([]CommandCompletion, error) {
	cs, err := h.Host.CompleteCommand(ctx, name, partial)
	out := make([]CommandCompletion, 0, len(cs))
	for _, c := range cs {
		out = append(out, CommandCompletion{Value: c.Value, Description: c.Description})
	}
	return out, err
}

func (h extHost) Status() []ExtensionStatus {
	st := h.Host.Status()
	descs := map[string]string{} // extension + "\x00" + command → description
	for _, c := range h.Host.Commands() {
		descs[c.Extension+"\x00"+c.Name] = c.Description
	}
	out := make([]ExtensionStatus, 0, len(st))
	for _, s := range st {
		state := s.State
		if state == extensions.StateReady {
			state = "loaded"
		}
		e := ExtensionStatus{Name: s.Name, Version: s.Version, Source: s.Source, Dir: s.Dir, State: state, Reason: s.Reason, PID: s.PID,
			Commands: s.Commands, Tools: s.Tools}
		if e.Commands == nil {
			e.Commands = []string{}
		}
		if e.Tools == nil {
			e.Tools = []string{}
		}
		e.Shortcuts = shortcutsOf(s.Name, s.Commands, descs)
		out = append(out, e)
	}
	return out
}

func panelOf(ext string, v wire.PanelView) *Panel {
	return &Panel{PanelID: v.ID, Extension: ext, Title: v.Title, Lines: v.Lines, Footer: v.Footer}
}

// extUI adapts HostUI to extensions.UI.
type extUI struct{ ui HostUI }

func (u extUI) Notify(ext, level, msg string) { u.ui.Notify(ext, level, msg) }
func (u extUI) PanelOpen(ext string, v wire.PanelView) {
	u.ui.OpenPanel(*panelOf(ext, v))
}
func (u extUI) PanelRender(ext string, f wire.Frame) {
	u.ui.RenderPanel(Panel{PanelID: f.PanelID, Extension: ext, Title: f.Title, Lines: f.Lines, Footer: f.Footer})
}
func (u extUI) PanelClose(ext, panelID string) { u.ui.ClosePanel(ext, panelID) }
func (u extUI) Changed()                       { u.ui.Changed() }

// shortcutCommand prefixes the command a pi extension's registerShortcut
// registers (the pi runtime names it shortcut:KEY, the key's '+' written
// '-', as a command name cannot hold '+').
const shortcutCommand = "shortcut:"

// shortcutsOf lists an extension's shortcuts: its commands named
// shortcut:KEY, with the key as pi spells it (ctrl+shift+t) and the
// command's description.
func shortcutsOf(ext string, commands []string, descs map[string]string) []Shortcut {
	var out []Shortcut
	for _, c := range commands {
		key, ok := strings.CutPrefix(c, shortcutCommand)
		if !ok || key == "" {
			continue
		}
		out = append(out, Shortcut{Key: strings.ReplaceAll(key, "-", "+"), Command: c, Description: descs[ext+"\x00"+c]})
	}
	return out
}
