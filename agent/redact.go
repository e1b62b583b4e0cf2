package agent

import (
	"encoding/json"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/internal/secrets"
)

// Redaction keeps the provider key (from --api-key, the environment or
// auth.json) and the RPC token out of tool results, events and the session
// file. Tool results are masked before the model sees them, so a model that
// reads /proc/PID/cmdline or the environment cannot repeat the key.

func redactContents(r *secrets.Redactor, cs []message.Content) []message.Content {
	if !r.Active() {
		return cs
	}
	var out []message.Content
	for i, c := range cs {
		rc := redactContent(r, c)
		if out == nil && !sameContent(rc, c) {
			out = append(make([]message.Content, 0, len(cs)), cs[:i]...)
		}
		if out != nil {
			out = append(out, rc)
		}
	}
	if out == nil {
		return cs
	}
	return out
}

func redactContent(r *secrets.Redactor, c message.Content) message.Content {
	c.Text = r.String(c.Text)
	if len(c.Args) > 0 {
		c.Args = json.RawMessage(r.Bytes(c.Args))
	}
	if len(c.Content) > 0 {
		c.Content = redactContents(r, c.Content)
	}
	return c
}

func sameContent(a, b message.Content) bool {
	return a.Text == b.Text && string(a.Args) == string(b.Args) && len(a.Content) == len(b.Content) &&
		(len(a.Content) == 0 || &a.Content[0] == &b.Content[0])
}

// redactEvent masks secrets in every text an event carries.
func redactEvent(r *secrets.Redactor, e Event) Event {
	if !r.Active() {
		return e
	}
	e.Delta = r.String(e.Delta)
	e.Text = r.String(e.Text)
	e.Message = r.String(e.Message)
	e.Error = r.String(e.Error)
	e.Summary = r.String(e.Summary)
	if len(e.Args) > 0 {
		e.Args = json.RawMessage(r.Bytes(e.Args))
	}
	e.Content = redactContents(r, e.Content)
	if b := e.UserBash; b != nil {
		c := *b
		c.Output, c.Note, c.Reason = r.String(c.Output), r.String(c.Note), r.String(c.Reason)
		e.UserBash = &c
	}
	return e
}
