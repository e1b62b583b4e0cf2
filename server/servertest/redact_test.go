package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// A redacting extension (assistant_message intercept) in zot lsp: nothing
// the editor receives — zot/event notifications, any other notification
// or request — nor zot's stderr (its log) carries the secret or a prefix
// of it, the first prompt's answer (while the extension may still start)
// included; the chat streams the rewritten text.
func TestRedactedAnswerNeverReachesTheEditor(t *testing.T) {
	const secret = "SECRET-4242"
	reply := llmtest.Reply{Deltas: []string{"The key is SEC", "RET-42", "42, keep it."}}
	e := newEnv(t, reply, llmtest.Reply{Text: "Listing.", ToolCalls: []llmtest.ToolCall{{Name: "ls"}}}, reply)
	dir := filepath.Join(e.home, "dev", "redactor")
	os.MkdirAll(dir, 0o755)
	m, _ := json.Marshal(map[string]any{"name": "redactor", "exec": fakeExt(t),
		"args": []string{"-name", "redactor", "-intercept", "assistant_message", "-replace", secret + "=[redacted]"}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	for _, prompt := range []string{"what is the key?", "list, then tell me again"} {
		evs := ed.WaitDone(ed.Prompt(prompt).RunID)
		text := ""
		for _, ev := range evs {
			if ev.Type() == "text_delta" {
				text += ev.Str("delta")
			}
		}
		if !strings.HasSuffix(text, "The key is [redacted], keep it.") {
			t.Fatalf("streamed text %q; want the rewritten answer", text)
		}
		if am := servertest.FindLast(evs, "assistant_message"); !strings.Contains(jsonString(am), "The key is [redacted], keep it.") {
			t.Fatalf("assistant_message: %v", am)
		}
	}
	for _, m := range append(ed.Notes(""), ed.Requests("")...) {
		if strings.Contains(string(m.Params), "SEC") {
			t.Fatalf("%s shows the secret: %s", m.Method, m.Params)
		}
	}
	if strings.Contains(ed.Stderr(), "SEC") {
		t.Fatalf("zot's log shows the secret:\n%s", ed.Stderr())
	}
}
