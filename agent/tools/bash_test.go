package tools

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/internal/proctest"
)

func TestBash(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"hello.txt": "hi there\n"})
	tool := NewBash(NewDiskWorkspace(dir))
	cases := []struct {
		name    string
		args    map[string]any
		isError bool
		want    []string
		not     []string
	}{
		{"stdout and stderr merged", map[string]any{"command": "echo out; echo err >&2"}, false, []string{"out", "err"}, nil},
		{"runs in the root", map[string]any{"command": "cat hello.txt && pwd"}, false, []string{"hi there", dir}, nil},
		{"no output", map[string]any{"command": "true"}, false, []string{"(no output)"}, nil},
		{"exit code", map[string]any{"command": "echo before; exit 3"}, true, []string{"before", "exit code 3"}, nil},
		{"command not found", map[string]any{"command": "definitely_not_a_command_zot"}, true, []string{"exit code 127"}, nil},
		{"killed by signal", map[string]any{"command": "kill -9 $$"}, true, []string{"signal"}, nil},
		{"timeout as string", map[string]any{"command": "echo ok", "timeout": "5"}, false, []string{"ok"}, nil},
		{"stdin is empty", map[string]any{"command": "cat; echo done"}, false, []string{"done"}, nil},
		{"empty command", map[string]any{"command": "  "}, true, []string{"bash needs a command"}, nil},
		{"negative timeout", map[string]any{"command": "true", "timeout": -1}, true, []string{"positive"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, tool, c.args)
			if r.IsError != c.isError {
				t.Fatalf("IsError = %v: %s", r.IsError, text(r))
			}
			contains(t, text(r), c.want...)
			notContains(t, text(r), c.not...)
		})
	}
}

// collector gathers progress texts.
type collector struct {
	mu    sync.Mutex
	calls []string
}

func (c *collector) progress(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls = append(c.calls, s)
}

func (c *collector) all() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

func TestBashStreamsProgress(t *testing.T) {
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	var c collector
	r := runCtx(t, context.Background(), tool, map[string]any{"command": "for i in 1 2 3 4 5; do echo line$i; sleep 0.02; done; printf 'no newline'"}, c.progress)
	mustOK(t, r)
	got := strings.Join(c.all(), "\n")
	if got != "line1\nline2\nline3\nline4\nline5\nno newline" {
		t.Fatalf("progress delivered %q", got)
	}
}

func TestBashCoalescesProgress(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // the saved full output goes away with it
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	var c collector
	mustOK(t, runCtx(t, context.Background(), tool, map[string]any{"command": "seq 1 200000"}, c.progress))
	calls := c.all()
	if len(calls) == 0 || len(calls) > 2000 {
		t.Fatalf("%d progress calls for 200000 lines", len(calls))
	}
	if last := calls[len(calls)-1]; !strings.HasSuffix(last, "\n200000") {
		t.Fatalf("final lines not delivered: ...%q", last[max(0, len(last)-40):])
	}
}

func TestBashTruncatesAndSavesFullOutput(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	cases := []struct {
		name, command string
		isError       bool
		want          []string
	}{
		{"many lines", "seq 1 5000", false, []string{"showing the last 2000 lines of 5000", "\n5000\n"}},
		{"many lines then failure", "seq 1 5000; exit 2", true, []string{"of 5000", "exit code 2"}},
		{"one huge line", "head -c 200000 /dev/zero | tr '\\0' x", false, []string{"showing the last 1 line of 1", "50.0 KB of 195.3 KB"}},
		{"just over the line limit", "seq 1 2001", false, []string{"showing the last 2000 lines of 2001"}},
	}
	re := regexp.MustCompile(`full output saved to (\S+)\]`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := run(t, tool, map[string]any{"command": c.command})
			if r.IsError != c.isError {
				t.Fatalf("IsError = %v", r.IsError)
			}
			out := text(r)
			contains(t, out, c.want...)
			m := re.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no saved-output path in %q", out[max(0, len(out)-300):])
			}
			if filepath.Dir(m[1]) != tmp {
				t.Fatalf("saved to %s, not in $TMPDIR", m[1])
			}
			full := readFile(t, m[1])
			ref := runRef(t, strings.TrimSuffix(c.command, "; exit 2"))
			if full != ref {
				t.Fatalf("saved output differs: %d bytes, want %d", len(full), len(ref))
			}
			body := out[:strings.Index(out, "[output truncated")]
			if len(body) > MaxOutputBytes+2 || strings.Count(body, "\n") > MaxOutputLines+2 {
				t.Fatalf("result body too large: %d bytes, %d lines", len(body), strings.Count(body, "\n"))
			}
		})
	}
}

// runRef runs a command directly for a reference output.
func runRef(t *testing.T, command string) string {
	t.Helper()
	out, err := exec.Command("bash", "-c", command).Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestBashTimeout(t *testing.T) {
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	r := run(t, tool, map[string]any{"command": "echo started; sleep 30", "timeout": 1})
	mustErr(t, r, "started", "timed out after 1 s")
}

func TestBashCancelKillsProcessGroup(t *testing.T) {
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	cases := []struct{ name, command string }{
		{"background child", "sleep 30 & echo $!; wait"},
		{"child ignoring SIGTERM", "sh -c 'trap \"\" TERM; exec sleep 30' & echo $!; wait"},
		{"grandchild", "bash -c 'sleep 30 & echo $!; wait' ; wait"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pidCh := make(chan int, 1)
			progress := func(s string) {
				for l := range strings.Lines(s) {
					if n, err := strconv.Atoi(strings.TrimSpace(l)); err == nil {
						select {
						case pidCh <- n:
						default:
						}
					}
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan Result, 1)
			go func() { done <- runCtx(t, ctx, tool, map[string]any{"command": c.command}, progress) }()
			var pid int
			select {
			case pid = <-pidCh:
			case r := <-done:
				t.Fatalf("command ended before printing a pid: %s", text(r))
			}
			if !proctest.Alive(pid) {
				t.Fatalf("pid %d not running before cancel", pid)
			}
			cancel()
			r := <-done
			mustErr(t, r, "cancelled")
			proctest.WaitGone(t, pid, "the command's process")
		})
	}
}

func TestBashDoesNotWaitForBackgroundPipes(t *testing.T) {
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	r := run(t, tool, map[string]any{"command": "sleep 30 & echo $!; echo finished"})
	out := mustOK(t, r)
	contains(t, out, "finished")
	pid, err := strconv.Atoi(strings.SplitN(out, "\n", 2)[0])
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	proctest.WaitGone(t, pid, "the command's process")
}

func TestBashSyncsWorkspaceFirst(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "saved\n"})
	ws := newOverlay(dir)
	ws.open(filepath.Join(dir, "a.txt"), "unsaved\n")
	out := mustOK(t, run(t, NewBash(ws), map[string]any{"command": "cat a.txt"}))
	contains(t, out, "unsaved")
	if ws.syncs != 1 {
		t.Fatalf("Sync called %d times", ws.syncs)
	}
}

type failingSync struct{ Workspace }

func (failingSync) Sync(context.Context) error { return errors.New("editor refused") }

func TestBashSyncFailure(t *testing.T) {
	ws := failingSync{NewDiskWorkspace(t.TempDir())}
	mustErr(t, run(t, NewBash(ws), map[string]any{"command": "echo hi"}), "editor refused", "save")
}

func TestTailLines(t *testing.T) {
	cases := []struct {
		in                 string
		maxLines, maxBytes int
		want               string
		n                  int
		cut                bool
	}{
		{"", 3, 100, "", 0, false},
		{"a", 3, 100, "a", 1, false},
		{"a\nb\nc", 3, 100, "a\nb\nc", 3, false},
		{"a\nb\nc", 2, 100, "b\nc", 2, true},
		{"aaaa\nbb\ncc", 5, 5, "bb\ncc", 2, true},
		{"abcdef", 5, 4, "cdef", 1, true},
		{"xé", 5, 2, "é", 1, true},
		{"xxé", 5, 1, "", 1, true},
	}
	for _, c := range cases {
		got, n, cut := tailLines(c.in, c.maxLines, c.maxBytes)
		if got != c.want || n != c.n || cut != c.cut {
			t.Errorf("tailLines(%q, %d, %d) = %q, %d, %v; want %q, %d, %v", c.in, c.maxLines, c.maxBytes, got, n, cut, c.want, c.n, c.cut)
		}
	}
}

func TestBashFinishedCommandIsNotATimeout(t *testing.T) {
	// The shell exits at once; its background child holds the output past
	// the deadline. That is a success, not a timeout.
	tool := NewBash(NewDiskWorkspace(t.TempDir()))
	out := mustOK(t, run(t, tool, map[string]any{"command": "sleep 30 & echo $!", "timeout": 1}))
	pid, err := strconv.Atoi(strings.SplitN(out, "\n", 2)[0])
	if err != nil {
		t.Fatalf("no pid in %q", out)
	}
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
	proctest.WaitGone(t, pid, "the command's process")
}
