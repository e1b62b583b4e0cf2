// The fake editor's client side: reading what zot sends and answering
// its requests (workspace/applyEdit, window/showMessageRequest,
// zot/reviewEdit, zot/save) as an editor would.

package servertest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"go.lsp.dev/uri"
)

// ReviewEdit is zot/reviewEdit's params.
type ReviewEdit struct {
	URI        string `json:"uri"`
	OldText    string `json:"oldText"`
	NewText    string `json:"newText"`
	ToolCallID string `json:"toolCallId"`
	Tool       string `json:"tool"`
}

// ReviewResult answers zot/reviewEdit.
type ReviewResult struct {
	Decision string  `json:"decision"`
	Text     *string `json:"text,omitempty"`
	Message  string  `json:"message,omitempty"`
}

// StopReading makes the editor stop reading zot's stdout (a hung or
// hostile editor), until ResumeReading.
func (e *Editor) StopReading() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.paused == nil {
		e.paused = make(chan struct{})
	}
}

// ResumeReading undoes StopReading.
func (e *Editor) ResumeReading() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.paused != nil {
		close(e.paused)
		e.paused = nil
	}
}

// UnreadOutput is how many bytes zot wrote that the editor has not read
// from the pipe yet (FIONREAD; 0 where that is not available).
func (e *Editor) UnreadOutput() int {
	if e.stdout == nil {
		return 0
	}
	return pipeBytes(e.stdout)
}

func (e *Editor) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 256<<10)
	arrived := 0
	for {
		e.mu.Lock()
		paused := e.paused
		e.mu.Unlock()
		if paused != nil {
			<-paused
		}
		body, err := readFrame(br)
		if err != nil {
			e.mu.Lock()
			e.readErr = err
			e.mu.Unlock()
			e.bump()
			return
		}
		var m Message
		if err := json.Unmarshal(body, &m); err != nil {
			e.t.Errorf("zot sent invalid JSON: %v: %q", err, body)
			continue
		}
		arrived++
		m.Seq = arrived
		switch {
		case m.Method != "" && len(m.ID) > 0:
			e.mu.Lock()
			e.requests = append(e.requests, m)
			e.mu.Unlock()
			e.bump()
			go e.serve(m)
		case m.Method != "":
			if h := e.notifyHook.Load(); h != nil && !(*h)(m.Method, m.Params) {
				continue
			}
			e.mu.Lock()
			e.notes = append(e.notes, m)
			if m.Method == "zot/input/set" && e.cfg.ZotInput {
				e.applyInputSet(m.Params)
			}
			e.mu.Unlock()
			e.bump()
		default:
			e.mu.Lock()
			ch := e.pending[string(m.ID)]
			delete(e.pending, string(m.ID))
			e.mu.Unlock()
			if ch != nil {
				ch <- m
			} else {
				e.mu.Lock()
				e.notes = append(e.notes, m) // an unsolicited response (e.g. id null)
				e.mu.Unlock()
				e.bump()
			}
		}
	}
}

// applyInputSet applies zot/input/set to the chat input, as the editors
// do: replace, or paste at the cursor (the end). e.mu is held.
func (e *Editor) applyInputSet(raw json.RawMessage) {
	var p struct {
		Text string `json:"text"`
		Mode string `json:"mode"`
	}
	json.Unmarshal(raw, &p)
	if p.Mode == "paste" {
		e.input += p.Text
	} else {
		e.input = p.Text
	}
}

// Input is the chat input's text (ZotInput).
func (e *Editor) Input() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.input
}

// TypeInput is the user typing: the chat input becomes text.
func (e *Editor) TypeInput(text string) {
	e.mu.Lock()
	e.input = text
	e.mu.Unlock()
}

func readFrame(br *bufio.Reader) ([]byte, error) {
	length := -1
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if length < 0 {
				return nil, errors.New("frame without Content-Length")
			}
			break
		}
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(k, "Content-Length") {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, err
			}
			length = n
		}
	}
	body := make([]byte, length)
	_, err := io.ReadFull(br, body)
	return body, err
}

// serve answers one server → client request.
func (e *Editor) serve(m Message) {
	var result any
	var rerr *RPCError
	switch m.Method {
	case "workspace/applyEdit":
		if e.BeforeApply != nil {
			e.BeforeApply(m.Params)
		}
		applied, reason, late := e.applyEdit(m.Params)
		r := map[string]any{"applied": applied}
		if reason != "" {
			r["failureReason"] = reason
		}
		for i := 0; i < max(e.AnswerTimes, 1); i++ {
			e.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": r})
		}
		for _, n := range late {
			e.send(n)
		}
		return
	case "window/showMessageRequest":
		var p struct {
			Message string `json:"message"`
			Actions []struct {
				Title string `json:"title"`
			} `json:"actions"`
		}
		json.Unmarshal(m.Params, &p)
		var titles []string
		for _, a := range p.Actions {
			titles = append(titles, a.Title)
		}
		choice := ""
		if e.Choose != nil {
			choice = e.Choose(p.Message, titles)
		}
		if choice == "" {
			result = nil
		} else {
			result = map[string]string{"title": choice}
		}
	case "window/workDoneProgress/create":
		result = nil
	case "window/showDocument":
		result = map[string]any{"success": e.cfg.ShowDocument}
	case "zot/reviewEdit":
		var p ReviewEdit
		json.Unmarshal(m.Params, &p)
		res := ReviewResult{Decision: "accept"}
		if e.Review != nil {
			res = e.Review(p)
		}
		result = res
	case "zot/ui/request":
		var p map[string]any
		json.Unmarshal(m.Params, &p)
		res := map[string]any{"cancelled": true}
		if e.UI != nil {
			res = e.UI(p)
		}
		result = res
	case "zot/input/get":
		e.mu.Lock()
		result = map[string]any{"text": e.input}
		e.mu.Unlock()
	case "zot/save":
		var p struct {
			URIs    []string `json:"uris"`
			Rebased []struct {
				URI  string `json:"uri"`
				Text string `json:"text"`
			} `json:"rebased"`
		}
		json.Unmarshal(m.Params, &p)
		res := e.save(p.URIs)
		// A rebased document's text goes to the file; the buffer is kept
		// as it is, modified.
		if !e.IgnoreRebased {
			written := []string{}
			for _, r := range p.Rebased {
				if err := os.WriteFile(uri.URI(r.URI).FsPath(), []byte(r.Text), 0o644); err != nil {
					res["failed"] = append(asFailed(res["failed"]), map[string]string{"uri": r.URI, "reason": err.Error()})
					continue
				}
				written = append(written, r.URI)
			}
			res["written"] = written
		}
		result = res
	default:
		rerr = &RPCError{Code: -32601, Message: "fake editor: no " + m.Method}
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = result
	}
	for i := 0; i < max(e.AnswerTimes, 1); i++ {
		e.send(resp)
	}
}

type docChange struct {
	Kind         string `json:"kind"`
	URI          string `json:"uri"`
	TextDocument *struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"`
	} `json:"textDocument"`
	Edits   []TextEdit `json:"edits"`
	Options *struct {
		Overwrite      bool `json:"overwrite"`
		IgnoreIfExists bool `json:"ignoreIfExists"`
	} `json:"options"`
}

// ApplyEditParams is workspace/applyEdit's params.
type ApplyEditParams struct {
	Label string `json:"label"`
	Edit  struct {
		Changes         map[string][]TextEdit `json:"changes"`
		DocumentChanges []docChange           `json:"documentChanges"`
	} `json:"edit"`
}

// applyEdit applies a workspace edit all or nothing, like an editor:
// versions must match, positions are UTF-16, files not open are opened
// (didOpen) first, created files are created on disk empty.
func (e *Editor) applyEdit(raw json.RawMessage) (ok bool, reason string, late []map[string]any) {
	var p ApplyEditParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return false, "bad params: " + err.Error(), nil
	}
	type step struct {
		create  string
		uri     string
		version *int32
		edits   []TextEdit
	}
	var steps []step
	for u, edits := range p.Edit.Changes {
		steps = append(steps, step{uri: u, edits: edits})
	}
	for _, dc := range p.Edit.DocumentChanges {
		switch {
		case dc.Kind == "create":
			steps = append(steps, step{create: dc.URI})
		case dc.Kind != "":
			return false, "fake editor: unsupported resource operation " + dc.Kind, nil
		case dc.TextDocument != nil:
			steps = append(steps, step{uri: dc.TextDocument.URI, version: dc.TextDocument.Version, edits: dc.Edits})
		}
	}
	// Validate versions first: all or nothing.
	e.mu.Lock()
	for _, s := range steps {
		if s.uri == "" || s.version == nil {
			continue
		}
		b, ok := e.buffers[s.uri]
		if ok && b.Version != *s.version {
			e.mu.Unlock()
			return false, fmt.Sprintf("version mismatch for %s: the edit is for version %d, the buffer is at %d", s.uri, *s.version, b.Version), nil
		}
	}
	e.mu.Unlock()
	for _, s := range steps {
		if s.create != "" {
			path := uri.URI(s.create).FsPath()
			if _, err := os.Stat(path); err != nil {
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, nil, 0o644)
			}
			continue
		}
		e.mu.Lock()
		b, ok := e.buffers[s.uri]
		e.mu.Unlock()
		if !ok {
			path := uri.URI(s.uri).FsPath()
			data, err := os.ReadFile(path)
			if err != nil {
				return false, "cannot open " + s.uri + ": " + err.Error(), late
			}
			rel, _ := filepath.Rel(e.cfg.Root, path)
			e.Open(rel, string(data))
			e.mu.Lock()
			b = e.buffers[s.uri]
			e.mu.Unlock()
		}
		e.mu.Lock()
		text := b.Text
		type abs struct {
			s, e int
			te   TextEdit
		}
		var as []abs
		for _, te := range s.edits {
			as = append(as, abs{Offset(text, te.Range.Start.Line, te.Range.Start.Character), Offset(text, te.Range.End.Line, te.Range.End.Character), te})
		}
		sort.SliceStable(as, func(i, j int) bool { return as[i].s < as[j].s })
		for i := 1; i < len(as); i++ {
			if as[i].s < as[i-1].e {
				e.mu.Unlock()
				return false, "overlapping edits", late
			}
		}
		// Apply from the end so earlier positions stay valid, and send
		// the changes in that order.
		var changes []map[string]any
		for i := len(as) - 1; i >= 0; i-- {
			a := as[i]
			changes = append(changes, map[string]any{"range": rangeOf(a.te.Range.Start.Line, a.te.Range.Start.Character, a.te.Range.End.Line, a.te.Range.End.Character), "text": a.te.NewText})
			text = text[:a.s] + a.te.NewText + text[a.e:]
		}
		b.Text = text
		b.Version++
		b.Dirty = true
		v := b.Version
		e.mu.Unlock()
		change := map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
			"textDocument":   map[string]any{"uri": s.uri, "version": v},
			"contentChanges": changes,
		}}
		if e.LateDidChange {
			late = append(late, change)
		} else {
			e.send(change)
		}
	}
	e.bump()
	return true, "", late
}

// save writes buffers to disk (zot/save) and sends didSave.
func (e *Editor) save(uris []string) map[string]any {
	saved := []string{}
	var failed []map[string]string
	for _, u := range uris {
		e.mu.Lock()
		b, ok := e.buffers[u]
		var text string
		if ok {
			text = b.Text
			b.Dirty = false
		}
		e.mu.Unlock()
		if !ok {
			failed = append(failed, map[string]string{"uri": u, "reason": "not open"})
			continue
		}
		if err := os.WriteFile(uri.URI(u).FsPath(), []byte(text), 0o644); err != nil {
			failed = append(failed, map[string]string{"uri": u, "reason": err.Error()})
			continue
		}
		saved = append(saved, u)
		e.Notify("textDocument/didSave", map[string]any{"textDocument": map[string]any{"uri": u}})
	}
	res := map[string]any{"saved": saved}
	if failed != nil {
		res["failed"] = failed
	}
	return res
}

func asFailed(v any) []map[string]string {
	f, _ := v.([]map[string]string)
	return f
}

// ApplyEdits returns the workspace/applyEdit requests zot sent.
func (e *Editor) ApplyEdits() []ApplyEditParams {
	var out []ApplyEditParams
	for _, m := range e.Requests("workspace/applyEdit") {
		var p ApplyEditParams
		json.Unmarshal(m.Params, &p)
		out = append(out, p)
	}
	return out
}
