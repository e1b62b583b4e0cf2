package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/message"
)

// TestLargeTextsEncodeAsEncodingJSONDoes: texts past largeText are spliced
// into the body (and large messages are not cached); the body must be the
// bytes encoding/json writes, for every place a text goes (user text,
// assistant text, tool results, which OpenAI joins into one string).
func TestLargeTextsEncodeAsEncodingJSONDoes(t *testing.T) {
	big := func(tag string) string {
		// Everything encoding/json escapes or keeps: quotes, backslashes,
		// controls, HTML (not escaped), U+2028/9, non-ASCII, invalid UTF-8.
		unit := tag + " \"q\" \\ \n\t\r\x01 <a&b> \u2028\u2029 é 漢 \xff "
		return strings.Repeat(unit, 2*largeText/len(unit)+1)
	}
	for _, prov := range []string{Anthropic, OpenAI} {
		t.Run(prov, func(t *testing.T) {
			req := transcriptRequest(t, prov)
			req.Messages = append(req.Messages,
				message.Message{Role: message.RoleAssistant, Content: []message.Content{message.Text(big("assistant")),
					{Type: message.TypeToolCall, ID: "call_2", Name: "read", Args: json.RawMessage(`{"path": "b.go"}`)}}},
				message.Message{Role: message.RoleUser, Content: []message.Content{{Type: message.TypeToolResult, CallID: "call_2",
					Content: []message.Content{message.Text(big("result1")), message.Text("small"), message.Text(big("result2"))}}}},
				message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(big("prompt")), message.Text("and a small one")}})
			encode := func(cache *encodeCache) []byte {
				var b []byte
				var err error
				if prov == Anthropic {
					b, _, err = anthropicBody(req, cache)
				} else {
					b, err = openaiBody(req, false, cache)
				}
				if err != nil {
					t.Fatal(err)
				}
				return bytes.Clone(b)
			}
			spliced, again := encode(&encodeCache{}), []byte(nil)
			cache := &encodeCache{}
			encode(cache)
			again = encode(cache) // the large messages from the cache, if they were kept
			saved := largeText
			largeText = 1 << 62 // every text through encoding/json
			want := encode(nil)
			largeText = saved
			if !bytes.Equal(spliced, want) {
				i := 0
				for i < min(len(spliced), len(want)) && spliced[i] == want[i] {
					i++
				}
				t.Fatalf("spliced body differs from encoding/json's at byte %d of %d/%d:\n got %.80q\nwant %.80q", i, len(spliced), len(want), spliced[i:], want[i:])
			}
			if !bytes.Equal(again, want) {
				t.Fatal("the second call's body differs")
			}
			if !json.Valid(spliced) {
				t.Fatal("body is not JSON")
			}
		})
	}
}

// TestLargeMessagesAreNotCached: a message past maxCachedMessage is encoded
// into each body, not kept (a second copy of a large prompt for the whole
// session); small ones are.
func TestLargeMessagesAreNotCached(t *testing.T) {
	req := transcriptRequest(t, OpenAI)
	req.Messages = append(req.Messages, message.Message{Role: message.RoleUser,
		Content: []message.Content{message.Text(strings.Repeat("x", maxCachedMessage+1))}})
	var c encodeCache
	if _, err := openaiBody(req, false, &c); err != nil {
		t.Fatal(err)
	}
	kept := 0
	for i, e := range c.prev {
		if e.raw != nil {
			kept++
		}
		if len(e.raw) > maxCachedMessage {
			t.Errorf("message %d (%d bytes encoded) is kept by the cache", i, len(e.raw))
		}
	}
	if kept == 0 {
		t.Error("no message is cached")
	}
}

// A large message is encoded into each body, except when the body is built
// in the last one's buffer with the large message in its unchanged part:
// its bytes are there already.
func TestLargeMessageKeptInBodyPrefix(t *testing.T) {
	big := message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(`"` + strings.Repeat("x", maxCachedMessage+1) + `"`)}}
	small := func(s string) message.Message {
		return message.Message{Role: message.RoleAssistant, Content: []message.Content{message.Text(`"` + s + `"`)}}
	}
	msgs := []message.Message{big, small("a"), small("b"), small("c")}
	var encoded []int
	enc := func(dst []byte, i int, m message.Message) ([]byte, error) {
		encoded = append(encoded, i)
		return append(dst, m.Content[0].Text...), nil
	}
	var c encodeCache
	head := []byte(`{"messages":null}`)
	call := func(n int, giveBack bool) {
		t.Helper()
		encoded = nil
		b, err := c.body(head, nil, msgs[:n], -1, enc)
		if err != nil {
			t.Fatal(err)
		}
		want := `{"messages":[` + big.Content[0].Text
		for _, m := range msgs[1:n] {
			want += "," + m.Content[0].Text
		}
		if string(b) != want+"]}" {
			t.Fatalf("%d messages: wrong body", n)
		}
		if giveBack {
			c.giveBack(b)
		}
	}
	call(2, true)
	call(3, false)
	if fmt.Sprint(encoded) != "[2]" {
		t.Fatalf("encoded %v, want [2] (the large message is in the kept bytes)", encoded)
	}
	call(4, false)
	if fmt.Sprint(encoded) != "[0 3]" {
		t.Fatalf("encoded %v, want [0 3] (the buffer is still lent: the large message again)", encoded)
	}
}
