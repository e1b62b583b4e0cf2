package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/extensions/wire"
)

// Actions is what extensions may do to the run (send_message,
// set_active_tools, get_tools, set_model, append_entry, get_entries). The
// front provides it (RuntimeActions covers every front; only starting a
// run when idle is the front's own); nil means no actions.
type Actions interface {
	SendMessage(ext, text, deliver string) error
	Tools() []wire.ToolInfo
	SetActiveTools(names []string) error
	SetModel(id string) error
	AppendEntry(ext, kind string, data json.RawMessage) error
	Entries(ext, kind string) []wire.Entry
	// The session tree (pi's ctx.fork / ctx.branch, ctx.navigateTree).
	Fork(ctx context.Context, ext, entry string, withFiles bool) (agent.ForkResult, error)
	NavigateTree(ctx context.Context, ext, target string, o agent.TreeOptions) (agent.TreeResult, error)
	Tree() (agent.Tree, error)
	// NewSession starts a fresh session (pi's ctx.newSession).
	NewSession(ext string) error
}

// RunControl is what a front's actions may add for pi extensions: abort
// the running prompt, the reasoning level, the transcript. RuntimeActions
// has it when its runtime does (*agent.Runtime); a front without it
// answers those actions with an error.
type RunControl interface {
	Abort()
	Thinking() string
	SetThinking(level string) error
	Messages() []message.Message
}

// SessionControl is what a front's actions may add for the session's
// lifetime (pi's ctx.compact, ctx.switchSession, ctx.shutdown).
// RuntimeActionsWith has it; a front without it answers those actions
// with an error.
type SessionControl interface {
	// Compact runs zot's compaction (as /compact) and returns its summary
	// once it ended; an error during a run, or when it failed.
	Compact(ctx context.Context, ext, instructions string) (string, error)
	// SwitchSession resumes a stored session: a session file, or an id.
	SwitchSession(ext, which string) error
	// Shutdown ends the session as the front ends (Front.Shutdown).
	Shutdown(ext string) error
}

// Front is what RuntimeActionsWith needs of a front beyond the runtime.
type Front struct {
	// StartRun starts a run with text when none is running (send_message
	// steer / follow_up while idle); nil refuses that with an error.
	StartRun func(text string) error
	// SessionChanged (optional) is called after an extension moved the
	// conversation (reason fork, tree, resume; editorText: the prompt a
	// navigation went back to), for the front to follow.
	SessionChanged func(reason, editorText string)
	// EnqueueRun runs start as the front runs its own /compact (its
	// events shown, queued with its runs); a run the front ends before it
	// started (an abort, the front stopping) calls unstarted instead. nil:
	// the front cannot start a compaction (zot -p).
	EnqueueRun func(title string, start func(context.Context) (<-chan agent.Event, error), unstarted func(why string)) error
	// Shutdown ends the session as the front's own end would (zot rpc:
	// exits once idle); nil: ctx.shutdown is accepted and does nothing
	// more (zot -p ends after its prompt anyway).
	Shutdown func(ext string) error
}

// SetActions installs the front's actions; call it before Start (the
// runtime is built after the host, which is its hooks).
func (h *Host) SetActions(a Actions) {
	h.actMu.Lock()
	h.act = a
	h.actMu.Unlock()
}

func (h *Host) actions() Actions {
	h.actMu.Lock()
	defer h.actMu.Unlock()
	return h.act
}

// ActionRuntime is what RuntimeActions needs of the runtime
// (*agent.Runtime).
type ActionRuntime interface {
	Steer(text string) bool
	FollowUp(text string) bool
	NextTurn(text string)
	ToolInfos() []agent.ToolInfo
	SetActiveTools(names []string) error
	ListModels() []provider.Model
	SetModel(id string) error
	AppendEntry(ext, kind string, data json.RawMessage) error
	Entries(ext, kind string) []agent.CustomEntry
	ForkEntry(ctx context.Context, entry string, withFiles bool) (agent.ForkResult, error)
	NavigateTree(ctx context.Context, target string, o agent.TreeOptions) (agent.TreeResult, error)
	SessionTree() (agent.Tree, error)
	NewSession() error
}

var _ ActionRuntime = (*agent.Runtime)(nil)

// RuntimeActions implements Actions on a runtime. startRun starts a run
// with text when none is running (send_message steer / follow_up while
// idle); nil refuses that with an error. sessionChanged (optional) is
// called after an extension moved the conversation (reason fork or tree;
// editorText: the prompt a navigation went back to), for the front to
// follow.
func RuntimeActions(rt ActionRuntime, startRun func(text string) error, sessionChanged func(reason, editorText string)) Actions {
	return RuntimeActionsWith(rt, Front{StartRun: startRun, SessionChanged: sessionChanged})
}

// RuntimeActionsWith is RuntimeActions with the front's session controls
// (SessionControl).
func RuntimeActionsWith(rt ActionRuntime, f Front) Actions {
	return &runtimeActions{rt: rt, start: f.StartRun, changed: f.SessionChanged, front: f}
}

type runtimeActions struct {
	rt      ActionRuntime
	start   func(string) error
	changed func(reason, editorText string)
	front   Front
	mu      sync.Mutex // a message sent while idle starts one run, not two
}

var _ SessionControl = (*runtimeActions)(nil)

// sessionRuntime is the part of *agent.Runtime SessionControl needs.
type sessionRuntime interface {
	Busy() bool
	CompactWith(ctx context.Context, instructions string) (<-chan agent.Event, error)
	Resume(which string) error
	ResumeFile(path string) error
}

var _ sessionRuntime = (*agent.Runtime)(nil)

// errDuringRun refuses what pi's commands do once idle.
func errDuringRun(what string) error {
	return fmt.Errorf("%s cannot start during a run: call it when the agent is idle (ctx.waitForIdle(), or from a command)", what)
}

func (a *runtimeActions) Compact(ctx context.Context, ext, instructions string) (string, error) {
	sr, ok := a.rt.(sessionRuntime)
	if !ok || a.front.EnqueueRun == nil {
		return "", fmt.Errorf("this front cannot start a compaction (zot -p runs one prompt)")
	}
	if sr.Busy() {
		return "", errDuringRun("a compaction")
	}
	type outcome struct {
		summary string
		err     error
	}
	done := make(chan outcome, 1)
	start := func(rctx context.Context) (<-chan agent.Event, error) {
		ch, err := sr.CompactWith(rctx, instructions)
		if err != nil {
			if errors.Is(err, agent.ErrBusy) {
				err = errDuringRun("a compaction")
			}
			done <- outcome{err: err}
			return nil, err
		}
		// The front shows the run's events; the extension hears how it
		// ended.
		out := make(chan agent.Event, cap(ch))
		go func() {
			defer close(out)
			var o outcome
			ended := false
			for ev := range ch {
				switch ev.Type {
				case agent.EventCompactDone:
					o.summary, ended = ev.Summary, true
				case agent.EventError:
					o.err = errors.New(ev.Message)
				case agent.EventTurnEnd:
					if ev.Stop == provider.StopAborted {
						o.err = errors.New("the compaction was aborted")
					}
				}
				out <- ev
			}
			if o.err == nil && !ended {
				o.err = errors.New("the compaction ended without a summary")
			}
			done <- o
		}()
		return out, nil
	}
	unstarted := func(why string) { done <- outcome{err: fmt.Errorf("the compaction did not start: %s", why)} }
	if err := a.front.EnqueueRun("compacting the conversation (asked by extension "+ext+")", start, unstarted); err != nil {
		return "", err
	}
	select {
	case o := <-done:
		return o.summary, o.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func (a *runtimeActions) SwitchSession(ext, which string) error {
	sr, ok := a.rt.(sessionRuntime)
	if !ok {
		return fmt.Errorf("this front cannot switch sessions")
	}
	var err error
	if looksLikePath(which) {
		err = sr.ResumeFile(which)
	} else {
		err = sr.Resume(which)
	}
	if errors.Is(err, agent.ErrBusy) {
		return errDuringRun("a session switch")
	}
	if err != nil {
		return err
	}
	a.sessionChanged("resume", "")
	return nil
}

// looksLikePath tells a session file from a session id ("latest", an id
// of zot sessions).
func looksLikePath(s string) bool {
	return strings.ContainsAny(s, `/\`) || strings.HasSuffix(s, ".jsonl")
}

func (a *runtimeActions) Shutdown(ext string) error {
	if a.front.Shutdown == nil {
		return nil
	}
	return a.front.Shutdown(ext)
}

func (a *runtimeActions) Fork(ctx context.Context, ext, entry string, withFiles bool) (agent.ForkResult, error) {
	r, err := a.rt.ForkEntry(ctx, entry, withFiles)
	if err == nil || r.SessionID != "" { // a fork whose file restore failed still moved
		a.sessionChanged(agent.SessionStartFork, "")
	}
	return r, err
}

func (a *runtimeActions) NavigateTree(ctx context.Context, ext, target string, o agent.TreeOptions) (agent.TreeResult, error) {
	r, err := a.rt.NavigateTree(ctx, target, o)
	if err == nil && !r.Cancelled && r.NewLeafID != r.OldLeafID {
		a.sessionChanged(agent.SessionStartTree, r.EditorText)
	}
	return r, err
}

func (a *runtimeActions) Tree() (agent.Tree, error) { return a.rt.SessionTree() }

func (a *runtimeActions) NewSession(ext string) error {
	if err := a.rt.NewSession(); err != nil {
		if errors.Is(err, agent.ErrBusy) {
			return fmt.Errorf("a new session cannot start during a run (wait for it: waitForIdle)")
		}
		return err
	}
	a.sessionChanged(agent.SessionStartNew, "")
	return nil
}

func (a *runtimeActions) sessionChanged(reason, editorText string) {
	if a.changed != nil {
		a.changed(reason, editorText)
	}
}

func (a *runtimeActions) SendMessage(ext, text, deliver string) error {
	switch deliver {
	case "", wire.DeliverSteer, wire.DeliverFollowUp:
	case wire.DeliverNextTurn:
		a.rt.NextTurn(text)
		return nil
	default:
		return fmt.Errorf("unknown deliver %q (steer, follow_up, next_turn)", deliver)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if deliver == wire.DeliverFollowUp && a.rt.FollowUp(text) {
		return nil
	}
	if deliver != wire.DeliverFollowUp && a.rt.Steer(text) {
		return nil
	}
	if a.start == nil {
		return fmt.Errorf("no run is in progress and this front cannot start one (zot -p); use next_turn")
	}
	return a.start(text)
}

func (a *runtimeActions) Tools() []wire.ToolInfo {
	ts := a.rt.ToolInfos()
	out := make([]wire.ToolInfo, 0, len(ts))
	for _, t := range ts {
		out = append(out, wire.ToolInfo{Name: t.Name, Description: t.Description, Source: t.Source, Active: t.Active})
	}
	return out
}

func (a *runtimeActions) SetActiveTools(names []string) error { return a.rt.SetActiveTools(names) }

// runControl is the part of *agent.Runtime RunControl needs.
type runControl interface {
	Cancel()
	Reasoning() string
	SetReasoning(level string) error
	Messages() []message.Message
}

var _ runControl = (*agent.Runtime)(nil)

func (a *runtimeActions) control() (runControl, error) {
	rc, ok := a.rt.(runControl)
	if !ok {
		return nil, fmt.Errorf("this front's runtime offers no run control")
	}
	return rc, nil
}

func (a *runtimeActions) Abort() {
	if rc, err := a.control(); err == nil {
		rc.Cancel()
	}
}

func (a *runtimeActions) Thinking() string {
	if rc, err := a.control(); err == nil {
		return rc.Reasoning()
	}
	return ""
}

func (a *runtimeActions) SetThinking(level string) error {
	rc, err := a.control()
	if err != nil {
		return err
	}
	return rc.SetReasoning(level)
}

func (a *runtimeActions) Messages() []message.Message {
	if rc, err := a.control(); err == nil {
		return rc.Messages()
	}
	return nil
}

func (a *runtimeActions) SetModel(id string) error {
	for _, m := range a.rt.ListModels() {
		if m.ID == id {
			return a.rt.SetModel(id)
		}
	}
	var ids []string
	for _, m := range a.rt.ListModels() {
		ids = append(ids, m.ID)
	}
	return fmt.Errorf("unknown model %q; models of this provider: %v", id, ids)
}

func (a *runtimeActions) AppendEntry(ext, kind string, data json.RawMessage) error {
	return a.rt.AppendEntry(ext, kind, data)
}

func (a *runtimeActions) Entries(ext, kind string) []wire.Entry {
	es := a.rt.Entries(ext, kind)
	out := make([]wire.Entry, 0, len(es))
	for _, e := range es {
		out = append(out, wire.Entry{Kind: e.Kind, Data: e.Data, Time: e.Time.Format("2006-01-02T15:04:05.000Z07:00")})
	}
	return out
}

// onAction serves an action frame on its own goroutine (an action may
// start a run, which waits on hooks answered by this very reader).
func (p *proc) onAction(f wire.Frame) {
	if f.Type == wire.TypeReload {
		p.onReload(f)
		return
	}
	res := wire.Frame{Type: wire.TypeActionResult, ID: f.ID}
	err := p.doAction(f, &res)
	if err != nil {
		res.Error = err.Error()
		p.log.printf("%s: %v", f.Type, err)
	}
	if f.ID != "" {
		p.send(res, false)
	} else if err != nil {
		p.send(wire.Frame{Type: wire.TypeError, Ref: f.Type, Error: err.Error()}, false)
	}
}

// onReload restarts every extension, as /reload-ext does: the host's
// own, in every front. It is answered first, as the caller is one of the
// extensions restarted (pi: "await ctx.reload()" resolves, and the
// handler's frame runs on in the old runtime, which then stops).
func (p *proc) onReload(f wire.Frame) {
	if f.ID != "" {
		p.send(wire.Frame{Type: wire.TypeActionResult, ID: f.ID}, false)
	}
	h := p.s.h
	p.log.printf("reload: asked by the extension")
	h.goBG(func() {
		if err := h.Reload(h.ctx); err != nil {
			h.logf("reload asked by extension %s: %v", p.name, err)
		}
	})
}

func (p *proc) doAction(f wire.Frame, res *wire.Frame) error {
	if f.Type == wire.TypeGetCommands {
		// The host's own knowledge: no front needed.
		res.Commands = []wire.CommandInfo{}
		for _, n := range p.s.h.o.BuiltinCommands {
			res.Commands = append(res.Commands, wire.CommandInfo{Name: n, Source: "builtin"})
		}
		for _, c := range p.s.h.Commands() {
			res.Commands = append(res.Commands, wire.CommandInfo{Name: c.Name, Description: c.Description, Source: "extension", Extension: c.Extension})
		}
		return nil
	}
	a := p.s.h.actions()
	if a == nil {
		return fmt.Errorf("this front offers no %s", f.Type)
	}
	switch f.Type {
	case wire.TypeSendMessage:
		if f.Text == "" {
			return fmt.Errorf("send_message needs a text")
		}
		if len(f.Text) > wire.MaxActionBytes {
			return fmt.Errorf("send_message text is %d bytes; the limit is %d", len(f.Text), wire.MaxActionBytes)
		}
		return a.SendMessage(p.name, f.Text, f.Deliver)
	case wire.TypeGetTools:
		res.Tools = a.Tools()
		if res.Tools == nil {
			res.Tools = []wire.ToolInfo{}
		}
		return nil
	case wire.TypeSetActiveTools:
		if err := a.SetActiveTools(f.Names); err != nil {
			return err
		}
		res.Tools = a.Tools()
		return nil
	case wire.TypeSetModel:
		if f.Model == "" {
			return fmt.Errorf("set_model needs a model id")
		}
		return a.SetModel(f.Model)
	case wire.TypeAppendEntry:
		if f.Kind == "" {
			return fmt.Errorf("append_entry needs a kind")
		}
		if len(f.Data) > wire.MaxActionBytes {
			return fmt.Errorf("append_entry %s data is %d bytes; the limit is %d", f.Kind, len(f.Data), wire.MaxActionBytes)
		}
		return a.AppendEntry(p.name, f.Kind, f.Data)
	case wire.TypeGetEntries:
		res.Entries = a.Entries(p.name, f.Kind)
		if res.Entries == nil {
			res.Entries = []wire.Entry{}
		}
		return nil
	case wire.TypeFork:
		r, err := a.Fork(p.s.h.ctx, p.name, f.EntryID, f.WithFiles)
		var c *agent.CancelledError
		if errors.As(err, &c) {
			res.Cancelled, res.Reason = true, c.Error()
			return nil
		}
		if err != nil {
			return err
		}
		res.SessionID = r.SessionID
		return nil
	case wire.TypeNavigateTree:
		r, err := a.NavigateTree(p.s.h.ctx, p.name, f.TargetID, agent.TreeOptions{Summarize: f.Summarize,
			CustomInstructions: f.CustomInstructions, ReplaceInstructions: f.ReplaceInstructions, Label: f.Label})
		if err != nil {
			return err
		}
		res.Cancelled, res.SessionID, res.NewLeafID, res.OldLeafID, res.EditorText = r.Cancelled, r.SessionID, r.NewLeafID, r.OldLeafID, r.EditorText
		return nil
	case wire.TypeNewSession:
		if d := p.s.h.BeforeSwitch(p.s.h.ctx, "new", ""); d.Cancel {
			res.Cancelled, res.Reason = true, switchRefused(d)
			return nil
		}
		return a.NewSession(p.name)
	case wire.TypeCompact, wire.TypeSwitchSession, wire.TypeRequestShutdown:
		sc, ok := a.(SessionControl)
		if !ok {
			return fmt.Errorf("this front offers no %s", f.Type)
		}
		switch f.Type {
		case wire.TypeCompact:
			if len(f.CustomInstructions) > wire.MaxActionBytes {
				return fmt.Errorf("compact custom_instructions is %d bytes; the limit is %d", len(f.CustomInstructions), wire.MaxActionBytes)
			}
			summary, err := sc.Compact(p.s.h.ctx, p.name, f.CustomInstructions)
			res.Summary = summary
			return err
		case wire.TypeSwitchSession:
			which := strings.TrimSpace(f.SessionFile)
			if which == "" {
				return fmt.Errorf("switch_session needs a session_file (a session file, or a session id)")
			}
			if d := p.s.h.BeforeSwitch(p.s.h.ctx, "resume", which); d.Cancel {
				res.Cancelled, res.Reason = true, switchRefused(d)
				return nil
			}
			return sc.SwitchSession(p.name, which)
		default:
			return sc.Shutdown(p.name)
		}
	case wire.TypeGetTree:
		t, err := a.Tree()
		if err != nil {
			return err
		}
		wt := &wire.Tree{SessionID: t.SessionID, LeafID: t.LeafID, Sessions: make([]wire.TreeBranch, 0, len(t.Sessions))}
		for _, b := range t.Sessions {
			wt.Sessions = append(wt.Sessions, wire.TreeBranch(b))
		}
		res.Tree = wt
		return nil
	case wire.TypeAbort, wire.TypeGetThinking, wire.TypeSetThinking, wire.TypeGetMessages:
		rc, ok := a.(RunControl)
		if !ok {
			return fmt.Errorf("this front offers no %s", f.Type)
		}
		switch f.Type {
		case wire.TypeAbort:
			rc.Abort()
		case wire.TypeGetThinking:
			res.Level = rc.Thinking()
		case wire.TypeSetThinking:
			if err := rc.SetThinking(f.Level); err != nil {
				return err
			}
			res.Level = rc.Thinking()
		case wire.TypeGetMessages:
			msgs := rc.Messages()
			if msgs == nil {
				msgs = []message.Message{}
			}
			b, err := json.Marshal(msgs)
			if err != nil {
				return err
			}
			res.Messages = b
		}
		return nil
	}
	return fmt.Errorf("unknown action %q", f.Type)
}

// interceptWait waits for an intercept answer: InterceptTimeout at most,
// paused while the extension has a dialog open (the user is deciding).
func (s *slot) interceptWait(ctx context.Context, p *proc, f wire.Frame) (wire.Frame, error) {
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	limit := s.hookTimeout(f.Event)
	go func() {
		t := time.NewTimer(limit)
		defer t.Stop()
		for {
			select {
			case <-cctx.Done():
				return
			case <-t.C:
			}
			if w := p.dialogWait(); w != nil {
				select {
				case <-cctx.Done():
					return
				case <-w:
				}
				t.Reset(limit)
				continue
			}
			cancel(errInterceptTimeout)
			return
		}
	}()
	r, err := p.request(cctx, f, 0, false)
	if err != nil && context.Cause(cctx) == errInterceptTimeout && ctx.Err() == nil {
		return wire.Frame{}, fmt.Errorf("no answer within %s", limit)
	}
	return r, err
}
