package servertest_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// A SEP extension (extension.toml) under zot lsp: its tool answers and
// its tool/update progress reaches the editor's tool card; its gate asks
// through zot/ui/request (confirm) and the answer blocks or allows.
func TestSEPExtensionUnderLSP(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("gate_say", map[string]any{"phrase": "hi"}),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.TextReply("ok"))
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(e.root, "build"), 0o755)
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	dir := filepath.Join(t.TempDir(), "gate")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"gate\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"gate\"\nSEPEXT_OUT = %q\nSEPEXT_HOOK = \"gate\"\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	cfg := e.config("--ext", dir)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	var asked []map[string]any
	ed.UI = func(p map[string]any) map[string]any {
		asked = append(asked, p)
		return map[string]any{"value": !strings.Contains(jsonString(p), "keep")}
	}
	ed.Initialize(nil)
	waitExt(ed, "gate", "loaded")
	evs := ed.WaitDone(ed.Prompt("go").RunID)
	var results []servertest.Event
	var progress []string
	for _, ev := range evs {
		switch ev.Type() {
		case "tool_result":
			results = append(results, ev)
		case "tool_progress":
			progress = append(progress, ev.Str("text"))
		}
	}
	if len(results) != 3 || servertest.ResultText(results[0]) != "said: hi" {
		t.Fatalf("results: %v", results)
	}
	if len(progress) == 0 || progress[0] != "halfway (50%)" { // bash streams its own later
		t.Fatalf("progress on the tool card: %q", progress)
	}
	if results[1]["is_error"] != true || !strings.Contains(servertest.ResultText(results[1]), "the user said no") {
		t.Fatalf("refused: %v", results[1])
	}
	if results[2]["is_error"] != false || !strings.Contains(servertest.ResultText(results[2]), "removed") {
		t.Fatalf("allowed: %v", results[2])
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Fatal("the refused command ran")
	}
	if len(asked) != 2 || asked[0]["extension"] != "gate" || asked[0]["kind"] != "confirm" {
		t.Fatalf("zot/ui/request params: %v", asked)
	}
}

// zot/command/complete: an SEP extension's command completes its
// argument through command/complete; /mode completes the modes; a
// command that does not exist is InvalidParams.
func TestSEPCommandCompleteUnderLSP(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "col")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"col\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"col\"\nSEPEXT_OUT = %q\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	waitExt(ed, "col", "loaded")
	type result struct {
		Completions []struct {
			Value       string `json:"value"`
			Description string `json:"description"`
		} `json:"completions"`
	}
	var r result
	ed.MustCall("zot/command/complete", map[string]any{"name": "/col-note", "args": "gr"}, &r)
	if fmt.Sprint(r.Completions) != "[{green the colour green} {grey the colour grey}]" {
		t.Fatalf("completions: %+v", r.Completions)
	}
	r = result{}
	ed.MustCall("zot/command/complete", map[string]any{"name": "mode", "args": "r"}, &r)
	if fmt.Sprint(r.Completions) != "[{readonly }]" {
		t.Fatalf("/mode completions: %+v", r.Completions)
	}
	if err := ed.Call("zot/command/complete", map[string]any{"name": "nosuch", "args": ""}, &r); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "names no command") {
		t.Fatalf("an unknown command: %+v", err)
	}
}
