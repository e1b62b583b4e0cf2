package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/internal/atomicfile"
)

// run calls tool with args (marshalled to JSON) and no progress sink.
func run(t testing.TB, tool Tool, args any) Result {
	t.Helper()
	return runCtx(t, context.Background(), tool, args, nil)
}

func runCtx(t testing.TB, ctx context.Context, tool Tool, args any, progress func(string)) Result {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	if progress == nil {
		progress = func(string) {}
	}
	return tool.Run(ctx, Call{ID: "call_1", Args: raw, Progress: progress})
}

func text(r Result) string { return message.TextOf(r.Content) }

// mustOK fails unless r is a success and returns its text.
func mustOK(t testing.TB, r Result) string {
	t.Helper()
	if r.IsError {
		t.Fatalf("unexpected error result: %s", text(r))
	}
	return text(r)
}

// mustErr fails unless r is an error whose text contains every want.
func mustErr(t testing.TB, r Result, want ...string) string {
	t.Helper()
	if !r.IsError {
		t.Fatalf("expected an error result, got: %s", text(r))
	}
	s := text(r)
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("error %q does not contain %q", s, w)
		}
	}
	return s
}

func contains(t testing.TB, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Fatalf("%q does not contain %q", s, w)
		}
	}
}

func notContains(t testing.TB, s string, bad ...string) {
	t.Helper()
	for _, w := range bad {
		if strings.Contains(s, w) {
			t.Fatalf("%q should not contain %q", s, w)
		}
	}
}

// writeFiles creates files under dir from a map of slash paths to content.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// overlayWorkspace is a fake editor: open buffers shadow the disk, writes
// and edits land in the buffers, Sync writes them out.
type overlayWorkspace struct {
	Workspace
	mu      sync.Mutex
	buffers map[string][]byte
	edits   int
	syncs   int
}

func newOverlay(root string) *overlayWorkspace {
	return &overlayWorkspace{Workspace: NewDiskWorkspace(root), buffers: map[string][]byte{}}
}

func (o *overlayWorkspace) open(p, text string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buffers[p] = []byte(text)
}

func (o *overlayWorkspace) ReadFile(ctx context.Context, p string) ([]byte, error) {
	o.mu.Lock()
	b, ok := o.buffers[p]
	o.mu.Unlock()
	if ok {
		return append([]byte(nil), b...), nil
	}
	return o.Workspace.ReadFile(ctx, p)
}

// OverlaidPaths lists the open buffers: grep reads every other file from
// disk itself.
func (o *overlayWorkspace) OverlaidPaths() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var paths []string
	for p := range o.buffers {
		paths = append(paths, p)
	}
	return paths
}

func (o *overlayWorkspace) WriteFile(ctx context.Context, p string, data []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.buffers[p]; ok {
		o.buffers[p] = append([]byte(nil), data...)
		return nil
	}
	return o.Workspace.WriteFile(ctx, p, data)
}

func (o *overlayWorkspace) EditFile(ctx context.Context, p string, oldData, newData []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.edits++
	if b, ok := o.buffers[p]; ok {
		if string(b) != string(oldData) {
			return ErrFileChanged
		}
		o.buffers[p] = append([]byte(nil), newData...)
		return nil
	}
	return o.Workspace.EditFile(ctx, p, oldData, newData)
}

func (o *overlayWorkspace) Sync(ctx context.Context) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.syncs++
	for p, b := range o.buffers {
		if err := atomicfile.Write(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
