package provider

import (
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/internal/proctest"
)

// benchPrompt is one prompt of two model calls: a tool call, then a
// 120-delta answer. The cpu-µs/op metric is the process's CPU time (user +
// system) per prompt and includes the llmtest server in the same process.
func benchPrompt(b *testing.B, prov string) {
	srv := llmtest.New(llmtest.Script{Loop: true, Replies: []llmtest.Reply{
		{Text: "Reading.", ToolCalls: []llmtest.ToolCall{{Name: "read", Args: json.RawMessage(`{"path":"main.go"}`)}}},
		{RepeatText: &llmtest.Repeat{Text: "tok ", Count: 120}},
	}})
	defer srv.Close()
	c := newTestClient(b, prov, srv, nil, nil)
	req := simpleRequest(b, prov)
	req.Tools = []ToolSpec{
		{Name: "read", Description: "Read a file", Schema: json.RawMessage(readSchema)},
		{Name: "bash", Description: "Run a command", Schema: json.RawMessage(`{"type":"object","properties":{"command":{"type":"string"}}}`)},
	}
	call := message.Content{Type: message.TypeToolCall, ID: "call_1", Name: "read", Args: json.RawMessage(`{"path":"main.go"}`)}
	second := req
	second.Messages = append(append([]message.Message(nil), req.Messages...),
		message.Message{Role: message.RoleAssistant, Content: []message.Content{message.Text("Reading."), call}},
		message.Message{Role: message.RoleUser, Content: []message.Content{{Type: message.TypeToolResult, CallID: "call_1",
			Content: []message.Content{message.Text("package main\n\nfunc main() {}\n")}}}})
	deltas := 0
	on := func(ev StreamEvent) {
		if ev.TextDelta != "" {
			deltas++
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	cpu0 := cpuTime()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Stream(ctx, req, on); err != nil {
			b.Fatal(err)
		}
		if _, err := c.Stream(ctx, second, on); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
	if deltas != b.N*121 {
		b.Fatalf("deltas = %d, want %d", deltas, b.N*121)
	}
}

func cpuTime() time.Duration { return proctest.SelfCPU() }

func BenchmarkAnthropicStream(b *testing.B) { benchPrompt(b, Anthropic) }
func BenchmarkOpenAIStream(b *testing.B)    { benchPrompt(b, OpenAI) }

// The event decoding alone, without HTTP: one 120-delta answer.
func BenchmarkAnthropicDecode(b *testing.B) {
	var body []byte
	body = append(body, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n"...)
	body = append(body, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"...)
	for range 120 {
		body = append(body, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"tok \"}}\n\n"...)
	}
	body = append(body, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\nevent: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":120}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, _, err := readAnthropic(bytesReader(body), func(StreamEvent) {}); err != nil {
			b.Fatal(err)
		}
	}
}

type byteReader struct {
	b []byte
}

func bytesReader(b []byte) *byteReader { return &byteReader{b} }

func (r *byteReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, r.b)
	r.b = r.b[n:]
	return n, nil
}
