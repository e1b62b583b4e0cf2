package servertest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/zot-editors/zot/server/servertest"
)

func TestZotErrors(t *testing.T) {
	e := newEnv(t)
	ed := e.start(nil)
	if err := ed.Call("zot/doesNotExist", nil, nil); err == nil || err.Code != -32601 || !strings.Contains(err.Message, "zot/prompt") {
		t.Fatalf("unknown zot method: %v", err)
	}
	if err := ed.Call("textDocument/hover", map[string]any{}, nil); err == nil || err.Code != -32601 {
		t.Fatalf("unimplemented LSP method: %v", err)
	}
	cases := []struct {
		method string
		params any
		field  string
	}{
		{"zot/prompt", map[string]any{"text": 42}, `"text"`},
		{"zot/prompt", map[string]any{"text": ""}, `"text"`},
		{"zot/prompt", map[string]any{"text": "hi", "images": []any{map[string]any{"mimeType": "text/plain", "data": "x"}}}, `"images[0].mimeType"`},
		{"zot/prompt", map[string]any{"text": "hi", "images": "no"}, `"images"`},
		{"zot/prompt", map[string]any{"text": "hi", "context": map[string]any{"uri": 3}}, `"context.uri"`},
		{"zot/prompt", []any{"text"}, "params"},
		{"zot/abort", map[string]any{"clearQueue": "yes"}, `"clearQueue"`},
		{"zot/setModel", map[string]any{"model": true}, `"model"`},
		{"zot/command", map[string]any{"name": ""}, `"name"`},
		{"zot/command", map[string]any{"name": "help", "args": []int{1}}, `"args"`},
		{"zot/session/resume", map[string]any{"id": 7}, `"id"`},
		{"zot/setPermissionMode", map[string]any{}, `"mode"`},
		{"zot/panel/key", map[string]any{"panelId": "p", "key": "rune"}, `"text"`},
	}
	for _, c := range cases {
		err := ed.Call(c.method, c.params, nil)
		if err == nil || err.Code != -32602 || !strings.Contains(err.Message, c.field) || !strings.HasPrefix(err.Message, c.method) {
			t.Errorf("%s %s: want InvalidParams naming %s, got %v", c.method, jsonString(c.params), c.field, err)
		}
	}
	// The server is still fine.
	ed.MustCall("zot/ping", nil, nil)
}

// $/cancelRequest works for numeric and string ids. A slow command steps
// out of the queue, so both run at once and a ping behind them is answered
// while they wait.
func TestCancelNumericAndStringIDs(t *testing.T) {
	e := newEnv(t)
	ed := startWithExt(t, e, nil)
	num := ed.CallID(1000, "zot/command", map[string]any{"name": "slow"})
	str := ed.CallID("slow-s", "zot/command", map[string]any{"name": "slow"})
	ed.MustCall("zot/ping", nil, nil) // not held up by the slow ones
	ed.Notify("$/cancelRequest", map[string]any{"id": 1000})
	ed.Notify("$/cancelRequest", map[string]any{"id": "slow-s"})
	for name, ch := range map[string]<-chan servertest.Message{"numeric": num, "string": str} {
		m := ed.Await(ch, name)
		if m.Error == nil || m.Error.Code != -32800 {
			t.Errorf("%s id: want RequestCancelled, got %+v", name, m)
		}
	}
	ed.MustCall("zot/ping", nil, nil)
}

// Bad framing is answered or dropped; the connection survives.
func TestFramingSurvivesGarbage(t *testing.T) {
	e := newEnv(t)
	ed := e.start(nil)
	ed.WriteRaw([]byte("this is not a header\r\n\r\n"))
	ed.WriteRaw(frame("not json!"))
	ed.WriteRaw(frame(`{"jsonrpc":"2.0","id":true,"method":"x"}`))
	ed.WriteRaw([]byte("Content-Length: abc\r\n\r\n"))
	ed.WriteRaw(frame(`{"jsonrpc":"2.0","method":"zot/panel/key","params":{"key":7}}`)) // a bad notification: dropped
	ed.WriteRaw(frame(`{"jsonrpc":"2.0","id":77,"method":"zot/ping"}`))
	ed.Wait("the parse error and the invalid-request error", func() bool {
		var parse, invalid bool
		for _, m := range ed.Notes("") {
			if m.Method == "" && m.Error != nil {
				parse = parse || m.Error.Code == -32700
				invalid = invalid || (m.Error.Code == -32600 && string(m.ID) == "true")
			}
		}
		return parse && invalid
	})
	ed.MustCall("zot/ping", nil, nil)
}

func frame(body string) []byte {
	return []byte(fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body))
}
