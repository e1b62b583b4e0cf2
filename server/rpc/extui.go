package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/wire"
)

// The rpc front's side of the extensions' "ask the user" seam
// (extensions.Asker): a dialog is an ext_ui_request event the client
// answers with a ui_response command; ext_ui_closed tells it a dialog it
// still shows is moot (timeout, abort, the extension died). Status items
// and widgets are ext_status / ext_widget events.

// UIRequestEvent is the ext_ui_request event.
type UIRequestEvent struct {
	Type        string   `json:"type"` // ext_ui_request
	ID          string   `json:"id"`
	Extension   string   `json:"extension"`
	Kind        string   `json:"kind"` // confirm | select | input | editor
	Title       string   `json:"title,omitempty"`
	Message     string   `json:"message,omitempty"`
	Options     []string `json:"options,omitempty"`
	Placeholder string   `json:"placeholder,omitempty"`
	Default     string   `json:"default,omitempty"`
	// Prefill is an editor's text to start from (pi's RPC field).
	Prefill string `json:"prefill,omitempty"`
}

// EditorTextEvent is ext_set_editor_text: an extension set the client's
// input box (pi's RPC set_editor_text). Text is the whole new text;
// Pasted, for a paste, the piece the extension inserted (a client may
// insert it at its cursor instead, and report the result with
// editor_text).
type EditorTextEvent struct {
	Type      string `json:"type"` // ext_set_editor_text
	Extension string `json:"extension"`
	Text      string `json:"text"`
	Pasted    string `json:"pasted,omitempty"`
}

// chatInput is the client's input box as zot rpc knows it.
type chatInput struct {
	mu   sync.Mutex
	text string
}

func (c *chatInput) set(text string) {
	c.mu.Lock()
	c.text = text
	c.mu.Unlock()
}

// SetInput sends ext_set_editor_text with the input's new text.
func (s *Server) SetInput(ext, text string, paste bool) {
	out := s.outp.Load()
	if out == nil {
		return
	}
	ev := EditorTextEvent{Type: "ext_set_editor_text", Extension: ext, Text: text}
	s.input.mu.Lock()
	if paste {
		ev.Text, ev.Pasted = s.input.text+text, text
	}
	s.input.text = ev.Text
	// Written under the lock: two extensions' sets reach the client in
	// the order zot keeps them.
	out.write(ev)
	s.input.mu.Unlock()
}

// GetInput answers what zot knows of the input box: the last text an
// extension set there or the client reported (editor_text); "" before.
func (s *Server) GetInput(context.Context) (string, error) {
	s.input.mu.Lock()
	defer s.input.mu.Unlock()
	return s.input.text, nil
}

type dialogs struct {
	mu      sync.Mutex
	seq     int
	waiting map[string]chan Command
}

// UICapabilities: an rpc client answers every dialog kind (an editor
// as input unless its hello said ui_kinds editor), shows status and
// widgets and has an input box; panels need an editor.
func (s *Server) UICapabilities() wire.UICapabilities {
	return RPCUICapabilities
}

// RPCUICapabilities is what zot rpc offers extensions.
var RPCUICapabilities = wire.UICapabilities{Confirm: true, Select: true, Input: true, Status: true, Widget: true, Editor: true, EditorText: true}

// Ask sends ext_ui_request and waits for the client's ui_response.
func (s *Server) Ask(ctx context.Context, ext string, req extensions.UIRequest) extensions.UIAnswer {
	out := s.outp.Load()
	if out == nil {
		return extensions.UIAnswer{Cancelled: true}
	}
	s.dlg.mu.Lock()
	if s.dlg.waiting == nil {
		s.dlg.waiting = map[string]chan Command{}
	}
	s.dlg.seq++
	id := fmt.Sprintf("ui-%d", s.dlg.seq)
	ch := make(chan Command, 1)
	s.dlg.waiting[id] = ch
	s.dlg.mu.Unlock()
	defer func() {
		s.dlg.mu.Lock()
		delete(s.dlg.waiting, id)
		s.dlg.mu.Unlock()
	}()
	ev := UIRequestEvent{Type: "ext_ui_request", ID: id, Extension: ext, Kind: req.Kind, Title: req.Title,
		Message: req.Message, Options: req.Options, Placeholder: req.Placeholder, Default: req.Default}
	if req.Kind == wire.UIEditor {
		if s.editorKind.Load() {
			ev.Prefill, ev.Default = req.Default, ""
		} else {
			ev.Kind = wire.UIInput // a client that did not announce it: one line, prefilled
		}
	}
	out.write(ev)
	select {
	case c := <-ch:
		if c.Cancelled || len(c.Value) == 0 {
			return extensions.UIAnswer{Cancelled: true}
		}
		if req.Kind == wire.UIConfirm {
			var b bool
			if json.Unmarshal(c.Value, &b) != nil {
				return extensions.UIAnswer{Cancelled: true}
			}
			return extensions.UIAnswer{Confirmed: b}
		}
		var v string
		if json.Unmarshal(c.Value, &v) != nil {
			return extensions.UIAnswer{Cancelled: true}
		}
		return extensions.UIAnswer{Value: v}
	case <-ctx.Done():
		out.write(map[string]any{"type": "ext_ui_closed", "id": id})
		return extensions.UIAnswer{Cancelled: true}
	}
}

// uiResponse routes a ui_response command to its dialog.
func (s *Server) uiResponse(c Command) error {
	if c.UIID == "" {
		// The command's own id may name the dialog.
		json.Unmarshal(c.ID, &c.UIID)
	}
	if c.UIID == "" {
		return errors.New(`ui_response needs "ui_id" (the ext_ui_request's id)`)
	}
	s.dlg.mu.Lock()
	ch, ok := s.dlg.waiting[c.UIID]
	delete(s.dlg.waiting, c.UIID)
	s.dlg.mu.Unlock()
	if !ok {
		return fmt.Errorf("no open ext_ui_request %q (answered, timed out or closed)", c.UIID)
	}
	ch <- c
	return nil
}

// SetStatus sends ext_status; text "" clears the item.
func (s *Server) SetStatus(ext, key, text string) {
	out := s.outp.Load()
	if out == nil {
		return
	}
	ev := map[string]any{"type": "ext_status", "extension": ext, "key": key, "text": nil}
	if text != "" {
		ev["text"] = text
	}
	out.write(ev)
}

// SetWidget sends ext_widget; lines null clears the widget.
func (s *Server) SetWidget(ext, key string, lines []string) {
	out := s.outp.Load()
	if out == nil {
		return
	}
	out.write(map[string]any{"type": "ext_widget", "extension": ext, "key": key, "lines": lines})
}

// StartPrompt queues a run with text, as a prompt command would (an
// extension's send_message while idle). Once the input has ended (stdin
// EOF, or Serve stopping) it is refused with an error, which the
// extension gets as its action's error.
func (s *Server) StartPrompt(text string) error {
	if s.outp.Load() == nil {
		return errors.New("the rpc session is not serving")
	}
	var err error
	s.enqueue(func(any) {}, func(e error) { err = e }, func(ctx context.Context) (<-chan agent.Event, error) {
		return s.rt.Prompt(ctx, text, nil)
	})
	return err
}

// EnqueueRun queues an extension's compaction (ctx.compact) as the
// compact command does: its events are the session's. Refused while a
// run is in progress or waiting, so the extension hears how it ended.
func (s *Server) EnqueueRun(title string, start func(context.Context) (<-chan agent.Event, error), unstarted func(why string)) error {
	if s.outp.Load() == nil {
		return errors.New("the rpc session is not serving")
	}
	s.mu.Lock()
	busy := s.pending > 0
	s.mu.Unlock()
	if busy {
		return errors.New("a compaction cannot start during a run: call it when the agent is idle (ctx.waitForIdle(), or from a command)")
	}
	var err error
	s.enqueueJob(func(any) {}, func(e error) { err = e }, &job{start: start, unstarted: unstarted})
	return err
}

// Shutdown is an extension's ctx.shutdown: pi's RPC mode exits at the
// next idle. The shutdown event names the extension; no command is read
// after the one being handled, the running and queued runs finish, then
// Serve returns (zot rpc exits 0; the extensions hear session_shutdown).
func (s *Server) Shutdown(extension string) error {
	if s.outp.Load() == nil {
		return errors.New("the rpc session is not serving")
	}
	s.shutdownOnce.Do(func() {
		if w := s.live.Load(); w != nil {
			w.write(ShutdownEvent{Type: "shutdown", Extension: extension})
		}
		close(s.shutdown)
	})
	return nil
}

// ShutdownEvent is the shutdown event: an extension ended the session.
type ShutdownEvent struct {
	Type      string `json:"type"`
	Extension string `json:"extension"`
}
