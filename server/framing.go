package server

import (
	"bufio"
	"bytes"
	"context"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/encoding/json"
	"go.lsp.dev/jsonrpc2"

	"github.com/zot-editors/zot/internal/jsonstr"
)

// MaxMessageBytes is the largest message body zot lsp reads (64 MiB:
// prompts carry base64 images). Larger messages are skipped and answered
// with an error; the connection stays up.
const MaxMessageBytes = 64 << 20

// maxHeaderLine bounds one header line; longer ones are skipped.
const maxHeaderLine = 8 << 10

// maxPendingOutput is how much encoded output may wait for a slow client
// before writers block (backpressure instead of unbounded memory).
const maxPendingOutput = 8 << 20

// frameStream is the LSP base protocol (Content-Length framed JSON-RPC) as
// a jsonrpc2.Stream. Unlike jsonrpc2.NewStream it never gives up on bad
// input: a garbled header, a body that is not JSON, a message that is not
// JSON-RPC or one past MaxMessageBytes is answered (when it has an id) or
// dropped, and reading goes on. Only the end of the input ends it.
//
// Writes are queued and flushed by one goroutine, so a burst of
// notifications costs few system calls.
type frameStream struct {
	in     *bufio.Reader
	closer io.Closer // closes the input, if it can be closed
	out    *outQueue
	logf   func(format string, args ...any)
	max    int // largest body read (MaxMessageBytes)
	// dropped counts messages skipped for being malformed (tests, fuzz).
	dropped int
}

func newFrameStream(in io.Reader, out io.Writer, logf func(string, ...any)) *frameStream {
	s := &frameStream{in: bufio.NewReaderSize(in, 64<<10), out: newOutQueue(out), logf: logf, max: MaxMessageBytes}
	if c, ok := in.(io.Closer); ok {
		s.closer = c
	}
	return s
}

// Read returns the next well-formed message.
func (s *frameStream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		body, n, err := s.readFrame()
		if err != nil {
			return nil, n, err
		}
		if body == nil {
			continue // skipped frame
		}
		msg, derr := decodeMessage(body)
		if derr == nil {
			return msg, n, nil
		}
		s.dropped++
		s.answerBad(body, derr)
	}
}

// readFrame reads one frame. A nil body with a nil error means a frame
// was skipped.
func (s *frameStream) readFrame() ([]byte, int64, error) {
	var total int64
	length := -1
	sawHeader := false
	for {
		line, n, err := s.readHeaderLine()
		total += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) && total > 0 && sawHeader {
				return nil, total, io.ErrUnexpectedEOF
			}
			return nil, total, err
		}
		if line == "" {
			if !sawHeader {
				continue // stray blank line between messages
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			s.logf("skipping a malformed header line %q", preview([]byte(line)))
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, perr := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if perr != nil || v < 0 {
				s.logf("skipping a message with Content-Length %q", value)
				length = -2
				continue
			}
			length = int(min(v, int64(1)<<62))
		}
	}
	switch {
	case length == -1:
		s.logf("skipping a message without Content-Length")
		s.dropped++
		return nil, total, nil
	case length == -2:
		s.dropped++
		return nil, total, nil
	case length > s.max:
		n, err := io.CopyN(io.Discard, s.in, int64(length))
		total += n
		s.dropped++
		s.writeError(nil, jsonrpc2.InvalidRequest, fmt.Sprintf("message of %d bytes is larger than the %d byte limit; it was dropped", length, s.max))
		if err != nil {
			return nil, total, err
		}
		return nil, total, nil
	}
	body := make([]byte, length)
	n, err := io.ReadFull(s.in, body)
	total += int64(n)
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, total, err
	}
	return body, total, nil
}

// readHeaderLine reads one "\n"-terminated line, trimmed. Overlong lines
// are consumed and returned as an unparseable marker.
func (s *frameStream) readHeaderLine() (string, int, error) {
	var buf []byte
	n := 0
	overlong := false
	for {
		chunk, err := s.in.ReadSlice('\n')
		n += len(chunk)
		if !overlong && len(buf)+len(chunk) <= maxHeaderLine {
			buf = append(buf, chunk...)
		} else {
			overlong, buf = true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && (!errors.Is(err, io.EOF) || n == 0) {
			return "", n, err
		}
		if overlong {
			return "\x00overlong header line", n, nil
		}
		line := string(bytes.TrimSpace(buf))
		// A body without a trailing newline runs into the next header
		// ("{…}Content-Length: 52"): resynchronise on the header.
		if i := strings.LastIndex(asciiLower(line), "content-length:"); i > 0 {
			line = line[i:]
		}
		return line, n, nil
	}
}

// answerBad replies to a body jsonrpc2 could not decode: a parse error
// (id null) for invalid JSON, else an invalid-request error echoing the
// request's id when it has one. Notifications are dropped silently.
func (s *frameStream) answerBad(body []byte, derr error) {
	var probe struct {
		ID     stdjson.RawMessage `json:"id"`
		Method stdjson.RawMessage `json:"method"`
	}
	if err := stdjson.Unmarshal(body, &probe); err != nil {
		s.logf("dropping a message that is not JSON: %v", err)
		s.writeError(nil, jsonrpc2.ParseError, "parse error: the message body is not valid JSON: "+err.Error())
		return
	}
	id := bytes.TrimSpace(probe.ID)
	if len(id) == 0 || string(id) == "null" {
		s.logf("dropping an invalid notification or response: %v", derr)
		return
	}
	if len(probe.Method) == 0 {
		// A response to a request zot never sent, or one with an id
		// jsonrpc2 cannot represent: nothing to answer.
		s.logf("dropping an invalid response: %v", derr)
		return
	}
	msg := "invalid request: " + derr.Error()
	if id[0] != '"' && bytes.ContainsAny(id, ".eE") || !validID(id) {
		msg = "invalid request: the id must be an integer (32-bit) or a string"
	}
	s.writeError(id, jsonrpc2.InvalidRequest, msg)
}

func validID(id []byte) bool {
	var v jsonrpc2.ID
	return v.UnmarshalJSON(id) == nil
}

// writeError writes a JSON-RPC error response with a raw id (nil: null).
func (s *frameStream) writeError(id []byte, code jsonrpc2.Code, msg string) {
	if len(id) == 0 {
		id = []byte("null")
	}
	type wireErr struct {
		Code    jsonrpc2.Code `json:"code"`
		Message string        `json:"message"`
	}
	body, err := stdjson.Marshal(struct {
		JSONRPC string             `json:"jsonrpc"`
		ID      stdjson.RawMessage `json:"id"`
		Error   wireErr            `json:"error"`
	}{"2.0", stdjson.RawMessage(id), wireErr{code, msg}})
	if err != nil {
		return
	}
	s.out.writeFrame(body)
}

// Write encodes and queues one message.
func (s *frameStream) Write(ctx context.Context, msg jsonrpc2.Message) (int64, error) {
	data, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshaling message: %w", err)
	}
	return s.out.writeOwned(data)
}

// Close closes the input, ending Read. jsonrpc2 calls it when the input
// ends; the output stays open so answers to what was read still go out
// (Serve closes it last).
func (s *frameStream) Close() error {
	if s.closer != nil {
		return s.closer.Close()
	}
	return nil
}

// outQueue frames bodies and writes them from one goroutine, coalescing
// whatever accumulated while the previous write was in progress. Small
// frames are copied into a shared buffer; a large body handed over with
// writeOwned is queued as it is, so a big message is never copied again.
//
// Once the input has ended, output gets a deadline (expireAfter): an
// editor that stopped reading must not keep zot alive. Past it, queued
// output is dropped, writers get errOutputDeadline instead of waiting for
// room, and close returns even though a write(2) is still blocked in the
// kernel (the process exits under it).
type outQueue struct {
	w       io.Writer
	mu      sync.Mutex
	cond    *sync.Cond
	chunks  []outChunk // waiting output, in order; the last may grow
	pending int        // bytes in chunks
	spare   []byte
	closed  bool
	err     error
	done    chan struct{} // the writer goroutine ended
	expired chan struct{} // the deadline passed
	timer   *time.Timer
	header  [32]byte
}

// outChunk is a piece of waiting output: bytes, or an encoding whose
// large texts are escaped as it is written; neither is a marker that the
// next small frame starts a chunk.
type outChunk struct {
	b  []byte
	sp *jsonstr.Spliced
}

// ownedFrameMin is the body size from which writeOwned queues the body
// itself instead of copying it.
const ownedFrameMin = 64 << 10

// errOutputDeadline is what writes get once the shutdown deadline passed.
var errOutputDeadline = errors.New("the editor stopped reading zot's output; output dropped at shutdown")

func newOutQueue(w io.Writer) *outQueue {
	q := &outQueue{w: w, done: make(chan struct{}), expired: make(chan struct{})}
	q.cond = sync.NewCond(&q.mu)
	go q.loop()
	return q
}

// writeFrame queues a copy of body, framed.
func (q *outQueue) writeFrame(body []byte) (int64, error) { return q.write(body, false) }

// writeOwned queues body, framed; the queue owns it from here on.
func (q *outQueue) writeOwned(body []byte) (int64, error) { return q.write(body, true) }

func (q *outQueue) write(body []byte, owned bool) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.pending >= maxPendingOutput && !q.closed && q.err == nil {
		q.cond.Wait()
	}
	if q.err != nil {
		return 0, q.err
	}
	if q.closed {
		return 0, io.ErrClosedPipe
	}
	h := strconv.AppendInt(append(q.header[:0], "Content-Length: "...), int64(len(body)), 10)
	h = append(h, "\r\n\r\n"...)
	q.appendBytes(h)
	if owned && len(body) >= ownedFrameMin {
		q.chunks = append(q.chunks, outChunk{b: body}, outChunk{}) // the next small frame starts a chunk
	} else {
		q.appendBytes(body)
	}
	q.pending += len(h) + len(body)
	q.cond.Broadcast()
	return int64(len(h) + len(body)), nil
}

// writeSpliced queues an encoded body whose large texts are escaped as
// it is written (a user_message carrying a 16 MiB prompt): the text is
// not encoded into one more buffer as large as itself.
func (q *outQueue) writeSpliced(body jsonstr.Spliced) (int64, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.pending >= maxPendingOutput && !q.closed && q.err == nil {
		q.cond.Wait()
	}
	if q.err != nil {
		return 0, q.err
	}
	if q.closed {
		return 0, io.ErrClosedPipe
	}
	h := strconv.AppendInt(append(q.header[:0], "Content-Length: "...), int64(body.Len()), 10)
	h = append(h, "\r\n\r\n"...)
	q.appendBytes(h)
	q.chunks = append(q.chunks, outChunk{sp: &body}, outChunk{})
	q.pending += len(h) + body.Len()
	q.cond.Broadcast()
	return int64(len(h) + body.Len()), nil
}

// appendBytes copies b onto the last chunk, or a new one.
func (q *outQueue) appendBytes(b []byte) {
	if n := len(q.chunks); n > 0 && q.chunks[n-1].b != nil && len(q.chunks[n-1].b) < ownedFrameMin {
		q.chunks[n-1].b = append(q.chunks[n-1].b, b...)
		return
	} else if n > 0 && q.chunks[n-1].b == nil && q.chunks[n-1].sp == nil {
		q.chunks = q.chunks[:n-1]
	}
	buf := q.spare
	q.spare = nil
	q.chunks = append(q.chunks, outChunk{b: append(buf[:0], b...)})
}

func (q *outQueue) loop() {
	defer close(q.done)
	q.mu.Lock()
	for {
		for q.pending == 0 && !q.closed && q.err == nil {
			q.cond.Wait()
		}
		if q.err != nil || q.pending == 0 && q.closed {
			q.mu.Unlock()
			return
		}
		out := q.chunks
		q.chunks, q.pending = nil, 0
		q.cond.Broadcast() // writers blocked on backpressure
		q.mu.Unlock()
		var err error
		for _, c := range out {
			switch {
			case err != nil:
			case c.sp != nil:
				_, err = c.sp.WriteTo(q.w)
			case len(c.b) > 0:
				_, err = q.w.Write(c.b)
			}
		}
		q.mu.Lock()
		if len(out) > 0 && q.spare == nil {
			if c := out[0]; c.b != nil && cap(c.b) <= 4*ownedFrameMin {
				q.spare = c.b[:0]
			}
		}
		if err != nil && q.err == nil {
			q.err = err
			q.chunks, q.pending = nil, 0
			q.cond.Broadcast()
		}
	}
}

// expireAfter starts the shutdown deadline: output not written within d
// is dropped. Calling it again does not move the deadline.
func (q *outQueue) expireAfter(d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.timer != nil {
		return
	}
	q.timer = time.AfterFunc(d, func() {
		q.mu.Lock()
		if q.err == nil {
			q.err = errOutputDeadline
		}
		q.chunks, q.pending = nil, 0
		q.cond.Broadcast()
		q.mu.Unlock()
		close(q.expired)
	})
}

// close flushes what is queued and stops the writer; after the deadline
// (expireAfter) it returns at once.
func (q *outQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
	select {
	case <-q.done:
	case <-q.expired:
	}
}

func preview(b []byte) string {
	const n = 80
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// asciiLower lowers ASCII letters only, keeping byte offsets.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
