package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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
