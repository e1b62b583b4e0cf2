package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	segjson "github.com/segmentio/encoding/json"
	"github.com/zot-editors/zot/internal/lineread"
)

// maxLine bounds one incoming message (images arrive base64 inline). The
// SDK's own reader allows 10 MiB with the newline; a longer line would end
// its read loop (and the connection), so the filter refuses it first with
// an error the client can read.
const maxLine = 10<<20 - 1024

// outWriter serialises whole lines to the client and batches them: a
// burst of chunks costs few write syscalls, and a lone message is flushed
// as soon as the flusher runs. The SDK writes every message with one Write
// call, so sharing the writer with it never interleaves two messages.
type outWriter struct {
	mu     sync.Mutex
	bw     *bufio.Writer
	err    error
	kick   chan struct{}
	done   chan struct{}
	closed bool
	// watches run a function once a response holding their mark has
	// been written (session/new's answer, before the first update of
	// the session it creates).
	watches []watch
}

type watch struct {
	mark []byte
	fn   func()
}

// afterResponse runs fn (in its own goroutine) once a response containing
// mark has been written.
func (o *outWriter) afterResponse(mark []byte, fn func()) {
	o.mu.Lock()
	o.watches = append(o.watches, watch{mark, fn})
	o.mu.Unlock()
}

func newOutWriter(w io.Writer) *outWriter {
	o := &outWriter{bw: bufio.NewWriterSize(w, 64<<10), kick: make(chan struct{}, 1), done: make(chan struct{})}
	go o.flusher()
	return o
}

func (o *outWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	if o.closed || o.err != nil {
		err := o.err
		o.mu.Unlock()
		if err == nil {
			err = io.ErrClosedPipe
		}
		return 0, err
	}
	n, err := o.bw.Write(p)
	if err != nil {
		o.err = err
	}
	var fire []func()
	if len(o.watches) > 0 && bytes.Contains(p, []byte(`"result":`)) {
		kept := o.watches[:0]
		for _, w := range o.watches {
			if bytes.Contains(p, w.mark) {
				fire = append(fire, w.fn)
			} else {
				kept = append(kept, w)
			}
		}
		o.watches = kept
	}
	o.mu.Unlock()
	for _, fn := range fire {
		go fn()
	}
	select {
	case o.kick <- struct{}{}:
	default:
	}
	return n, err
}

func (o *outWriter) flusher() {
	defer close(o.done)
	for range o.kick {
		o.mu.Lock()
		if o.err == nil {
			o.err = o.bw.Flush()
		}
		closed := o.closed
		o.mu.Unlock()
		if closed {
			return
		}
	}
}

// close flushes what is buffered and stops the flusher.
func (o *outWriter) close() {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.closed = true
	o.mu.Unlock()
	select {
	case o.kick <- struct{}{}:
	default:
	}
	<-o.done
	o.mu.Lock()
	if o.err == nil {
		o.err = o.bw.Flush()
	}
	o.mu.Unlock()
}

// filterInput copies the client's lines to w (the SDK's reader) and
// answers, itself, the lines the SDK would only log: malformed JSON (-32700)
// and JSON that is not a JSON-RPC message (-32600). The SDK drops them
// silently (see docs/decisions.md); a client deserves an error naming what
// is wrong. It closes w at the end of input.
func filterInput(in io.Reader, w *io.PipeWriter, out io.Writer, logf func(string, ...any)) {
	defer w.Close()
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := readLine(r)
		if len(bytes.TrimSpace(line)) > 0 {
			if reply := checkMessage(line); reply != nil {
				out.Write(reply)
			} else if _, werr := w.Write(append(line, '\n')); werr != nil {
				return
			}
		}
		if errors.Is(err, lineread.ErrTooLong) {
			logf("dropped a message longer than %d bytes", maxLine)
			out.Write(errorLine(nil, -32600, fmt.Sprintf("Invalid request: a message longer than %d bytes was dropped", maxLine), nil))
			continue
		}
		if err != nil {
			if err != io.EOF {
				logf("reading stdin: %v", err)
			}
			return
		}
	}
}

// readLine reads one line without its newline, with room for the newline
// filterInput puts back (see lineread.Read).
func readLine(r *bufio.Reader) ([]byte, error) { return lineread.Read(r, maxLine, 1) }

// checkMessage returns the error line answering a message the SDK cannot
// take, or nil when the line is a JSON-RPC 2.0 request, notification or
// response.
func checkMessage(line []byte) []byte {
	// The values point into line (no copy of a prompt's params); on any
	// error encoding/json decodes again for its error.
	var m map[string]json.RawMessage
	if rest, err := segjson.Parse(line, &m, segjson.DontCopyRawMessage); err != nil || len(bytes.TrimSpace(rest)) > 0 {
		m = nil
		err = json.Unmarshal(line, &m)
		if err == nil {
			return checkFields(m)
		}
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(line) {
			return errorLine(nil, -32700, "Parse error: each line must be one JSON-RPC message (a JSON object): "+err.Error(), nil)
		}
		return errorLine(nil, -32600, "Invalid request: a JSON-RPC message is a JSON object, not "+jsonKind(line), nil)
	}
	return checkFields(m)
}

// checkFields is checkMessage for a line that is a JSON object.
func checkFields(m map[string]json.RawMessage) []byte {
	id := m["id"]
	if len(id) > 0 && !validID(id) {
		return errorLine(nil, -32600, `Invalid request: "id" must be a string or a number`, map[string]any{"field": "id"})
	}
	var version string
	if json.Unmarshal(m["jsonrpc"], &version) != nil || version != "2.0" {
		return errorLine(id, -32600, `Invalid request: "jsonrpc" must be "2.0"`, map[string]any{"field": "jsonrpc"})
	}
	method, hasMethod := m["method"]
	if hasMethod {
		var name string
		if json.Unmarshal(method, &name) != nil || name == "" {
			return errorLine(id, -32600, `Invalid request: "method" must be a non-empty string`, map[string]any{"field": "method"})
		}
		if p := bytes.TrimSpace(m["params"]); len(p) > 0 && p[0] != '{' && p[0] != '[' && !bytes.Equal(p, []byte("null")) {
			return errorLine(id, -32602, `Invalid params: "params" must be an object`, map[string]any{"field": "params"})
		}
		return nil
	}
	if len(id) > 0 {
		if _, ok := m["result"]; ok {
			return nil
		}
		if _, ok := m["error"]; ok {
			return nil
		}
	}
	return errorLine(id, -32600, `Invalid request: a message needs "method" (a request or notification) or "id" with "result" or "error" (a response)`, map[string]any{"field": "method"})
}

func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"', c == '-', c >= '0' && c <= '9':
		return true
	}
	return bytes.Equal(id, []byte("null"))
}

func jsonKind(v []byte) string {
	v = bytes.TrimSpace(v)
	switch {
	case len(v) == 0:
		return "nothing"
	case v[0] == '[':
		return "an array (batches are not part of ACP)"
	case v[0] == '"':
		return "a string"
	case v[0] == 't' || v[0] == 'f':
		return "a boolean"
	case v[0] == 'n':
		return "null"
	}
	return "a number"
}

// errorLine is one JSON-RPC error response; id nil answers with id null.
func errorLine(id json.RawMessage, code int, msg string, data any) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	e := map[string]any{"code": code, "message": msg}
	if data != nil {
		e["data"] = data
	}
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": e})
	return append(b, '\n')
}
