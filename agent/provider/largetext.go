package provider

import (
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

// appendMessage appends encode(m) to dst (nil: returns encode's slice).
// Texts of largeText or more are encoded as placeholders, then written
// escaped straight into dst, sized once, with the same bytes encoding/json
// writes (jsonstr.Splice). A client's mapping may join texts into one
// string (OpenAI's tool results); the placeholders are found inside any
// string.
func appendMessage(dst []byte, m message.Message, encode func(message.Message) ([]byte, error)) ([]byte, error) {
	var texts []string
	if cs, ok := message.WithPlaceholders(m.Content, largeText, &texts); ok {
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
	sp, err := jsonstr.Splice(raw, texts, false)
	if err != nil {
		return dst, err
	}
	return sp.Append(dst), nil
}
