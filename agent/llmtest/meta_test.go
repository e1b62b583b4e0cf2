package llmtest

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// The server reads a request's model, stream and (OpenAI) include_usage
// without decoding the messages, and still answers 400 to a body that is
// not JSON, naming where it breaks.
func TestRequestMeta(t *testing.T) {
	m, err := requestMeta([]byte(`{"model":"m1","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"x"}]}`), true, nil)
	if err != nil || m != (meta{Model: "m1", Stream: true, IncludeUsage: true}) {
		t.Fatalf("openai: %+v, %v", m, err)
	}
	m, err = requestMeta([]byte(`{"model":"m2","stream":false,"messages":[]}`), false, nil)
	if err != nil || m != (meta{Model: "m2"}) {
		t.Fatalf("anthropic: %+v, %v", m, err)
	}
	if _, err := requestMeta([]byte(`{"model":"m3","stream":true,"messages":[}`), false, nil); err == nil || !strings.Contains(err.Error(), "invalid character") {
		t.Fatalf("broken body: %v", err)
	}

	s := New(Script{Replies: []Reply{TextReply("ok")}})
	defer s.Close()
	resp, err := http.Post(s.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","stream":true,"messages":[`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "request body is not JSON") {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}
