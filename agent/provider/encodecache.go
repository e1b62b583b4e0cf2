package provider

import (
	"bytes"
	"fmt"
	"io"
	"math"
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
// The request body is built in the last body's buffer when the transport
// has given it back: the bytes of the request head and of the messages
// that are still the same, in the same places, are already there, and only
// what follows them is written. A growing conversation then costs a model
// call the bytes of its new messages, not a copy of the whole transcript.
//
// Messages are never modified once in the transcript (see
// message.Message), so the address of a message's content array names it.
// An entry holds that array, so the address cannot be reused by another
// message while the entry lives; entries a call did not use are dropped.
type encodeCache struct {
	mu    sync.Mutex
	prev  []encodedMessage // the last call's messages, in order
	spare []encodedMessage // a slice to reuse for the next call's
	free  []byte           // a request body's buffer, to build the next in
	// last is the last body built, which prev's end offsets are in, and
	// open the offset just past its messages array's '[' and lead.
	last []byte
	open int
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
	raw     []byte // its encoding; nil for a large one (see maxCachedMessage)
	large   bool   // not kept: only the last body holds its bytes
	end     int    // the offset just past its bytes in the last body
}

func (e *encodedMessage) is(m message.Message) bool {
	return e.key == &m.Content[0] && len(e.content) == len(m.Content) && e.role == m.Role
}

// reusable: e's encoding is kept and may stand for m.
func (e *encodedMessage) reusable(m message.Message) bool {
	return !e.large && e.is(m)
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
	var prev, spare []encodedMessage
	var last []byte
	var open int
	if c != nil {
		c.mu.Lock()
		prev, spare, last, open = c.prev, c.spare, c.last, c.open
		c.prev, c.spare, c.last = nil, nil, nil
		c.mu.Unlock()
	}
	body := c.takeBuffer()
	// The last body's bytes up to the end of message k-1 are kept when this
	// buffer is the last body's, its head and lead are this call's, and
	// messages 0…k-1 are the same ones, none of them skip then or now.
	k := 0
	opened := len(head) - len("null}") + 1 // the offset past '['
	if sameArray(body, last) && open >= opened && bytes.HasPrefix(last, head[:opened-1]) && leadIs(last[opened-1:open], lead) {
		body = last[:open]
		for k < len(msgs) && k < len(prev) && k != skip && prev[k].key != nil && len(msgs[k].Content) > 0 && prev[k].is(msgs[k]) {
			body = last[:prev[k].end]
			k++
		}
	} else {
		body = append(body, head[:opened-1]...)
		body = append(body, '[')
		for _, raw := range lead {
			if len(raw) > 0 && len(body) > opened {
				body = append(body, ',')
			}
			body = append(body, raw...)
		}
		open = len(body)
	}
	first := len(body) == opened
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
	// Entries of the last call from position k on, to look up: next reuses
	// prev's array in place for the kept prefix (no copy of the entries).
	old, next := prev, spare[:0]
	if k > 0 {
		old, next = append(spare[:0], prev[k:]...), prev[:k]
	}
	// The transcript usually is the last call's plus new messages at the
	// end: compare in place, and index the last call's messages only once a
	// position holds another message (after a compaction, say).
	var index map[*message.Content]int
	for i := k; i < len(msgs); i++ {
		m := msgs[i]
		cacheable := c != nil && i != skip && len(m.Content) > 0
		var e encodedMessage
		hit := false
		if cacheable {
			key := &m.Content[0]
			j := i - k // m's position among old
			inPlace := j < len(old) && old[j].key == key
			if inPlace && old[j].reusable(m) {
				e, hit = old[j], true
			} else if !inPlace && (index != nil || j < len(old) && old[j].key != nil) {
				if index == nil {
					index = make(map[*message.Content]int, len(old))
					for j, p := range old {
						if p.key != nil {
							index[p.key] = j
						}
					}
				}
				if j, ok := index[key]; ok && old[j].reusable(m) {
					e, hit = old[j], true
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
				e = encodedMessage{}
				if cacheable { // large: its bytes stay in this body only
					e = encodedMessage{key: &m.Content[0], content: m.Content, role: m.Role, large: true}
				}
				e.end = len(body)
				next = append(next, e)
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
		e.end = len(body)
		next = append(next, e)
	}
	body = append(body, "]}"...)
	if c != nil {
		// Let go of messages no longer sent.
		if len(next) < len(prev) {
			clear(prev[len(next):]) // prev's array when next is in it
		}
		clear(old)
		c.mu.Lock()
		if c.prev == nil { // unless a concurrent call stored its own
			c.prev, c.spare, c.last, c.open = next, old[:0], body, open
		}
		c.mu.Unlock()
	}
	return body, nil
}

// sameArray: a and b share their first byte's address (b was built in a).
func sameArray(a, b []byte) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// leadIs reports whether the body bytes after '[' (b, the '[' included) are
// lead's non-empty entries, comma-separated.
func leadIs(b []byte, lead [][]byte) bool {
	if len(b) == 0 || b[0] != '[' {
		return false
	}
	b = b[1:]
	first := true
	for _, raw := range lead {
		if len(raw) == 0 {
			continue
		}
		if !first {
			if len(b) == 0 || b[0] != ',' {
				return false
			}
			b = b[1:]
		}
		first = false
		if !bytes.HasPrefix(b, raw) {
			return false
		}
		b = b[len(raw):]
	}
	return len(b) == 0
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

// giveBack returns a body buffer once nothing reads it any more. The last
// body's buffer is kept over any other (its bytes are reused); else the
// larger.
func (c *encodeCache) giveBack(b []byte) {
	if c == nil || cap(b) > maxKeptBody {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if sameArray(b, c.last) || !sameArray(c.free, c.last) && cap(b) > cap(c.free) {
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
	return r.writeTo(w, math.MaxInt64)
}

// writeTo writes up to max bytes of the rest of the body to w in one call.
func (r *bodyReader) writeTo(w io.Writer, max int64) (int64, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.off >= len(r.s.data) || max <= 0 {
		return 0, nil
	}
	end := len(r.s.data)
	if int64(end-r.off) > max {
		end = r.off + int(max)
	}
	n, err := w.Write(r.s.data[r.off:end])
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
