package server

import (
	"errors"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

// decodeMessage builds jsonrpc2's own types around the body; if a new
// go.lsp.dev/jsonrpc2 changes their fields, this fails (and the server
// falls back to jsonrpc2's copying constructors).
func TestDecodeMessageBuildsJSONRPC2Types(t *testing.T) {
	if !wireLayoutOK {
		t.Fatal("jsonrpc2's Call, Notification or Response no longer match the mirrors in wire.go")
	}
	body := []byte(`{"jsonrpc":"2.0","id":"a-1","method":"zot/prompt","params":{"text":"hi"}}`)
	m, err := decodeMessage(body)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := m.(*jsonrpc2.Call)
	if !ok || c.Method() != "zot/prompt" || string(c.Params()) != `{"text":"hi"}` || c.ID() != jsonrpc2.NewStringID("a-1") {
		t.Fatalf("call: %#v", m)
	}
	if &c.Params()[0] != &body[len(`{"jsonrpc":"2.0","id":"a-1","method":"zot/prompt","params":`)] {
		t.Fatal("params were copied")
	}
	m, _ = decodeMessage([]byte(`{"jsonrpc":"2.0","method":"exit","params":null}`))
	if n, ok := m.(*jsonrpc2.Notification); !ok || n.Method() != "exit" || n.Params() != nil {
		t.Fatalf("notification: %#v", m)
	}
	m, _ = decodeMessage([]byte(`{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}`))
	var we *jsonrpc2.Error
	if r, ok := m.(*jsonrpc2.Response); !ok || r.ID() != jsonrpc2.NewNumberID(7) || !errors.As(r.Err(), &we) || we.Code != -32601 {
		t.Fatalf("response: %#v", m)
	}
	m, _ = decodeMessage([]byte(`{"jsonrpc":"2.0","id":8,"result":{"title":"Allow once"}}`))
	if r, ok := m.(*jsonrpc2.Response); !ok || r.Err() != nil || string(r.Result()) != `{"title":"Allow once"}` {
		t.Fatalf("response: %#v", m)
	}
	for _, bad := range []string{`{"jsonrpc":"1.0","id":1,"method":"x"}`, `{"jsonrpc":"2.0"}`, `{"id":1,"method":"x"} {}`, `{"id":1.5,"method":"x"}`} {
		if _, err := decodeMessage([]byte(bad)); err == nil {
			t.Errorf("%s decoded", bad)
		}
	}
}

func TestEncodeMessages(t *testing.T) {
	id := jsonrpc2.NewNumberID(3)
	b, err := encodeRequest(&id, "window/showMessageRequest", map[string]any{"b": 1, "a": "<x>"})
	if err != nil || string(b) != `{"jsonrpc":"2.0","id":3,"method":"window/showMessageRequest","params":{"a":"\u003cx\u003e","b":1}}` {
		t.Fatalf("call: %s %v", b, err)
	}
	b, _ = encodeRequest(nil, "exit", nil)
	if string(b) != `{"jsonrpc":"2.0","method":"exit"}` {
		t.Fatalf("notification: %s", b)
	}
	b, _ = encodeResponse(jsonrpc2.NewStringID("s"), nil, nil)
	if string(b) != `{"jsonrpc":"2.0","id":"s","result":null}` {
		t.Fatalf("response: %s", b)
	}
	b, _ = encodeResponse(jsonrpc2.NewNumberID(1), nil, rpcError(jsonrpc2.InvalidParams, "bad"))
	if string(b) != `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}` {
		t.Fatalf("error response: %s", b)
	}
}
