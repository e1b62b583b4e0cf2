//go:build unix

package acp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// A redacting extension (assistant_message intercept) under zot acp:
// none of the updates the ACP client receives, nor zot's stderr, carries
// the secret or a prefix of it (the first prompt's answer, while the
// extension may still start, included); the client's message chunks say
// the rewritten text.
func TestRedactedAnswerNeverReachesTheClient(t *testing.T) {
	const secret = "SECRET-4242"
	reply := llmtest.Reply{Deltas: []string{"The key is SEC", "RET-42", "42, keep it."}}
	e := newEnv(t, reply, llmtest.Reply{Text: "Listing.", ToolCalls: []llmtest.ToolCall{{Name: "ls"}}}, reply)
	fake := testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/fakeext")
	dir := filepath.Join(t.TempDir(), "redactor")
	os.MkdirAll(dir, 0o755)
	m, _ := json.Marshal(map[string]any{"name": "redactor", "exec": fake,
		"args": []string{"-name", "redactor", "-intercept", "assistant_message", "-replace", secret + "=[redacted]"}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.start("--ext", dir)
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	c.mustPrompt(s.SessionId, "what is the key?")
	c.mustPrompt(s.SessionId, "list, then tell me again")
	if got := strings.Count(c.agentText(), "The key is [redacted], keep it."); got != 2 {
		t.Fatalf("the rewritten answer shows %d times; want 2: %q", got, c.agentText())
	}
	if strings.Contains(c.dump(), "SEC") {
		t.Fatalf("an update shows the secret: %s", c.dump())
	}
	c.mu.Lock()
	perms, _ := json.Marshal(c.perms)
	c.mu.Unlock()
	if strings.Contains(string(perms), "SEC") {
		t.Fatalf("a permission request shows the secret: %s", perms)
	}
	if strings.Contains(p.stderr.String(), "SEC") {
		t.Fatalf("zot's log shows the secret:\n%s", p.stderr.String())
	}
}
