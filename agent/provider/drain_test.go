package provider

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

// A stream whose HTTP body ends a packet after its last event (the chunked
// terminator, sent once the server's handler returns) leaves its
// connection in the pool: the next call does not connect again. Both
// providers' streams, their own end markers.
func TestFinishedStreamKeepsItsConnection(t *testing.T) {
	streams := map[string]string{
		Anthropic: "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}}\n\n" +
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
			"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hi\"}}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n" +
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":1}}\n\n" +
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		OpenAI: "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"hi\"}}]}\n\n" +
			"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n" +
			"data: [DONE]\n\n",
	}
	for prov, stream := range streams {
		t.Run(prov, func(t *testing.T) {
			release := make(chan struct{})
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				fmt.Fprint(w, stream)
				w.(http.Flusher).Flush()
				<-release // the body's end follows the answer
			}))
			var conns atomic.Int32
			srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			srv.Start()
			defer srv.Close()
			done := make(chan struct{}, 1)
			drained = func() { done <- struct{}{} }
			defer func() { drained = func() {} }()
			c, err := New(Options{Provider: prov, APIKey: "k", BaseURL: srv.URL, HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}})
			if err != nil {
				t.Fatal(err)
			}
			req := Request{Model: testModel(t, prov), Messages: []message.Message{{Role: message.RoleUser, Content: []message.Content{message.Text("hello")}}}}
			for i := range 3 {
				resp, err := c.Stream(context.Background(), req, func(StreamEvent) {})
				if err != nil || message.TextOf(resp.Content) != "hi" {
					t.Fatalf("call %d: %q, %v", i, message.TextOf(resp.Content), err)
				}
				release <- struct{}{}
				select {
				case <-done:
				case <-time.After(30 * time.Second): // a hang guard, not a measure
					t.Fatalf("call %d: the finished stream was not read to its end", i)
				}
			}
			if n := conns.Load(); n != 1 {
				t.Fatalf("3 calls made %d connections, want 1", n)
			}
		})
	}
}
