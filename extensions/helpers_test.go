package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/proctest"
)

// fakeBin is testdata/fakeext, built once per test run.
var fakeBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zot-ext-test-bin")
	if err != nil {
		panic(err)
	}
	fakeBin = filepath.Join(dir, "fakeext")
	cmd := exec.Command("go", "build", "-o", fakeBin, "./testdata/fakeext")
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building testdata/fakeext:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// wait bounds every poll: a hang guard, not a timing claim. A fault test
// spends ~5 s of CPU under -race, which is a minute of wall time when a
// loaded 2-core machine gives it a tenth of a core.
const wait = 90 * time.Second

func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

type env struct {
	t         testing.TB
	cwd, home string
	ui        *recUI
}

func newEnv(t testing.TB) *env {
	root := t.TempDir()
	e := &env{t: t, cwd: filepath.Join(root, "work"), home: filepath.Join(root, "home"), ui: &recUI{}}
	os.MkdirAll(e.cwd, 0o755)
	os.MkdirAll(e.home, 0o755)
	return e
}

// writeExt creates dir/extension.json running fakeext with -name name.
func writeExt(t testing.TB, dir, name string, extra map[string]any, args ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := map[string]any{"name": name, "version": "0.1.0", "exec": fakeBin, "args": append([]string{"-name", name}, args...)}
	for k, v := range extra {
		m[k] = v
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func (e *env) global(name string, args ...string) string {
	return writeExt(e.t, filepath.Join(GlobalRoot(e.home), name), name, nil, args...)
}

func (e *env) project(name string, args ...string) string {
	return writeExt(e.t, filepath.Join(ProjectRoot(e.cwd), name), name, nil, args...)
}

func (e *env) opts() Options {
	return Options{
		Cwd: e.cwd, Home: e.home, ZotVersion: "test", Provider: "anthropic", Model: "m",
		UI:             e.ui,
		RestartBackoff: []time.Duration{10 * time.Millisecond, 10 * time.Millisecond, 10 * time.Millisecond},
	}
}

// start runs a host with e's dirs; mod adjusts the options.
func (e *env) start(mod func(*Options)) *Host {
	e.t.Helper()
	o := e.opts()
	if mod != nil {
		mod(&o)
	}
	h := NewHost(o)
	e.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		h.Close(ctx)
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		e.t.Fatal(err)
	}
	return h
}

func (e *env) logOf(name string) string {
	b, _ := os.ReadFile(filepath.Join(e.home, "logs", "ext-"+name+".log"))
	return string(b)
}

func statusOf(h *Host, name string) Status {
	for _, s := range h.Status() {
		if s.Name == name && s.State != StateShadowed {
			return s
		}
	}
	return Status{}
}

func toolNamed(h *Host, name string) tools.Tool {
	for _, t := range h.Tools() {
		if t.Name() == name {
			return t
		}
	}
	return nil
}

func callTool(t testing.TB, h *Host, name, args string) tools.Result {
	t.Helper()
	tool := toolNamed(h, name)
	if tool == nil {
		t.Fatalf("tool %s not registered; status %+v", name, h.Status())
	}
	return tool.Run(context.Background(), tools.Call{ID: "call-1", Args: json.RawMessage(args), Progress: func(string) {}})
}

func resultText(r tools.Result) string { return message.TextOf(r.Content) }

// recUI records what the host shows.
type recUI struct {
	mu       sync.Mutex
	notifies []string
	opens    []wire.PanelView
	renders  []wire.Frame
	closes   []string
	changed  int
}

func (u *recUI) Notify(ext, level, msg string) {
	u.mu.Lock()
	u.notifies = append(u.notifies, ext+"|"+level+"|"+msg)
	u.mu.Unlock()
}
func (u *recUI) PanelOpen(ext string, p wire.PanelView) {
	u.mu.Lock()
	u.opens = append(u.opens, p)
	u.mu.Unlock()
}
func (u *recUI) PanelRender(ext string, f wire.Frame) {
	u.mu.Lock()
	u.renders = append(u.renders, f)
	u.mu.Unlock()
}
func (u *recUI) PanelClose(ext, id string) {
	u.mu.Lock()
	u.closes = append(u.closes, ext+"|"+id)
	u.mu.Unlock()
}
func (u *recUI) Changed() {
	u.mu.Lock()
	u.changed++
	u.mu.Unlock()
}

func (u *recUI) lastRender() string {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.renders) == 0 {
		return ""
	}
	return strings.Join(u.renders[len(u.renders)-1].Lines, "\n")
}

func (u *recUI) count(f func(u *recUI) int) int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return f(u)
}

// recorded returns the frames a fakeext with -record file received.
func recorded(t testing.TB, path string) []wire.Frame {
	b := readWholeLines(path)
	var out []wire.Frame
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		f, err := DecodeFrame([]byte(l))
		if err != nil {
			t.Fatalf("recorded line: %v", err)
		}
		out = append(out, f)
	}
	return out
}

// readWholeLines reads a file an extension appends lines to, up to its
// last newline: the extension may be writing as this reads, and a write
// that spans pages can be seen half done.
func readWholeLines(path string) []byte {
	b, _ := os.ReadFile(path)
	return b[:bytes.LastIndexByte(b, '\n')+1]
}

// psList lists running processes' command lines (Linux /proc). Without
// /proc it panics: an empty list would pass every "was it killed" check.
func psList() string {
	var sb strings.Builder
	entries, err := os.ReadDir("/proc")
	if err != nil {
		panic("psList needs /proc: " + err.Error())
	}
	for _, e := range entries {
		pid := 0
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || !proctest.Alive(pid) {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		sb.WriteString(strings.ReplaceAll(string(b), "\x00", " "))
		sb.WriteByte('\n')
	}
	return sb.String()
}
