package provider

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/message"
)

var providers = []string{Anthropic, OpenAI}

// waits records the retry delays a client asked for, without sleeping.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) wait(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.d = append(w.d, d)
	w.mu.Unlock()
	return ctx.Err()
}

func (w *waits) all() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

func testModel(t testing.TB, prov string) Model {
	t.Helper()
	id := "claude-sonnet-4-5"
	if prov == OpenAI {
		id = "gpt-5"
	}
	m, err := Builtin().Resolve(prov, id, "")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func newTestClient(t testing.TB, prov string, srv *llmtest.Server, w *waits, mod func(*Options)) Client {
	t.Helper()
	opts := Options{Provider: prov, APIKey: "test-key", BaseURL: srv.URL()}
	if w != nil {
		opts.Wait = w.wait
	}
	if mod != nil {
		mod(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

type collected struct {
	thinking []string
	deltas   []string
	calls    []message.Content
	order    []string // "text" / "call:NAME" / "start:NAME" / "end:NAME"
	opens    int      // Open events: streams that began
	// streamed tool calls: names and argument pieces by id
	useName map[string]string
	useArgs map[string][]string
}

func (c *collected) on(ev StreamEvent) {
	switch {
	case ev.Open:
		c.opens++
	case ev.ToolUse != nil:
		if c.useName == nil {
			c.useName, c.useArgs = map[string]string{}, map[string][]string{}
		}
		u := ev.ToolUse
		switch u.Phase {
		case ToolUseStart:
			c.useName[u.ID] = u.Name
			c.order = append(c.order, "start:"+u.Name)
		case ToolUseArgs:
			c.useArgs[u.ID] = append(c.useArgs[u.ID], u.Args)
		case ToolUseEnd:
			c.order = append(c.order, "end:"+c.useName[u.ID])
		}
	case ev.ToolCall != nil:
		c.calls = append(c.calls, *ev.ToolCall)
		c.order = append(c.order, "call:"+ev.ToolCall.Name)
	case ev.ThinkingDelta != "":
		c.thinking = append(c.thinking, ev.ThinkingDelta)
		if len(c.order) == 0 || c.order[len(c.order)-1] != "thinking" {
			c.order = append(c.order, "thinking")
		}
	default:
		c.deltas = append(c.deltas, ev.TextDelta)
		if len(c.order) == 0 || c.order[len(c.order)-1] != "text" {
			c.order = append(c.order, "text")
		}
	}
}

func simpleRequest(t testing.TB, prov string) Request {
	return Request{
		Model:    testModel(t, prov),
		System:   "You are a test.",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Content{message.Text("hi")}}},
	}
}

func stream(t testing.TB, c Client, req Request) (Response, *collected, error) {
	t.Helper()
	col := &collected{}
	resp, err := c.Stream(context.Background(), req, col.on)
	return resp, col, err
}

func jsonEqual(t testing.TB, got json.RawMessage, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("args %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Fatalf("args = %s, want %s", gb, wb)
	}
}

// signalTransport closes headers once a response's headers have arrived.
type signalTransport struct {
	once    sync.Once
	headers chan struct{}
}

func (s *signalTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil && strings.Contains(resp.Header.Get("Content-Type"), "event-stream") {
		s.once.Do(func() { close(s.headers) })
	}
	return resp, err
}

// path digs into a parsed JSON body: path(body, "messages", 0, "content").
func path(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			a, _ := v.([]any)
			if k < 0 {
				k += len(a)
			}
			if k < 0 || k >= len(a) {
				return nil
			}
			v = a[k]
		}
	}
	return v
}
