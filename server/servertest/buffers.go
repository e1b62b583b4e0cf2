// The fake editor's buffers: open documents, the user typing (UTF-16
// positions, incremental didChange) and files on disk.

package servertest

import (
	"os"
	"path/filepath"

	"go.lsp.dev/uri"
)

// Buffer is an open document.
type Buffer struct {
	URI     string
	Path    string
	Version int32
	Text    string
	Dirty   bool
}

// Path resolves a workspace-relative path.
func (e *Editor) Path(rel string) string {
	if filepath.IsAbs(rel) {
		return rel
	}
	return filepath.Join(e.cfg.Root, rel)
}

// URI of a workspace-relative path.
func (e *Editor) URI(rel string) string { return string(uri.File(e.Path(rel))) }

// WriteFile writes a file to disk (not through the editor).
func (e *Editor) WriteFile(rel, text string) {
	e.t.Helper()
	p := e.Path(rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// ReadFile reads a file from disk.
func (e *Editor) ReadFile(rel string) string {
	b, _ := os.ReadFile(e.Path(rel))
	return string(b)
}

// Open opens a buffer with text (which need not match the disk: unsaved).
func (e *Editor) Open(rel, text string) {
	e.mu.Lock()
	e.buffers[e.URI(rel)] = &Buffer{URI: e.URI(rel), Path: e.Path(rel), Version: 1, Text: text, Dirty: text != e.ReadFile(rel)}
	e.mu.Unlock()
	e.Notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": e.URI(rel), "languageId": "plaintext", "version": 1, "text": text}})
}

// Close closes a buffer.
func (e *Editor) Close(rel string) {
	e.mu.Lock()
	delete(e.buffers, e.URI(rel))
	e.mu.Unlock()
	e.Notify("textDocument/didClose", map[string]any{"textDocument": map[string]any{"uri": e.URI(rel)}})
}

// Buffer returns a buffer's text ("" and false if not open).
func (e *Editor) Buffer(rel string) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.buffers[e.URI(rel)]
	if !ok {
		return "", false
	}
	return b.Text, true
}

// Dirty reports whether a buffer has changes not saved to disk.
func (e *Editor) Dirty(rel string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	b, ok := e.buffers[e.URI(rel)]
	return ok && b.Dirty
}

// Version of a buffer.
func (e *Editor) Version(rel string) int32 {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.buffers[e.URI(rel)]; ok {
		return b.Version
	}
	return 0
}

// Type inserts text at a UTF-16 position, as the user typing, and sends
// an incremental didChange.
func (e *Editor) Type(rel string, line, char int, text string) {
	e.Replace(rel, line, char, line, char, text)
}

// Replace replaces a UTF-16 range and sends an incremental didChange.
func (e *Editor) Replace(rel string, l1, c1, l2, c2 int, text string) {
	e.t.Helper()
	e.mu.Lock()
	b, ok := e.buffers[e.URI(rel)]
	if !ok {
		e.mu.Unlock()
		e.t.Fatalf("%s is not open", rel)
	}
	s, en := Offset(b.Text, l1, c1), Offset(b.Text, l2, c2)
	b.Text = b.Text[:s] + text + b.Text[en:]
	b.Version++
	b.Dirty = true
	v := b.Version
	e.mu.Unlock()
	e.Notify("textDocument/didChange", map[string]any{
		"textDocument": map[string]any{"uri": e.URI(rel), "version": v},
		"contentChanges": []map[string]any{{
			"range": rangeOf(l1, c1, l2, c2), "text": text}},
	})
}

// SetText replaces a buffer's whole text with a full-content didChange
// (no range).
func (e *Editor) SetText(rel, text string) {
	e.mu.Lock()
	b := e.buffers[e.URI(rel)]
	b.Text = text
	b.Version++
	b.Dirty = true
	v := b.Version
	e.mu.Unlock()
	e.Notify("textDocument/didChange", map[string]any{
		"textDocument":   map[string]any{"uri": e.URI(rel), "version": v},
		"contentChanges": []map[string]any{{"text": text}},
	})
}

func rangeOf(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]int{"line": l1, "character": c1}, "end": map[string]int{"line": l2, "character": c2}}
}

// TextEdit is an LSP text edit.
type TextEdit struct {
	Range struct {
		Start Pos `json:"start"`
		End   Pos `json:"end"`
	} `json:"range"`
	NewText string `json:"newText"`
}

// Pos is an LSP position.
type Pos struct {
	Line      int `json:"line"`
	Character int `json:"character"`
}
