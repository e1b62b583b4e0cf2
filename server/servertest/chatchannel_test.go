package servertest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// chatChannel is zot/chat/channel's answer.
type chatChannel struct {
	Port  int    `json:"port"`
	Path  string `json:"path"`
	Token string `json:"token"`
}

func (c chatChannel) url(token string) string {
	return fmt.Sprintf("ws://127.0.0.1:%d%s?token=%s", c.Port, c.Path, token)
}

// wsMessage is one JSON-RPC message read from the chat channel.
type wsMessage struct {
	ID     *int            `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wsReader reads JSON-RPC messages from the chat channel, one at a time
// (a frame may hold a batch of them).
type wsReader struct {
	c    *websocket.Conn
	next []wsMessage
}

func (r *wsReader) read(t *testing.T, ctx context.Context) wsMessage {
	t.Helper()
	for len(r.next) == 0 {
		typ, b, err := r.c.Read(ctx)
		if err != nil {
			t.Fatalf("reading the chat channel: %v", err)
		}
		if typ != websocket.MessageText {
			t.Fatalf("chat channel: a %v message", typ)
		}
		if len(b) > 0 && b[0] == '[' {
			if err := json.Unmarshal(b, &r.next); err != nil || len(r.next) < 2 {
				t.Fatalf("chat channel: a batch of %d: %v: %s", len(r.next), err, b)
			}
			continue
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("chat channel: %v: %s", err, b)
		}
		r.next = append(r.next, m)
	}
	m := r.next[0]
	r.next = r.next[1:]
	return m
}

func dialChat(t *testing.T, ctx context.Context, ch chatChannel) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, ch.url(ch.Token), nil)
	if err != nil {
		t.Fatalf("dialing the chat channel: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c
}

// A prompt sent on the chat channel runs as zot/prompt on LSP does; its
// answer and every event of the run come back on the socket in the order
// LSP gets them (LSP still gets them all), and the channel carries only
// the chat's hot path.
func TestChatChannelPromptAndEvents(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Deltas: []string{"Hel", "lo ", "there."}})
	ed := e.start(nil)
	ctx := servertest.Ctx(t)
	var ch, again chatChannel
	ed.MustCall("zot/chat/channel", nil, &ch)
	ed.MustCall("zot/chat/channel", nil, &again)
	if ch.Port == 0 || ch.Path != "/" || len(ch.Token) != 64 || again != ch {
		t.Fatalf("zot/chat/channel: %+v, then %+v (want one channel: a port, /, a 256-bit hex token)", ch, again)
	}
	c := dialChat(t, ctx, ch)
	r := &wsReader{c: c}

	if err := c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":7,"method":"zot/prompt","params":{"text":"hi"}}`)); err != nil {
		t.Fatal(err)
	}
	var runID string
	var types []string
	for {
		m := r.read(t, ctx)
		if m.ID != nil {
			var r struct {
				RunID string `json:"runId"`
			}
			if *m.ID != 7 || m.Error != nil || json.Unmarshal(m.Result, &r) != nil || r.RunID == "" {
				t.Fatalf("zot/prompt's answer on the channel: %+v %s", m, m.Result)
			}
			runID = r.RunID
			continue
		}
		var ev servertest.Event
		if m.Method != "zot/event" || json.Unmarshal(m.Params, &ev) != nil {
			t.Fatalf("chat channel: %s %s (want zot/event)", m.Method, m.Params)
		}
		types = append(types, ev.Type())
		if ev.Type() == "done" {
			if runID == "" || ev.Str("runId") != runID {
				t.Fatalf("done of run %q before zot/prompt's answer %q", ev.Str("runId"), runID)
			}
			break
		}
	}
	lsp := servertest.Types(ed.WaitDone(runID))
	if got := strings.Join(types, " "); got != lsp || !strings.Contains(got, "text_delta text_delta text_delta") {
		t.Fatalf("events on the chat channel:\n %s\non LSP:\n %s", got, lsp)
	}

	// Anything but zot/prompt and zot/abort: MethodNotFound, and the
	// socket stays usable.
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":8,"method":"zot/clear"}`)); err != nil {
		t.Fatal(err)
	}
	if m := r.read(t, ctx); m.ID == nil || *m.ID != 8 || m.Error == nil || m.Error.Code != -32601 || !strings.Contains(m.Error.Message, "zot/prompt and zot/abort") {
		t.Fatalf("zot/clear on the chat channel: %+v", m)
	}
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"jsonrpc":"2.0","id":9,"method":"zot/abort","params":{}}`)); err != nil {
		t.Fatal(err)
	}
	if m := r.read(t, ctx); m.ID == nil || *m.ID != 9 || m.Error != nil {
		t.Fatalf("zot/abort on the chat channel: %+v %s", m, m.Result)
	}
}

// Only the bearer of the token, and no other web page, gets a socket;
// nothing of zot answers without it.
func TestChatChannelRefusesWithoutToken(t *testing.T) {
	e := newEnv(t)
	ed := e.start(nil)
	ctx := servertest.Ctx(t)
	var ch chatChannel
	ed.MustCall("zot/chat/channel", nil, &ch)

	wrong := strings.Repeat("0", 64)
	// Through a proxy that joins its prefix with a double slash: the path
	// is the root still.
	if c, _, err := websocket.Dial(ctx, fmt.Sprintf("ws://127.0.0.1:%d//?token=%s", ch.Port, ch.Token), nil); err != nil {
		t.Fatalf("the root as //: %v", err)
	} else {
		c.CloseNow()
	}
	flip := map[bool]string{true: "1", false: "0"}[ch.Token[63] == '0']
	for _, tc := range []struct {
		name, url, origin string
		status            int
	}{
		{"no token", fmt.Sprintf("ws://127.0.0.1:%d%s", ch.Port, ch.Path), "", http.StatusUnauthorized},
		{"another path", fmt.Sprintf("ws://127.0.0.1:%d/other?token=%s", ch.Port, ch.Token), "", http.StatusNotFound},
		{"a wrong token", ch.url(wrong), "", http.StatusUnauthorized},
		{"the token with one character changed", ch.url(ch.Token[:63] + flip), "", http.StatusUnauthorized},
		{"another web page", ch.url(ch.Token), "http://evil.example", http.StatusForbidden},
		{"another port's page", ch.url(ch.Token), "http://127.0.0.1:1", http.StatusForbidden},
	} {
		h := http.Header{}
		if tc.origin != "" {
			h.Set("Origin", tc.origin)
		}
		c, resp, err := websocket.Dial(ctx, tc.url, &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			c.CloseNow()
			t.Fatalf("%s: connected", tc.name)
		}
		if resp == nil || resp.StatusCode != tc.status {
			t.Fatalf("%s: %v (response %v), want HTTP %d", tc.name, err, resp, tc.status)
		}
	}

	// The page zot's answer is for connects: through a proxy that keeps
	// the Host (code-server), and from a VS Code webview.
	for _, origin := range []string{fmt.Sprintf("http://127.0.0.1:%d", ch.Port), "vscode-webview://1a2b3c"} {
		h := http.Header{"Origin": {origin}}
		c, _, err := websocket.Dial(ctx, ch.url(ch.Token), &websocket.DialOptions{HTTPHeader: h})
		if err != nil {
			t.Fatalf("Origin %s: %v", origin, err)
		}
		c.CloseNow()
	}
}

// The channel ends with zot: an open socket is closed and nothing
// listens any more.
func TestChatChannelClosesWithZot(t *testing.T) {
	e := newEnv(t)
	ed := e.start(nil)
	ctx := servertest.Ctx(t)
	var ch chatChannel
	ed.MustCall("zot/chat/channel", nil, &ch)
	c := dialChat(t, ctx, ch)
	if code := ed.Shutdown(); code != 0 {
		t.Fatalf("zot lsp exited %d", code)
	}
	if _, _, err := c.Read(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("the chat channel's socket after zot exited: %v (ctx %v)", err, ctx.Err())
	}
	if c2, _, err := websocket.Dial(ctx, ch.url(ch.Token), nil); err == nil {
		c2.CloseNow()
		t.Fatal("the chat channel still accepts after zot exited")
	}
}
