package agent

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

// The hand-written encoder must agree with encoding/json on every string,
// byte for byte: a decoded round trip cannot tell an invalid byte or a raw
// U+2028 from their escapes.
func TestEventJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "nl\n cr\r tab\t", "ctl\x00\x01\x1f\b\f", "cjk 中文 emoji 😀",
		"bad utf8 \xff\xfe end", "seps \u2028 \u2029", "<html>&amp;"} {
		got, _ := Event{Type: EventTextDelta, Delta: s}.MarshalJSON()
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(struct {
			Type  string `json:"type"`
			Delta string `json:"delta"`
		}{"text_delta", s})
		if want := strings.TrimSuffix(buf.String(), "\n"); string(got) != want {
			t.Errorf("%q:\n got %s\nwant %s", s, got, want)
		}
	}
}

func TestEventWireFields(t *testing.T) {
	cases := []struct {
		ev   Event
		want string
	}{
		{Event{Type: EventTurnStart, Step: 2}, `{"type":"turn_start","step":2}`},
		{Event{Type: EventTurnEnd, Stop: "error", Error: "boom"}, `{"type":"turn_end","stop":"error","error":"boom"}`},
		{Event{Type: EventTurnEnd, Stop: "end_turn"}, `{"type":"turn_end","stop":"end_turn"}`},
		{Event{Type: EventDone}, `{"type":"done"}`},
		{Event{Type: EventToolProgress, ID: "t1", Text: "line"}, `{"type":"tool_progress","id":"t1","text":"line"}`},
		{Event{Type: EventThinkingDelta, Text: "hm\n\"x\""}, `{"type":"thinking_delta","text":"hm\n\"x\""}`},
		{Event{Type: EventAssistantMessage, Content: []message.Content{{Type: message.TypeThinking, Text: "t", Signature: "secret"},
			{Type: message.TypeThinking, Redacted: true, Data: "enc"}}, Time: time.Unix(0, 0).UTC()},
			`{"content":[{"type":"thinking","text":"t"},{"type":"thinking","text":"","redacted":true}],"time":"1970-01-01T00:00:00Z","type":"assistant_message"}`},
		{Event{Type: EventToolCall, ID: "t1", Name: "read"}, `{"args":{},"id":"t1","name":"read","type":"tool_call"}`},
		{Event{Type: EventToolResult, ID: "t1", Content: []message.Content{message.Text("x")}}, `{"content":[{"type":"text","text":"x"}],"id":"t1","is_error":false,"type":"tool_result"}`},
		{Event{Type: EventUsage, Usage: message.Usage{Input: 1}, Cumulative: message.Usage{Input: 3}}, `{"cache_read":0,"cache_write":0,"cost_usd":0,"cumulative":{"input":3,"output":0,"cache_read":0,"cache_write":0,"cost_usd":0},"input":1,"output":0,"type":"usage"}`},
	}
	for _, c := range cases {
		got, _ := json.Marshal(c.ev)
		if string(got) != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.ev.Type, got, c.want)
		}
	}
	// The hand encoder and Wire() agree on thinking_delta.
	th := Event{Type: EventThinkingDelta, Text: "a \u2028 \xff"}
	fast, _ := th.MarshalJSON()
	slow, _ := json.Marshal(th.Wire())
	var f, w map[string]any
	json.Unmarshal(fast, &f)
	json.Unmarshal(slow, &w)
	if f["text"] != w["text"] || f["type"] != w["type"] {
		t.Errorf("thinking_delta: hand %s, Wire %s", fast, slow)
	}
	withRun := Event{Type: EventTextDelta, Delta: "d"}.AppendJSON(nil, "r1")
	if string(withRun) != `{"type":"text_delta","delta":"d","runId":"r1"}` {
		t.Errorf("runId: %s", withRun)
	}
	um := Event{Type: EventUserMessage, Content: []message.Content{message.Text("hi")}, Time: time.Unix(0, 0).UTC()}.AppendJSON(nil, "r1")
	if !strings.Contains(string(um), `"runId":"r1"`) {
		t.Errorf("runId on the slow path: %s", um)
	}
}

func BenchmarkEventTextDelta(b *testing.B) {
	ev := Event{Type: EventTextDelta, Delta: "some streamed words "}
	buf := make([]byte, 0, 256)
	for i := 0; i < b.N; i++ {
		buf = ev.AppendJSON(buf[:0], "")
	}
}

// Spliced writes the bytes AppendJSON writes, whether appended or written
// in pieces (a piece boundary falling inside a UTF-8 sequence, an invalid
// byte, HTML to escape), for every event that carries texts.
func TestSplicedMatchesAppendJSON(t *testing.T) {
	unit := " \"q\" \\ \n\t\r\x01 <a&b> \u2028\u2029 é 漢 😀 \xff\xe2\x82 "
	big := func(tag string) string { return tag + strings.Repeat(unit, 3*largeEventText/len(unit)) + tag }
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, ev := range []Event{
		{Type: EventUserMessage, Time: at, Content: []message.Content{message.Text(big("prompt")), message.Text("small"), message.Image("image/png", "aGk=")}},
		{Type: EventAssistantMessage, Time: at, Content: []message.Content{message.Text(big("reply"))}},
		{Type: EventToolResult, ID: "c1", IsError: true, Content: []message.Content{message.Text(big("out")), message.Text(big("out2"))}},
		{Type: EventUserMessage, Time: at, Content: []message.Content{message.Text("only small")}},
	} {
		for _, runID := range []string{"", "run-1"} {
			want := ev.AppendJSON([]byte("prefix:"), runID)
			sp := ev.Spliced([]byte("prefix:"), runID)
			sp.AddRaw([]byte("}"))
			want = append(want, '}')
			if sp.Len() != len(want) {
				t.Errorf("%s: Len %d, want %d", ev.Type, sp.Len(), len(want))
			}
			if got := sp.Append(nil); !bytes.Equal(got, want) {
				t.Errorf("%s: Append differs from AppendJSON at byte %d", ev.Type, firstDiff(got, want))
			}
			var w bytes.Buffer
			if n, err := sp.WriteTo(&w); err != nil || n != int64(len(want)) || !bytes.Equal(w.Bytes(), want) {
				t.Errorf("%s: WriteTo (%d, %v) differs from AppendJSON at byte %d", ev.Type, n, err, firstDiff(w.Bytes(), want))
			}
		}
	}
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < min(len(a), len(b)) && a[i] == b[i] {
		i++
	}
	return i
}
