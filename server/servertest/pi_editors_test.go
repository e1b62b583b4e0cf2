package servertest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

// piEditorsExt is the editors' pi test extension and the environment that
// names the source tree's pi runtime; it skips (testenv) without node or
// the runtime's node_modules (make pi-runtime).
func piEditorsExt(t *testing.T) (string, string) {
	t.Helper()
	testenv.NeedCommand(t, "node", "pi extensions")
	_, file, _, _ := runtime.Caller(0)
	repo := filepath.Join(filepath.Dir(file), "..", "..")
	rt := filepath.Join(repo, "extensions", "pi", "runtime")
	if _, err := os.Stat(filepath.Join(rt, "node_modules", "sucrase")); err != nil {
		testenv.Skip(t, "the pi runtime's node_modules are not installed (make pi-runtime)")
	}
	return filepath.Join(repo, "extensions", "testdata", "piext", "editors.ts"), extensions.EnvPiRuntime + "=" + rt
}

// lastStatus reports whether the newest zot/ui/status of (extension, key)
// has text want.
func lastStatus(ed *servertest.Editor, ext, key string, want any) func() bool {
	return func() bool {
		notes := ed.Notes("zot/ui/status")
		for i := len(notes) - 1; i >= 0; i-- {
			var p map[string]any
			json.Unmarshal(notes[i].Params, &p)
			if p["extension"] == ext && p["key"] == key {
				return p["text"] == want
			}
		}
		return false
	}
}

// A pi extension in zot lsp: its registerShortcut is listed in
// zot/extensions (key as pi spells it, the command that runs it) and runs
// with zot/command; initializationOptions.piFlags reach its getFlag.
func TestPiShortcutAndFlagThroughTheEditor(t *testing.T) {
	ext, rt := piEditorsExt(t)
	e := newEnv(t, llmtest.TextReply("ok"))
	cfg := e.config("--ext", ext, "--flag", "greeting=from the command line", "--flag", "other=x")
	cfg.Env = append(cfg.Env, rt)
	cfg.ZotUI = true
	cfg.InitOptions = map[string]any{"piFlags": map[string]any{"greeting": "from the editor"}}
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "editors", "loaded")

	var list struct {
		Extensions []struct {
			Name      string `json:"name"`
			Shortcuts []struct {
				Key, Command, Description string
			} `json:"shortcuts"`
		} `json:"extensions"`
	}
	if err := ed.Call("zot/extensions", map[string]any{}, &list); err != nil {
		t.Fatal(err)
	}
	var shortcut string
	for _, x := range list.Extensions {
		if x.Name == "editors" && len(x.Shortcuts) == 1 && x.Shortcuts[0].Key == "ctrl+shift+y" && x.Shortcuts[0].Description == "Marks the status from a shortcut" {
			shortcut = x.Shortcuts[0].Command
		}
	}
	if shortcut == "" {
		t.Fatalf("zot/extensions lists no shortcut ctrl+shift+y for editors: %+v", list.Extensions)
	}
	var res map[string]any
	if err := ed.Call("zot/command", map[string]any{"name": shortcut}, &res); err != nil {
		t.Fatal(err)
	}
	ed.Wait("the shortcut's status", lastStatus(ed, "editors", "pi-shortcut", "shortcut ran 1"))

	// The editor's value wins over the command line's.
	if err := ed.Call("zot/command", map[string]any{"name": "piflag"}, &res); err != nil {
		t.Fatal(err)
	}
	ed.Wait("the flag's value in the status", lastStatus(ed, "editors", "pi-flag", "flag: from the editor"))
}

// A piFlags value that is neither a string, a boolean nor a number is
// refused, naming the flag.
func TestPiFlagsBadValue(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.InitOptions = map[string]any{"piFlags": map[string]any{"greeting": []any{"a"}}}
	ed := servertest.Start(t, cfg)
	err := ed.Call("initialize", map[string]any{"processId": nil, "rootUri": nil, "capabilities": map[string]any{}, "initializationOptions": cfg.InitOptions}, nil)
	if err == nil || !strings.Contains(err.Message, `"initializationOptions.piFlags.greeting" must be a string, a boolean or a number, not an array`) {
		t.Fatalf("initialize: %v", err)
	}
}

// uiKinds records the kind and default of each zot/ui/request and answers
// editor dialogs with answer.
type uiKinds struct {
	mu   sync.Mutex
	seen []string // "kind default"
}

func (u *uiKinds) answer(answer string) func(map[string]any) map[string]any {
	return func(p map[string]any) map[string]any {
		u.mu.Lock()
		u.seen = append(u.seen, fmt.Sprintf("%v %q", p["kind"], p["default"]))
		u.mu.Unlock()
		return map[string]any{"value": answer}
	}
}

func (u *uiKinds) all() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.seen)
}

// pi's chat-input members and ui.editor through an editor that has a
// chat input and a multi-line box (experimental.zot.input, editor):
// getEditorText reads what the user typed (zot/input/get, asked before
// the command runs), setEditorText and pasteToEditor reach the input
// (zot/input/set replace, then paste), and editor is a zot/ui/request of
// kind editor with the prefill as default.
func TestPiChatInputAndEditorThroughTheEditor(t *testing.T) {
	ext, rt := piEditorsExt(t)
	e := newEnv(t, llmtest.TextReply("ok"))
	cfg := e.config("--ext", ext)
	cfg.Env = append(cfg.Env, rt)
	cfg.ZotUI, cfg.ZotInput, cfg.ZotEditor = true, true, true
	ed := servertest.Start(t, cfg)
	var kinds uiKinds
	ed.UI = kinds.answer("line 1\nline 2\nline 3")
	ed.Initialize(nil)
	waitExt(ed, "editors", "loaded")

	ed.TypeInput("typed by the user")
	var res map[string]any
	ed.MustCall("zot/command", map[string]any{"name": "pidraft"}, &res)
	ed.Wait("the input the command read", lastStatus(ed, "editors", "pi-input", "input was: typed by the user"))
	ed.Wait("the chat input set, then pasted into", func() bool { return ed.Input() == "pi draft + pasted" })
	var modes []string
	for _, n := range ed.Notes("zot/input/set") {
		var p map[string]any
		json.Unmarshal(n.Params, &p)
		modes = append(modes, fmt.Sprintf("%v %v %q", p["extension"], p["mode"], p["text"]))
	}
	if want := []string{`editors replace "pi draft"`, `editors paste " + pasted"`}; !slices.Equal(modes, want) {
		t.Fatalf("zot/input/set: %q, want %q", modes, want)
	}
	if len(ed.Requests("zot/input/get")) != 1 {
		t.Fatalf("zot/input/get asked %d times, want once (before the command)", len(ed.Requests("zot/input/get")))
	}

	ed.MustCall("zot/command", map[string]any{"name": "pieditor"}, &res)
	ed.Wait("the editor's text in the status", lastStatus(ed, "editors", "pi-editor", "editor: line 1 | line 2 | line 3"))
	if got := kinds.all(); !slices.Equal(got, []string{`editor "line 1\nline 2"`}) {
		t.Fatalf("the dialog asked: %q", got)
	}
}

// An editor that announces neither (an older client): ui.editor is asked
// as a one-line input prefilled with its text, zot/input/* are never
// sent, and getEditorText answers what the extension set.
func TestPiChatInputAndEditorOlderClient(t *testing.T) {
	ext, rt := piEditorsExt(t)
	e := newEnv(t, llmtest.TextReply("ok"))
	cfg := e.config("--ext", ext)
	cfg.Env = append(cfg.Env, rt)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	var kinds uiKinds
	ed.UI = kinds.answer("one line")
	ed.Initialize(nil)
	waitExt(ed, "editors", "loaded")

	var res map[string]any
	ed.MustCall("zot/command", map[string]any{"name": "pieditor"}, &res)
	ed.Wait("the input's answer in the status", lastStatus(ed, "editors", "pi-editor", "editor: one line"))
	if got := kinds.all(); !slices.Equal(got, []string{`input "line 1\nline 2"`}) {
		t.Fatalf("the dialog asked: %q", got)
	}

	ed.MustCall("zot/command", map[string]any{"name": "pidraft"}, &res)
	ed.Wait("the first read", lastStatus(ed, "editors", "pi-input", "input was: "))
	ed.MustCall("zot/command", map[string]any{"name": "pidraft"}, &res)
	ed.Wait("what the extension set, read back", lastStatus(ed, "editors", "pi-input", "input was: pi draft + pasted"))
	if n := len(ed.Notes("zot/input/set")) + len(ed.Requests("zot/input/get")); n != 0 {
		t.Fatalf("%d zot/input/* sent to a client without experimental.zot.input", n)
	}
}
