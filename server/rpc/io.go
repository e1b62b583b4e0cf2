package rpc

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/internal/lineread"
)

// readLine reads one line without its newline (see lineread.Read).
func readLine(r *bufio.Reader) ([]byte, error) { return lineread.Read(r, maxLine, 0) }

// writer serialises lines to the client. Each line is written into one
// buffer under the lock by the goroutine that has it (no hand-off to a
// writer goroutine, no allocation per event), and the buffer is flushed
// unless the caller knows another event is already waiting: a burst of
// deltas costs few syscalls while a lone event still goes out at once.
// The 64 KiB buffer (and the pipe's own) is the slack before a client
// that does not read holds up its producers, as the old 1,024-line queue
// was.
type writer struct {
	mu      sync.Mutex
	bw      *bufio.Writer
	scratch []byte // the event being encoded, reused
	closed  bool
}

func newWriter(w io.Writer) *writer {
	return &writer{bw: bufio.NewWriterSize(w, 64*1024), scratch: make([]byte, 0, 512)}
}

func (w *writer) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"type": "error", "message": "internal: cannot encode: " + err.Error()})
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.bw.Write(b)
	w.bw.WriteByte('\n')
	w.bw.Flush()
}

func (w *writer) event(ev agent.Event) { w.events(ev, false) }

// events writes one event; more says another is already waiting to be
// written by the same caller, so the flush is left to it.
func (w *writer) events(ev agent.Event, more bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.scratch = append(ev.AppendJSON(w.scratch[:0], ""), '\n')
	w.bw.Write(w.scratch)
	if !more {
		w.bw.Flush()
	}
	if cap(w.scratch) > 64*1024 { // one huge event: do not keep its buffer
		w.scratch = make([]byte, 0, 512)
	}
}

func (w *writer) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.closed {
		w.closed = true
		w.bw.Flush()
	}
}
