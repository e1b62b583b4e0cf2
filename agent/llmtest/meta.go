package llmtest

import (
	"encoding/json"
	"errors"

	segjson "github.com/segmentio/encoding/json"
	"github.com/tidwall/gjson"
)

// meta is what the server reads of a request: the few top-level fields
// that shape the answer.
type meta struct {
	Model                string
	Stream, IncludeUsage bool
}

// requestMeta checks that body is JSON and reads its meta without decoding
// the messages. A request carries the whole conversation: decoding it
// with encoding/json took 3 ms at 400 prompts (0.44 MB), time zot spent
// waiting for the answer, which made its CPU per prompt look as if it grew
// with the conversation (a waiting Go process polls for a while before it
// sleeps); a real API's answer takes far longer whatever the size.
// Validating costs a fifth of that decode.
// stream_options is looked for in OpenAI requests only: a key that is not
// there is searched for to the end of the body.
func requestMeta(body []byte, openai bool) (meta, error) {
	if !segjson.Valid(body) {
		var v any
		err := json.Unmarshal(body, &v) // for its message
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
