package server

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/skills"
)

// fakeRuntime is a Runtime without a model: prompts end at once.
type fakeRuntime struct{ model string }

func (f *fakeRuntime) Prompt(ctx context.Context, text string, images []message.Content) (<-chan agent.Event, error) {
	ch := make(chan agent.Event, 1)
	ch <- agent.Event{Type: agent.EventDone}
	close(ch)
	return ch, nil
}

func (f *fakeRuntime) PromptWith(ctx context.Context, in agent.PromptInput) (<-chan agent.Event, error) {
	return f.Prompt(ctx, in.Text, in.Images)
}
func (f *fakeRuntime) Compact(ctx context.Context) (<-chan agent.Event, error) {
	return f.Prompt(ctx, "", nil)
}
func (f *fakeRuntime) Cancel()                     {}
func (f *fakeRuntime) State() agent.State          { return agent.State{Provider: "anthropic", Model: f.model} }
func (f *fakeRuntime) Messages() []message.Message { return nil }
func (f *fakeRuntime) Clear() error                { return nil }
func (f *fakeRuntime) SetModel(id string) error {
	if id != "m1" && id != "m2" {
		return errors.New("unknown model " + id)
	}
	f.model = id
	return nil
}
func (f *fakeRuntime) SetReasoning(level string) error   { return nil }
func (f *fakeRuntime) ListModels() []provider.Model      { return []provider.Model{{ID: "m1"}, {ID: "m2"}} }
func (f *fakeRuntime) Sessions() ([]session.Info, error) { return nil, nil }
func (f *fakeRuntime) Resume(which string) error {
	if which != "latest" {
		return errors.New("no session " + which)
	}
	return nil
}
func (f *fakeRuntime) NewSession() error                 { return nil }
func (f *fakeRuntime) Skills() []skills.Skill            { return nil }
func (f *fakeRuntime) Skill(string) (skills.Skill, bool) { return skills.Skill{}, false }
func (f *fakeRuntime) Close() error                      { return nil }

// newTestServer is an initialized server without a connection.
func newTestServer(t testing.TB) *Server {
	s := New(Options{})
	s.ctx = context.Background()
	s.rt = &fakeRuntime{model: "m1"}
	s.state = stateInitialized
	s.ws.setRoot(t.TempDir(), nil)
	return s
}

// Every zot/* method answers any params with a result or a JSON-RPC error
// a person can act on; it never panics.
func FuzzZotParams(f *testing.F) {
	names := zotMethodNames()
	seeds := []string{``, `null`, `{}`, `[]`, `"x"`, `7`, `{"text":"hi"}`, `{"text":5}`, `{"text":"hi","images":[{"mimeType":"image/png","data":"AA=="}]}`,
		`{"text":"x","context":{"uri":"file:///tmp/a.go","range":{"start":{"line":1,"character":2},"end":{"line":0,"character":0}}}}`,
		`{"name":"help"}`, `{"name":"/mode","args":"ask"}`, `{"name":"model","args":"m2"}`, `{"name":"resume","args":"nope"}`,
		`{"mode":"ask"}`, `{"model":"m9"}`, `{"id":"latest"}`, `{"panelId":"p","key":"rune","text":"x"}`, `{"clearQueue":true}`,
		`{"text":"\u0000"}`, `{"text":"` + strings.Repeat("a", 1000) + `"}`, `{"images":null,"text":null}`}
	for i := range names {
		for _, p := range seeds {
			f.Add(uint8(i), []byte(p))
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, params []byte) {
		s := newTestServer(t)
		method := names[int(which)%len(names)]
		res, err := zotMethods[method].serve(s, context.Background(), json.RawMessage(params))
		if err != nil {
			var re *jsonrpc2.Error
			if !errors.As(errFailed(err), &re) || re.Message == "" {
				t.Fatalf("%s %q: not a JSON-RPC error: %v", method, params, err)
			}
			if re.Code == jsonrpc2.InvalidParams && !strings.HasPrefix(re.Message, method) {
				t.Fatalf("%s %q: InvalidParams does not name the method: %s", method, params, re.Message)
			}
			return
		}
		if _, err := json.Marshal(res); err != nil {
			t.Fatalf("%s: result does not encode: %v", method, err)
		}
	})
}

func TestZotMethodsListed(t *testing.T) {
	names := zotMethodNames()
	if !sort.StringsAreSorted(names) || len(names) < 18 {
		t.Fatalf("methods: %v", names)
	}
	err := errMethodNotFound("zot/x")
	if !strings.Contains(err.Error(), "zot/prompt") {
		t.Fatal(err)
	}
}

func TestDecodeParamsNamesFields(t *testing.T) {
	s := newTestServer(t)
	cases := map[string]string{
		`{"text":1}`:                         `"text" must be a string, not number`,
		`{"text":"a","images":[{"data":5}]}`: `"images.data" must be a string`,
		`{"text":"a","context":{"range":1}}`: `"context.range" must be an object`,
		`[1]`:                                `params must be an object, not an array`,
		`{"text":"a","context":{"uri":""}}`:  `"context.uri" is required`,
	}
	for params, want := range cases {
		_, err := zotMethods[MethodPrompt].serve(s, context.Background(), json.RawMessage(params))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want %q", params, err, want)
		}
	}
}
