// Expectations: bounded waits on what zot sent, failing with what was
// seen, and helpers to read zot/event streams.

package servertest

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Wait waits until cond holds, checked after every message zot sends and
// every few milliseconds (for conditions outside the editor: files,
// processes).
func (e *Editor) Wait(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.After(WaitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		e.mu.Lock()
		ch := e.changed
		e.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline:
			e.t.Fatalf("timed out waiting for %s\nlast notifications:\n%s\nstderr:\n%s", what, e.recent(15), e.Stderr())
		}
	}
}

func (e *Editor) recent(n int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	start := max(0, len(e.notes)-n)
	for _, m := range e.notes[start:] {
		p := string(m.Params)
		if len(p) > 300 {
			p = p[:300] + "…"
		}
		fmt.Fprintf(&b, "  %s %s\n", m.Method, p)
	}
	return b.String()
}

// Notes returns the recorded notifications of a method ("" for all).
func (e *Editor) Notes(method string) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return byMethod(e.notes, method)
}

// Requests returns the server → client requests of a method ("" for all).
func (e *Editor) Requests(method string) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return byMethod(e.requests, method)
}

func byMethod(ms []Message, method string) []Message {
	var out []Message
	for _, m := range ms {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// WaitNote waits for a notification of method matching match (nil: any)
// and returns it.
func (e *Editor) WaitNote(method string, match func(params json.RawMessage) bool) Message {
	e.t.Helper()
	var got Message
	e.Wait("notification "+method, func() bool {
		for _, m := range e.Notes(method) {
			if match == nil || match(m.Params) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// Event is one zot/event.
type Event map[string]any

// Type is the event's type.
func (ev Event) Type() string { s, _ := ev["type"].(string); return s }

// Str is a string field.
func (ev Event) Str(k string) string { s, _ := ev[k].(string); return s }

// Events returns the zot/event notifications of a run, in order.
func (e *Editor) Events(runID string) []Event {
	var out []Event
	for _, m := range e.Notes("zot/event") {
		var ev Event
		json.Unmarshal(m.Params, &ev)
		if runID == "" || ev.Str("runId") == runID {
			out = append(out, ev)
		}
	}
	return out
}

// WaitDone waits for a run's done event and returns the run's events.
func (e *Editor) WaitDone(runID string) []Event {
	e.t.Helper()
	var evs []Event
	e.Wait("done of "+runID, func() bool {
		evs = e.Events(runID)
		return len(evs) > 0 && evs[len(evs)-1].Type() == "done"
	})
	return evs
}

// WaitEvent waits for an event of a run with the given type.
func (e *Editor) WaitEvent(runID, typ string) Event {
	e.t.Helper()
	var got Event
	e.Wait(typ+" of "+runID, func() bool {
		for _, ev := range e.Events(runID) {
			if ev.Type() == typ {
				got = ev
				return true
			}
		}
		return false
	})
	return got
}

// Types lists the types of events.
func Types(evs []Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Type())
	}
	return strings.Join(s, " ")
}

// Find returns the first event of a type.
func Find(evs []Event, typ string) Event {
	for _, ev := range evs {
		if ev.Type() == typ {
			return ev
		}
	}
	return nil
}

// FindLast returns the last event of type typ, or nil.
func FindLast(evs []Event, typ string) Event {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type() == typ {
			return evs[i]
		}
	}
	return nil
}

// ResultText is the text of a tool_result event.
func ResultText(ev Event) string {
	var b strings.Builder
	cs, _ := ev["content"].([]any)
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// RunStarted is zot/prompt's answer.
type RunStarted struct {
	RunID  string `json:"runId"`
	Queued bool   `json:"queued"`
	Ahead  int    `json:"ahead"`
}

// Prompt sends zot/prompt and returns its answer.
func (e *Editor) Prompt(text string) RunStarted {
	e.t.Helper()
	var r RunStarted
	e.MustCall("zot/prompt", map[string]any{"text": text}, &r)
	if r.RunID == "" {
		e.t.Fatalf("zot/prompt gave no runId")
	}
	return r
}

// --- buffers ---
