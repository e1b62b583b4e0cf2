package llmtest

import (
	"encoding/json"
	"errors"

	"github.com/tidwall/gjson"

	"github.com/zot-editors/zot/agent/llmtest/jsonresume"
)

// meta is what the server reads of a request: the few top-level fields
// that shape the answer.
type meta struct {
	Model                string
	Stream, IncludeUsage bool
}

// requestMeta checks that body is JSON (with v, nil to check it whole) and
// reads its meta without decoding the messages. A request carries the
// whole conversation, and the time the server takes over it is time zot
// waits for the answer: a Go process that waits longer spends more CPU
// around the wait (on our 2-core machines 0.1 ms for 1 ms, 0.3 ms for
// 20 ms, measured with an idle loopback peer), so an answer that came later
// at 400 prompts than at 20 made zot's CPU per prompt look as if it grew
// with the conversation; a real API answers far later whatever the size.
// Hence no decoding (3 ms at 400 prompts), and v's validation of what is
// new since the last request. stream_options is looked for in OpenAI
// requests only: a key that is not there is searched for to the end of
// the body.
func requestMeta(body []byte, openai bool, v *jsonresume.Validator) (meta, error) {
	if !v.Valid(body) {
		var x any
		err := json.Unmarshal(body, &x) // for its message
		if err == nil {                 // the validators disagree: say so rather than nothing
			err = errors.New("invalid JSON")
		}
		return meta{}, err
	}
	r := gjson.ParseBytes(body)
	m := meta{Model: r.Get("model").Str, Stream: r.Get("stream").Bool()}
	if openai {
		m.IncludeUsage = r.Get("stream_options.include_usage").Bool()
	}
	return m, nil
}
