package llmtest

import (
	"strconv"
	"time"

	"github.com/zot-editors/zot/internal/jsonstr"
)

// argsChunk is how many bytes of tool arguments go in one delta.
const argsChunk = 24

// anthropic streams the reply as the Messages API does.
func (st *stream) anthropic() {
	b := st.buf
	b = st.anthEvent(b, "message_start")
	b = append(b, `{"type":"message_start","message":{"id":"msg_llmtest_`...)
	b = strconv.AppendInt(b, int64(st.n), 10)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = jsonstr.Append(b, st.model)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(st.usage.Input), 10)
	b = append(b, `,"cache_creation_input_tokens":`...)
	b = strconv.AppendInt(b, int64(st.usage.CacheWrite), 10)
	b = append(b, `,"cache_read_input_tokens":`...)
	b = strconv.AppendInt(b, int64(st.usage.CacheRead), 10)
	b = append(b, `,"output_tokens":1}}}`+"\n\n"...)
	st.buf = b
	if !st.flush() {
		return
	}

	index := 0
	if st.reply.Thinking != "" {
		b := st.anthIndexed(st.buf, "content_block_start", index)
		st.buf = append(b, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`+"\n\n"...)
		for _, d := range SplitText(st.reply.Thinking) {
			if !st.wait() {
				return
			}
			st.buf = st.anthDelta(st.buf, index, "thinking_delta", "thinking", d)
			if !st.flush() {
				return
			}
		}
		st.buf = st.anthStop(st.anthDelta(st.buf, index, "signature_delta", "signature", st.signature()), index)
		if !st.flush() {
			return
		}
		index++
	}
	if st.reply.RedactedThinking != "" {
		b := st.anthIndexed(st.buf, "content_block_start", index)
		b = append(b, `,"content_block":{"type":"redacted_thinking","data":`...)
		b = jsonstr.Append(b, st.reply.RedactedThinking)
		b = append(b, "}}\n\n"...)
		st.buf = st.anthStop(b, index)
		if !st.flush() {
			return
		}
		index++
	}
	if len(st.deltas) > 0 {
		b := st.anthIndexed(st.buf, "content_block_start", index)
		st.buf = append(b, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
		st.buf = append(st.anthEvent(st.buf, "ping"), `{"type":"ping"}`+"\n\n"...)
		if !st.flush() {
			return
		}
		for i, d := range st.deltas {
			if st.interrupt(i, true) || !st.wait() {
				return
			}
			st.buf = st.anthDelta(st.buf, index, "text_delta", "text", d)
			if !st.flush() {
				return
			}
		}
		st.buf = st.anthStop(st.buf, index)
		if !st.flush() {
			return
		}
		index++
	}
	if st.interrupt(len(st.deltas), true) {
		return
	}
	for i, tc := range st.reply.ToolCalls {
		b := st.anthIndexed(st.buf, "content_block_start", index)
		b = append(b, `,"content_block":{"type":"tool_use","id":`...)
		b = jsonstr.Append(b, st.toolID(i, "toolu_llmtest_"))
		b = append(b, `,"name":`...)
		b = jsonstr.Append(b, tc.Name)
		b = append(b, `,"input":{}}}`+"\n\n"...)
		st.buf = b
		// The real API opens with an empty partial_json.
		pieces := append([]string{""}, splitArgs(st.args(i), argsChunk)...)
		for _, p := range pieces {
			if p != "" && !st.wait() {
				return
			}
			st.buf = st.anthDelta(st.buf, index, "input_json_delta", "partial_json", p)
			if !st.flush() {
				return
			}
		}
		st.buf = st.anthStop(st.buf, index)
		if !st.flush() {
			return
		}
		index++
	}
	b = st.anthEvent(st.buf, "message_delta")
	b = append(b, `{"type":"message_delta","delta":{"stop_reason":`...)
	b = jsonstr.Append(b, st.stop(true))
	b = append(b, `,"stop_sequence":null},"usage":{"output_tokens":`...)
	b = strconv.AppendInt(b, int64(st.usage.Output), 10)
	b = append(b, "}}\n\n"...)
	b = st.anthEvent(b, "message_stop")
	st.buf = append(b, `{"type":"message_stop"}`+"\n\n"...)
	st.flush()
}

// interrupt ends the stream as the reply's error_after / stall_after ask,
// once sent text deltas have gone out; true when the stream is over.
func (st *stream) interrupt(sent int, anthropic bool) bool {
	r := st.reply
	switch {
	case r.ErrorAfter != nil && *r.ErrorAfter == sent:
		typ, msg := r.ErrorType, r.ErrorMessage
		if typ == "" {
			typ = "overloaded_error"
		}
		if msg == "" {
			msg = "Overloaded"
		}
		var b []byte
		if anthropic {
			b = st.anthEvent(st.buf, "error")
			b = append(b, `{"type":"error","error":{"type":`...)
			b = jsonstr.Append(b, typ)
			b = append(b, `,"message":`...)
			b = jsonstr.Append(b, msg)
			b = append(b, "}}\n\n"...)
		} else {
			b = append(st.buf, `data: {"error":{"message":`...)
			b = jsonstr.Append(b, msg)
			b = append(b, `,"type":`...)
			b = jsonstr.Append(b, typ)
			b = append(b, `,"param":null,"code":null}}`+"\n\n"...)
		}
		st.buf = b
		st.flush()
		return true
	case r.StallAfter != nil && *r.StallAfter == sent:
		st.flush()
		select {
		case <-st.ctx.Done():
		case <-st.done:
		}
		return true
	}
	return false
}

func (st *stream) signature() string {
	if st.reply.Signature != "" {
		return st.reply.Signature
	}
	return "sig_llmtest_" + strconv.Itoa(st.n)
}

func (st *stream) anthEvent(b []byte, name string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// anthIndexed starts a content-block event: its SSE head and
// {"type":name,"index":index — the caller appends the rest.
// anthDelta appends a content_block_delta of type kind carrying value in
// field (text_delta/text, thinking_delta/thinking, input_json_delta/
// partial_json, signature_delta/signature).
func (st *stream) anthDelta(b []byte, index int, kind, field, value string) []byte {
	b = st.anthIndexed(b, "content_block_delta", index)
	b = append(b, `,"delta":{"type":"`...)
	b = append(b, kind...)
	b = append(b, `","`...)
	b = append(b, field...)
	b = append(b, `":`...)
	b = jsonstr.Append(b, value)
	return append(b, "}}\n\n"...)
}

// anthStop appends a content_block_stop.
func (st *stream) anthStop(b []byte, index int) []byte {
	return append(st.anthIndexed(b, "content_block_stop", index), "}\n\n"...)
}

func (st *stream) anthIndexed(b []byte, name string, index int) []byte {
	b = st.anthEvent(b, name)
	b = append(b, `{"type":"`...)
	b = append(b, name...)
	b = append(b, `","index":`...)
	return strconv.AppendInt(b, int64(index), 10)
}

// openai streams the reply as Chat Completions does.
func (st *stream) openai(includeUsage bool) {
	created := time.Now().Unix()
	head := func(b []byte) []byte {
		b = append(b, `data: {"id":"chatcmpl-llmtest-`...)
		b = strconv.AppendInt(b, int64(st.n), 10)
		b = append(b, `","object":"chat.completion.chunk","created":`...)
		b = strconv.AppendInt(b, created, 10)
		b = append(b, `,"model":`...)
		return jsonstr.Append(b, st.model)
	}
	b := head(st.buf)
	st.buf = append(b, `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`+"\n\n"...)
	if !st.flush() {
		return
	}
	for _, d := range SplitText(st.reply.Thinking) {
		if !st.wait() {
			return
		}
		b := head(st.buf)
		b = append(b, `,"choices":[{"index":0,"delta":{"reasoning_content":`...)
		b = jsonstr.Append(b, d)
		st.buf = append(b, `},"finish_reason":null}]}`+"\n\n"...)
		if !st.flush() {
			return
		}
	}
	for i, d := range st.deltas {
		if st.interrupt(i, false) || !st.wait() {
			return
		}
		b := head(st.buf)
		b = append(b, `,"choices":[{"index":0,"delta":{"content":`...)
		b = jsonstr.Append(b, d)
		st.buf = append(b, `},"finish_reason":null}]}`+"\n\n"...)
		if !st.flush() {
			return
		}
	}
	if st.interrupt(len(st.deltas), false) {
		return
	}
	for i, tc := range st.reply.ToolCalls {
		b := head(st.buf)
		b = append(b, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
		b = strconv.AppendInt(b, int64(i), 10)
		b = append(b, `,"id":`...)
		b = jsonstr.Append(b, st.toolID(i, "call_llmtest_"))
		b = append(b, `,"type":"function","function":{"name":`...)
		b = jsonstr.Append(b, tc.Name)
		st.buf = append(b, `,"arguments":""}}]},"finish_reason":null}]}`+"\n\n"...)
		if !st.flush() {
			return
		}
		for _, p := range splitArgs(st.args(i), argsChunk) {
			if !st.wait() {
				return
			}
			b := head(st.buf)
			b = append(b, `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":`...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `,"function":{"arguments":`...)
			b = jsonstr.Append(b, p)
			st.buf = append(b, `}}]},"finish_reason":null}]}`+"\n\n"...)
			if !st.flush() {
				return
			}
		}
	}
	b = head(st.buf)
	b = append(b, `,"choices":[{"index":0,"delta":{},"finish_reason":`...)
	b = jsonstr.Append(b, st.stop(false))
	b = append(b, `}]}`+"\n\n"...)
	if includeUsage {
		u := st.usage
		b = head(b)
		b = append(b, `,"choices":[],"usage":{"prompt_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Input+u.CacheRead), 10)
		b = append(b, `,"completion_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Output), 10)
		b = append(b, `,"total_tokens":`...)
		b = strconv.AppendInt(b, int64(u.Input+u.CacheRead+u.Output), 10)
		b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
		b = strconv.AppendInt(b, int64(u.CacheRead), 10)
		b = append(b, `}}}`+"\n\n"...)
	}
	st.buf = append(b, "data: [DONE]\n\n"...)
	st.flush()
}
