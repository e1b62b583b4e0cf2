package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/zot-editors/zot/extensions/wire"
)

// The additions to protocol v1 (docs/extensions.md "Capabilities"): the
// SDK declares "ui", "hooks" and "actions" in hello, so the host answers
// with HostInfo.Capabilities; every call below waits for the host's
// answer (ui_response, action_result) or ctx.

// ErrCancelled is returned by a dialog the user dismissed, that timed
// out without a default, or that this front cannot show (zot -p: see
// HostInfo.Capabilities.UI).
var ErrCancelled = errors.New("sdk: dialog cancelled")

// Handler types of the added hooks.
type (
	// ToolResultHandler may replace a tool's result before the model sees
	// it: return nil to keep it.
	ToolResultHandler func(tool string, args json.RawMessage, result ToolResult) *ToolResult
	// BeforeAgentStartHandler may add messages to the prompt and append to
	// the system prompt for this run.
	BeforeAgentStartHandler func(prompt, systemPrompt string) AgentStart
	// ContextHandler may return a new message list for one model call
	// (messages are zot's message objects); nil keeps it.
	ContextHandler func(messages json.RawMessage) json.RawMessage
	// InputHandler may rewrite the user's prompt or handle it.
	InputHandler func(text string) InputDecision
	// BeforeForkHandler may refuse a fork from entry (session_before_fork).
	BeforeForkHandler func(entry string, withFiles bool) TreeVerdict
	// BeforeTreeHandler may refuse a navigation (session_before_tree).
	BeforeTreeHandler func(prep wire.TreePreparation) TreeVerdict
	// UserBashHandler sees a shell command the user typed (`!cmd`;
	// exclude for `!!cmd`) before it runs (user_bash, fail-closed).
	UserBashHandler func(command, cwd string, exclude bool) UserBashVerdict
)

// UserBashVerdict answers user_bash: Block refuses the command (Reason is
// shown to the user); Result is the extension's own run of it, shown and
// kept in its place; the zero value lets zot run it.
type UserBashVerdict struct {
	Block  bool
	Reason string
	Result *wire.BashResult
}

// TreeVerdict answers session_before_fork / session_before_tree: Cancel
// refuses (Reason is shown to whoever asked).
type TreeVerdict struct {
	Cancel bool
	Reason string
}

// AgentStart is a before_agent_start answer.
type AgentStart struct {
	Messages     []string // added to the prompt's message
	SystemPrompt string   // appended to the system prompt for this run
}

// InputDecision is an input answer: Text rewrites the prompt (""
// keeps it); Handled means no run starts and Display is shown.
type InputDecision struct {
	Text    string
	Handled bool
	Display string
}

// UI is the extension's way to ask the user and show state.
type UI struct{ e *Extension }

// UI returns the dialogs, status and widget calls.
func (e *Extension) UI() UI { return UI{e} }

// Confirm asks a yes/no question.
func (u UI) Confirm(ctx context.Context, title, message string) (bool, error) {
	r, err := u.e.request(ctx, wire.Frame{Type: wire.TypeUIRequest, Kind: wire.UIConfirm, Title: title, Message: message})
	if err != nil {
		return false, err
	}
	var v bool
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return false, fmt.Errorf("sdk: confirm answer %s: %w", r.Value, err)
	}
	return v, nil
}

// Select asks the user to pick one of options.
func (u UI) Select(ctx context.Context, title string, options []string) (string, error) {
	return u.str(ctx, wire.Frame{Type: wire.TypeUIRequest, Kind: wire.UISelect, Title: title, Options: options})
}

// Input asks for a line of text.
func (u UI) Input(ctx context.Context, title, placeholder string) (string, error) {
	return u.str(ctx, wire.Frame{Type: wire.TypeUIRequest, Kind: wire.UIInput, Title: title, Placeholder: placeholder})
}

// Editor asks for multi-line text, starting from prefill (pi's
// ctx.ui.editor). A front without a multi-line box asks it as Input.
func (u UI) Editor(ctx context.Context, title, prefill string) (string, error) {
	return u.str(ctx, wire.Frame{Type: wire.TypeUIRequest, Kind: wire.UIEditor, Title: title, Default: prefill})
}

// SetEditorText replaces the text of the user's chat input (pi's
// setEditorText). A front without a chat input ignores it.
func (u UI) SetEditorText(text string) error {
	return u.e.sendLive(wire.Frame{Type: wire.TypeSetEditorText, Text: text})
}

// PasteToEditor inserts text at the chat input's cursor (pi's
// pasteToEditor).
func (u UI) PasteToEditor(text string) error {
	return u.e.sendLive(wire.Frame{Type: wire.TypeSetEditorText, Text: text, Paste: true})
}

// EditorText reads the user's chat input ("" where the front has none).
func (u UI) EditorText(ctx context.Context) (string, error) {
	r, err := u.e.request(ctx, wire.Frame{Type: wire.TypeGetEditorText})
	return r.Text, err
}

// Ask sends a ui_request as given (Kind, Title, Message, Options,
// Placeholder, Default, TimeoutMS) and returns the raw ui_response.
func (u UI) Ask(ctx context.Context, f wire.Frame) (wire.Frame, error) {
	f.Type = wire.TypeUIRequest
	return u.e.request(ctx, f)
}

func (u UI) str(ctx context.Context, f wire.Frame) (string, error) {
	r, err := u.e.request(ctx, f)
	if err != nil {
		return "", err
	}
	var v string
	if err := json.Unmarshal(r.Value, &v); err != nil {
		return "", fmt.Errorf("sdk: %s answer %s: %w", f.Kind, r.Value, err)
	}
	return v, nil
}

// SetStatus shows text under key in the editor's status; "" clears it.
func (u UI) SetStatus(key, text string) error {
	return u.e.sendLive(wire.Frame{Type: wire.TypeSetStatus, Key: key, Text: text})
}

// SetWidget shows lines above the chat input under key; nil clears them.
func (u UI) SetWidget(key string, lines []string) error {
	return u.e.sendLive(wire.Frame{Type: wire.TypeSetWidget, Key: key, Lines: lines})
}

// SetStatus is UI().SetStatus.
func (e *Extension) SetStatus(key, text string) error { return e.UI().SetStatus(key, text) }

// toolIDKey carries the tool_call id in a ToolCtx handler's context.
type toolIDKey struct{}

// Update streams progress text of the running tool call (tool_update):
// ctx is the one a ToolCtx handler got. The editor shows it live, as it
// does bash's output.
func (e *Extension) Update(ctx context.Context, text string) error {
	id, _ := ctx.Value(toolIDKey{}).(string)
	if id == "" {
		return errors.New("sdk: Update needs the context of a ToolCtx handler")
	}
	return e.sendLive(wire.Frame{Type: wire.TypeToolUpdate, ID: id, Text: text})
}

// SendMessage sends text to the agent: deliver wire.DeliverSteer (into
// the running run, before its next model call), DeliverFollowUp (after
// the run; either starts a run when idle) or DeliverNextTurn (with the
// user's next prompt).
func (e *Extension) SendMessage(ctx context.Context, text, deliver string) error {
	_, err := e.request(ctx, wire.Frame{Type: wire.TypeSendMessage, Text: text, Deliver: deliver})
	return err
}

// Tools lists every tool (built-in and extension) and whether it is active.
func (e *Extension) Tools(ctx context.Context) ([]wire.ToolInfo, error) {
	r, err := e.request(ctx, wire.Frame{Type: wire.TypeGetTools})
	return r.Tools, err
}

// SetActiveTools limits later model calls to names; nil restores all.
func (e *Extension) SetActiveTools(ctx context.Context, names []string) error {
	_, err := e.request(ctx, wire.Frame{Type: wire.TypeSetActiveTools, Names: names})
	return err
}

// SetModel switches the model (an id of the provider's catalogue).
func (e *Extension) SetModel(ctx context.Context, id string) error {
	_, err := e.request(ctx, wire.Frame{Type: wire.TypeSetModel, Model: id})
	return err
}

// AppendEntry stores data (JSON-encoded) as a custom entry of kind in the
// session: it comes back from Entries after a resume.
func (e *Extension) AppendEntry(ctx context.Context, kind string, data any) error {
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	_, err = e.request(ctx, wire.Frame{Type: wire.TypeAppendEntry, Kind: kind, Data: b})
	return err
}

// Entries returns this extension's session entries of kind ("" all).
func (e *Extension) Entries(ctx context.Context, kind string) ([]wire.Entry, error) {
	r, err := e.request(ctx, wire.Frame{Type: wire.TypeGetEntries, Kind: kind})
	return r.Entries, err
}

// Fork continues the conversation before entry (a prompt of the current
// session, "<session id>:<message index>") in a new session, a branch;
// withFiles also restores the files to the checkpoint before it. It
// reports cancelled when an extension's session_before_fork refused.
func (e *Extension) Fork(ctx context.Context, entry string, withFiles bool) (sessionID string, cancelled bool, err error) {
	r, err := e.request(ctx, wire.Frame{Type: wire.TypeFork, EntryID: entry, WithFiles: withFiles})
	return r.SessionID, r.Cancelled, err
}

// NavigateTree moves the conversation to target (an entry id, or a
// session id for its last message): the answer has cancelled,
// session_id, new_leaf_id, old_leaf_id and editor_text.
func (e *Extension) NavigateTree(ctx context.Context, target string) (wire.Frame, error) {
	return e.request(ctx, wire.Frame{Type: wire.TypeNavigateTree, TargetID: target})
}

// Tree returns the current session's tree.
func (e *Extension) Tree(ctx context.Context) (*wire.Tree, error) {
	r, err := e.request(ctx, wire.Frame{Type: wire.TypeGetTree})
	return r.Tree, err
}

// Compact runs zot's compaction as /compact does, with instructions
// added to its summary request, and returns the summary once it ended. It
// fails during a run, and in zot -p.
func (e *Extension) Compact(ctx context.Context, instructions string) (summary string, err error) {
	r, err := e.request(ctx, wire.Frame{Type: wire.TypeCompact, CustomInstructions: instructions})
	return r.Summary, err
}

// Reload restarts every extension as /reload-ext does, this one too: it
// returns before the restart begins.
func (e *Extension) Reload(ctx context.Context) error {
	_, err := e.request(ctx, wire.Frame{Type: wire.TypeReload})
	return err
}

// SwitchSession resumes a stored session (a session file, a session id or
// "latest"); cancelled when an extension's session_before_switch refused.
func (e *Extension) SwitchSession(ctx context.Context, which string) (cancelled bool, err error) {
	r, err := e.request(ctx, wire.Frame{Type: wire.TypeSwitchSession, SessionFile: which})
	return r.Cancelled, err
}

// Shutdown asks the front to end the session as its own end would (zot
// rpc exits once idle; zot lsp tells the user and stays).
func (e *Extension) Shutdown(ctx context.Context) error {
	_, err := e.request(ctx, wire.Frame{Type: wire.TypeRequestShutdown})
	return err
}

// OnBeforeFork installs the session_before_fork hook. Call before Run.
func (e *Extension) OnBeforeFork(fn BeforeForkHandler) { e.setHook(wire.EventSessionBeforeFork, fn) }

// OnBeforeTree installs the session_before_tree hook. Call before Run.
func (e *Extension) OnBeforeTree(fn BeforeTreeHandler) { e.setHook(wire.EventSessionBeforeTree, fn) }

// OnToolResult installs the tool_result hook. Call before Run.
func (e *Extension) OnToolResult(fn ToolResultHandler) { e.setHook(wire.EventToolResult, fn) }

// OnBeforeAgentStart installs the before_agent_start hook. Call before Run.
func (e *Extension) OnBeforeAgentStart(fn BeforeAgentStartHandler) {
	e.setHook(wire.EventBeforeAgentStart, fn)
}

// OnContext installs the context hook. Call before Run.
func (e *Extension) OnContext(fn ContextHandler) { e.setHook(wire.EventContext, fn) }

// OnInput installs the input hook. Call before Run.
func (e *Extension) OnInput(fn InputHandler) { e.setHook(wire.EventInput, fn) }

// OnUserBash installs the user_bash hook. Call before Run. An answer that
// does not come in time blocks the user's command (fail-closed).
func (e *Extension) OnUserBash(fn UserBashHandler) { e.setHook(wire.EventUserBash, fn) }

func (e *Extension) setHook(event string, fn any) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hooks == nil {
		e.hooks = map[string]any{}
	}
	e.hooks[event] = fn
}

// request sends a frame that the host answers by id and waits.
func (e *Extension) request(ctx context.Context, f wire.Frame) (wire.Frame, error) {
	e.mu.Lock()
	e.reqSeq++
	f.ID = fmt.Sprintf("%s-x%d", e.name, e.reqSeq)
	ch := make(chan wire.Frame, 1)
	if e.waiting == nil {
		e.waiting = map[string]chan wire.Frame{}
	}
	e.waiting[f.ID] = ch
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.waiting, f.ID)
		e.mu.Unlock()
	}()
	if err := e.sendLive(f); err != nil {
		return wire.Frame{}, err
	}
	select {
	case r := <-ch:
		if r.Error != "" && !(r.Type == wire.TypeUIResponse && r.Cancelled) {
			return r, errors.New(r.Error)
		}
		if r.Type == wire.TypeUIResponse && r.Cancelled {
			if r.Error != "" {
				return r, fmt.Errorf("%w: %s", ErrCancelled, r.Error)
			}
			return r, ErrCancelled
		}
		return r, nil
	case <-ctx.Done():
		return wire.Frame{}, ctx.Err()
	case <-e.baseCtx.Done():
		return wire.Frame{}, ErrNotRunning
	}
}

// answer hands ui_response / action_result / error to its request.
func (e *Extension) answer(f wire.Frame) {
	e.mu.Lock()
	ch := e.waiting[f.ID]
	e.mu.Unlock()
	if ch == nil {
		if f.Type == wire.TypeError {
			e.Logf("host: %s: %s", f.Ref, f.Error)
		}
		return
	}
	select {
	case ch <- f:
	default:
	}
}

// runHook answers an event_intercept of an added hook; a hook not
// installed (or one that panics) answers with nothing to change.
func (e *Extension) runHook(f wire.Frame, resp *wire.Frame) bool {
	e.mu.Lock()
	fn := e.hooks[f.Event]
	e.mu.Unlock()
	if fn == nil {
		return false
	}
	defer func() {
		if r := recover(); r != nil {
			e.Logf("%s hook panicked: %v\n%s", f.Event, r, debug.Stack())
			*resp = wire.Frame{Type: wire.TypeEventInterceptResponse, ID: f.ID}
		}
	}()
	switch h := fn.(type) {
	case ToolResultHandler:
		in := ToolResult{Content: f.Content, IsError: f.IsError}
		if out := h(f.ToolName, objectArgs(f.ToolArgs), in); out != nil {
			resp.Content, resp.IsError = out.Content, out.IsError
			if len(resp.Content) == 0 {
				resp.Content = []wire.Block{{Type: "text", Text: ""}}
			}
		}
	case BeforeAgentStartHandler:
		d := h(f.Prompt, f.SystemPrompt)
		if len(d.Messages) > 0 {
			resp.Messages, _ = json.Marshal(d.Messages)
		}
		resp.SystemPrompt = d.SystemPrompt
	case ContextHandler:
		resp.Messages = h(f.Messages)
	case BeforeForkHandler:
		v := h(f.EntryID, f.WithFiles)
		resp.Cancel, resp.Reason = v.Cancel, v.Reason
	case BeforeTreeHandler:
		var prep wire.TreePreparation
		if f.Preparation != nil {
			prep = *f.Preparation
		}
		v := h(prep)
		resp.Cancel, resp.Reason = v.Cancel, v.Reason
	case UserBashHandler:
		v := h(f.Command, f.Cwd, f.ExcludeFromContext)
		resp.Block, resp.Reason, resp.BashResult = v.Block, v.Reason, v.Result
	case InputHandler:
		d := h(f.Text)
		if d.Handled {
			resp.Handled, resp.Display = true, d.Display
		} else if d.Text != "" {
			t := d.Text
			resp.ReplaceText = &t
		}
	}
	return true
}
