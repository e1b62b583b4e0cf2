package provider

import (
	"bytes"
	"fmt"
	"io"
	"reflect"
	"sync"
	"sync/atomic"

	"github.com/zot-editors/zot/agent/message"
)

// encodeCache keeps each transcript message's wire encoding from one model
// call to the next, so a call encodes only the messages that are new since
// the last one: O(new messages), not O(transcript). The encoding is made
// by the provider's own per-message encoder; the cache only remembers its
// output, so new content block kinds need nothing here.
//
// Messages are never modified once in the transcript (see
// message.Message), so the address of a message's content array names it.
// An entry holds that array, so the address cannot be reused by another
// message while the entry lives; entries a call did not use are dropped.
type encodeCache struct {
	mu    sync.Mutex
	prev  []encodedMessage // the last call's messages, in order
	spare []encodedMessage // the call before's slice, to reuse
	free  []byte           // the last request body's buffer, to build the next in
	// The last request head (the request without its messages) and its
	// encoding: the system prompt and the tools' schemas rarely change
	// between calls and cost more to encode than to compare.
	headOf  any
	headRaw []byte
}

// encodedMessage is one transcript message as the wire carries it: zero or
// more wire messages, comma-separated.
type encodedMessage struct {
	key     *message.Content  // &content[0]; nil: not cached
	content []message.Content // the key's array, kept alive
	role    string
	raw     []byte
}

func (e *encodedMessage) is(m message.Message) bool {
	return e.key == &m.Content[0] && len(e.content) == len(m.Content) && e.role == m.Role
}

// head encodes p, a provider's request struct without its messages,
// reusing the last call's encoding when p is deep-equal to its request
// (reflect.DeepEqual, so fields added to the struct are compared too).
func (c *encodeCache) head(p any) ([]byte, error) {
	if c != nil {
		c.mu.Lock()
		of, raw := c.headOf, c.headRaw
		c.mu.Unlock()
		if of != nil && reflect.DeepEqual(of, p) {
			return raw, nil
		}
	}
	raw, err := encodeJSON(p)
	if err == nil && c != nil {
		c.mu.Lock()
		c.headOf, c.headRaw = p, raw
		c.mu.Unlock()
	}
	return raw, err
}

// body builds a request body from head, the request encoded with a null
// messages field as its last member (…,"messages":null}): that array gets
// the wire messages in lead, then each of msgs, reused from the last call
// or encoded with enc, which appends message i's wire messages to dst
// (nothing when none is sent). skip is a message index to encode fresh and
// not cache (Anthropic's last user message carries a cache breakpoint), or
// -1. Messages not cached (skip, those past maxCachedMessage, all with a
// nil cache) are encoded straight into the body.
func (c *encodeCache) body(head []byte, lead [][]byte, msgs []message.Message, skip int,
	enc func(dst []byte, i int, m message.Message) ([]byte, error)) ([]byte, error) {
	const tail = `"messages":null}`
	if !bytes.HasSuffix(head, []byte(tail)) {
		return nil, fmt.Errorf("request head does not end with %s", tail)
	}
	var prev, next []encodedMessage
	if c != nil {
		c.mu.Lock()
		prev, next, c.prev, c.spare = c.prev, c.spare[:0], nil, nil
		c.mu.Unlock()
	}
	body := c.takeBuffer()
	body = append(body, head[:len(head)-len("null}")]...)
	body = append(body, '[')
	first := true
	add := func(raw []byte) {
		if len(raw) == 0 {
			return
		}
		if !first {
			body = append(body, ',')
		}
		first = false
		body = append(body, raw...)
	}
	for _, raw := range lead {
		add(raw)
	}
	// The transcript usually is the last call's plus new messages at the
	// end: compare in place, and index the last call's messages only once a
	// position holds another message (after a compaction, say).
	var index map[*message.Content]int
	for i, m := range msgs {
		cacheable := c != nil && i != skip && len(m.Content) > 0
		var e encodedMessage
		hit := false
		if cacheable {
			key := &m.Content[0]
			inPlace := i < len(prev) && prev[i].key == key
			if inPlace && prev[i].is(m) {
				e, hit = prev[i], true
			} else if !inPlace && (index != nil || i < len(prev) && prev[i].key != nil) {
				if index == nil {
					index = make(map[*message.Content]int, len(prev))
					for j, p := range prev {
						if p.key != nil {
							index[p.key] = j
						}
					}
				}
				if j, ok := index[key]; ok && prev[j].is(m) {
					e, hit = prev[j], true
				}
			}
		}
		if !hit && (!cacheable || message.WireSize(m.Content) > maxCachedMessage) {
			// Not kept: encoded straight into the body, no copy of its own.
			mark := len(body)
			if !first {
				body = append(body, ',')
			}
			start := len(body)
			out, err := enc(body, i, m)
			if err != nil {
				return nil, err
			}
			if body = out; len(body) == start {
				body = body[:mark] // nothing of it is sent
			} else {
				first = false
			}
			if c != nil {
				next = append(next, encodedMessage{})
			}
			continue
		}
		if !hit {
			raw, err := enc(nil, i, m)
			if err != nil {
				return nil, err
			}
			e = encodedMessage{key: &m.Content[0], content: m.Content, role: m.Role, raw: raw}
		}
		add(e.raw)
		next = append(next, e)
	}
	body = append(body, "]}"...)
	if c != nil {
		clear(prev) // let go of messages no longer sent
		c.mu.Lock()
		if c.prev == nil { // unless a concurrent call stored its own
			c.prev, c.spare = next, prev[:0]
		}
		c.mu.Unlock()
	}
	return body, nil
}

// takeBuffer lends the cache's body buffer (empty when it is lent out or
// there is none yet). A body is as large as the transcript; allocating it
// afresh for every call costs more than encoding the new messages (a large
// allocation is zeroed and faulted in, then scavenged again).
func (c *encodeCache) takeBuffer() []byte {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	b := c.free
	c.free = nil
	return b[:0]
}

// giveBack returns a body buffer once nothing reads it any more.
func (c *encodeCache) giveBack(b []byte) {
	if c == nil || cap(b) > maxKeptBody {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if cap(b) > cap(c.free) {
		c.free = b
	}
}

// maxKeptBody: a larger body buffer (a transcript of images, say) is left
// to the garbage collector.
const maxKeptBody = 16 << 20

// share wraps a body built in a buffer from takeBuffer for the transport.
func (c *encodeCache) share(body []byte) *sharedBody {
	s := &sharedBody{data: body, release: c.giveBack}
	s.refs.Store(1)
	return s
}

// sharedBody is a request body in a lent buffer. The buffer goes back when
// the call and every request made from it are done with it: the transport
// closes a request body once it has written or abandoned it, which may be
// after the response was read.
type sharedBody struct {
	data    []byte
	refs    atomic.Int32
	release func([]byte)
}

// reader returns a new reader of the body for one request.
func (s *sharedBody) reader() *bodyReader {
	s.refs.Add(1)
	return &bodyReader{s: s}
}

// done drops the caller's (or a reader's) hold on the buffer.
func (s *sharedBody) done() {
	if s.refs.Add(-1) == 0 && s.release != nil {
		s.release(s.data)
	}
}

// bodyReader reads a sharedBody. Close waits for a running Read or WriteTo,
// so the buffer is never reused under one.
type bodyReader struct {
	mu     sync.Mutex
	s      *sharedBody
	off    int
	closed bool
}

func (r *bodyReader) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.off >= len(r.s.data) {
		return 0, io.EOF
	}
	n := copy(p, r.s.data[r.off:])
	r.off += n
	return n, nil
}

// WriteTo writes the rest of the body in one call, as bytes.Reader does:
// one large write to the connection instead of 32 KB pieces.
func (r *bodyReader) WriteTo(w io.Writer) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.off >= len(r.s.data) {
		return 0, nil
	}
	n, err := w.Write(r.s.data[r.off:])
	r.off += n
	return int64(n), err
}

func (r *bodyReader) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed {
		r.closed = true
		r.s.done()
	}
	return nil
}
