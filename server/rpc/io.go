package rpc

import (
	"bufio"
	"encoding/json"
	"io"
	"sync"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/internal/jsonstr"
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
	lines  chan outLine
	done   chan struct{}
	closed bool
}

// outLine is one encoded line: bytes, or an encoding whose large texts
// are escaped as it is written.
type outLine struct {
	b  []byte
	sp *jsonstr.Spliced
}

func (l outLine) writeTo(w io.Writer) {
	if l.sp != nil {
		l.sp.WriteTo(w)
		return
	}
	w.Write(l.b)
}

func newWriter(w io.Writer) *writer {
	wr := &writer{bw: bufio.NewWriterSize(w, 64*1024), lines: make(chan outLine, 1024), done: make(chan struct{})}
	go wr.loop()
	return wr
}

func (w *writer) loop() {
	defer close(w.done)
	for line := range w.lines {
		line.writeTo(w.bw)
		// Drain whatever else is ready before paying for a flush.
	drain:
		for {
			select {
			case more, ok := <-w.lines:
				if !ok {
					w.bw.Flush()
					return
				}
				more.writeTo(w.bw)
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
	switch ev.Type {
	case agent.EventTurnEnd:
		ev.Stop = agent.ZotStop(ev.Stop) // zot's "end", not "end_turn"
		w.send(append(ev.AppendJSON(make([]byte, 0, 96), ""), '\n'))
	case agent.EventUserMessage, agent.EventAssistantMessage, agent.EventToolResult:
		// A large text (a 16 MiB prompt) is escaped as it is written.
		sp := ev.Spliced(nil, "")
		sp.AddRaw([]byte{'\n'})
		w.queue(outLine{sp: &sp})
	default:
		w.send(append(ev.AppendJSON(make([]byte, 0, 96), ""), '\n'))
	}
}

func (w *writer) send(b []byte) { w.queue(outLine{b: b}) }

func (w *writer) queue(l outLine) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return
	}
	w.lines <- l
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
