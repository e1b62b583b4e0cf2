// Package sdktest drives one extension the way zot's host does, for the
// tests of extension authors (and of the SDK and zot's examples): frames
// in on the extension's stdin, frames out of its stdout, each wait bounded
// so a bug fails the test instead of hanging it.
//
// An extension built with the Go SDK runs in-process:
//
//	h := sdktest.Start(t, ext)
//	h.Handshake(sdktest.Ack(t))
//	res := h.Tool("1", "todo_add", `{"text":"milk"}`)
//
// Any other extension (Python, Node, a built binary) runs as a subprocess:
//
//	h := sdktest.Spawn(t, exec.Command("./my-extension"))
package sdktest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/syncbuf"
)

// DefaultWait bounds every wait on the extension. Nothing is asserted about
// how long anything takes; it only turns a hang into a failure.
const DefaultWait = 60 * time.Second

// Host is one extension under test and the host side of its wire.
type Host struct {
	t    testing.TB
	name string // for messages: the hello name once known, else "extension"

	// Wait bounds each wait (DefaultWait unless changed before use).
	Wait time.Duration
	// Log collects what the extension logs: its stderr, or what an
	// in-process extension writes to the writer given to Start.
	Log *syncbuf.Buffer

	toExt io.WriteCloser
	lines chan []byte // raw lines from the extension; closed at its EOF
	done  chan error  // the extension's end: Serve's result or the exit status
}

// Server is an in-process extension: the Go SDK's *sdk.Extension.
type Server interface {
	Serve(in io.Reader, out io.Writer) error
}

// Start runs ext.Serve in a goroutine over a pair of pipes; its log (when
// it has SetLogOutput, as the SDK does) goes to Log. The extension's stdin
// is closed, and its return awaited, when the test ends.
func Start(t testing.TB, ext Server) *Host {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	h := newHost(t, inW)
	if l, ok := ext.(interface{ SetLogOutput(io.Writer) }); ok {
		l.SetLogOutput(h.Log)
	}
	go func() {
		err := ext.Serve(inR, outW)
		outW.Close()
		h.done <- err
	}()
	go h.readLines(outR, nil)
	t.Cleanup(func() { h.closeAndWait(nil) })
	return h
}

// Spawn starts cmd with its stdin and stdout as the wire and its stderr
// into Log. At the end of the test its stdin is closed and it must exit;
// one that does not is killed and the test fails.
func Spawn(t testing.TB, cmd *exec.Cmd) *Host {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := newHost(t, stdin)
	cmd.Stderr = h.Log
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", cmd.Path, err)
	}
	// Wait only after stdout is drained, as StdoutPipe requires.
	go h.readLines(stdout, func() { h.done <- cmd.Wait() })
	t.Cleanup(func() { h.closeAndWait(func() { _ = cmd.Process.Kill() }) })
	return h
}

func newHost(t testing.TB, toExt io.WriteCloser) *Host {
	return &Host{t: t, name: "extension", Wait: DefaultWait, Log: &syncbuf.Buffer{},
		toExt: toExt, lines: make(chan []byte, 4096), done: make(chan error, 1)}
}

func (h *Host) readLines(r io.Reader, atEOF func()) {
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			h.lines <- line
		}
		if err != nil {
			break
		}
	}
	close(h.lines)
	if atEOF != nil {
		atEOF()
	}
}

func (h *Host) closeAndWait(kill func()) {
	h.toExt.Close()
	go func() {
		for range h.lines { // unread frames must not block the reader
		}
	}()
	select {
	case err := <-h.done:
		h.done <- err
	case <-time.After(h.Wait):
		if kill != nil {
			kill()
		}
		h.t.Errorf("%s did not end after its stdin closed", h.name)
	}
	if h.t.Failed() {
		h.t.Logf("%s log:\n%s", h.name, h.Log)
	}
}

// Send writes one frame as one JSON line.
func (h *Host) Send(f wire.Frame) {
	h.t.Helper()
	b, err := json.Marshal(f)
	if err != nil {
		h.t.Fatal(err)
	}
	h.SendRaw(string(b) + "\n")
}

// SendRaw writes s as is (junk, partial or overlong lines).
func (h *Host) SendRaw(s string) {
	h.t.Helper()
	if _, err := io.WriteString(h.toExt, s); err != nil {
		h.t.Fatalf("write to %s: %v", h.name, err)
	}
}

// CloseInput closes the extension's stdin, as the host does at exit.
func (h *Host) CloseInput() { h.toExt.Close() }

// NextLine returns the next line the extension wrote, as written.
func (h *Host) NextLine() []byte {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if !ok {
			h.t.Fatalf("%s closed its output (log: %s)", h.name, h.Log)
		}
		return line
	case <-time.After(h.Wait):
		h.t.Fatalf("no frame from %s", h.name)
	}
	return nil
}

// Next returns the next frame, checking it is exactly one JSON line.
func (h *Host) Next() wire.Frame {
	h.t.Helper()
	line := h.NextLine()
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		h.t.Fatalf("%s wrote more or less than one line: %q", h.name, line)
	}
	var f wire.Frame
	if err := json.Unmarshal(line, &f); err != nil {
		h.t.Fatalf("%s wrote a bad frame %q: %v", h.name, line, err)
	}
	return f
}

// Expect returns the next frame, failing unless it is of type typ.
func (h *Host) Expect(typ string) wire.Frame {
	h.t.Helper()
	f := h.Next()
	if f.Type != typ {
		h.t.Fatalf("got %s frame %+v, want %s", f.Type, f, typ)
	}
	return f
}

// ExpectClosed waits for the end of the extension's output, failing on
// any frame before it.
func (h *Host) ExpectClosed() {
	h.t.Helper()
	select {
	case line, ok := <-h.lines:
		if ok {
			h.t.Fatalf("%s wrote %q after it should have stopped", h.name, line)
		}
	case <-time.After(h.Wait):
		h.t.Fatalf("%s kept its output open", h.name)
	}
}

// Result waits for the extension to end and returns Serve's error or the
// process's exit status.
func (h *Host) Result() error {
	h.t.Helper()
	select {
	case err := <-h.done:
		h.done <- err // for the cleanup
		return err
	case <-time.After(h.Wait):
		h.t.Fatalf("%s did not end", h.name)
	}
	return nil
}

// Ack is a hello_ack as zot's host sends it, with temporary directories
// for cwd, extension_dir and data_dir.
func Ack(t testing.TB) wire.Frame {
	return wire.Frame{Type: wire.TypeHelloAck, ProtocolVersion: wire.ProtocolVersion, ZotVersion: "test",
		Provider: "anthropic", Model: "test-model", Cwd: t.TempDir(), ExtensionDir: t.TempDir(), DataDir: t.TempDir()}
}

// Handshake reads hello, answers ack, and returns hello and the frames
// after it up to and including ready (the registrations and subscribe).
func (h *Host) Handshake(ack wire.Frame) (hello wire.Frame, frames []wire.Frame) {
	h.t.Helper()
	hello = h.Expect(wire.TypeHello)
	if hello.Name == "" {
		h.t.Fatalf("hello without a name: %+v", hello)
	}
	h.name = hello.Name
	h.Send(ack)
	for {
		f := h.Next()
		frames = append(frames, f)
		if f.Type == wire.TypeReady {
			return hello, frames
		}
	}
}

// Shutdown sends shutdown, expects shutdown_ack, then the end of output
// and a clean end.
func (h *Host) Shutdown() {
	h.t.Helper()
	h.Send(wire.Frame{Type: wire.TypeShutdown})
	h.Expect(wire.TypeShutdownAck)
	h.ExpectCleanEnd()
}

// ExpectCleanEnd waits for the end of output (no frame before it) and a
// clean end: Serve returned nil, or the process exited with status 0.
func (h *Host) ExpectCleanEnd() {
	h.t.Helper()
	h.ExpectClosed()
	if err := h.Result(); err != nil {
		h.t.Fatalf("%s ended with %v", h.name, err)
	}
}

// Command invokes a command and returns its command_response.
func (h *Host) Command(id, name, args string) wire.Frame {
	h.t.Helper()
	a, _ := json.Marshal(args)
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: id, Name: name, Args: a})
	return h.expectID(wire.TypeCommandResponse, id)
}

// Tool calls a tool with args (a JSON object) and returns its tool_result.
func (h *Host) Tool(id, name, args string) wire.Frame {
	h.t.Helper()
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: id, Name: name, Args: json.RawMessage(args)})
	return h.expectID(wire.TypeToolResult, id)
}

// InterceptToolCall asks the extension about a tool call (the tool_call
// intercept) and returns its event_intercept_response.
func (h *Host) InterceptToolCall(id, tool, args string) wire.Frame {
	h.t.Helper()
	h.Send(wire.Frame{Type: wire.TypeEventIntercept, ID: id, Event: wire.EventToolCall,
		ToolID: "call-" + id, ToolName: tool, ToolArgs: json.RawMessage(args)})
	return h.expectID(wire.TypeEventInterceptResponse, id)
}

func (h *Host) expectID(typ, id string) wire.Frame {
	h.t.Helper()
	f := h.Expect(typ)
	if f.ID != id {
		h.t.Fatalf("%s id %q, want %q", typ, f.ID, id)
	}
	return f
}

// Registered lists what frames register, as "register_tool:name" and
// "register_command:name", in order.
func Registered(frames []wire.Frame) []string {
	var out []string
	for _, f := range frames {
		if f.Type == wire.TypeRegisterCommand || f.Type == wire.TypeRegisterTool {
			out = append(out, f.Type+":"+f.Name)
		}
	}
	return out
}

// Text joins the text blocks of a result's content.
func Text(f wire.Frame) string {
	var parts []string
	for _, b := range f.Content {
		if b.Type == "" || b.Type == "text" {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// String describes f briefly for failure messages.
func String(f wire.Frame) string {
	b, _ := json.Marshal(f)
	return fmt.Sprintf("%s %s", f.Type, b)
}
