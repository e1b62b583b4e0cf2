package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/session"
)

// What extensions may do to a run (the actions added to protocol v1):
// queue messages, narrow the tool set, keep state in the session.

// Steer queues text to be added, as a user message, before the next model
// call of the running run. False when no run can take it (none is in
// progress, or it is past its last model call): start a run instead.
func (r *Runtime) Steer(text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.accepting {
		return false
	}
	r.steer = append(r.steer, text)
	return true
}

// FollowUp queues text as the next prompt of the running run: when the
// model stops, the run continues with it instead of ending. False when no
// run is in progress.
func (r *Runtime) FollowUp(text string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.accepting {
		return false
	}
	r.followUps = append(r.followUps, text)
	return true
}

// NextTurn queues text to be added to the next prompt's user message; it
// starts nothing.
func (r *Runtime) NextTurn(text string) {
	r.mu.Lock()
	r.nextTurn = append(r.nextTurn, text)
	r.mu.Unlock()
}

func (r *Runtime) takeSteer() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.steer
	r.steer = nil
	return s
}

func (r *Runtime) takeFollowUp() (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.followUps) == 0 {
		return "", false
	}
	t := r.followUps[0]
	r.followUps = r.followUps[1:]
	return t, true
}

func (r *Runtime) takeNextTurn() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.nextTurn
	r.nextTurn = nil
	return s
}

// ToolInfo describes a tool for get_tools.
type ToolInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Source      string `json:"source"` // builtin | extension
	Active      bool   `json:"active"`
}

// ToolInfos lists every tool the runtime knows now, built-in and
// extension, and whether later model calls are offered it.
func (r *Runtime) ToolInfos() []ToolInfo {
	r.mu.Lock()
	active := r.active
	r.mu.Unlock()
	out := []ToolInfo{}
	seen := map[string]bool{}
	add := func(name, desc, src string) {
		if seen[name] {
			return
		}
		seen[name] = true
		out = append(out, ToolInfo{Name: name, Description: desc, Source: src, Active: active == nil || active[name]})
	}
	for _, t := range r.builtins {
		add(t.Name(), t.Description(), "builtin")
	}
	if r.cfg.ExtraTools != nil {
		for _, t := range r.cfg.ExtraTools() {
			add(t.Name(), t.Description(), "extension")
		}
	}
	return out
}

// SetActiveTools limits later model calls to the named tools (built-in
// or extension); nil or empty restores every tool. An unknown name is an
// error naming it and the known ones; nothing changes then.
func (r *Runtime) SetActiveTools(names []string) error {
	if len(names) == 0 {
		r.mu.Lock()
		r.active = nil
		r.mu.Unlock()
		return nil
	}
	known := map[string]bool{}
	var all []string
	for _, t := range r.ToolInfos() {
		known[t.Name] = true
		all = append(all, t.Name)
	}
	set := map[string]bool{}
	for _, n := range names {
		if !known[n] {
			return fmt.Errorf("unknown tool %q; known tools: %s", n, strings.Join(all, ", "))
		}
		set[n] = true
	}
	r.mu.Lock()
	r.active = set
	r.mu.Unlock()
	return nil
}

// CustomEntry is a custom entry an extension keeps in the session
// (append_entry): it follows the session across resume.
type CustomEntry struct {
	Extension string          `json:"extension"`
	Kind      string          `json:"kind"`
	Data      json.RawMessage `json:"data"`
	Time      time.Time       `json:"time"`
}

// AppendEntry stores a custom entry for ext in the session (in memory
// only when sessions are off).
func (r *Runtime) AppendEntry(ext, kind string, data json.RawMessage) error {
	if kind == "" {
		return fmt.Errorf("append_entry needs a kind")
	}
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	if !json.Valid(data) {
		return fmt.Errorf("append_entry %s: data is not valid JSON", kind)
	}
	e := session.Custom{Extension: ext, Kind: kind, Data: slices.Clone(data), Time: now()}
	r.mu.Lock()
	r.custom = append(r.custom, e)
	s := r.sess
	r.mu.Unlock()
	if s != nil {
		return s.AppendCustom(e)
	}
	return nil
}

// Entries returns ext's custom entries of kind ("" for every kind), oldest
// first, including those loaded from a resumed session.
func (r *Runtime) Entries(ext, kind string) []CustomEntry {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := []CustomEntry{}
	for _, e := range r.custom {
		if e.Extension == ext && (kind == "" || e.Kind == kind) {
			out = append(out, CustomEntry{Extension: e.Extension, Kind: e.Kind, Data: e.Data, Time: e.Time})
		}
	}
	return out
}

// ObserveSessionStart tells the hooks a session started (reason startup,
// new or resume). Fronts call it once they are up; run calls it for a
// front that did not.
func (r *Runtime) ObserveSessionStart(reason string) {
	r.mu.Lock()
	r.started = true
	r.mu.Unlock()
	if r.cfg.Hooks != nil {
		r.cfg.Hooks.Observe(Lifecycle{Event: "session_start", Reason: reason})
	}
	r.observeRestoredModel()
}

func (r *Runtime) runHooks() RunHooks {
	if h, ok := r.cfg.Hooks.(RunHooks); ok {
		return h
	}
	return nil
}

func (r *Runtime) observe(ev Lifecycle) {
	if r.cfg.Hooks != nil {
		r.cfg.Hooks.Observe(ev)
	}
}

// textMessage is a user message of plain text.
func textMessage(text string) message.Message {
	return message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(text)}, Time: now()}
}

// CheckToolCall asks the hooks — every guard, then the front's approval
// (--no-yolo, review, permission) — about a tool call made outside the
// model's turn: an extension's exec, checked as the bash call it amounts
// to, so it gets through nothing the model's own call would not.
func (r *Runtime) CheckToolCall(ctx context.Context, id, name string, args json.RawMessage) ToolDecision {
	if r.cfg.Hooks == nil {
		return ToolDecision{}
	}
	return r.cfg.Hooks.BeforeTool(ctx, ToolCallInfo{ID: id, Name: name, Args: args})
}
