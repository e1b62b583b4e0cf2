package server

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
)

type probeParams struct {
	N int `json:"n"`
}

func (p *probeParams) validate(method string) error {
	if p.N < 0 {
		return fieldError(method, "n", "must not be negative, not %d", p.N)
	}
	return nil
}

// The table decodes and validates before the handler runs, and the
// handler's typed result is what the reply gets.
func TestMethodTableDecodesValidatesCalls(t *testing.T) {
	calls := 0
	h := request("zot/probe", func(s *Server, ctx context.Context, p *probeParams) (PingResult, error) {
		calls++
		if p.N == 7 {
			return PingResult{}, errors.New("seven")
		}
		return PingResult{Pong: p.N == 1}, nil
	})
	s := newTestServer(t)
	cases := []struct {
		params, wantErr string
		want            any
	}{
		{`{"n":1}`, "", PingResult{Pong: true}},
		{``, "", PingResult{}},
		{`{"n":"x"}`, `zot/probe: "n" must be an integer, not string`, nil},
		{`{"n":-1}`, `zot/probe: "n" must not be negative, not -1`, nil},
		{`{"n":7}`, "seven", nil},
	}
	for _, c := range cases {
		res, err := h.serve(s, context.Background(), json.RawMessage(c.params))
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("%s: err %v, want %q", c.params, err, c.wantErr)
			}
			if res != nil {
				t.Errorf("%s: a result with an error: %v", c.params, res)
			}
			continue
		}
		want, _ := json.Marshal(c.want)
		if got, ok := res.(json.RawMessage); err != nil || !ok || string(got) != string(want) {
			t.Errorf("%s: %v, %v; want %s", c.params, res, err, want)
		}
	}
	if calls != 3 {
		t.Errorf("handler ran %d times; want 3 (never for params that do not decode or validate)", calls)
	}
	if h.Method != "zot/probe" || h.Dir != clientToServer || h.Notification {
		t.Errorf("spec %+v", h.methodSpec)
	}
}

// A result that does not encode is an InternalError naming the method,
// not a reply jsonrpc2 cannot send (the client would wait forever).
func TestMethodTableResultThatDoesNotEncode(t *testing.T) {
	h := request0("zot/probe", func(s *Server, ctx context.Context) (struct{ F float64 }, error) {
		return struct{ F float64 }{math.NaN()}, nil
	})
	res, err := h.serve(newTestServer(t), context.Background(), nil)
	var re *jsonrpc2.Error
	if !errors.As(err, &re) || re.Code != jsonrpc2.InternalError || !strings.HasPrefix(re.Message, "zot/probe: cannot encode the result") || res != nil {
		t.Fatalf("got %v, %v", res, err)
	}
}

type recordedReply struct {
	called bool
	result any
	err    error
}

func (r *recordedReply) reply(_ context.Context, result any, err error) error {
	r.called, r.result, r.err = true, result, err
	return nil
}

// The standard methods zot does not serve: requests get MethodNotFound
// naming the method, notifications are ignored; the served ones decode.
func TestStandardMethods(t *testing.T) {
	s := newTestServer(t)
	ctx := context.Background()
	call := func(method, params string, isCall bool) *recordedReply {
		var req jsonrpc2.Request
		var err error
		if isCall {
			req, err = jsonrpc2.NewCall(jsonrpc2.NewNumberID(1), method, json.RawMessage(params))
		} else {
			req, err = jsonrpc2.NewNotification(method, json.RawMessage(params))
		}
		if err != nil {
			t.Fatal(err)
		}
		r := &recordedReply{}
		if err := s.standard(ctx, r.reply, req); err != nil {
			t.Fatal(err)
		}
		if !r.called {
			t.Fatalf("%s: no reply", method)
		}
		return r
	}
	r := call("textDocument/hover", `{}`, true)
	var re *jsonrpc2.Error
	if !errors.As(r.err, &re) || re.Code != jsonrpc2.MethodNotFound || !strings.Contains(re.Message, "textDocument/hover") {
		t.Errorf("hover: %v", r.err)
	}
	if r := call("workspace/didChangeConfiguration", `{"settings":{}}`, false); r.err != nil {
		t.Errorf("an unknown notification is ignored, got %v", r.err)
	}
	path := s.ws.root + "/a.go"
	r = call("textDocument/didOpen", `{"textDocument":{"uri":"file://`+path+`","languageId":"go","version":3,"text":"package a\n"}}`, false)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if d, ok := s.overlay.get(path); !ok || d.text != "package a\n" {
		t.Errorf("didOpen did not reach the overlay: %+v %v", d, ok)
	}
	if r := call("textDocument/didOpen", `{"textDocument":5}`, false); r.err == nil || !strings.Contains(r.err.Error(), `textDocument/didOpen: "textDocument" must be an object`) {
		t.Errorf("bad didOpen: %v", r.err)
	}
}
