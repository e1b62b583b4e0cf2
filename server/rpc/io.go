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

// writer serialises lines to the client. Events are buffered and flushed
// when the producer pauses, so a burst of deltas costs few syscalls while a
// lone event still goes out at once.
type writer struct {
	mu sync.Mutex
	bw *bufio.Writer
	// queue of encoded lines waiting for the flusher
	lines  chan []byte
	done   chan struct{}
	closed bool
}

func newWriter(w io.Writer) *writer {
	wr := &writer{bw: bufio.NewWriterSize(w, 64*1024), lines: make(chan []byte, 1024), done: make(chan struct{})}
	go wr.loop()
	return wr
}

func (w *writer) loop() {
	defer close(w.done)
	for line := range w.lines {
		w.bw.Write(line)
		// Drain whatever else is ready before paying for a flush.
	drain:
		for {
			select {
			case more, ok := <-w.lines:
				if !ok {
					w.bw.Flush()
					return
				}
				w.bw.Write(more)
			default:
				break drain
			}
		}
		w.bw.Flush()
	}
	w.bw.Flush()
}

func (w *writer) write(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(map[string]any{"type": "error", "message": "internal: cannot encode: " + err.Error()})
	}
	w.send(append(b, '\n'))
}

func (w *writer) event(ev agent.Event) {
	w.send(append(ev.AppendJSON(make([]byte, 0, 96), ""), '\n'))
}

func (w *writer) send(b []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.lines <- b
}

func (w *writer) close() {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return
	}
	w.closed = true
	close(w.lines)
	w.mu.Unlock()
	<-w.done
}
