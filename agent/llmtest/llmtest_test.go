package llmtest

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	aopt "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	oopt "github.com/openai/openai-go/v3/option"
)

func post(t *testing.T, url, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// events reads an SSE body into (event, data) pairs.
func events(t *testing.T, r io.Reader) [][2]string {
	t.Helper()
	var out [][2]string
	var ev, data string
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, [2]string{ev, data})
			ev, data = "", ""
		case strings.HasPrefix(line, "event: "):
			ev = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		}
	}
	return out
}

const anthReq = `{"model":"claude-x","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`
const oaiReq = `{"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`

func TestAnthropicEventSequence(t *testing.T) {
	srv := New(Script{Replies: []Reply{{Text: "Hi there", ToolCalls: []ToolCall{{Name: "ls", Args: json.RawMessage(`{"a":1}`)}}}}})
	defer srv.Close()
	resp := post(t, srv.URL()+"/v1/messages", anthReq)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header)
	}
	var names []string
	for _, e := range events(t, resp.Body) {
		names = append(names, e[0])
		var v map[string]any
		if err := json.Unmarshal([]byte(e[1]), &v); err != nil || v["type"] != e[0] {
			t.Fatalf("event %s data %s: %v", e[0], e[1], err)
		}
	}
	want := []string{"message_start", "content_block_start", "ping", "content_block_delta", "content_block_delta", "content_block_stop",
		"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("events = %v", names)
	}
}

func TestOpenAIChunks(t *testing.T) {
	srv := New(Script{Replies: []Reply{{Text: "a b", Usage: &Usage{Input: 3, Output: 2, CacheRead: 4}}, {Text: "c"}}})
	defer srv.Close()
	evs := events(t, post(t, srv.URL()+"/v1/chat/completions", oaiReq).Body)
	if last := evs[len(evs)-1][1]; last != "[DONE]" {
		t.Fatalf("last = %s", last)
	}
	usage := evs[len(evs)-2][1]
	if !strings.Contains(usage, `"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"prompt_tokens_details":{"cached_tokens":4}}`) {
		t.Fatalf("usage chunk = %s", usage)
	}
	// Without include_usage there is no usage chunk.
	evs = events(t, post(t, srv.URL()+"/chat/completions", `{"model":"m","stream":true}`).Body)
	for _, e := range evs {
		if strings.Contains(e[1], `"usage"`) {
			t.Fatalf("usage without include_usage: %s", e[1])
		}
	}
}

// The official SDKs' own decoders and accumulators read the streams.
func TestOfficialSDKsReadTheStreams(t *testing.T) {
	reply := Reply{Text: "Hello, \"world\"\n", ToolCalls: []ToolCall{{ID: "t1", Name: "read", Args: json.RawMessage(`{"path":"ü/a.go"}`)}},
		Usage: &Usage{Input: 10, Output: 5, CacheRead: 2, CacheWrite: 1}}
	srv := New(Script{Replies: []Reply{reply}, Loop: true})
	defer srv.Close()
	ctx := context.Background()

	ac := anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithBaseURL(srv.AnthropicURL()), aopt.WithAPIKey("k"))
	st := ac.Messages.NewStreaming(ctx, anthropic.MessageNewParams{Model: "claude-x", MaxTokens: 10,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}})
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 2 || msg.Content[0].Text != reply.Text || msg.Content[1].Name != "read" ||
		string(msg.Content[1].Input) != `{"path":"ü/a.go"}` || msg.StopReason != "tool_use" ||
		msg.Usage.InputTokens != 10 || msg.Usage.OutputTokens != 5 || msg.Usage.CacheReadInputTokens != 2 || msg.Usage.CacheCreationInputTokens != 1 {
		t.Fatalf("anthropic message = %+v", msg)
	}

	oc := openai.NewClient(oopt.WithBaseURL(srv.OpenAIURL()), oopt.WithAPIKey("k"))
	ost := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-x",
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}})
	acc := openai.ChatCompletionAccumulator{}
	for ost.Next() {
		acc.AddChunk(ost.Current())
	}
	if err := ost.Err(); err != nil {
		t.Fatal(err)
	}
	ch := acc.Choices[0]
	if ch.Message.Content != reply.Text || ch.FinishReason != "tool_calls" || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].ID != "t1" || ch.Message.ToolCalls[0].Function.Arguments != `{"path":"ü/a.go"}` ||
		acc.Usage.PromptTokens != 12 || acc.Usage.PromptTokensDetails.CachedTokens != 2 {
		t.Fatalf("openai completion = %+v", acc.ChatCompletion)
	}
}

func TestErrorsFailTimesAndExhaustion(t *testing.T) {
	srv := New(Script{Replies: []Reply{
		{FailTimes: 2, RetryAfter: Seconds(1.5), Text: "ok"},
		{Status: 400, ErrorMessage: "prompt is too long"},
	}})
	defer srv.Close()
	for i := 0; i < 2; i++ {
		r := post(t, srv.URL()+"/v1/messages", anthReq)
		if r.StatusCode != 429 || r.Header.Get("Retry-After") != "1.5" {
			t.Fatalf("attempt %d: %d %v", i, r.StatusCode, r.Header)
		}
	}
	if r := post(t, srv.URL()+"/v1/messages", anthReq); r.StatusCode != 200 {
		t.Fatalf("third: %d", r.StatusCode)
	}
	r := post(t, srv.URL()+"/v1/chat/completions", oaiReq)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 400 || string(b) != `{"error":{"message":"prompt is too long","type":"invalid_request_error","param":null,"code":null}}` {
		t.Fatalf("%d %s", r.StatusCode, b)
	}
	r = post(t, srv.URL()+"/v1/messages", anthReq)
	b, _ = io.ReadAll(r.Body)
	if r.StatusCode != 500 || r.Header.Get("x-should-retry") != "false" ||
		string(b) != `{"type":"error","error":{"type":"api_error","message":"llmtest: script exhausted after 2 replies"}}` {
		t.Fatalf("%d %s", r.StatusCode, b)
	}
	if srv.Served() != 2 || len(srv.Requests()) != 5 {
		t.Fatalf("served %d, requests %d", srv.Served(), len(srv.Requests()))
	}
}

func TestNonStreamingAndUnknownPaths(t *testing.T) {
	srv := New(Script{Replies: []Reply{TextReply("x")}})
	defer srv.Close()
	r := post(t, srv.URL()+"/v1/messages", `{"model":"m","messages":[]}`)
	b, _ := io.ReadAll(r.Body)
	if r.StatusCode != 400 || !strings.Contains(string(b), "llmtest supports streaming only") {
		t.Fatalf("%d %s", r.StatusCode, b)
	}
	if r := post(t, srv.URL()+"/v2/embeddings", `{}`); r.StatusCode != 404 {
		t.Fatalf("unknown path: %d", r.StatusCode)
	}
	mr, err := http.Get(srv.URL() + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer mr.Body.Close()
	var list struct {
		Data []struct{ ID string } `json:"data"`
	}
	if json.NewDecoder(mr.Body).Decode(&list); len(list.Data) != 1 || list.Data[0].ID != "llmtest" {
		t.Fatalf("models = %+v", list)
	}
	if srv.Served() != 0 {
		t.Fatal("a non-model request consumed a reply")
	}
}

func TestRecordingAndLoop(t *testing.T) {
	srv := New(Script{Replies: []Reply{TextReply("a"), TextReply("b")}, Loop: true})
	defer srv.Close()
	for i := 0; i < 5; i++ {
		post(t, srv.URL()+"/v1/messages", anthReq)
	}
	reqs := srv.Requests()
	if len(reqs) != 5 || reqs[0].Path != "/v1/messages" || reqs[0].Method != "POST" ||
		reqs[0].Body["model"] != "claude-x" || reqs[0].Header.Get("Content-Type") != "application/json" || string(reqs[0].Raw) != anthReq {
		t.Fatalf("%+v", reqs[0])
	}
	if srv.Served() != 5 {
		t.Fatalf("served = %d", srv.Served())
	}
	srv.Append(TextReply("c"))
}

// After DropBodies a request is still counted, routed and checked; only
// its body is not kept.
func TestDropBodies(t *testing.T) {
	srv := New(Script{Replies: []Reply{TextReply("a")}, Loop: true})
	defer srv.Close()
	post(t, srv.URL()+"/v1/messages", anthReq)
	srv.DropBodies()
	if resp := post(t, srv.URL()+"/v1/messages", anthReq); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if resp := post(t, srv.URL()+"/v1/messages", `{"stream":true,"messages":[`); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a broken body after DropBodies: status %d", resp.StatusCode)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || string(reqs[0].Raw) != anthReq || reqs[0].Body["model"] != "claude-x" {
		t.Fatalf("before DropBodies: %+v", reqs)
	}
	for _, r := range reqs[1:] {
		if r.Raw != nil || r.Body != nil || r.Path != "/v1/messages" || r.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("after DropBodies: %+v", r)
		}
	}
}

func TestParseScript(t *testing.T) {
	s, err := ParseScript([]byte(`{"loop": true, "replies": [{"text": "hi"}, {"repeat_text": {"text": "x", "count": 3}}, {"tool_calls": [{"name": "ls"}]}]}`))
	if err != nil || !s.Loop || len(s.Replies) != 3 {
		t.Fatalf("%+v %v", s, err)
	}
	if d := s.Replies[1].deltas(); !reflect.DeepEqual(d, []string{"x", "x", "x"}) {
		t.Fatalf("repeat = %q", d)
	}
	if s, err = ParseScript([]byte(`[{"deltas": ["a", "b"]}]`)); err != nil || len(s.Replies) != 1 {
		t.Fatalf("array form: %v", err)
	}
	bad := []struct{ in, want string }{
		{"{\n  \"replies\": [\n    {\"text\": \"a\",}\n  ]\n}", "line 3"},
		{`[{"txt": "a"}]`, `unknown field "txt"`},
		{`[{"text": "a", "deltas": ["b"]}]`, "reply 1: use only one of"},
		{`[{"tool_calls": [{"args": {}}]}]`, "tool_calls[0]: missing name"},
		{`[{"tool_calls": [{"name": "x", "args": [1]}]}]`, "args must be a JSON object"},
		{`[{"status": 200}]`, "not an HTTP error status"},
		{`[{"delay_ms": "slow"}]`, `field "delay_ms"`},
		{`{"loop": true}`, "needs at least one reply"},
		{`[{"text": "a", "error_after": 1, "stall_after": 1}]`, "only one of error_after and stall_after"},
		{`[{"text": "a", "error_after": -1}]`, "must not be negative"},
		{`[{"text": "a", "error_type": "api_error"}]`, "error_type needs error_after"},
		{``, "empty script"},
	}
	for _, b := range bad {
		if _, err := ParseScript([]byte(b.in)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: err = %v, want %q", b.in, err, b.want)
		}
	}
}

func TestLoadScriptNamesTheFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.json")
	if _, err := LoadScript(p); err == nil || !strings.Contains(err.Error(), p) {
		t.Fatalf("missing: %v", err)
	}
	os.WriteFile(p, []byte(`[{"status": 99}]`), 0o600)
	if _, err := LoadScript(p); err == nil || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), "reply 1") {
		t.Fatalf("invalid: %v", err)
	}
	os.WriteFile(p, []byte(`[{"text": "ok"}]`), 0o600)
	if s, err := LoadScript(p); err != nil || s.Replies[0].Text != "ok" {
		t.Fatalf("%v", err)
	}
}

func TestSplitText(t *testing.T) {
	for _, s := range []string{"", "one", "Hello there, world", "  lead and trail  ", "a\n\nb\tc", "ünï cödé"} {
		d := SplitText(s)
		if strings.Join(d, "") != s {
			t.Errorf("%q → %q", s, d)
		}
	}
	if d := SplitText("Hello there world"); !reflect.DeepEqual(d, []string{"Hello", " there", " world"}) {
		t.Fatalf("%q", d)
	}
	for _, s := range []string{`{"path":"ünïcödé/ü/ü/ü/ü/ü/ü/ü/ü/ü/ü/ü"}`, "short"} {
		parts := splitArgs(s, 5)
		if strings.Join(parts, "") != s {
			t.Fatalf("%q", parts)
		}
		for _, p := range parts {
			if !strings.HasPrefix(p, string([]rune(p)[0])) || !json.Valid([]byte(`"`+strings.ReplaceAll(p, `"`, `\"`)+`"`)) {
				t.Fatalf("split inside a rune: %q", p)
			}
		}
	}
}

func TestServeRunsUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	urls := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, "127.0.0.1:0", Script{Replies: []Reply{TextReply("x")}}, func(u string) { urls <- u })
	}()
	u := <-urls
	if r := post(t, u+"/v1/messages", anthReq); r.StatusCode != 200 {
		t.Fatalf("%d", r.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := Serve(context.Background(), "", Script{Replies: []Reply{{Status: 7}}}, nil); err == nil {
		t.Fatal("invalid script served")
	}
}

func TestHangEndsOnClose(t *testing.T) {
	srv := New(Script{Replies: []Reply{{Hang: true}}})
	resp := post(t, srv.URL()+"/v1/chat/completions", oaiReq)
	if resp.StatusCode != 200 {
		t.Fatalf("%d", resp.StatusCode)
	}
	srv.Close() // must not wait for the hanging handler forever
	io.Copy(io.Discard, resp.Body)
}

// Thinking, mid-stream errors and stalls read as the SDKs expect them.
func TestOfficialSDKsReadThinkingAndMidStreamErrors(t *testing.T) {
	srv := New(Script{Replies: []Reply{
		{Thinking: "Think first.", Signature: "sig+/=", RedactedThinking: "REDACTED", Text: "Answer."},
		{Thinking: "Think first.", Text: "Answer."},
		{Text: "one two three", ErrorAfter: Count(2), ErrorType: "api_error", ErrorMessage: "Internal server error"},
	}})
	defer srv.Close()
	ctx := context.Background()
	ac := anthropic.NewClient(aopt.WithoutEnvironmentDefaults(), aopt.WithBaseURL(srv.AnthropicURL()), aopt.WithAPIKey("k"), aopt.WithMaxRetries(0))
	params := anthropic.MessageNewParams{Model: "claude-x", MaxTokens: 2048, Thinking: anthropic.ThinkingConfigParamOfEnabled(1024),
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("hi"))}}
	st := ac.Messages.NewStreaming(ctx, params)
	var msg anthropic.Message
	for st.Next() {
		if err := msg.Accumulate(st.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Err(); err != nil {
		t.Fatal(err)
	}
	if len(msg.Content) != 3 || msg.Content[0].Thinking != "Think first." || msg.Content[0].Signature != "sig+/=" ||
		msg.Content[1].Type != "redacted_thinking" || msg.Content[1].Data != "REDACTED" || msg.Content[2].Text != "Answer." {
		t.Fatalf("anthropic message = %+v", msg.Content)
	}

	oc := openai.NewClient(oopt.WithBaseURL(srv.OpenAIURL()), oopt.WithAPIKey("k"), oopt.WithMaxRetries(0))
	ost := oc.Chat.Completions.NewStreaming(ctx, openai.ChatCompletionNewParams{Model: "gpt-x",
		Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")}})
	var reasoning strings.Builder
	acc := openai.ChatCompletionAccumulator{}
	for ost.Next() {
		ch := ost.Current()
		acc.AddChunk(ch)
		if len(ch.Choices) > 0 {
			var s string
			json.Unmarshal([]byte(ch.Choices[0].Delta.JSON.ExtraFields["reasoning_content"].Raw()), &s)
			reasoning.WriteString(s)
		}
	}
	if err := ost.Err(); err != nil || reasoning.String() != "Think first." || acc.Choices[0].Message.Content != "Answer." {
		t.Fatalf("err %v reasoning %q content %q", err, reasoning.String(), acc.Choices[0].Message.Content)
	}

	st = ac.Messages.NewStreaming(ctx, params)
	msg = anthropic.Message{}
	for st.Next() {
		msg.Accumulate(st.Current())
	}
	if err := st.Err(); err == nil || !strings.Contains(err.Error(), "api_error") || msg.Content[0].Text != "one two" {
		t.Fatalf("mid-stream error: %v, content %+v", err, msg.Content)
	}
}

// A gated reply sends its headers, then nothing until Release.
func TestGateHoldsTheReplyUntilRelease(t *testing.T) {
	srv := New(Script{Replies: []Reply{{Text: "held", Gate: "g"}, TextReply("free")}})
	defer srv.Close()
	first := make(chan string, 1)
	go func() {
		resp, err := http.Post(srv.URL()+"/v1/chat/completions", "application/json", strings.NewReader(oaiReq))
		if err != nil {
			first <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		first <- string(b)
	}()
	<-srv.Arrived("g")
	// The barrier: a later request is answered in full while the gated
	// one is still held.
	resp := post(t, srv.URL()+"/v1/chat/completions", oaiReq)
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `"content":"free"`) {
		t.Fatalf("second reply: %s", b)
	}
	select {
	case got := <-first:
		t.Fatalf("the gated reply streamed before Release: %s", got)
	default:
	}
	srv.Release("g")
	if got := <-first; !strings.Contains(got, `"content":"held"`) {
		t.Fatalf("after Release: %s", got)
	}
}

// GET /llmtest/requests lists what was received, for a test in another
// process; it is not recorded itself.
func TestServeRequestsOverHTTP(t *testing.T) {
	srv := New(Script{Replies: []Reply{TextReply("one")}})
	defer srv.Close()
	post(t, srv.URL()+"/v1/messages", `{"model":"m","max_tokens":5,"stream":true,"messages":[{"role":"user","content":"hello there"}]}`)
	got, err := FetchRequests(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Path != "/v1/messages" || !strings.Contains(string(got[0].Body), "hello there") || len(srv.Requests()) != 1 {
		t.Fatalf("requests: %+v (recorded %d)", got, len(srv.Requests()))
	}
}
