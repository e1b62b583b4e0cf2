package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/testenv"
)

// capext builds testdata/capext (Go SDK) once.
func capext(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Dir(fakeBin), "github.com/zot-editors/zot/extensions/testdata/capext")
}

// askUI is a recUI with dialogs: answer decides each one.
type askUI struct {
	recUI
	caps   wire.UICapabilities
	answer func(ctx context.Context, req UIRequest) UIAnswer
	mu2    sync.Mutex
	asked  []UIRequest
	status map[string]string
}

func (u *askUI) UICapabilities() wire.UICapabilities { return u.caps }
func (u *askUI) Ask(ctx context.Context, ext string, req UIRequest) UIAnswer {
	u.mu2.Lock()
	u.asked = append(u.asked, req)
	u.mu2.Unlock()
	return u.answer(ctx, req)
}
func (u *askUI) SetStatus(ext, key, text string) {
	u.mu2.Lock()
	if u.status == nil {
		u.status = map[string]string{}
	}
	u.status[ext+"/"+key] = text
	u.mu2.Unlock()
}
func (u *askUI) SetWidget(ext, key string, lines []string) {}

func installDir(t *testing.T, e *env, name, dir string) {
	t.Helper()
	dst := filepath.Join(GlobalRoot(e.home), name)
	os.MkdirAll(filepath.Dir(dst), 0o755)
	if err := os.Rename(dir, dst); err != nil {
		t.Fatal(err)
	}
}

// A guard awaiting the user's answer is not cut off by the intercept
// timeout: it is paused while the dialog is open.
func TestInterceptTimeoutPausedWhileUserDecides(t *testing.T) {
	e := newEnv(t)
	installDir(t, e, "permission-gate", examplestest.Build(t, "permission-gate"))
	const timeout = 200 * time.Millisecond
	ui := &askUI{caps: wire.UICapabilities{Confirm: true, Select: true, Input: true}}
	ui.answer = func(ctx context.Context, req UIRequest) UIAnswer {
		// The user takes longer than the intercept timeout.
		select {
		case <-time.After(5 * timeout):
		case <-ctx.Done():
			return UIAnswer{Cancelled: true}
		}
		return UIAnswer{Value: "Allow once"}
	}
	h := e.start(func(o *Options) { o.UI = ui; o.InterceptTimeout = timeout })
	d := h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf build"}`)})
	if d.Block {
		t.Fatalf("blocked while the user was deciding: %s", d.Reason)
	}
	if len(ui.asked) != 1 || ui.asked[0].Kind != wire.UISelect || !strings.Contains(ui.asked[0].Title, "rm -rf build") {
		t.Fatalf("asked: %+v", ui.asked)
	}
}

// A dialog without timeout_ms that nobody answers (a window the user
// closed) is cancelled after the default dialog timeout, as if dismissed:
// the guard that asked gets the cancelled answer, and the run goes on
// with its verdict.
func TestDialogWithoutTimeoutIsCancelledByDefault(t *testing.T) {
	if d := NewHost(Options{}).o.DialogTimeout; d != 120*time.Second {
		t.Fatalf("default dialog timeout %s, want 120s (SEP's)", d)
	}
	e := newEnv(t)
	installDir(t, e, "permission-gate", examplestest.Build(t, "permission-gate"))
	ui := &askUI{caps: wire.UICapabilities{Confirm: true, Select: true, Input: true}}
	closed := make(chan struct{})
	ui.answer = func(ctx context.Context, req UIRequest) UIAnswer {
		<-ctx.Done() // nobody answers
		close(closed)
		return UIAnswer{Cancelled: true}
	}
	h := e.start(func(o *Options) { o.UI = ui; o.DialogTimeout = 300 * time.Millisecond })
	res := make(chan agent.ToolDecision, 1)
	go func() {
		res <- h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf build"}`)})
	}()
	var d agent.ToolDecision
	select {
	case d = <-res:
	case <-time.After(30 * time.Second):
		t.Fatal("the unanswered dialog held the tool call")
	}
	<-closed // the front was told to close it
	if !d.Block || !strings.Contains(d.Reason, "the user did not approve running: rm -rf build") {
		t.Fatalf("decision %+v", d)
	}
	if !strings.Contains(e.logOf("permission-gate"), "no answer within 300ms; cancelled") {
		t.Fatalf("log:\n%s", e.logOf("permission-gate"))
	}
}

// An aborted run closes the dialog its guard opened (the front's Ask sees
// its ctx end), and the call is blocked.
func TestAbortClosesDialog(t *testing.T) {
	e := newEnv(t)
	installDir(t, e, "permission-gate", examplestest.Build(t, "permission-gate"))
	ui := &askUI{caps: wire.UICapabilities{Confirm: true, Select: true}}
	opened := make(chan struct{})
	closed := make(chan struct{})
	ui.answer = func(ctx context.Context, req UIRequest) UIAnswer {
		close(opened)
		<-ctx.Done()
		close(closed)
		return UIAnswer{Cancelled: true}
	}
	h := e.start(func(o *Options) { o.UI = ui })
	ctx, cancel := context.WithCancel(context.Background())
	res := make(chan agent.ToolDecision, 1)
	go func() {
		res <- h.BeforeTool(ctx, agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"sudo reboot"}`)})
	}()
	<-opened
	cancel()
	select {
	case <-closed:
	case <-time.After(wait):
		t.Fatal("the dialog stayed open after the abort")
	}
	if d := <-res; !d.Block {
		t.Fatal("an aborted guard check let the call through")
	}
}

// Junk answers to the added hooks are ignored: the run's input, messages
// and results pass through unchanged, and nothing hangs.
func TestJunkHookAnswersPassThrough(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{"-junk"}})
	h := e.start(func(o *Options) { o.InterceptTimeout = 300 * time.Millisecond })
	ctx := context.Background()
	if d := h.TransformInput(ctx, "hello"); d.Handled || d.Text != nil {
		t.Fatalf("input: %+v", d)
	}
	if d := h.BeforeAgentStart(ctx, "hello", "sys"); len(d.Messages) != 0 || d.AppendSystem != "" {
		t.Fatalf("before_agent_start: %+v", d)
	}
	msgs := []message.Message{{Role: message.RoleUser, Content: []message.Content{message.Text("hi")}}}
	if m := h.TransformContext(ctx, msgs); m != nil {
		t.Fatalf("context: %+v", m)
	}
	res := tools.Result{Content: []message.Content{message.Text("ok")}}
	if r := h.AfterTool(ctx, agent.ToolCallInfo{ID: "1", Name: "write", Args: json.RawMessage(`{}`)}, res); message.TextOf(r.Content) != "ok" || r.IsError {
		t.Fatalf("tool_result: %+v", r)
	}
	if !strings.Contains(e.logOf("capext"), "before_agent_start: messages must be an array of strings") {
		t.Fatalf("the junk was not logged: %s", e.logOf("capext"))
	}
}

// An extension that does not ask for the additions gets zot's hello_ack
// byte for byte (no host_capabilities), session_start without reason and
// an extension tool's tool_call event without details.
func TestLegacyExtensionGetsZotFrames(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(t.TempDir(), "rec")
	e.global("legacy", "-events", "session_start,tool_call", "-record", rec)
	h := e.start(func(o *Options) { o.UI = &askUI{caps: wire.UICapabilities{Confirm: true}} })
	h.Observe(agent.Lifecycle{Event: "session_start", Reason: "startup"})
	h.Observe(agent.Lifecycle{Event: "tool_call", ToolID: "t1", ToolName: "weather", ToolArgs: json.RawMessage(`{}`), ToolExtension: "forecast"})
	var lines []string
	eventually(t, "tool_call", func() bool {
		b := readWholeLines(rec)
		lines = strings.Split(strings.TrimSpace(string(b)), "\n")
		return strings.Contains(string(b), `"tool_call"`)
	})
	for _, l := range lines {
		if strings.Contains(l, "host_capabilities") || strings.Contains(l, `"reason"`) || strings.Contains(l, `"details"`) {
			t.Fatalf("a legacy extension got an addition: %s", l)
		}
		if strings.Contains(l, "session_start") && l != `{"type":"event","event":"session_start"}` {
			t.Fatalf("session_start: %s", l)
		}
		if strings.Contains(l, "tool_call") && l != `{"type":"event","event":"tool_call","tool_id":"t1","tool_name":"weather","tool_args":{}}` {
			t.Fatalf("tool_call: %s", l)
		}
	}
}

// An oversized action payload is refused by the host with an error naming
// the limit (the runtime never sees it).
func TestActionsValidated(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{}})
	h := e.start(func(o *Options) { o.UI = &askUI{} })
	h.SetActions(fakeActions{})
	for tool, want := range map[string]string{
		"big_entry": "append_entry note data is 1048579 bytes; the limit is 1048576",
	} {
		if got := resultText(callTool(t, h, tool, `{}`)); !strings.Contains(got, want) {
			t.Errorf("%s: %q, want %q", tool, got, want)
		}
	}
}

type fakeActions struct{}

func (fakeActions) SendMessage(ext, text, deliver string) error              { return nil }
func (fakeActions) Tools() []wire.ToolInfo                                   { return nil }
func (fakeActions) SetActiveTools(names []string) error                      { return nil }
func (fakeActions) SetModel(id string) error                                 { return nil }
func (fakeActions) AppendEntry(ext, kind string, data json.RawMessage) error { return nil }
func (fakeActions) Entries(ext, kind string) []wire.Entry                    { return nil }
func (fakeActions) Fork(context.Context, string, string, bool) (agent.ForkResult, error) {
	return agent.ForkResult{}, nil
}
func (fakeActions) NavigateTree(context.Context, string, string, agent.TreeOptions) (agent.TreeResult, error) {
	return agent.TreeResult{}, nil
}
func (fakeActions) Tree() (agent.Tree, error) { return agent.Tree{}, nil }
func (fakeActions) NewSession(string) error   { return nil }

// A dialog that times out answers its default; set_widget reaches the
// front and is cleared when the extension stops.
func TestDialogTimeoutDefaultAndWidget(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{}})
	ui := &askUI{caps: wire.UICapabilities{Input: true, Widget: true}}
	ui.answer = func(ctx context.Context, req UIRequest) UIAnswer {
		<-ctx.Done() // the user never answers
		return UIAnswer{Cancelled: true}
	}
	widgets := make(chan []string, 4)
	wu := &widgetUI{askUI: ui, widgets: widgets}
	h := e.start(func(o *Options) { o.UI = wu })
	if got := resultText(callTool(t, h, "ask_timeout", `{}`)); got != `answer: "dflt"` {
		t.Fatalf("timed-out input: %q", got)
	}
	if got := resultText(callTool(t, h, "widget", `{}`)); got != "widget set" {
		t.Fatalf("widget: %q", got)
	}
	if w := <-widgets; strings.Join(w, "|") != "line 1|line 2" {
		t.Fatalf("widget lines: %v", w)
	}
	h.Reload(context.Background())
	select {
	case w := <-widgets:
		if w != nil {
			t.Fatalf("widget after stop: %v", w)
		}
	case <-time.After(wait):
		t.Fatal("the widget was not cleared when the extension stopped")
	}
}

type widgetUI struct {
	*askUI
	widgets chan []string
}

func (u *widgetUI) SetWidget(ext, key string, lines []string) { u.widgets <- lines }

// A front without a UI (zot -p): a dialog is cancelled at once, a widget
// gets an error frame naming the problem; nothing hangs.
func TestNoUIRefusesAtOnce(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{}})
	h := e.start(nil) // recUI: no Asker
	if got := resultText(callTool(t, h, "ask_timeout", `{}`)); !strings.Contains(got, "this front has no input dialog (no UI)") {
		t.Fatalf("dialog without UI: %q", got)
	}
	callTool(t, h, "widget", `{}`)
	eventually(t, "the error frame in the extension's log", func() bool {
		return strings.Contains(e.logOf("capext"), "this front cannot show widget (no UI)")
	})
}

// inputUI is an askUI with a chat input.
type inputUI struct {
	*askUI
	mu   sync.Mutex
	text string
	sets []string // "replace TEXT" / "paste TEXT"
}

func (u *inputUI) SetInput(ext, text string, paste bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if paste {
		u.sets = append(u.sets, "paste "+text)
		u.text += text
	} else {
		u.sets = append(u.sets, "replace "+text)
		u.text = text
	}
}

func (u *inputUI) GetInput(context.Context) (string, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.text, nil
}

// A Go SDK extension reaches the user's chat input (set_editor_text
// replace and paste, get_editor_text) and asks for multi-line text
// (ui_request kind editor, its prefill as Default).
func TestChatInputAndEditorDialog(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{}})
	ui := &inputUI{askUI: &askUI{caps: wire.UICapabilities{Input: true, Editor: true, EditorText: true}}}
	ui.answer = func(ctx context.Context, req UIRequest) UIAnswer { return UIAnswer{Value: req.Default + "\nc"} }
	h := e.start(func(o *Options) { o.UI = ui })
	if got := resultText(callTool(t, h, "editor_text", `{}`)); got != "input: draft!" {
		t.Fatalf("editor_text: %q", got)
	}
	ui.mu.Lock()
	sets := strings.Join(ui.sets, "|")
	ui.mu.Unlock()
	if sets != "replace draft|paste !" {
		t.Fatalf("the chat input got %q", sets)
	}
	if got := resultText(callTool(t, h, "editor", `{}`)); got != "edited: a\nb\nc" {
		t.Fatalf("editor: %q", got)
	}
	ui.mu2.Lock()
	asked := ui.asked
	ui.mu2.Unlock()
	if len(asked) != 1 || asked[0].Kind != wire.UIEditor || asked[0].Title != "Notes" {
		t.Fatalf("asked: %+v", asked)
	}
}

// A front without a chat input (zot -p): set_editor_text is ignored,
// logged once however often it comes; get_editor_text answers ""; an
// editor dialog is cancelled at once.
func TestChatInputWithoutFront(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{}})
	h := e.start(nil) // recUI: no Asker
	for range 2 {
		if got := resultText(callTool(t, h, "editor_text", `{}`)); got != "input: " {
			t.Fatalf("editor_text without a chat input: %q", got)
		}
	}
	if got := resultText(callTool(t, h, "editor", `{}`)); !strings.Contains(got, "this front has no editor dialog (no UI)") {
		t.Fatalf("editor without UI: %q", got)
	}
	const ignored = "set_editor_text: this front has no chat input; ignored"
	if n := strings.Count(e.logOf("capext"), ignored); n != 1 {
		t.Fatalf("the ignored set was logged %d times, want once:\n%s", n, e.logOf("capext"))
	}
}

// sessionActions is a front's actions with the session controls
// (SessionControl), recording what the extensions asked.
type sessionActions struct {
	fakeActions
	mu    sync.Mutex
	asked []string
}

func (a *sessionActions) note(s string) {
	a.mu.Lock()
	a.asked = append(a.asked, s)
	a.mu.Unlock()
}

func (a *sessionActions) Compact(_ context.Context, ext, instructions string) (string, error) {
	a.note("compact " + ext + " " + instructions)
	if instructions == "fail" {
		return "", errors.New("a compaction cannot start during a run")
	}
	return "the summary", nil
}

func (a *sessionActions) SwitchSession(ext, which string) error {
	a.note("switch " + ext + " " + which)
	return nil
}

func (a *sessionActions) Shutdown(ext string) error {
	a.note("shutdown " + ext)
	return nil
}

// The session's lifetime actions (compact, switch_session,
// request_shutdown, reload) from a Go SDK extension: each reaches the
// front's SessionControl with its arguments and answers with its result
// or error; a session_before_switch refusal answers cancelled without
// asking the front; a front without SessionControl answers by name; reload
// is answered, then the extension is restarted.
func TestSessionControlActions(t *testing.T) {
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "capext"), "capext", map[string]any{"exec": capext(t), "args": []string{}})
	e.global("refuser", "-caps", "hooks", "-intercept", "session_before_switch", "-block", "refused.jsonl")
	h := e.start(func(o *Options) { o.UI = &askUI{} })
	act := &sessionActions{}
	h.SetActions(act)
	for _, c := range []struct{ args, want string }{
		{`{"op":"compact","arg":"keep the plan"}`, `compact: "the summary" err=<nil>`},
		{`{"op":"compact","arg":"fail"}`, `compact: "" err=a compaction cannot start during a run`},
		{`{"op":"switch","arg":"/s/one.jsonl"}`, `switch: "cancelled=false" err=<nil>`},
		{`{"op":"switch","arg":"/s/refused.jsonl"}`, `switch: "cancelled=true" err=<nil>`},
		{`{"op":"switch","arg":" "}`, `switch: "cancelled=false" err=switch_session needs a session_file (a session file, or a session id)`},
		{`{"op":"shutdown"}`, `shutdown: "" err=<nil>`},
	} {
		if got := resultText(callTool(t, h, "session_ctl", c.args)); got != c.want {
			t.Errorf("%s: %q, want %q", c.args, got, c.want)
		}
	}
	act.mu.Lock()
	asked := strings.Join(act.asked, "|")
	act.mu.Unlock()
	if asked != "compact capext keep the plan|compact capext fail|switch capext /s/one.jsonl|shutdown capext" {
		t.Fatalf("the front was asked: %q", asked)
	}

	h.SetActions(fakeActions{}) // a front without session controls
	if got := resultText(callTool(t, h, "session_ctl", `{"op":"compact"}`)); got != `compact: "" err=this front offers no compact` {
		t.Fatalf("compact without SessionControl: %q", got)
	}

	if got := resultText(callTool(t, h, "session_ctl", `{"op":"reload"}`)); got != `reload: "" err=<nil>` {
		t.Fatalf("reload: %q", got)
	}
	eventually(t, "capext restarted by its reload", func() bool {
		return strings.Count(e.logOf("capext"), "started capext (pid") >= 2
	})
}
