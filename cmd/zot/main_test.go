package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/syncbuf"
	"github.com/zot-editors/zot/server/servertest"
)

// zotBin is the real zot binary, built once for this test binary.
var zotBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zot-bin-")
	if err != nil {
		panic(err)
	}
	zotBin = filepath.Join(dir, "zot")
	if err := servertest.Build("./cmd/zot", zotBin, false); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is a hermetic environment for one zot process: its own ZOT_HOME and
// no provider keys from the developer's shell.
type env struct {
	t    testing.TB
	home string
	cwd  string
	llm  *llmtest.Server
}

func newEnv(t testing.TB, replies ...llmtest.Reply) *env {
	t.Helper()
	// Each test's zot is its own process with its own home and scripted
	// model, and most of a test is waiting on it: they run side by side.
	if tt, ok := t.(*testing.T); ok {
		tt.Parallel()
	}
	e := &env{t: t, home: t.TempDir(), cwd: t.TempDir(), llm: llmtest.New(llmtest.Script{Replies: replies})}
	t.Cleanup(e.llm.Close)
	return e
}

func (e *env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ZOT") && !strings.HasPrefix(kv, "ZOT_CPUPROFILE=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "ZOT_HOME="+e.home)
}

// args are the flags pointing zot at the scripted LLM.
func (e *env) args(extra ...string) []string {
	return append([]string{"--api-key", "test-key", "--base-url", e.llm.URL(), "--cwd", e.cwd}, extra...)
}

func (e *env) command(args ...string) *exec.Cmd {
	cmd := exec.Command(zotBin, args...)
	cmd.Env = servertest.CoverEnv(e.environ())
	cmd.Dir = e.cwd
	return cmd
}

// runZot runs zot to completion and returns stdout, stderr and the exit code.
func (e *env) runZot(args ...string) (string, string, int) {
	e.t.Helper()
	cmd := e.command(args...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("running zot: %v", err)
	}
	return so.String(), se.String(), code
}

func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.cwd, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) read(name string) string {
	e.t.Helper()
	b, err := os.ReadFile(filepath.Join(e.cwd, name))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// rpcProc is a running `zot rpc` with line-level access to its stdout.
type rpcProc struct {
	t     testing.TB
	cmd   *exec.Cmd
	in    io.WriteCloser
	lines chan []byte
	errb  *syncbuf.Buffer
}

func (e *env) startRPC(extraEnv []string, args ...string) *rpcProc {
	e.t.Helper()
	cmd := e.command(append([]string{"rpc"}, e.args(args...)...)...)
	cmd.Env = append(cmd.Env, extraEnv...)
	in, err := cmd.StdinPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	p := &rpcProc{t: e.t, cmd: cmd, in: in, lines: make(chan []byte, 100000), errb: &syncbuf.Buffer{}}
	cmd.Stderr = p.errb
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() {
		defer close(p.lines)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				p.lines <- line
			}
			if err != nil {
				return
			}
		}
	}()
	e.t.Cleanup(func() {
		p.in.Close()
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-done
		}
	})
	return p
}

func (p *rpcProc) send(v any) {
	p.t.Helper()
	b, _ := json.Marshal(v)
	if _, err := p.in.Write(append(b, '\n')); err != nil {
		p.t.Fatalf("writing to zot rpc: %v", err)
	}
}

// until collects frames until one satisfies stop; it fails the test after a
// generous bound (a hang, not a slowness check).
func (p *rpcProc) until(stop func(map[string]any) bool) []map[string]any {
	p.t.Helper()
	return p.untilWithin(60*time.Second, stop)
}

// untilWithin is until with its own bound on a hang.
func (p *rpcProc) untilWithin(bound time.Duration, stop func(map[string]any) bool) []map[string]any {
	p.t.Helper()
	var got []map[string]any
	deadline := time.After(bound)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("zot rpc exited; frames so far: %v\nstderr: %s", types(got), p.errb.String())
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				m = map[string]any{"type": "__not_json__", "line": string(line)}
			}
			got = append(got, m)
			if stop(m) {
				return got
			}
		case <-deadline:
			p.t.Fatalf("timed out waiting; frames so far: %v\nstderr: %s", types(got), p.errb.String())
		}
	}
}

// untilLine reads raw lines until one contains marker and returns how many
// contained count; the benchmarks use it so the harness's own JSON
// decoding does not count as zot's time.
// response reads up to the response with id and returns it (frames before
// it, such as a late response to an earlier command, are skipped).
func (p *rpcProc) response(id string) map[string]any {
	p.t.Helper()
	frames := p.until(isResponse(id))
	return frames[len(frames)-1]
}

func (p *rpcProc) untilLine(marker, count string) int {
	p.t.Helper()
	n := 0
	deadline := time.After(60 * time.Second)
	for {
		select {
		case line, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("zot rpc exited\nstderr: %s", p.errb.String())
			}
			if bytes.Contains(line, []byte(count)) {
				n++
			}
			if bytes.Contains(line, []byte(marker)) {
				return n
			}
		case <-deadline:
			p.t.Fatalf("timed out waiting for %s\nstderr: %s", marker, p.errb.String())
		}
	}
}

func isType(t string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == t }
}

func isResponse(id string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id }
}

func types(ms []map[string]any) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i], _ = m["type"].(string)
	}
	return out
}

func find(ms []map[string]any, typ string) map[string]any {
	for _, m := range ms {
		if m["type"] == typ {
			return m
		}
	}
	return nil
}

func jsonMarshal(v any) ([]byte, error) { return json.Marshal(v) }
