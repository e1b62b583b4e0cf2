package provider

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/zot-editors/zot/agent/message"
)

// A growing conversation encoded through the cache gives byte for byte
// the body encoded without it, call after call, for both providers; the
// breakpoint on Anthropic's last user message moves with it, and a changed
// system prompt or tool list is encoded again.
func TestCachedBodiesEqualUncached(t *testing.T) {
	for _, prov := range []string{Anthropic, OpenAI} {
		t.Run(prov, func(t *testing.T) {
			full := transcriptRequest(t, prov)
			// Thinking blocks too, with reasoning on (the Anthropic head
			// then depends on the last assistant turn).
			full.Messages = append(append(thinkingTranscript(), full.Messages...), thinkingTranscript()...)
			full.Reasoning = ReasoningLow
			var cache encodeCache
			for n := 1; n <= len(full.Messages); n++ {
				req := full
				req.Messages = full.Messages[:n]
				// The head changes now and then: system prompt, tools, limit.
				req.System = fmt.Sprint("SYSTEM ", n/2)
				if n == 3 {
					req.Tools = full.Tools[:1]
					req.MaxTokens = 99
				}
				var cached, fresh []byte
				var err1, err2 error
				if prov == Anthropic {
					cached, _, err1 = anthropicBody(req, &cache)
					fresh, _, err2 = anthropicBody(req, nil)
				} else {
					cached, err1 = openaiBody(req, false, &cache)
					fresh, err2 = openaiBody(req, false, nil)
				}
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if !bytes.Equal(cached, fresh) {
					t.Fatalf("%d messages: cached body\n%s\nwant\n%s", n, cached, fresh)
				}
				if n%4 != 0 { // now and then the transport keeps the buffer
					cache.giveBack(cached)
				}
			}
		})
	}
}

// A call encodes only the messages the previous call did not; entries of
// messages no longer sent are dropped.
func TestEncodeCacheEncodesOnlyNewMessages(t *testing.T) {
	var msgs []message.Message
	for i := range 6 {
		msgs = append(msgs, message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(fmt.Sprint(`"m`, i, `"`))}})
	}
	var encoded []int
	enc := func(dst []byte, i int, m message.Message) ([]byte, error) {
		encoded = append(encoded, i)
		return append(dst, m.Content[0].Text...), nil
	}
	var c encodeCache
	call := func(ms []message.Message, skip int, want string) {
		t.Helper()
		encoded = nil
		b, err := c.body([]byte(`{"model":"x","messages":null}`), [][]byte{[]byte(`"sys"`)}, ms, skip, enc)
		if err != nil {
			t.Fatal(err)
		}
		if got := string(b); got != `{"model":"x","messages":["sys",`+want+`]}` {
			t.Fatalf("body %s, want messages %s", got, want)
		}
		c.giveBack(b)
	}
	call(msgs[:3], -1, `"m0","m1","m2"`)
	call(msgs[:5], 4, `"m0","m1","m2","m3","m4"`) // 4: encoded fresh, not cached
	if fmt.Sprint(encoded) != "[3 4]" {
		t.Fatalf("encoded %v, want [3 4]", encoded)
	}
	call(msgs[:5], -1, `"m0","m1","m2","m3","m4"`)
	if fmt.Sprint(encoded) != "[4]" {
		t.Fatalf("encoded %v, want [4]", encoded)
	}
	// Out of place (a compaction dropped a prefix): found by address.
	call(msgs[2:5], -1, `"m2","m3","m4"`)
	if fmt.Sprint(encoded) != "[]" {
		t.Fatalf("encoded %v, want []", encoded)
	}
	// A replaced message (new content) is encoded again; dropped entries too.
	msgs[3] = message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(`"new"`)}}
	call(msgs[:4], -1, `"m0","m1","m2","new"`)
	if fmt.Sprint(encoded) != "[0 1 3]" {
		t.Fatalf("encoded %v, want [0 1 3]", encoded)
	}
	// Fewer messages, the prefix kept: the entries past them let go of
	// their messages.
	call(msgs[:2], -1, `"m0","m1"`)
	for i, e := range c.prev[len(c.prev):cap(c.prev)] {
		if e.content != nil {
			t.Errorf("entry %d past the last message still holds one", len(c.prev)+i)
		}
	}
	for i, e := range c.spare[:cap(c.spare)] {
		if e.content != nil {
			t.Errorf("spare entry %d still holds a message", i)
		}
	}
}

// The body buffer is lent again only when the call and every reader the
// transport was given have let go of it.
func TestSharedBodyReturnsBufferLast(t *testing.T) {
	var c encodeCache
	buf := append(c.takeBuffer(), `{"messages":[]}`...)
	s := c.share(buf)
	r1, r2 := s.reader(), s.reader()
	var got bytes.Buffer
	if _, err := r1.WriteTo(&got); err != nil || got.String() != `{"messages":[]}` {
		t.Fatalf("WriteTo: %q, %v", got.String(), err)
	}
	s.done()
	r1.Close()
	if b := c.takeBuffer(); b != nil {
		t.Fatal("buffer lent again while a reader holds it")
	}
	r2.Close()
	r2.Close() // twice is once
	if b := c.takeBuffer(); cap(b) != cap(buf) {
		t.Fatalf("buffer not returned (cap %d, want %d)", cap(b), cap(buf))
	}
	if n, _ := r2.Read(make([]byte, 8)); n != 0 {
		t.Fatal("a closed reader still reads the buffer")
	}
}

// A body built in the last body's buffer keeps that body's bytes up to the
// last message that is still the same and writes only what follows; a
// changed head, lead or message, the skip message, or a buffer the
// transport still holds, is written again.
func TestBodyKeepsUnchangedPrefix(t *testing.T) {
	var msgs []message.Message
	for i := range 5 {
		msgs = append(msgs, message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(fmt.Sprint(`"m`, i, `"`))}})
	}
	enc := func(dst []byte, i int, m message.Message) ([]byte, error) {
		return append(dst, m.Content[0].Text...), nil
	}
	var c encodeCache
	head := []byte(`{"model":"x","messages":null}`)
	call := func(head []byte, lead string, ms []message.Message, skip int, want string) []byte {
		t.Helper()
		var l [][]byte
		if lead != "" {
			l = [][]byte{[]byte(lead)}
		}
		b, err := c.body(head, l, ms, skip, enc)
		if err != nil {
			t.Fatal(err)
		}
		if got, wantBody := string(b), string(head[:len(head)-5])+"["+want+"]}"; got != wantBody {
			t.Fatalf("body %s, want %s", got, wantBody)
		}
		return b
	}
	// poison replaces every cached encoding with one of the same size: a
	// message written again from the cache shows it, a kept one does not.
	poison := func(ch string) {
		for i := range c.prev {
			if raw := c.prev[i].raw; raw != nil {
				c.prev[i].raw = bytes.Repeat([]byte(ch), len(raw))
			}
		}
	}
	b := call(head, `"sys"`, msgs[:3], -1, `"sys","m0","m1","m2"`)
	c.giveBack(b)
	poison("#")
	b = call(head, `"sys"`, msgs[:4], 3, `"sys","m0","m1","m2","m3"`)
	c.giveBack(b)
	// m3 was the skip message: it is written again (and cached now).
	poison("#")
	b = call(head, `"sys"`, msgs[:5], -1, `"sys","m0","m1","m2","m3","m4"`)
	// The transport still holds the buffer: all is written again, from the cache.
	poison("#")
	b2 := call(head, `"sys"`, msgs[:5], -1, `"sys",####,####,####,####,####`)
	if sameArray(b, b2) {
		t.Fatal("a body was built in a buffer the transport holds")
	}
	c.giveBack(b)
	c.giveBack(b2) // the last body's buffer (b2) is kept over another
	c.giveBack(b)
	if !sameArray(c.free, b2) {
		t.Fatal("the last body's buffer was not kept for the next call")
	}
	// A changed lead: written again.
	b = call(head, `"SYS"`, msgs[:5], -1, `"SYS",####,####,####,####,####`)
	c.giveBack(b)
	// A changed head: written again.
	poison("%")
	head2 := []byte(`{"model":"y","messages":null}`)
	b = call(head2, `"SYS"`, msgs[:5], -1, `"SYS",%%%%,%%%%,%%%%,%%%%,%%%%`)
	c.giveBack(b)
	// A message replaced in the middle: kept up to it, written from it on.
	msgs[2] = message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(`"new"`)}}
	b = call(head2, `"SYS"`, msgs[:5], -1, `"SYS",%%%%,%%%%,"new",%%%%,%%%%`)
	c.giveBack(b)
	// The skip message is never kept, even when it was the same before.
	poison("&")
	call(head2, `"SYS"`, msgs[:5], 1, `"SYS",%%%%,"m1",&&&&&,&&&&,&&&&`)
}
