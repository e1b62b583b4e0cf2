package provider

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/internal/jsonstr"
)

// largeText is the text size from which appendMessage splices a text into
// a message's encoding instead of letting encoding/json escape it:
// encoding/json builds a string's escaped form in a slice grown by append
// and then copies it into its buffer, about 8× a 16 MiB prompt's size in
// garbage that the request body then copies once more.
var largeText = 64 << 10 // a variable for tests

// maxCachedMessage: a message whose encoding would be larger is encoded
// into each request body instead of being kept by encodeCache, which would
// hold a second copy of a large prompt for the whole session. Encoding it
// again costs tens of milliseconds a call, next to a model call's seconds.
const maxCachedMessage = 1 << 20

// placeholderTag starts the stand-in for a large text while the message is
// encoded: a NUL (escaped \u0000, which no text of the message encodes to
// by chance) and a per-process random tag.
var placeholderTag = func() string {
	var b [8]byte
	rand.Read(b[:])
	return "\x00zot-text-" + hex.EncodeToString(b[:]) + "-"
}()

// encodedTag is placeholderTag as it appears inside an encoded string.
var encodedTag = []byte(jsonstr.AppendContent(nil, placeholderTag))

// appendMessage appends encode(m) to dst (nil: returns encode's slice).
// Texts of largeText or more are encoded as placeholders, then written
// escaped straight into dst, sized once, with the same bytes encoding/json
// writes (jsonstr). A client's mapping may join texts into one string
// (OpenAI's tool results); the placeholders are found inside any string.
func appendMessage(dst []byte, m message.Message, encode func(message.Message) ([]byte, error)) ([]byte, error) {
	var texts []string
	if cs, ok := withPlaceholders(m.Content, &texts); ok {
		m.Content = cs
	}
	raw, err := encode(m)
	if err != nil {
		return dst, err
	}
	if len(texts) == 0 {
		if dst == nil {
			return raw, nil
		}
		return append(dst, raw...), nil
	}
	size := len(raw)
	for _, t := range texts {
		size += len(t) + len(t)/8 // escapes (newlines, quotes)
	}
	dst = slices.Grow(dst, size)
	for {
		i := bytes.Index(raw, encodedTag)
		if i < 0 {
			return append(dst, raw...), nil
		}
		dst = append(dst, raw[:i]...)
		rest := raw[i+len(encodedTag):]
		j := bytes.Index(rest, []byte(`\u0000`))
		n := -1
		if j >= 0 {
			n, _ = strconv.Atoi(string(rest[:j]))
		}
		if n < 0 || n >= len(texts) {
			return dst, fmt.Errorf("encoding a message: a large text's placeholder was garbled")
		}
		dst = jsonstr.AppendContent(dst, texts[n])
		raw = rest[j+len(`\u0000`):]
	}
}

// withPlaceholders returns a copy of cs with each text of largeText or
// more (tool results' texts too) replaced by a placeholder, the texts
// appended to texts in placeholder order; ok is false (and cs untouched)
// when there is none.
func withPlaceholders(cs []message.Content, texts *[]string) (out []message.Content, ok bool) {
	for i, c := range cs {
		changed := false
		if len(c.Text) >= largeText {
			c.Text = placeholderTag + strconv.Itoa(len(*texts)) + "\x00"
			*texts = append(*texts, cs[i].Text)
			changed = true
		}
		if sub, subOK := withPlaceholders(c.Content, texts); subOK {
			c.Content = sub
			changed = true
		}
		if !changed {
			continue
		}
		if out == nil {
			out = slices.Clone(cs)
		}
		out[i] = c
	}
	return out, out != nil
}
