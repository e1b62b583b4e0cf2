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

// zot/userBash under zot lsp (the chat's `!cmd` / `!!cmd`): the command
// runs as a run, its output reaches the editor (user_bash_output, then
// user_bash), and unless excluded it joins the conversation the model
// sees; a SEP extension's user_bash hook blocks rm -rf before it runs.
// An empty command is InvalidParams.
func TestUserBashUnderLSP(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("noted"))
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	dir := filepath.Join(t.TempDir(), "shellgate")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"shellgate\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"shellgate\"\nSEPEXT_OUT = %q\nSEPEXT_USERBASH = \"gate\"\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	waitExt(ed, "shellgate", "loaded")

	userBash := func(command string, exclude bool) (servertest.Event, []servertest.Event) {
		t.Helper()
		var r servertest.RunStarted
		ed.MustCall("zot/userBash", map[string]any{"command": command, "excludeFromContext": exclude}, &r)
		evs := ed.WaitDone(r.RunID)
		for _, ev := range evs {
			if ev.Type() == "user_bash" {
				return ev, evs
			}
		}
		t.Fatalf("%q: no user_bash event in %v", command, evs)
		return nil, nil
	}
	ub, evs := userBash("echo lsp-shell", false)
	if ub["output"] != "lsp-shell" || ub["exit_code"] != float64(0) || ub["message_index"] != float64(0) {
		t.Fatalf("user_bash: %v", ub)
	}
	if evs[0].Type() != "user_bash_start" || evs[0].Str("command") != "echo lsp-shell" {
		t.Fatalf("first event: %v", evs[0])
	}
	if ub, _ := userBash("echo lsp-private", true); ub["output"] != "lsp-private" || ub["message_index"] != nil {
		t.Fatalf("excluded: %v", ub)
	}
	if ub, _ := userBash("rm -rf keep", false); ub["blocked"] != true || ub["extension"] != "shellgate" {
		t.Fatalf("blocked: %v", ub)
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Fatal("the blocked command ran")
	}
	ed.WaitDone(ed.Prompt("and?").RunID)
	body := string(e.llm.Requests()[0].Raw)
	if !strings.Contains(body, "lsp-shell") || strings.Contains(body, "lsp-private") || strings.Contains(body, "rm -rf") {
		t.Fatalf("the model saw: %s", body)
	}
	if err := ed.Call("zot/userBash", map[string]any{"command": " "}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "command") {
		t.Fatalf("an empty command: %v", err)
	}
}
