package tools

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"old.txt": "old\n", "sub/keep": ""})
	if err := os.Chmod(filepath.Join(dir, "old.txt"), 0o600); err != nil {
		t.Fatal(err)
	}
	tool := NewWrite(NewDiskWorkspace(dir))

	out := mustOK(t, run(t, tool, map[string]any{"path": "new/deep/file.go", "content": "package x\n\nfunc f() {}\n"}))
	contains(t, out, "Created new/deep/file.go", "23 bytes", "3 lines")
	if got := readFile(t, filepath.Join(dir, "new/deep/file.go")); got != "package x\n\nfunc f() {}\n" {
		t.Fatalf("content %q", got)
	}

	out = mustOK(t, run(t, tool, map[string]any{"path": "old.txt", "content": "new"}))
	contains(t, out, "Overwrote old.txt", "3 bytes", "1 line)")
	if got := readFile(t, filepath.Join(dir, "old.txt")); got != "new" {
		t.Fatalf("content %q", got)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "old.txt")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode not preserved: %v", fi.Mode().Perm())
	}

	out = mustOK(t, run(t, tool, map[string]any{"path": "empty.txt", "content": ""}))
	contains(t, out, "Created empty.txt", "0 bytes")

	mustErr(t, run(t, tool, map[string]any{"path": "sub", "content": "x"}), "is a directory")
	mustErr(t, run(t, tool, map[string]any{"path": "x.txt"}), "write needs content")
	mustErr(t, run(t, tool, map[string]any{"content": "x"}), "write needs a path")
}

func TestWriteGoesThroughWorkspace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "disk\n"})
	ws := newOverlay(dir)
	p := filepath.Join(dir, "a.txt")
	ws.open(p, "buffer\n")
	contains(t, mustOK(t, run(t, NewWrite(ws), map[string]any{"path": "a.txt", "content": "via editor\n"})), "Overwrote")
	if got := readFile(t, p); got != "disk\n" {
		t.Fatalf("disk changed behind the editor's back: %q", got)
	}
	if string(ws.buffers[p]) != "via editor\n" {
		t.Fatalf("buffer %q", ws.buffers[p])
	}
}
