package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
)

func TestStreamTextInOrder(t *testing.T) {
	const text = "Hello there,\nbrave new world. Ünïcödé \"quoted\" \\ back\tslash"
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply(text)}})
			defer srv.Close()
			resp, col, err := stream(t, newTestClient(t, prov, srv, nil, nil), simpleRequest(t, prov))
			if err != nil {
				t.Fatal(err)
			}
			if want := llmtest.SplitText(text); !reflect.DeepEqual(col.deltas, want) {
				t.Fatalf("deltas = %q, want %q", col.deltas, want)
			}
			if len(resp.Content) != 1 || resp.Content[0].Type != message.TypeText || resp.Content[0].Text != text {
				t.Fatalf("content = %+v", resp.Content)
			}
			if resp.Stop != StopEndTurn {
				t.Fatalf("stop = %q", resp.Stop)
			}
			if len(col.calls) != 0 {
				t.Fatalf("calls = %+v", col.calls)
			}
			if col.opens != 1 {
				t.Fatalf("%d Open events, want 1 (the stream began once)", col.opens)
			}
		})
	}
}

func TestStreamToolCalls(t *testing.T) {
	longArgs := `{"path":"a/very/long/path/to/some/file/ünïcödé/name.go","lines":[1,2,3],"opts":{"deep":{"x":"y"}}}`
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{
				Text: "Let me look.",
				ToolCalls: []llmtest.ToolCall{
					{ID: "call_A", Name: "read", Args: json.RawMessage(longArgs)},
					{Name: "ls"}, // no args: {}
				},
			}}})
			defer srv.Close()
			resp, col, err := stream(t, newTestClient(t, prov, srv, nil, nil), simpleRequest(t, prov))
			if err != nil {
				t.Fatal(err)
			}
			// Anthropic closes each block before the next; OpenAI streams
			// the calls by index and completes them at finish_reason.
			want := []string{"text", "start:read", "end:read", "call:read", "start:ls", "end:ls", "call:ls"}
			if prov == OpenAI {
				want = []string{"text", "start:read", "start:ls", "end:read", "call:read", "end:ls", "call:ls"}
			}
			if !reflect.DeepEqual(col.order, want) {
				t.Fatalf("event order = %v, want %v", col.order, want)
			}
			// The argument pieces arrive as the API sends them and
			// concatenate to the call's arguments.
			if pieces := col.useArgs["call_A"]; len(pieces) < 2 || strings.Join(pieces, "") != string(col.calls[0].Args) {
				t.Fatalf("argument pieces of call_A = %q, call args %s", pieces, col.calls[0].Args)
			}
			if pieces := col.useArgs[col.calls[1].ID]; strings.Join(pieces, "") != "" && strings.Join(pieces, "") != "{}" {
				t.Fatalf("argument pieces of the ls call = %q", pieces)
			}
			if col.calls[0].ID != "call_A" || col.calls[1].ID == "" || col.calls[1].ID == "call_A" {
				t.Fatalf("ids = %q, %q", col.calls[0].ID, col.calls[1].ID)
			}
			jsonEqual(t, col.calls[0].Args, longArgs)
			if string(col.calls[1].Args) != "{}" {
				t.Fatalf("empty args = %s", col.calls[1].Args)
			}
			if resp.Stop != StopToolUse {
				t.Fatalf("stop = %q", resp.Stop)
			}
			if len(resp.Content) != 3 || resp.Content[0].Text != "Let me look." ||
				resp.Content[1].Type != message.TypeToolCall || resp.Content[1].Name != "read" || resp.Content[2].Name != "ls" {
				t.Fatalf("content = %+v", resp.Content)
			}
		})
	}
}

func TestUsageAndCost(t *testing.T) {
	u := &llmtest.Usage{Input: 1000, Output: 500, CacheRead: 2000, CacheWrite: 300}
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Text: "ok", Usage: u}}})
			defer srv.Close()
			req := simpleRequest(t, prov)
			resp, _, err := stream(t, newTestClient(t, prov, srv, nil, nil), req)
			if err != nil {
				t.Fatal(err)
			}
			want := message.Usage{Input: 1000, Output: 500, CacheRead: 2000, CacheWrite: 300}
			if prov == OpenAI {
				want.CacheWrite = 0 // Chat Completions does not report cache writes
			}
			want.CostUSD = req.Model.Cost(want)
			if resp.Usage != want {
				t.Fatalf("usage = %+v, want %+v", resp.Usage, want)
			}
			if resp.Usage.CostUSD <= 0 {
				t.Fatal("no cost")
			}
		})
	}
}

func TestCostFromCatalogWhenModelHasNoPrices(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Text: "ok", Usage: &llmtest.Usage{Input: 1_000_000}}}})
	defer srv.Close()
	c := newTestClient(t, Anthropic, srv, nil, func(o *Options) { o.Catalog = Builtin() })
	resp, _, err := stream(t, c, Request{Model: Model{ID: "claude-haiku-4-5", Provider: Anthropic}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Usage.CostUSD != 1 {
		t.Fatalf("cost = %v, want 1 (haiku input price)", resp.Usage.CostUSD)
	}
}

func TestStopMapping(t *testing.T) {
	cases := []struct {
		reply llmtest.Reply
		want  string
	}{
		{llmtest.Reply{Text: "done"}, StopEndTurn},
		{llmtest.Reply{Text: "trunc", Stop: "length"}, StopLength},
		{llmtest.ToolReply("ls", nil), StopToolUse},
		{llmtest.Reply{Text: "x", Stop: "end_turn"}, StopEndTurn},
	}
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			var replies []llmtest.Reply
			for _, c := range cases {
				replies = append(replies, c.reply)
			}
			srv := llmtest.New(llmtest.Script{Replies: replies})
			defer srv.Close()
			c := newTestClient(t, prov, srv, nil, nil)
			for i, tc := range cases {
				resp, _, err := stream(t, c, simpleRequest(t, prov))
				if err != nil {
					t.Fatal(err)
				}
				if resp.Stop != tc.want {
					t.Errorf("case %d: stop = %q, want %q", i, resp.Stop, tc.want)
				}
			}
		})
	}
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				{FailTimes: 2, RetryAfter: llmtest.Seconds(3), Text: "finally"},
			}})
			defer srv.Close()
			w := &waits{}
			resp, _, err := stream(t, newTestClient(t, prov, srv, w, nil), simpleRequest(t, prov))
			if err != nil {
				t.Fatal(err)
			}
			if n := len(srv.Requests()); n != 3 {
				t.Fatalf("attempts = %d, want 3", n)
			}
			if got := w.all(); !reflect.DeepEqual(got, []time.Duration{3 * time.Second, 3 * time.Second}) {
				t.Fatalf("waits = %v, want Retry-After 3s twice", got)
			}
			if message.TextOf(resp.Content) != "finally" {
				t.Fatalf("content = %+v", resp.Content)
			}
		})
	}
}

func TestRetryBackoffWithoutRetryAfter(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				llmtest.ErrorReply(503, "busy"), llmtest.ErrorReply(529, "Overloaded"), llmtest.TextReply("ok"),
			}})
			defer srv.Close()
			w := &waits{}
			if _, _, err := stream(t, newTestClient(t, prov, srv, w, nil), simpleRequest(t, prov)); err != nil {
				t.Fatal(err)
			}
			if got := w.all(); !reflect.DeepEqual(got, []time.Duration{500 * time.Millisecond, time.Second}) {
				t.Fatalf("waits = %v", got)
			}
		})
	}
}

func TestServerErrorsExhaustRetries(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			r := llmtest.ErrorReply(500, "internal trouble")
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{r, r, r, r, r}})
			defer srv.Close()
			w := &waits{}
			_, col, err := stream(t, newTestClient(t, prov, srv, w, nil), simpleRequest(t, prov))
			if err == nil {
				t.Fatal("no error")
			}
			want := prov + ": 500 internal trouble (gave up after 4 attempts)"
			if err.Error() != want {
				t.Fatalf("error = %q, want %q", err, want)
			}
			if n := len(srv.Requests()); n != 4 {
				t.Fatalf("attempts = %d, want 4 (1 + MaxRetries 3)", n)
			}
			if len(col.deltas) != 0 {
				t.Fatal("deltas delivered")
			}
			var ae *APIError
			if !errors.As(err, &ae) || ae.Status != 500 {
				t.Fatalf("not an APIError: %#v", err)
			}
		})
	}
}

func TestScriptExhaustedIsReadableAndNotRetried(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.TextReply("one")}})
			defer srv.Close()
			c := newTestClient(t, prov, srv, &waits{}, nil)
			if _, _, err := stream(t, c, simpleRequest(t, prov)); err != nil {
				t.Fatal(err)
			}
			_, _, err := stream(t, c, simpleRequest(t, prov))
			want := prov + ": 500 llmtest: script exhausted after 1 replies"
			if err == nil || err.Error() != want {
				t.Fatalf("error = %v, want %q", err, want)
			}
			if n := len(srv.Requests()); n != 2 {
				t.Fatalf("requests = %d, want 2 (x-should-retry: false)", n)
			}
		})
	}
}

func TestClientErrorsAreReadableAndNotRetried(t *testing.T) {
	for _, prov := range providers {
		env, other := "ANTHROPIC_API_KEY", "claude-haiku-4-5"
		if prov == OpenAI {
			env, other = "OPENAI_API_KEY", "gpt-4.1-mini"
		}
		model := testModel(t, prov).ID
		for _, tc := range []struct {
			status int
			msg    string
			want   []string // the error contains each
		}{
			{401, "invalid x-api-key", []string{prov + ": 401 invalid x-api-key — ", "set " + env}},
			{404, "model: " + model + " not found", []string{"unknown model \"" + model + "\"", other, "/model"}},
			{400, "prompt is too long: 212000 tokens > 200000 maximum", []string{"too long for " + model, "/compact"}},
			{400, "This model's maximum context length is 400000 tokens.", []string{"/compact"}},
		} {
			t.Run(prov+"/"+strconv.Itoa(tc.status), func(t *testing.T) {
				srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{llmtest.ErrorReply(tc.status, tc.msg)}})
				defer srv.Close()
				_, _, err := stream(t, newTestClient(t, prov, srv, &waits{}, nil), simpleRequest(t, prov))
				if err == nil {
					t.Fatal("no error")
				}
				if !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("error %q lost the API's message %q", err, tc.msg)
				}
				for _, w := range tc.want {
					if !strings.Contains(err.Error(), w) {
						t.Fatalf("error = %q, want it to contain %q", err, w)
					}
				}
				if n := len(srv.Requests()); n != 1 {
					t.Fatalf("requests = %d", n)
				}
			})
		}
	}
}

// A refused connection to a loopback address fails at once: nothing
// listens on that port of this machine, and backing off will not start it.
func TestLoopbackConnectionRefusedFailsAtOnce(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		t.Run(host, func(t *testing.T) {
			// The dialer answers as the kernel does for a closed port (a
			// real closed port could be reused by another test meanwhile).
			addr := &net.TCPAddr{IP: net.ParseIP(host), Port: 9}
			dials := 0
			hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, a string) (net.Conn, error) {
				dials++
				return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: addr, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
			}}}
			w := &waits{}
			c, err := New(Options{Provider: Anthropic, APIKey: "k", BaseURL: "http://" + addr.String(), Wait: w.wait, MaxRetries: 2, HTTPClient: hc})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Stream(context.Background(), simpleRequest(t, Anthropic), func(StreamEvent) {})
			if err == nil || !strings.HasPrefix(err.Error(), "anthropic: cannot reach ") || !strings.Contains(err.Error(), "connection refused") {
				t.Fatalf("error = %v", err)
			}
			if len(w.all()) != 0 || dials != 1 {
				t.Fatalf("waits = %v, dials = %d: a refused loopback connection must not be retried", w.all(), dials)
			}
		})
	}
}

// A refused connection elsewhere may be a server restarting or a load
// balancer between backends: retried, then a readable error.
func TestRemoteConnectionRefusedIsRetriedThenReadable(t *testing.T) {
	remote := &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 443} // TEST-NET-1
	dials := 0
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: remote, Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	}}}
	w := &waits{}
	c, err := New(Options{Provider: Anthropic, APIKey: "k", BaseURL: "http://192.0.2.1", Wait: w.wait, MaxRetries: 2, HTTPClient: hc})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Stream(context.Background(), simpleRequest(t, Anthropic), func(StreamEvent) {})
	if err == nil || !strings.HasPrefix(err.Error(), "anthropic: cannot reach ") {
		t.Fatalf("error = %v", err)
	}
	if len(w.all()) != 2 || dials != 3 {
		t.Fatalf("waits = %v, dials = %d, want 2 retries", w.all(), dials)
	}
}

func TestCancelDuringSlowStream(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
				{RepeatText: &llmtest.Repeat{Text: "tick ", Count: 10000}, DelayMS: 20},
			}})
			defer srv.Close()
			c := newTestClient(t, prov, srv, &waits{}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			n := 0
			resp, err := c.Stream(ctx, simpleRequest(t, prov), func(ev StreamEvent) {
				if ev.TextDelta == "" {
					return
				}
				if n++; n == 3 {
					cancel()
				}
			})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want context.Canceled", err)
			}
			if resp.Stop != StopAborted || !strings.HasPrefix(message.TextOf(resp.Content), "tick tick tick ") {
				t.Fatalf("partial response = %+v", resp)
			}
		})
	}
}

func TestCancelDuringHangingStream(t *testing.T) {
	for _, prov := range providers {
		t.Run(prov, func(t *testing.T) {
			srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Hang: true}}})
			defer srv.Close()
			st := &signalTransport{headers: make(chan struct{})}
			c := newTestClient(t, prov, srv, &waits{}, func(o *Options) { o.HTTPClient = &http.Client{Transport: st} })
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-st.headers // the stream is open and silent
				cancel()
			}()
			done := make(chan error, 1)
			go func() {
				_, err := c.Stream(ctx, simpleRequest(t, prov), func(StreamEvent) {})
				done <- err
			}()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("err = %v, want context.Canceled", err)
				}
			case <-time.After(time.Minute): // deadlock guard, not a speed assertion
				t.Fatal("Stream did not return after cancel")
			}
		})
	}
}

func TestCancelWhileWaitingToRetry(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{FailTimes: 1, RetryAfter: llmtest.Seconds(3600), Text: "x"}}})
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	// The real wait: a one-hour Retry-After (capped at a minute) that
	// cancel must cut short.
	c := newTestClient(t, OpenAI, srv, nil, func(o *Options) {
		o.Wait = func(wctx context.Context, d time.Duration) error {
			if d != maxRetryAfter {
				t.Errorf("wait = %v, want the %v cap", d, maxRetryAfter)
			}
			cancel()
			return sleepCtx(wctx, d)
		}
	})
	_, err := c.Stream(ctx, simpleRequest(t, OpenAI), func(StreamEvent) {})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestBothBaseURLFormsWork(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Text: "a"}}, Loop: true})
	defer srv.Close()
	for _, prov := range providers {
		for _, base := range []string{srv.URL(), srv.URL() + "/", srv.URL() + "/v1", srv.AnthropicURL(), srv.OpenAIURL()} {
			c := newTestClient(t, prov, srv, nil, func(o *Options) { o.BaseURL = base })
			if _, _, err := stream(t, c, simpleRequest(t, prov)); err != nil {
				t.Fatalf("%s with %s: %v", prov, base, err)
			}
		}
	}
	for _, r := range srv.Requests() {
		if r.Path != "/v1/messages" && r.Path != "/v1/chat/completions" {
			t.Errorf("path %s", r.Path)
		}
	}
}

func TestModelBaseURLUsedWithoutOption(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Text: "a"}}, Loop: true})
	defer srv.Close()
	for _, prov := range providers {
		if _, err := New(Options{Provider: prov}); err == nil { // no key, no base URL
			t.Fatalf("%s: New without key and base URL succeeded", prov)
		}
		c, err := New(Options{Provider: prov, APIKey: "k"})
		if err != nil {
			t.Fatal(err)
		}
		req := simpleRequest(t, prov)
		req.Model, _ = Builtin().Resolve(prov, "local-model", srv.URL())
		if _, _, err := stream(t, c, req); err != nil {
			t.Fatalf("%s: %v", prov, err)
		}
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("requests = %d", n)
	}
}

func TestLoopbackNeedsNoKey(t *testing.T) {
	srv := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Text: "a"}}})
	defer srv.Close()
	c, err := New(Options{Provider: OpenAI, BaseURL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := stream(t, c, simpleRequest(t, OpenAI)); err != nil {
		t.Fatal(err)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+LocalPlaceholderKey {
		t.Fatalf("Authorization = %q", got)
	}
}

// A stream that fails before its first delta is retried; one that fails
// after is not.
func TestStreamErrorEventRetriedOnlyBeforeFirstDelta(t *testing.T) {
	overloaded := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\n" +
		"event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"
	_, delivered, err := readAnthropic(strings.NewReader(overloaded), func(StreamEvent) {})
	var ae *APIError
	if delivered || !errors.As(err, &ae) || !ae.Retryable() || err.Error() != "anthropic: Overloaded (overloaded_error)" {
		t.Fatalf("delivered=%v err=%v", delivered, err)
	}

	attempts := 0
	r := retrier{provider: Anthropic, max: 3, wait: (&waits{}).wait}
	_, err = r.run(context.Background(), func() (Response, bool, error) {
		attempts++
		return Response{}, true, ae // after a delta: no retry
	})
	if attempts != 1 || err != ae {
		t.Fatalf("attempts = %d, err = %v", attempts, err)
	}
	attempts = 0
	_, err = r.run(context.Background(), func() (Response, bool, error) {
		attempts++
		if attempts < 3 {
			return Response{}, false, ae
		}
		return Response{Stop: StopEndTurn}, false, nil
	})
	if attempts != 3 || err != nil {
		t.Fatalf("attempts = %d, err = %v", attempts, err)
	}
}

func TestTruncatedStreamIsAnError(t *testing.T) {
	body := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{}}}\n\n" +
		"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n" +
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\n"
	resp, delivered, err := readAnthropic(strings.NewReader(body), func(StreamEvent) {})
	if err == nil || !delivered || message.TextOf(resp.Content) != "Hi" {
		t.Fatalf("resp=%+v delivered=%v err=%v", resp, delivered, err)
	}
	if !strings.HasPrefix(err.Error(), "anthropic: stream ended") {
		t.Fatalf("err = %v", err)
	}
	_, _, err = readOpenAI(strings.NewReader("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n"), func(StreamEvent) {})
	if err == nil {
		t.Fatal("openai: no error for a stream without finish")
	}
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	h := http.Header{}
	if _, ok := retryAfter(h, now); ok {
		t.Fatal("no header: ok")
	}
	h.Set("Retry-After", "7")
	if d, _ := retryAfter(h, now); d != 7*time.Second {
		t.Fatalf("seconds: %v", d)
	}
	h.Set("Retry-After", now.Add(90*time.Second).Format(http.TimeFormat))
	if d, _ := retryAfter(h, now); d != 90*time.Second {
		t.Fatalf("date: %v", d)
	}
	h.Set("retry-after-ms", "250")
	if d, _ := retryAfter(h, now); d != 250*time.Millisecond {
		t.Fatalf("ms: %v", d)
	}
}

func TestUnknownProvider(t *testing.T) {
	if _, err := New(Options{Provider: "gemini", APIKey: "k"}); err == nil || !strings.Contains(err.Error(), `unknown provider "gemini"`) {
		t.Fatalf("err = %v", err)
	}
}

func TestFastTextDelta(t *testing.T) {
	cases := []struct {
		in   string
		idx  int
		text string
		ok   bool
	}{
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`, 0, "Hello", true},
		{`{"type":"content_block_delta","index":12,"delta":{"type":"text_delta","text":" wörld"}}`, 12, " wörld", true},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""}}`, 0, "", true},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a\nb"}}`, 0, "", false},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"a","x":"b"}}`, 0, "", false},
		{`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}`, 0, "", false},
		{`{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"a"}}`, 0, "", false},
		{`{"type":"content_block_delta","index":,"delta":{"type":"text_delta","text":"a"}}`, 0, "", false},
	}
	for _, c := range cases {
		i, txt, ok := fastTextDelta(c.in)
		if ok != c.ok || (ok && (i != c.idx || txt != c.text)) {
			t.Errorf("%s: %d %q %v", c.in, i, txt, ok)
		}
	}
}
