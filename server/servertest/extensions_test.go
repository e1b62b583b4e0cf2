package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

type extStatus struct {
	Name     string   `json:"name"`
	State    string   `json:"state"`
	Reason   string   `json:"reason"`
	Source   string   `json:"source"`
	PID      int      `json:"pid"`
	Commands []string `json:"commands"`
	Tools    []string `json:"tools"`
}

type extList struct {
	Extensions []extStatus `json:"extensions"`
	Commands   []struct {
		Name      string `json:"name"`
		Source    string `json:"source"`
		Extension string `json:"extension"`
	} `json:"commands"`
}

// waitExt waits for a zot/extensions/changed that shows name in state.
func waitExt(ed *servertest.Editor, name, state string) extStatus {
	var got extStatus
	ed.Wait("extension "+name+" "+state, func() bool {
		notes := ed.Notes("zot/extensions/changed")
		for i := len(notes) - 1; i >= 0; i-- {
			var l extList
			json.Unmarshal(notes[i].Params, &l)
			for _, x := range l.Extensions {
				if x.Name == name {
					if x.State == state {
						got = x
						return true
					}
					return false
				}
			}
		}
		return false
	})
	return got
}

func startWithExt(t *testing.T, e *env, tweak func(*servertest.Config)) *servertest.Editor {
	dir := e.installExt(filepath.Join(e.home, "dev", "lspext"), "lspext")
	cfg := e.config("--ext", dir)
	if tweak != nil {
		tweak(&cfg)
	}
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "lspext", "loaded")
	return ed
}

type commandResult struct {
	Action  string `json:"action"`
	Prompt  string `json:"prompt"`
	Insert  string `json:"insert"`
	Display string `json:"display"`
	PanelID string `json:"panelId"`
	RunID   string `json:"runId"`
	Error   string `json:"error"`
}

func TestCommands(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("Hi, Ada!"))
	ed := startWithExt(t, e, nil)

	var l extList
	ed.MustCall("zot/commands", nil, &l)
	var names []string
	for _, c := range l.Commands {
		names = append(names, c.Name+":"+c.Source)
	}
	joined := strings.Join(names, " ")
	for _, want := range []string{"help:builtin", "clear:builtin", "reload-ext:builtin", "hi:extension", "list:extension"} {
		if !strings.Contains(joined, want) {
			t.Fatalf("zot/commands lacks %s: %s", want, joined)
		}
	}

	var r commandResult
	ed.MustCall("zot/command", map[string]any{"name": "/hi", "args": "Ada"}, &r)
	if r.Action != "prompt" || r.Prompt != "Say hi to Ada" || r.RunID == "" {
		t.Fatalf("prompt action: %+v", r)
	}
	if evs := ed.WaitDone(r.RunID); !strings.Contains(jsonString(servertest.Find(evs, "assistant_message")), "Hi, Ada!") {
		t.Fatalf("the command's run: %s", servertest.Types(evs))
	}
	ed.MustCall("zot/command", map[string]any{"name": "ins", "args": "x"}, &r)
	if r.Action != "insert" || r.Insert != "inserted: x" {
		t.Fatalf("insert: %+v", r)
	}
	ed.MustCall("zot/command", map[string]any{"name": "disp", "args": "y"}, &r)
	if r.Action != "display" || r.Display != "displayed: y" {
		t.Fatalf("display: %+v", r)
	}
	ed.MustCall("zot/command", map[string]any{"name": "oops"}, &r)
	if r.Action != "noop" || r.Error != "it went wrong" {
		t.Fatalf("error: %+v", r)
	}
	ed.MustCall("zot/command", map[string]any{"name": "help"}, &r)
	if r.Action != "display" || !strings.Contains(r.Display, "/list") {
		t.Fatalf("help: %+v", r)
	}
	ed.MustCall("zot/command", map[string]any{"name": "mode", "args": "ask"}, &r)
	var st map[string]any
	ed.MustCall("zot/state", nil, &st)
	if st["permissionMode"] != "ask" {
		t.Fatalf("/mode ask: %v", st)
	}
	if err := ed.Call("zot/command", map[string]any{"name": "nosuch"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, `"name"`) {
		t.Fatalf("unknown command: %v", err)
	}

	// notify → zot/notify, and window/showMessage for warnings.
	ed.MustCall("zot/command", map[string]any{"name": "warn", "args": "hot"}, &r)
	n := ed.WaitNote("zot/notify", func(p json.RawMessage) bool { return strings.Contains(string(p), "careful: hot") })
	if !strings.Contains(string(n.Params), `"extension":"lspext"`) || !strings.Contains(string(n.Params), `"level":"warn"`) {
		t.Fatalf("zot/notify: %s", n.Params)
	}
	ed.WaitNote("window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "[lspext] careful: hot") })
}

// A panel round trip: open, keys, render, close by the user.
func TestPanelRoundTrip(t *testing.T) {
	e := newEnv(t)
	ed := startWithExt(t, e, nil)
	var r commandResult
	ed.MustCall("zot/command", map[string]any{"name": "list"}, &r)
	if r.Action != "open_panel" || r.PanelID != "list" {
		t.Fatalf("open_panel: %+v", r)
	}
	open := ed.WaitNote("zot/panel/open", nil)
	var p struct {
		PanelID   string   `json:"panelId"`
		Extension string   `json:"extension"`
		Title     string   `json:"title"`
		Lines     []string `json:"lines"`
		Footer    string   `json:"footer"`
	}
	json.Unmarshal(open.Params, &p)
	if p.PanelID != "list" || p.Extension != "lspext" || p.Title != "List" || len(p.Lines) != 3 || p.Lines[0] != "> alpha" {
		t.Fatalf("zot/panel/open: %s", open.Params)
	}
	ed.Notify("zot/panel/key", map[string]any{"panelId": "list", "key": "down"})
	render := ed.WaitNote("zot/panel/render", nil)
	json.Unmarshal(render.Params, &p)
	if p.Lines[1] != "> beta" || p.Footer != "item 2" {
		t.Fatalf("zot/panel/render: %s", render.Params)
	}
	ed.Notify("zot/panel/key", map[string]any{"panelId": "list", "key": "rune", "text": "z"})
	ed.WaitNote("zot/panel/render", func(raw json.RawMessage) bool { return strings.Contains(string(raw), "  z") })
	// esc closes the panel in zot, as zot's terminal UI does: the editor
	// gets zot/panel/close, the extension (which has no esc case) gets
	// panel_close.
	closedNotes := func() int {
		n := 0
		for _, m := range ed.Notes("zot/notify") {
			if strings.Contains(string(m.Params), "panel list closed by the user") {
				n++
			}
		}
		return n
	}
	ed.Notify("zot/panel/key", map[string]any{"panelId": "list", "key": "esc"})
	cl := ed.WaitNote("zot/panel/close", nil)
	if !strings.Contains(string(cl.Params), `"panelId":"list"`) {
		t.Fatalf("zot/panel/close: %s", cl.Params)
	}
	ed.Wait("panel_close at the extension after esc", func() bool { return closedNotes() == 1 })
	// ctrl+c too.
	ed.MustCall("zot/command", map[string]any{"name": "list"}, &r)
	ed.Wait("a second open", func() bool { return len(ed.Notes("zot/panel/open")) == 2 })
	ed.Notify("zot/panel/key", map[string]any{"panelId": "list", "key": "ctrl+c"})
	ed.Wait("zot/panel/close after ctrl+c", func() bool { return len(ed.Notes("zot/panel/close")) == 2 })
	ed.Wait("panel_close at the extension after ctrl+c", func() bool { return closedNotes() == 2 })
	// Reopen, and the user closes it in the editor.
	ed.MustCall("zot/command", map[string]any{"name": "list"}, &r)
	ed.Wait("a third open", func() bool { return len(ed.Notes("zot/panel/open")) == 3 })
	ed.Notify("zot/panel/closed", map[string]any{"panelId": "list"})
	ed.Wait("panel_close at the extension", func() bool { return closedNotes() == 3 })
	// A bad key sent as a request is an InvalidParams naming the field.
	if err := ed.Call("zot/panel/key", map[string]any{"panelId": "list", "key": "F13"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, `"key"`) {
		t.Fatalf("bad key: %v", err)
	}
}

// The extension's tool_call interceptor blocks bash; the model sees why.
func TestGuardBlocks(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf /tmp/nothing-here"}),
		llmtest.ToolReply("shout", map[string]any{"text": "quiet"}),
		llmtest.TextReply("ok"))
	ed := startWithExt(t, e, nil)
	evs := ed.WaitDone(ed.Prompt("clean up").RunID)
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if len(results) != 2 || results[0]["is_error"] != true || !strings.Contains(servertest.ResultText(results[0]), "lspext guard: refusing rm -rf") {
		t.Fatalf("guard: %v", results)
	}
	if results[1]["is_error"] != false || servertest.ResultText(results[1]) != "QUIET" {
		t.Fatalf("extension tool: %v", results[1])
	}
}

// zot lsp --no-ext runs no extension at all, not even one given with
// --ext (as zot rpc, zot acp and zot -p do): a reload has no host to ask.
func TestNoExtRunsNoExtension(t *testing.T) {
	e := newEnv(t)
	dir := e.installExt(filepath.Join(e.home, "dev", "lspext"), "lspext")
	ed := servertest.Start(t, e.config("--ext", dir, "--no-ext"))
	ed.Initialize(nil)
	var l extList
	err := ed.Call("zot/extensions/reload", nil, &l)
	if err == nil || !strings.Contains(err.Error(), "no extension host is running") {
		t.Fatalf("zot/extensions/reload with --no-ext: %v, %+v", err, l)
	}
	ed.MustCall("zot/extensions", nil, &l)
	if len(l.Extensions) != 0 {
		t.Fatalf("extensions with --no-ext: %+v", l.Extensions)
	}
}

// Hot reload: a changed manifest reloads the extension and the editor
// hears zot/extensions/changed; zot/extensions/reload works on demand.
func TestHotReloadNotifiesEditor(t *testing.T) {
	e := newEnv(t)
	ed := startWithExt(t, e, nil)
	before := len(ed.Notes("zot/extensions/changed"))
	pid := waitExt(ed, "lspext", "loaded").PID
	manifest := filepath.Join(e.home, "dev", "lspext", "extension.json")
	b, _ := os.ReadFile(manifest)
	os.WriteFile(manifest, []byte(strings.Replace(string(b), `"description": "test extension"`, `"description": "changed"`, 1)), 0o644)
	var reloaded int
	ed.Wait("a reload to be announced with a new process", func() bool {
		notes := ed.Notes("zot/extensions/changed")
		if len(notes) <= before {
			return false
		}
		var l extList
		json.Unmarshal(notes[len(notes)-1].Params, &l)
		if len(l.Extensions) != 1 {
			return false
		}
		reloaded = l.Extensions[0].PID
		return l.Extensions[0].State == "loaded" && reloaded != pid
	})
	// On demand: answered when the extension is back, in a new process.
	var l extList
	ed.MustCall("zot/extensions/reload", nil, &l)
	if len(l.Extensions) != 1 || l.Extensions[0].Name != "lspext" || l.Extensions[0].State != "loaded" || l.Extensions[0].PID == reloaded || l.Extensions[0].PID == 0 {
		t.Fatalf("zot/extensions/reload (the process before it: %d): %+v", reloaded, l)
	}
}

// An untrusted project extension: the editor is asked once; the answer
// is recorded.
func TestUntrustedProjectExtensionAsksOnce(t *testing.T) {
	e := newEnv(t)
	e.installExt(filepath.Join(e.root, ".zot", "extensions", "proj"), "proj")
	asked := make(chan string, 4)
	ed := servertest.Start(t, e.config())
	ed.Choose = func(msg string, actions []string) string {
		asked <- msg + " | " + strings.Join(actions, "/")
		if strings.Contains(msg, "Trust and run") {
			return "Trust and run"
		}
		return ""
	}
	ed.Initialize(nil)
	x := waitExt(ed, "proj", "loaded")
	if x.Source != "project" {
		t.Fatalf("status: %+v", x)
	}
	if q := <-asked; !strings.Contains(q, `"proj"`) || !strings.Contains(q, "Don't run/Trust and run") {
		t.Fatalf("trust question: %s", q)
	}
	ed.Shutdown()

	// The answer was recorded: a second session does not ask.
	ed2 := servertest.Start(t, e.config())
	ed2.Choose = func(msg string, actions []string) string {
		t.Errorf("asked again: %s", msg)
		return ""
	}
	ed2.Initialize(nil)
	waitExt(ed2, "proj", "loaded")
}

func TestUntrustedProjectExtensionDeclined(t *testing.T) {
	e := newEnv(t)
	e.installExt(filepath.Join(e.root, ".zot", "extensions", "proj"), "proj")
	ed := servertest.Start(t, e.config())
	ed.Choose = func(msg string, actions []string) string { return "Don't run" }
	ed.Initialize(nil)
	ed.Wait("the trust question", func() bool { return len(ed.Requests("window/showMessageRequest")) == 1 })
	// "untrusted" is also the state before the answer: the barrier is the
	// change the answer makes, the reason that says it was declined.
	var x extStatus
	ed.Wait("the declined answer to take effect", func() bool {
		for _, n := range ed.Notes("zot/extensions/changed") {
			var l extList
			json.Unmarshal(n.Params, &l)
			if len(l.Extensions) == 1 && strings.Contains(l.Extensions[0].Reason, "declined") {
				x = l.Extensions[0]
				return true
			}
		}
		return false
	})
	if x.State != "untrusted" || x.PID != 0 || !strings.Contains(x.Reason, "zot ext trust proj") {
		t.Fatalf("after Don't run: %+v", x)
	}
	// The answer was processed: nothing started, nothing was recorded.
	var l extList
	ed.MustCall("zot/extensions", nil, &l)
	if len(l.Extensions) != 1 || l.Extensions[0].State != "untrusted" || l.Extensions[0].PID != 0 {
		t.Fatalf("zot/extensions after Don't run: %+v", l.Extensions)
	}
	for _, n := range ed.Notes("zot/extensions/changed") {
		if strings.Contains(string(n.Params), `"state":"loaded"`) || strings.Contains(string(n.Params), `"state":"starting"`) {
			t.Fatalf("the declined extension started: %s", n.Params)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, "trust.json")); !os.IsNotExist(err) {
		t.Fatalf("trust.json written after Don't run (err %v)", err)
	}
	if n := len(ed.Requests("window/showMessageRequest")); n != 1 {
		t.Fatalf("asked %d times", n)
	}
}

// A command sent right after initialized, while the extension host is
// still starting, waits for it instead of being called unknown.
func TestCommandRightAfterInitialize(t *testing.T) {
	e := newEnv(t)
	dir := e.installExt(filepath.Join(e.home, "dev", "lspext"), "lspext")
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	var r commandResult
	ed.MustCall("zot/command", map[string]any{"name": "ins", "args": "early"}, &r)
	if r.Action != "insert" || r.Insert != "inserted: early" {
		t.Fatalf("early command: %+v", r)
	}
}

// A client that advertises experimental.zot.notify gets zot/notify only:
// no second copy as window/showMessage.
func TestNotifyCapabilitySuppressesShowMessage(t *testing.T) {
	e := newEnv(t)
	ed := startWithExt(t, e, func(c *servertest.Config) { c.ZotNotify = true })
	var r commandResult
	ed.MustCall("zot/command", map[string]any{"name": "warn", "args": "once"}, &r)
	ed.WaitNote("zot/notify", func(p json.RawMessage) bool { return strings.Contains(string(p), "careful: once") })
	// A later message proves the server got past the notify.
	ed.MustCall("zot/state", nil, nil)
	for _, n := range ed.Notes("window/showMessage") {
		if strings.Contains(string(n.Params), "careful: once") {
			t.Fatalf("duplicate window/showMessage: %s", n.Params)
		}
	}
}

// The agent's write into an extension directory is put to the user even
// in the default (auto) mode, with the whole new content, in one question
// that gives every reason (it is outside the workspace, and in $ZOT_HOME):
// "Deny", the first answer (the one Enter takes), leaves the file alone
// and tells the model; allowing writes it.
func TestAgentWriteIntoExtensionDirAsks(t *testing.T) {
	e := newEnv(t)
	dir := filepath.Join(e.home, "dev", "lspext")
	manifest := filepath.Join(dir, "extension.json")
	e.installExt(dir, "lspext")
	before, _ := os.ReadFile(manifest)
	disabled := strings.Replace(string(before), "{", "{\n  \"enabled\": false,", 1)
	e.llm.Append(
		llmtest.ToolReply("write", map[string]any{"path": manifest, "content": disabled}),
		llmtest.TextReply("ok"),
		llmtest.ToolReply("write", map[string]any{"path": manifest, "content": disabled}),
		llmtest.TextReply("ok"))
	var mu sync.Mutex
	var asked []string
	answer := "" // the first action: what Enter takes
	cfg := e.config("--ext", dir)
	ed := servertest.Start(t, cfg)
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg+" | "+strings.Join(actions, "/"))
		if answer == "" {
			return actions[0]
		}
		return answer
	}
	ed.Initialize(nil)
	waitExt(ed, "lspext", "loaded")
	evs := ed.WaitDone(ed.Prompt("turn the guard off").RunID)
	res := servertest.Find(evs, "tool_result")
	if res["is_error"] != true || !strings.Contains(servertest.ResultText(res), "the user denied writing") {
		t.Fatalf("tool result: %v", res)
	}
	mu.Lock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times: %q", len(asked), asked)
	}
	q := asked[0]
	for _, want := range []string{"outside the workspace", "where zot's extensions, trust and settings live", manifest, `"enabled": false`, "Deny/Allow this write"} {
		if !strings.Contains(q, want) {
			t.Fatalf("question lacks %q: %s", want, q)
		}
	}
	asked, answer = nil, "Allow this write"
	mu.Unlock()
	if after, _ := os.ReadFile(manifest); string(after) != string(before) {
		t.Fatal("the manifest was changed")
	}

	evs = ed.WaitDone(ed.Prompt("again").RunID)
	if res := servertest.Find(evs, "tool_result"); res["is_error"] != false {
		t.Fatalf("allowed write: %v", res)
	}
	mu.Lock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times: %q", len(asked), asked)
	}
	mu.Unlock()
	if after, _ := os.ReadFile(manifest); string(after) != disabled {
		t.Fatalf("the allowed write did not happen: %s", after)
	}
}

// An extension path from initializationOptions inside the workspace (a
// repository's settings can put it there) is asked about like a project
// extension; one outside the workspace is the user's and loads.
func TestEditorExtPathInsideWorkspaceAsksTrust(t *testing.T) {
	e := newEnv(t)
	inside := e.installExt(filepath.Join(e.root, "tools", "repoext"), "repoext")
	// It asks for a provider key: the question says so.
	m := filepath.Join(inside, "extension.json")
	b, _ := os.ReadFile(m)
	os.WriteFile(m, []byte(strings.Replace(string(b), "{", `{"env": ["OPENAI_API_KEY"],`, 1)), 0o644)
	outside := e.installExt(filepath.Join(e.home, "mine", "userext"), "userext")
	asked := make(chan string, 4)
	cfg := e.config()
	cfg.InitOptions = map[string]any{"ext": []string{inside, outside}}
	ed := servertest.Start(t, cfg)
	ed.Choose = func(msg string, actions []string) string {
		asked <- msg
		return actions[0] // the default (Enter): the safe answer
	}
	ed.Initialize(nil)
	waitExt(ed, "userext", "loaded")
	if q := recvQuestion(t, asked); !strings.Contains(q, `"repoext"`) || !strings.Contains(q, "inside the workspace") || !strings.Contains(q, "It asks to receive your OPENAI_API_KEY") {
		t.Fatalf("trust question: %s", q)
	}
	x := waitExt(ed, "repoext", "untrusted")
	if x.Source != "workspace" {
		t.Fatalf("status: %+v", x)
	}
	select {
	case q := <-asked:
		t.Fatalf("asked about more: %s", q)
	default:
	}
}

// A file change that disables a guard (here as the agent's bash could do
// it) is put to the user; "Keep guarding", the first answer (the one
// Enter takes), keeps it checking tool calls.
func TestGuardDisabledByFileChangeAsksEditor(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf /tmp/nothing-here"}),
		llmtest.TextReply("ok"))
	dir := filepath.Join(e.home, "dev", "lspext")
	e.installExt(dir, "lspext")
	asked := make(chan string, 2)
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Choose = func(msg string, actions []string) string {
		asked <- msg + " | " + strings.Join(actions, "/")
		return actions[0] // the default (Enter): the safe answer
	}
	ed.Initialize(nil)
	waitExt(ed, "lspext", "loaded")
	manifest := filepath.Join(dir, "extension.json")
	b, _ := os.ReadFile(manifest)
	os.WriteFile(manifest, []byte(strings.Replace(string(b), "{", "{\n  \"enabled\": false,", 1)), 0o644)
	q := recvQuestion(t, asked)
	if !strings.Contains(q, `guard extension "lspext"`) || !strings.Contains(q, "Keep guarding/Disable the guard") {
		t.Fatalf("question: %s", q)
	}
	// Until the answer is handled it guards anyway: wait for the decline.
	ed.Wait("the decline handled", func() bool {
		b, _ := os.ReadFile(filepath.Join(e.home, "logs", "ext-lspext.log"))
		return strings.Contains(string(b), "the user kept the guard on")
	})
	evs := ed.WaitDone(ed.Prompt("clean up").RunID)
	res := servertest.Find(evs, "tool_result")
	if res["is_error"] != true || !strings.Contains(servertest.ResultText(res), "lspext guard: refusing rm -rf") {
		t.Fatalf("the guard stopped guarding: %v", res)
	}
}

// recvQuestion returns the next question the editor was asked, failing
// the test if none comes.
func recvQuestion(t *testing.T, asked <-chan string) string {
	t.Helper()
	select {
	case q := <-asked:
		return q
	case <-time.After(30 * time.Second):
		t.Fatal("the editor was never asked")
		return ""
	}
}
