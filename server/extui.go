package server

import (
	"context"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/wire"
)

// The zot lsp side of the extensions' "ask the user" seam
// (extensions.Asker): zot/ui/request, zot/ui/status and zot/ui/widget
// for a client that says experimental.zot.ui; otherwise confirm and
// select fall back to window/showMessageRequest, input is cancelled and
// status and widgets are not offered.

var _ extensions.Asker = hostUI{}

// Fallback confirm choices (window/showMessageRequest), asked No first:
// the default of a question an extension asks (often "allow this?") is
// the one that lets nothing happen.
const (
	UIYes = "Yes"
	UINo  = "No"
)

func (u hostUI) UICapabilities() wire.UICapabilities {
	c := u.s.caps.zot
	return wire.UICapabilities{Confirm: true, Select: true, Input: c.UI, Status: c.UI, Widget: c.UI, Panels: c.Panels,
		Editor: c.UI, EditorText: c.Input}
}

func (u hostUI) Ask(ctx context.Context, ext string, req extensions.UIRequest) extensions.UIAnswer {
	s := u.s
	if req.Kind == wire.UIEditor && !s.caps.zot.Editor {
		// A client that shows no multi-line box gets its one-line input,
		// prefilled (as before the editor kind).
		req.Kind = wire.UIInput
	}
	if s.caps.zot.UI {
		// s.call sends $/cancelRequest when ctx ends first (timeout,
		// abort, the extension died): the editor closes the dialog.
		res, err := requestUI.call(ctx, s, &UIRequestParams{Extension: ext, Kind: req.Kind, Title: req.Title, Message: req.Message,
			Options: req.Options, Placeholder: req.Placeholder, Default: req.Default})
		if err != nil || res.Cancelled || res.Value == nil {
			return extensions.UIAnswer{Cancelled: true}
		}
		switch v := res.Value.(type) {
		case bool:
			if req.Kind == wire.UIConfirm {
				return extensions.UIAnswer{Confirmed: v}
			}
		case string:
			if req.Kind != wire.UIConfirm {
				return extensions.UIAnswer{Value: v}
			}
		}
		return extensions.UIAnswer{Cancelled: true}
	}
	msg := "[" + ext + "] " + req.Title
	if req.Message != "" {
		if req.Title != "" {
			msg += ": "
		}
		msg += req.Message
	}
	switch req.Kind {
	case wire.UIConfirm:
		switch s.ask(ctx, protocol.MessageTypeInfo, msg, UINo, UIYes) {
		case UIYes:
			return extensions.UIAnswer{Confirmed: true}
		case UINo:
			return extensions.UIAnswer{Confirmed: false}
		}
	case wire.UISelect:
		if v := s.ask(ctx, protocol.MessageTypeInfo, msg, req.Options...); v != "" {
			return extensions.UIAnswer{Value: v}
		}
	}
	return extensions.UIAnswer{Cancelled: true}
}

func (u hostUI) SetStatus(ext, key, text string) {
	p := UIStatusParams{Extension: ext, Key: key}
	if text != "" {
		p.Text = &text
	}
	notifyUIStatus.send(u.s, p)
}

func (u hostUI) SetWidget(ext, key string, lines []string) {
	notifyUIWidget.send(u.s, UIWidgetParams{Extension: ext, Key: key, Lines: lines})
}

var _ extensions.ChatInput = hostUI{}

// SetInput sends zot/input/set (only offered to a client with
// experimental.zot.input).
func (u hostUI) SetInput(ext, text string, paste bool) {
	mode := InputReplace
	if paste {
		mode = InputPaste
	}
	notifyInputSet.send(u.s, InputSetParams{Extension: ext, Text: text, Mode: mode})
}

// GetInput asks the client for its chat input (zot/input/get).
func (u hostUI) GetInput(ctx context.Context) (string, error) {
	res, err := requestInputGet.call(ctx, u.s, &InputGetParams{})
	return res.Text, err
}

// extUI (exthost.go) passes the seam through when the front has it.
var (
	_ extensions.Asker     = extUI{}
	_ extensions.ChatInput = extUI{}
)

func (u extUI) SetInput(ext, text string, paste bool) {
	if ci, ok := u.ui.(extensions.ChatInput); ok {
		ci.SetInput(ext, text, paste)
	}
}

func (u extUI) GetInput(ctx context.Context) (string, error) {
	if ci, ok := u.ui.(extensions.ChatInput); ok {
		return ci.GetInput(ctx)
	}
	return "", nil
}

func (u extUI) asker() extensions.Asker {
	a, _ := u.ui.(extensions.Asker)
	return a
}

func (u extUI) UICapabilities() wire.UICapabilities {
	if a := u.asker(); a != nil {
		return a.UICapabilities()
	}
	return wire.UICapabilities{}
}

func (u extUI) Ask(ctx context.Context, ext string, req extensions.UIRequest) extensions.UIAnswer {
	if a := u.asker(); a != nil {
		return a.Ask(ctx, ext, req)
	}
	return extensions.UIAnswer{Cancelled: true}
}

func (u extUI) SetStatus(ext, key, text string) {
	if a := u.asker(); a != nil {
		a.SetStatus(ext, key, text)
	}
}

func (u extUI) SetWidget(ext, key string, lines []string) {
	if a := u.asker(); a != nil {
		a.SetWidget(ext, key, lines)
	}
}

// afterTool is zot lsp's layer on the tool_result hooks: write and edit
// change the editor's buffers; an extension is a process that reads the
// disk (lint-on-write runs a linter on the file): save them first, as
// before bash.
func (s *Server) afterTool(ctx context.Context, call agent.ToolCallInfo, res tools.Result, next func(context.Context, agent.ToolCallInfo, tools.Result) tools.Result) tools.Result {
	if ic, ok := s.currentHost().(interface{ Intercepts(string) bool }); ok && ic.Intercepts(wire.EventToolResult) && (call.Name == "write" || call.Name == "edit") {
		if err := s.ws.Sync(ctx); err != nil {
			s.logf("saving the agent's edits before the tool_result hooks: %v", err)
		}
	}
	return next(ctx, call, res)
}
