// Package servertest is a fake editor for integration tests of `zot lsp`,
// modelled on gopls's integration harness: it starts the real zot binary
// over pipes, speaks LSP to it, holds buffers, applies workspace/applyEdit
// to them for real (UTF-16 positions, its own implementation), answers
// window/showMessageRequest, zot/reviewEdit and zot/save by script,
// records every notification, and waits on expectations with bounded
// waits that fail with what was seen (never a timing assertion).
//
// The files split as gopls's fake editor does: editor.go (the process,
// calls, initialize/shutdown), buffers.go (documents and typing),
// client.go (reading zot's messages, answering its requests) and
// expect.go (bounded waits, zot/event helpers).
//
// A test reads like a script:
//
//	e := servertest.Start(t, servertest.Config{Bin: zotBin, Args: args, Root: dir})
//	e.Initialize(nil)
//	e.Open("main.go", "package main\n")
//	e.Type("main.go", 0, 0, "// unsaved\n")
//	run := e.Prompt("edit it")
//	events := e.WaitDone(run)
//	e.Buffer("main.go") // the agent's edit next to the user's unsaved text
package servertest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.lsp.dev/uri"
)

// WaitTimeout bounds every wait. It is generous on purpose: a wait that
// runs out is a hang, not a slow machine.
var WaitTimeout = 60 * time.Second

// Config describes the editor and the zot process.
type Config struct {
	Bin  string   // the zot binary
	Args []string // flags after "lsp"
	Env  []string // the process environment (nil: os.Environ())
	Root string   // the workspace folder (rootUri); also the process's cwd

	InitOptions map[string]any

	// Client capabilities (the zero value is a capable editor).
	NoApplyEdit       bool
	NoDocumentChanges bool
	NoCreateFiles     bool
	NoProgress        bool
	NoZotSave         bool
	ReviewEdit        bool // experimental.zot.reviewEdit
	ZotNotify         bool // experimental.zot.notify: shows zot/notify itself
	ZotUI             bool // experimental.zot.ui: answers zot/ui/request (Editor.UI)
	// ZotInput: experimental.zot.input, a chat input (Editor.Input) that
	// zot/input/set sets and zot/input/get reads.
	ZotInput bool
	// ZotEditor: experimental.zot.editor, zot/ui/request kind editor.
	ZotEditor         bool
	PositionEncodings []string
	// Plain is an editor that knows nothing of zot: no experimental.zot.
	Plain bool
	// ShowDocument: window.showDocument.support (answered success, and
	// recorded).
	ShowDocument bool
	// CodeActionResolve: textDocument.codeAction.resolveSupport with these
	// properties (nil: none).
	CodeActionResolve []string

	// Stderr receives zot's stderr (nil: the test log on failure).
	Stderr io.Writer
}

// Message is a JSON-RPC message as the editor saw it.
type Message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *RPCError       `json:"error,omitempty"`
	// Seq is the message's arrival order at the editor.
	Seq int `json:"-"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

// Editor is the fake editor.
type Editor struct {
	t   testing.TB
	cfg Config
	cmd *exec.Cmd

	stdin io.WriteCloser
	wmu   sync.Mutex
	w     *bufio.Writer

	stderr  bytes.Buffer
	stderrM sync.Mutex

	mu       sync.Mutex
	changed  chan struct{}
	seq      int
	pending  map[string]chan Message
	notes    []Message
	requests []Message // server → client requests, in order
	buffers  map[string]*Buffer
	exited   chan struct{}
	exitErr  error
	readErr  error

	// Scripted answers. Set them before the server can ask.
	//
	// Review answers zot/reviewEdit (default: accept as proposed).
	Review func(p ReviewEdit) ReviewResult
	// Choose answers window/showMessageRequest with an action title ("":
	// dismissed). Default: dismiss.
	Choose func(message string, actions []string) string
	// UI answers zot/ui/request (params as sent) with its result; nil
	// answers {"cancelled": true}. It runs on the reader: answer at once,
	// or hand off and use AnswerUI.
	UI func(params map[string]any) map[string]any
	// BeforeApply runs when workspace/applyEdit arrives, before it is
	// applied: a test types here to race the agent.
	BeforeApply func(params json.RawMessage)
	// LateDidChange sends the didChange of an applied edit after the
	// applyEdit answer instead of before (clients differ).
	LateDidChange bool
	// IgnoreRebased answers zot/save as a client that predates its
	// rebased documents: it neither writes them nor answers them.
	IgnoreRebased bool
	// notifyHook: see SetNotifyHook (atomic: the reader goroutine is
	// already running when a test sets it).
	notifyHook atomic.Pointer[func(method string, params []byte) bool]
	// AnswerTimes sends each answer to a server → client request this many
	// times (a hostile or buggy client; 0 and 1 send it once).
	AnswerTimes int

	input string // the chat input (ZotInput), its cursor at the end

	paused chan struct{} // non-nil: the reader waits for it (StopReading)
	stdout *os.File
}

// Start launches `zot lsp` and the editor's reader. The process is killed
// at the end of the test if it is still running.
func Start(t testing.TB, cfg Config) *Editor {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	cmd := exec.Command(cfg.Bin, append([]string{"lsp"}, cfg.Args...)...)
	cmd.Dir = cfg.Root
	cmd.Env = CoverEnv(cfg.Env)
	e := &Editor{t: t, cfg: cfg, cmd: cmd, changed: make(chan struct{}), pending: map[string]chan Message{},
		buffers: map[string]*Buffer{}, exited: make(chan struct{})}
	if cfg.Stderr != nil {
		cmd.Stderr = io.MultiWriter(cfg.Stderr, &lockedWriter{e: e})
	} else {
		cmd.Stderr = &lockedWriter{e: e}
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cfg.Bin, err)
	}
	e.stdin, e.w = in, bufio.NewWriterSize(in, 64<<10)
	e.stdout, _ = out.(*os.File)
	go e.read(out)
	go func() {
		err := cmd.Wait()
		e.mu.Lock()
		e.exitErr = err
		e.mu.Unlock()
		close(e.exited)
		e.bump()
	}()
	t.Cleanup(func() {
		e.ResumeReading()
		// End it as an editor that goes away does (stdin EOF), so it exits
		// on its own path (and a -cover build writes its counters); kill
		// it only if it does not.
		e.stdin.Close()
		select {
		case <-e.exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-e.exited
		}
		if strings.Contains(e.Stderr(), "WARNING: DATA RACE") {
			t.Errorf("zot lsp has a data race:\n%s", e.Stderr())
		} else if t.Failed() {
			t.Logf("zot lsp stderr:\n%s", e.Stderr())
		}
	})
	return e
}

type lockedWriter struct{ e *Editor }

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.e.stderrM.Lock()
	defer w.e.stderrM.Unlock()
	return w.e.stderr.Write(p)
}

// Stderr is what zot wrote to stderr so far.
func (e *Editor) Stderr() string {
	e.stderrM.Lock()
	defer e.stderrM.Unlock()
	return e.stderr.String()
}

// PID is the zot process id.
func (e *Editor) PID() int { return e.cmd.Process.Pid }

func (e *Editor) bump() {
	e.mu.Lock()
	close(e.changed)
	e.changed = make(chan struct{})
	e.mu.Unlock()
}

// --- wire ---

// WriteRaw writes bytes to zot's stdin as they are (framing tests).
func (e *Editor) WriteRaw(b []byte) {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.w.Write(b)
	e.w.Flush()
}

func (e *Editor) send(m any) {
	b, err := json.Marshal(m)
	if err != nil {
		e.t.Fatalf("encoding %v: %v", m, err)
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	fmt.Fprintf(e.w, "Content-Length: %d\r\n\r\n", len(b))
	e.w.Write(b)
	e.w.Flush()
}

// Notify sends a notification.
func (e *Editor) Notify(method string, params any) {
	e.send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// CallID sends a request with a given id (number or string) and returns
// a channel for its response.
func (e *Editor) CallID(id any, method string, params any) <-chan Message {
	raw, _ := json.Marshal(id)
	ch := make(chan Message, 1)
	e.mu.Lock()
	e.pending[string(raw)] = ch
	e.mu.Unlock()
	m := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		m["params"] = params
	}
	e.send(m)
	return ch
}

// Go sends a request and returns a channel for its response.
func (e *Editor) Go(method string, params any) <-chan Message {
	e.mu.Lock()
	e.seq++
	id := e.seq
	e.mu.Unlock()
	return e.CallID(id, method, params)
}

// Await waits for a response.
func (e *Editor) Await(ch <-chan Message, what string) Message {
	e.t.Helper()
	select {
	case m := <-ch:
		return m
	case <-e.exited:
		select {
		case m := <-ch:
			return m
		default:
		}
		e.t.Fatalf("zot exited while waiting for %s: %v\nstderr:\n%s", what, e.exitErr, e.Stderr())
	case <-time.After(WaitTimeout):
		e.t.Fatalf("no answer to %s within %v", what, WaitTimeout)
	}
	return Message{}
}

// Call sends a request and waits for its answer; result may be nil. The
// error is the JSON-RPC error, if any.
func (e *Editor) Call(method string, params, result any) *RPCError {
	e.t.Helper()
	m := e.Await(e.Go(method, params), method)
	if m.Error != nil {
		return m.Error
	}
	if result != nil && len(m.Result) > 0 {
		if err := json.Unmarshal(m.Result, result); err != nil {
			e.t.Fatalf("%s: decoding result %s: %v", method, m.Result, err)
		}
	}
	return nil
}

// MustCall is Call that fails the test on an error answer.
func (e *Editor) MustCall(method string, params, result any) {
	e.t.Helper()
	if err := e.Call(method, params, result); err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
}

// --- initialize / shutdown ---

// Initialize sends initialize and initialized and returns the result.
func (e *Editor) Initialize(result any) {
	e.t.Helper()
	caps := map[string]any{
		"workspace": map[string]any{
			"applyEdit": !e.cfg.NoApplyEdit,
			"workspaceEdit": map[string]any{
				"documentChanges":    !e.cfg.NoDocumentChanges,
				"resourceOperations": resourceOps(!e.cfg.NoCreateFiles),
			},
		},
		"window": map[string]any{"workDoneProgress": !e.cfg.NoProgress},
		"experimental": map[string]any{"zot": map[string]any{
			"reviewEdit": e.cfg.ReviewEdit, "save": !e.cfg.NoZotSave, "panels": true,
			"notify": e.cfg.ZotNotify,
			"ui":     e.cfg.ZotUI,
			"input":  e.cfg.ZotInput,
			"editor": e.cfg.ZotEditor,
		}},
	}
	if e.cfg.PositionEncodings != nil {
		caps["general"] = map[string]any{"positionEncodings": e.cfg.PositionEncodings}
	}
	if e.cfg.Plain {
		delete(caps, "experimental")
	}
	if e.cfg.ShowDocument {
		caps["window"].(map[string]any)["showDocument"] = map[string]any{"support": true}
	}
	if e.cfg.CodeActionResolve != nil {
		caps["textDocument"] = map[string]any{"codeAction": map[string]any{
			"resolveSupport": map[string]any{"properties": e.cfg.CodeActionResolve}}}
	}
	params := map[string]any{
		"processId":        os.Getpid(),
		"rootUri":          string(uri.File(e.cfg.Root)),
		"workspaceFolders": []map[string]any{{"uri": string(uri.File(e.cfg.Root)), "name": "ws"}},
		"capabilities":     caps,
		"clientInfo":       map[string]any{"name": "servertest"},
	}
	if e.cfg.InitOptions != nil {
		params["initializationOptions"] = e.cfg.InitOptions
	}
	var raw json.RawMessage
	e.MustCall("initialize", params, &raw)
	if result != nil {
		if err := json.Unmarshal(raw, result); err != nil {
			e.t.Fatal(err)
		}
	}
	e.Notify("initialized", map[string]any{})
}

func resourceOps(create bool) []string {
	if create {
		return []string{"create", "rename", "delete"}
	}
	return []string{}
}

// Shutdown sends shutdown and exit and returns zot's exit code.
func (e *Editor) Shutdown() int {
	e.t.Helper()
	e.MustCall("shutdown", nil, nil)
	e.Notify("exit", nil)
	return e.WaitExit()
}

// CloseStdin ends zot's input, as an editor that died.
func (e *Editor) CloseStdin() {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	e.stdin.Close()
}

// WaitExit waits for zot to exit and returns its exit code.
func (e *Editor) WaitExit() int {
	e.t.Helper()
	select {
	case <-e.exited:
	case <-time.After(WaitTimeout):
		e.t.Fatalf("zot did not exit within %v", WaitTimeout)
	}
	return e.cmd.ProcessState.ExitCode()
}

// --- waiting ---

// Ctx is a context bounded by WaitTimeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	t.Cleanup(cancel)
	return ctx
}

// SetNotifyHook has fn see every notification first; returning false
// keeps it out of the record (benchmarks). Safe while the editor runs.
func (e *Editor) SetNotifyHook(fn func(method string, params []byte) bool) {
	e.notifyHook.Store(&fn)
}
