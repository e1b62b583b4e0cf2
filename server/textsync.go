package server

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"go.lsp.dev/protocol"
)

// document is one open editor buffer.
type document struct {
	uri     string
	path    string
	version int32
	text    string
	lang    string
}

// overlay holds the open documents, keyed by file path, so the tools read
// what the user sees, unsaved typing included.
type overlay struct {
	mu      sync.Mutex
	docs    map[string]*document
	changed chan struct{} // closed and replaced on every change
}

func newOverlay() *overlay {
	return &overlay{docs: map[string]*document{}, changed: make(chan struct{})}
}

// get returns a copy of the document at path.
func (o *overlay) get(path string) (document, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	d, ok := o.docs[path]
	if !ok {
		return document{}, false
	}
	return *d, true
}

// paths lists the open documents' paths.
func (o *overlay) paths() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.docs))
	for p := range o.docs {
		out = append(out, p)
	}
	return out
}

func (o *overlay) bump() {
	close(o.changed)
	o.changed = make(chan struct{})
}

func (o *overlay) open(d document) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.docs[d.path] = &d
	o.bump()
}

func (o *overlay) close(path string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.docs, path)
	o.bump()
}

// waitChange waits until the document at path differs from version (a
// didChange arrived, or it was closed or reopened) or the wait is over;
// the caller looks at the document again either way.
func (o *overlay) waitChange(ctx context.Context, path string, version int32, max time.Duration) {
	t := time.NewTimer(max)
	defer t.Stop()
	for {
		o.mu.Lock()
		d, ok := o.docs[path]
		ch := o.changed
		moved := !ok || d.version != version
		o.mu.Unlock()
		if moved {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		case <-t.C:
			return
		}
	}
}

// DidOpen adds a buffer to the overlay.
func (s *Server) DidOpen(ctx context.Context, p *protocol.DidOpenTextDocumentParams) error {
	u := string(p.TextDocument.URI)
	path := uriPath(u)
	if path == "" {
		return nil // untitled:, git: … buffers are not files zot can edit
	}
	s.overlay.open(document{uri: u, path: path, version: p.TextDocument.Version, text: p.TextDocument.Text, lang: string(p.TextDocument.LanguageID)})
	s.ws.opened(path)
	return nil
}

// DidClose drops a buffer: reads go to the disk again.
func (s *Server) DidClose(ctx context.Context, p *protocol.DidCloseTextDocumentParams) error {
	if path := uriPath(string(p.TextDocument.URI)); path != "" {
		s.overlay.close(path)
		s.ws.closed(path)
	}
	return nil
}

// DidSave notes that the disk caught up with a buffer.
func (s *Server) DidSave(ctx context.Context, p *protocol.DidSaveTextDocumentParams) error {
	if path := uriPath(string(p.TextDocument.URI)); path != "" {
		s.ws.saved(path)
	}
	return nil
}

// changeEvent is TextDocumentContentChangeEvent with an optional range: a
// change without one replaces the whole text.
type changeEvent struct {
	Range *protocol.Range `json:"range"`
	Text  string          `json:"text"`
}

type didChangeParams struct {
	TextDocument struct {
		URI     string `json:"uri"`
		Version int32  `json:"version"`
	} `json:"textDocument"`
	ContentChanges []changeEvent `json:"contentChanges"`
}

// didChange applies incremental (or full) changes to a buffer. Changes to
// a document that is not open, or that arrive out of order, are logged and
// the document is left as it was: the next full didOpen repairs it.
func (s *Server) didChange(raw json.RawMessage) {
	var p didChangeParams
	if err := decodeParams("textDocument/didChange", raw, &p); err != nil {
		s.logf("%v", err)
		return
	}
	path := uriPath(p.TextDocument.URI)
	if path == "" {
		return
	}
	s.mu.Lock()
	enc := s.enc
	s.mu.Unlock()
	o := s.overlay
	o.mu.Lock()
	defer o.mu.Unlock()
	d, ok := o.docs[path]
	if !ok {
		s.logf("didChange for %s, which is not open", p.TextDocument.URI)
		return
	}
	text := d.text
	for _, c := range p.ContentChanges {
		if c.Range == nil {
			text = c.Text
			continue
		}
		start, end := offsetOf(text, c.Range.Start, enc), offsetOf(text, c.Range.End, enc)
		if end < start {
			start, end = end, start
		}
		text = text[:start] + c.Text + text[end:]
	}
	d.text = text
	d.version = p.TextDocument.Version
	o.bump()
}
