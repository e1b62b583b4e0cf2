// Package servertest is a fake editor for integration tests of `zot lsp`,
// modelled on gopls's integration harness: it starts the real zot binary
// over pipes, speaks LSP to it, holds buffers, applies workspace/applyEdit
// to them for real (UTF-16 positions, its own implementation), answers
// window/showMessageRequest, zot/reviewEdit and zot/save by script,
// records every notification, and waits on expectations with bounded
// waits that fail with what was seen (never a timing assertion).
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
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
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
	PositionEncodings []string

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

// Buffer is an open document.
type Buffer struct {
	URI     string
	Path    string
	Version int32
	Text    string
	Dirty   bool
}

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
	// BeforeApply runs when workspace/applyEdit arrives, before it is
	// applied: a test types here to race the agent.
	BeforeApply func(params json.RawMessage)
	// LateDidChange sends the didChange of an applied edit after the
	// applyEdit answer instead of before (clients differ).
	LateDidChange bool
	// NotifyHook sees every notification first; returning false keeps it
	// out of the record (benchmarks).
	NotifyHook func(method string, params []byte) bool
}

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

// Start launches `zot lsp` and the editor's reader. The process is killed
// at the end of the test if it is still running.
func Start(t testing.TB, cfg Config) *Editor {
	t.Helper()
	if cfg.Root == "" {
		cfg.Root = t.TempDir()
	}
	cmd := exec.Command(cfg.Bin, append([]string{"lsp"}, cfg.Args...)...)
	cmd.Dir = cfg.Root
	cmd.Env = cfg.Env
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
		select {
		case <-e.exited:
		default:
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

func (e *Editor) read(r io.Reader) {
	br := bufio.NewReaderSize(r, 256<<10)
	arrived := 0
	for {
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
			if e.NotifyHook != nil && !e.NotifyHook(m.Method, m.Params) {
				continue
			}
			e.mu.Lock()
			e.notes = append(e.notes, m)
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
		e.send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": r})
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
	case "zot/reviewEdit":
		var p ReviewEdit
		json.Unmarshal(m.Params, &p)
		res := ReviewResult{Decision: "accept"}
		if e.Review != nil {
			res = e.Review(p)
		}
		result = res
	case "zot/save":
		var p struct {
			URIs []string `json:"uris"`
		}
		json.Unmarshal(m.Params, &p)
		result = e.save(p.URIs)
	default:
		rerr = &RPCError{Code: -32601, Message: "fake editor: no " + m.Method}
	}
	resp := map[string]any{"jsonrpc": "2.0", "id": m.ID}
	if rerr != nil {
		resp["error"] = rerr
	} else {
		resp["result"] = result
	}
	e.send(resp)
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
		}},
	}
	if e.cfg.PositionEncodings != nil {
		caps["general"] = map[string]any{"positionEncodings": e.cfg.PositionEncodings}
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

// Wait waits until cond holds, checked after every message zot sends and
// every few milliseconds (for conditions outside the editor: files,
// processes).
func (e *Editor) Wait(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.After(WaitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		e.mu.Lock()
		ch := e.changed
		e.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-tick.C:
		case <-deadline:
			e.t.Fatalf("timed out waiting for %s\nlast notifications:\n%s\nstderr:\n%s", what, e.recent(15), e.Stderr())
		}
	}
}

func (e *Editor) recent(n int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	var b strings.Builder
	start := max(0, len(e.notes)-n)
	for _, m := range e.notes[start:] {
		p := string(m.Params)
		if len(p) > 300 {
			p = p[:300] + "…"
		}
		fmt.Fprintf(&b, "  %s %s\n", m.Method, p)
	}
	return b.String()
}

// Notes returns the recorded notifications of a method ("" for all).
func (e *Editor) Notes(method string) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return byMethod(e.notes, method)
}

// Requests returns the server → client requests of a method ("" for all).
func (e *Editor) Requests(method string) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return byMethod(e.requests, method)
}

func byMethod(ms []Message, method string) []Message {
	var out []Message
	for _, m := range ms {
		if method == "" || m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// WaitNote waits for a notification of method matching match (nil: any)
// and returns it.
func (e *Editor) WaitNote(method string, match func(params json.RawMessage) bool) Message {
	e.t.Helper()
	var got Message
	e.Wait("notification "+method, func() bool {
		for _, m := range e.Notes(method) {
			if match == nil || match(m.Params) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// Event is one zot/event.
type Event map[string]any

// Type is the event's type.
func (ev Event) Type() string { s, _ := ev["type"].(string); return s }

// Str is a string field.
func (ev Event) Str(k string) string { s, _ := ev[k].(string); return s }

// Events returns the zot/event notifications of a run, in order.
func (e *Editor) Events(runID string) []Event {
	var out []Event
	for _, m := range e.Notes("zot/event") {
		var ev Event
		json.Unmarshal(m.Params, &ev)
		if runID == "" || ev.Str("runId") == runID {
			out = append(out, ev)
		}
	}
	return out
}

// WaitDone waits for a run's done event and returns the run's events.
func (e *Editor) WaitDone(runID string) []Event {
	e.t.Helper()
	var evs []Event
	e.Wait("done of "+runID, func() bool {
		evs = e.Events(runID)
		return len(evs) > 0 && evs[len(evs)-1].Type() == "done"
	})
	return evs
}

// WaitEvent waits for an event of a run with the given type.
func (e *Editor) WaitEvent(runID, typ string) Event {
	e.t.Helper()
	var got Event
	e.Wait(typ+" of "+runID, func() bool {
		for _, ev := range e.Events(runID) {
			if ev.Type() == typ {
				got = ev
				return true
			}
		}
		return false
	})
	return got
}

// Types lists the types of events.
func Types(evs []Event) string {
	var s []string
	for _, ev := range evs {
		s = append(s, ev.Type())
	}
	return strings.Join(s, " ")
}

// Find returns the first event of a type.
func Find(evs []Event, typ string) Event {
	for _, ev := range evs {
		if ev.Type() == typ {
			return ev
		}
	}
	return nil
}

// ResultText is the text of a tool_result event.
func ResultText(ev Event) string {
	var b strings.Builder
	cs, _ := ev["content"].([]any)
	for _, c := range cs {
		if m, ok := c.(map[string]any); ok {
			s, _ := m["text"].(string)
			b.WriteString(s)
		}
	}
	return b.String()
}

// RunStarted is zot/prompt's answer.
type RunStarted struct {
	RunID  string `json:"runId"`
	Queued bool   `json:"queued"`
	Ahead  int    `json:"ahead"`
}

// Prompt sends zot/prompt and returns its answer.
func (e *Editor) Prompt(text string) RunStarted {
	e.t.Helper()
	var r RunStarted
	e.MustCall("zot/prompt", map[string]any{"text": text}, &r)
	if r.RunID == "" {
		e.t.Fatalf("zot/prompt gave no runId")
	}
	return r
}

// --- buffers ---

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

// Ctx is a context bounded by WaitTimeout.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), WaitTimeout)
	t.Cleanup(cancel)
	return ctx
}
