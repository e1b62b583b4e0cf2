package server

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diskText replays the agent's edits onto the saved file, and refuses when
// that would write what the buffer does not show.
func TestDiskTextReplaysAgentEdits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	if err := os.WriteFile(path, []byte("a\nb\nc\nd\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w := &editorWorkspace{}
	typed := "USER\na\nb\nc\nd\n" // the user's unsaved line
	edited := "USER\na\nB\nc\nd\n"
	more := "USER\na\nB\nc\nd\nmore typing\n"
	edited2 := "USER\na\nB\nc\nD\nmore typing\n"
	edits := []bufferEdit{{typed, edited}, {more, edited2}}
	cases := []struct {
		name, buffer, want, err string
	}{
		{"both edits under the user's typing", edited2, "a\nB\nc\nD\n", ""},
		{"the user typed after the edits", "USER\na\nB\nc\nD\nmore typing\nlater\n", "a\nB\nc\nD\n", ""},
		{"the user undid the second edit", more, "", "overlaps"},
		{"the user changed the edited line", "USER\na\nB\nc\nDD\nmore typing\n", "", "overlaps"},
	}
	for _, c := range cases {
		got, onDisk, err := w.diskText(path, c.buffer, edits)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: err = %v, text %q", c.name, err, got)
			}
			continue
		}
		if err != nil || !onDisk || got != c.want {
			t.Errorf("%s: %q, %v, %v; want %q", c.name, got, onDisk, err, c.want)
		}
	}
	// An edit on the user's unsaved line cannot be replayed onto the disk.
	if _, _, err := w.diskText(path, "USER!\na\nb\nc\nd\n", []bufferEdit{{typed, "USER!\na\nb\nc\nd\n"}}); err == nil {
		t.Error("an edit of the user's unsaved line was replayed onto the disk")
	}
}
