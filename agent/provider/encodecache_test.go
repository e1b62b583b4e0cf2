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
