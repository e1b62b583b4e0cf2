package acp

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/mcp"
	"github.com/zot-editors/zot/extensions/wire"
)

// hostUI is the extension host's view of the ACP client: notices, panels
// and questions go to a session of the workspace (workspaceHosts.target),
// command lists to all of them.
//
// Questions (extensions.Asker) are session/request_permission, which
// every ACP client serves: confirm as Yes / No, select as one option per
// choice. ACP's elicitation (a form, which input would need) is in the
// SDK's unstable API, but its generated request type cannot carry the
// sessionId the schema requires, so zot does not send it: input is
// cancelled, and host_capabilities says so (docs/acp.md).
type hostUI struct{ w *workspaceHosts }

var (
	_ extensions.UI    = hostUI{}
	_ extensions.Asker = hostUI{}
)

func (u hostUI) Notify(ext, level, msg string) {
	u.w.show(func(ss *session) { ss.notice(level, ext, msg) })
}

func (u hostUI) PanelOpen(ext string, p wire.PanelView) {
	u.w.show(func(ss *session) { ss.showPanel(ext, p) })
}

func (u hostUI) PanelRender(ext string, f wire.Frame) {
	u.w.show(func(ss *session) { ss.renderPanel(ext, f.PanelID, f.Title, f.Lines, f.Footer) })
}

func (u hostUI) PanelClose(ext, panelID string) {
	for _, ss := range u.w.sessions() {
		ss.mu.Lock()
		delete(ss.panels, panelID)
		ss.mu.Unlock()
	}
}

func (u hostUI) Changed() {
	for _, ss := range u.w.sessions() {
		ss.commandsChanged()
	}
}

// UICapabilities: confirm and select (session/request_permission);
// no input (see hostUI), status, widgets or interactive panels.
func (u hostUI) UICapabilities() wire.UICapabilities {
	return wire.UICapabilities{Confirm: true, Select: true}
}

// Ask asks in the session whose tool call or run the extension is
// serving, else the one in use (waiting for the client to know one).
func (u hostUI) Ask(ctx context.Context, ext string, req extensions.UIRequest) extensions.UIAnswer {
	ss, callID := u.w.waitTarget(ctx)
	if ss == nil {
		return extensions.UIAnswer{Cancelled: true}
	}
	return ss.askExtension(ctx, ext, callID, req)
}

func (u hostUI) SetStatus(ext, key, text string)           {}
func (u hostUI) SetWidget(ext, key string, lines []string) {}

// Option ids of the extensions' questions.
const (
	optYes       = "yes"
	optNo        = "no"
	optChoice    = "choice-" // + the choice's index
	optTrust     = "trust"
	optDontTrust = "dont_trust"
)

// askExtension puts an extension's confirm or select to the user as a
// session/request_permission. Asked during a tool call (a tool_call
// intercept such as a permission gate), it is about that tool call;
// otherwise zot shows it as a tool call of its own ("[ext] title") and
// completes it with the answer. When ctx ends first (session/cancel, the
// extension died, the request timed out) the request is withdrawn
// ($/cancel_request) and the answer is cancelled.
func (ss *session) askExtension(ctx context.Context, ext, callID string, req extensions.UIRequest) extensions.UIAnswer {
	var opts []sdk.PermissionOption
	switch req.Kind {
	case wire.UIConfirm:
		opts = []sdk.PermissionOption{ // No first: the safe default
			{OptionId: optNo, Name: "No", Kind: sdk.PermissionOptionKindRejectOnce},
			{OptionId: optYes, Name: "Yes", Kind: sdk.PermissionOptionKindAllowOnce},
		}
	case wire.UISelect:
		for i, o := range req.Options {
			opts = append(opts, sdk.PermissionOption{OptionId: sdk.PermissionOptionId(optChoice + strconv.Itoa(i)), Name: o, Kind: sdk.PermissionOptionKindAllowOnce})
		}
	default:
		return extensions.UIAnswer{Cancelled: true} // input: no form without elicitation
	}
	question := extensionQuestion(ext, req)
	title := "[" + ext + "] " + firstLine(req.Title, req.Message)
	own := callID == ""
	tc := sdk.ToolCallUpdate{Content: []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(question))}}
	if own {
		callID = ss.srv.newAskID("ask")
		ss.update(sdk.StartToolCall(sdk.ToolCallId(callID), title, sdk.WithStartKind(sdk.ToolKindOther), sdk.WithStartStatus(sdk.ToolCallStatusPending),
			sdk.WithStartContent(tc.Content)))
		tc.Title, tc.Kind, tc.Status = sdk.Ptr(title), sdk.Ptr(sdk.ToolKindOther), sdk.Ptr(sdk.ToolCallStatusPending)
	} else if c := ss.call(callID); c != nil {
		tc.Title = sdk.Ptr(c.title)
	}
	tc.ToolCallId = sdk.ToolCallId(callID)
	meta := map[string]any{"zot": map[string]any{"uiRequest": map[string]any{
		"extension": ext, "kind": req.Kind, "title": req.Title, "message": req.Message, "options": req.Options, "default": req.Default}}}
	res, err := ss.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id), ToolCall: tc, Options: opts, Meta: meta})
	ans := extensions.UIAnswer{Cancelled: true}
	if err != nil && ctx.Err() == nil {
		ss.srv.logf("session/request_permission for extension %s: %v", ext, err)
	}
	if err == nil && res.Outcome.Selected != nil {
		id := string(res.Outcome.Selected.OptionId)
		switch {
		case req.Kind == wire.UIConfirm && id == optYes:
			ans = extensions.UIAnswer{Confirmed: true}
		case req.Kind == wire.UIConfirm && id == optNo:
			ans = extensions.UIAnswer{Confirmed: false}
		case req.Kind == wire.UISelect && strings.HasPrefix(id, optChoice):
			if i, err := strconv.Atoi(strings.TrimPrefix(id, optChoice)); err == nil && i >= 0 && i < len(req.Options) {
				ans = extensions.UIAnswer{Value: req.Options[i]}
			}
		}
	}
	if own {
		said, status := "Cancelled: no answer.", sdk.ToolCallStatusFailed
		switch {
		case ans.Cancelled:
		case req.Kind == wire.UIConfirm && ans.Confirmed:
			said, status = "Answered: Yes.", sdk.ToolCallStatusCompleted
		case req.Kind == wire.UIConfirm:
			said, status = "Answered: No.", sdk.ToolCallStatusCompleted
		default:
			said, status = "Answered: "+ans.Value+".", sdk.ToolCallStatusCompleted
		}
		ss.update(sdk.UpdateToolCall(sdk.ToolCallId(callID), sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(question + "\n\n" + said))})))
	}
	return ans
}

// extensionQuestion is the text of an extension's question.
func extensionQuestion(ext string, req extensions.UIRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "**[%s]**", ext)
	if req.Title != "" {
		fmt.Fprintf(&b, " **%s**", req.Title)
	}
	if req.Message != "" {
		b.WriteString("\n\n" + req.Message)
	}
	return b.String()
}

// firstLine is the first non-empty line of the texts.
func firstLine(texts ...string) string {
	for _, t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			line, _, _ := strings.Cut(t, "\n")
			return line
		}
	}
	return "question"
}

// askExtensionTrust asks whether an untrusted project extension may run
// (extensions.Options.AskTrust): its name, directory and command line,
// the secrets it asks for. A yes is recorded by the host (trust.json,
// the hash of its code: changed code asks again), as zot lsp's; a no is
// remembered for this process.
func (w *workspaceHosts) askExtensionTrust(ctx context.Context, st extensions.Status) bool {
	key := "ext\x00" + st.Name + "\x00" + st.Dir
	kind := "project extension"
	if st.Source == extensions.SourceWorkspace {
		kind = "extension (an ext path inside the workspace)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Trust and run the %s **%s** from `%s`? It runs with your permissions, as a subprocess of zot, whenever zot works in %s.", kind, st.Name, st.Dir, w.cwd)
	if m, _, err := extensions.ReadManifest(st.Dir); err == nil {
		fmt.Fprintf(&b, "\n\nIt runs:\n\n```sh\n%s\n```", commandLine(m.Exec, m.Args))
	}
	if len(st.Secrets) > 0 {
		fmt.Fprintf(&b, "\n\nIt asks to receive your %s.", strings.Join(st.Secrets, ", "))
	}
	if st.Description != "" {
		fmt.Fprintf(&b, "\n\nIts description: %s", st.Description)
	}
	fmt.Fprintf(&b, "\n\nTrust covers this code (its hash is recorded in $ZOT_HOME): a change to it asks again. `zot ext trust %s` does the same from a terminal.", st.Name)
	return w.askTrust(ctx, key, "Trust the "+kind+" "+st.Name+"?", b.String(),
		fmt.Sprintf("Not trusted: %s stays off (/extensions shows it; `zot ext trust %s` trusts it).", st.Name, st.Name))
}

// askMCPTrust asks whether an untrusted project MCP server may run,
// showing everything it would run.
func (w *workspaceHosts) askMCPTrust(ctx context.Context, r mcp.TrustRequest) bool {
	key := "mcp\x00" + r.Name + "\x00" + r.CommandLine
	body := fmt.Sprintf("Trust and run the project MCP server **%s** from `%s`? It runs with your permissions:\n\n```sh\n%s\n```\n\nTrust covers this entry of its configuration: a change to it asks again. `zot mcp trust %s` does the same from a terminal.",
		r.Name, r.File, r.CommandLine, r.Name)
	return w.askTrust(ctx, key, "Trust the project MCP server "+r.Name+"?", body,
		fmt.Sprintf("Not trusted: the MCP server %s stays off (`zot mcp trust %s` trusts it).", r.Name, r.Name))
}

// askTrust asks once per process (a no is remembered, so a reload does
// not ask again) in the session the client used last, waiting for the
// client to know one.
func (w *workspaceHosts) askTrust(ctx context.Context, key, title, body, refused string) bool {
	w.mu.Lock()
	declined := w.declined[key]
	w.mu.Unlock()
	if declined {
		return false
	}
	ss, _ := w.waitTarget(ctx)
	if ss == nil {
		return false
	}
	yes := ss.askTrust(ctx, title, body, refused)
	if !yes && ctx.Err() == nil {
		w.mu.Lock()
		w.declined[key] = true
		w.mu.Unlock()
		w.srv.logf("%s", refused)
	}
	return yes
}

// askTrust shows the question as a tool call of zot's own and asks with
// session/request_permission: Trust and run / Don't run. Trusting is
// remembered (allow_always), so a client that approves tool calls on its
// own (an allow_once option) never trusts code for the user.
func (ss *session) askTrust(ctx context.Context, title, body, refused string) bool {
	id := ss.srv.newAskID("trust")
	content := []sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(body))}
	ss.update(sdk.StartToolCall(sdk.ToolCallId(id), title, sdk.WithStartKind(sdk.ToolKindExecute), sdk.WithStartStatus(sdk.ToolCallStatusPending),
		sdk.WithStartContent(content)))
	res, err := ss.srv.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{SessionId: sdk.SessionId(ss.id),
		ToolCall: sdk.ToolCallUpdate{ToolCallId: sdk.ToolCallId(id), Title: sdk.Ptr(title), Kind: sdk.Ptr(sdk.ToolKindExecute), Status: sdk.Ptr(sdk.ToolCallStatusPending), Content: content},
		Options: []sdk.PermissionOption{ // Don't run first: the safe default
			{OptionId: optDontTrust, Name: "Don't run", Kind: sdk.PermissionOptionKindRejectOnce},
			{OptionId: optTrust, Name: "Trust and run", Kind: sdk.PermissionOptionKindAllowAlways},
		},
		Meta: map[string]any{"zot": map[string]any{"trust": true}}})
	if err != nil && ctx.Err() == nil {
		ss.srv.logf("session/request_permission (trust): %v", err)
	}
	yes := err == nil && res.Outcome.Selected != nil && res.Outcome.Selected.OptionId == optTrust
	said, status := refused, sdk.ToolCallStatusFailed
	if yes {
		said, status = "Trusted: it starts now.", sdk.ToolCallStatusCompleted
	}
	ss.update(sdk.UpdateToolCall(sdk.ToolCallId(id), sdk.WithUpdateStatus(status),
		sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(body + "\n\n" + said))})))
	return yes
}

// commandLine shows a command and its arguments, quoting those that need
// it.
func commandLine(exec string, args []string) string {
	parts := []string{quoteArg(exec)}
	for _, a := range args {
		parts = append(parts, quoteArg(a))
	}
	return strings.Join(parts, " ")
}

func quoteArg(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n\"'\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
