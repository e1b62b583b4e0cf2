//go:build unix

package acp_test

import (
	"os"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// ACP has no checkpoint method: /checkpoints, /checkpoint-diff and
// /restore are slash commands. A bash change is listed, compared and
// undone; the restore says how to undo it.
func TestCheckpointCommands(t *testing.T) {
	testenv.NeedCommand(t, "git", "checkpoints")
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": "echo changed > a.txt && echo new > b.txt"}), llmtest.TextReply("done"))
	a := e.write("a.txt", "before\n")
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	c.mustPrompt(s.SessionId, "change a.txt")
	if b, _ := os.ReadFile(a); string(b) != "changed\n" {
		t.Fatalf("a.txt after the run = %q", b)
	}

	n := len(c.agentText())
	c.mustPrompt(s.SessionId, "/checkpoints")
	list := c.agentText()[n:]
	m := regexp.MustCompile("`([0-9a-f]{12})` .*before \"change a.txt\".*2 file\\(s\\) differ now").FindStringSubmatch(list)
	if m == nil {
		t.Fatalf("/checkpoints said:\n%s", list)
	}
	id := m[1]

	n = len(c.agentText())
	c.mustPrompt(s.SessionId, "/checkpoint-diff "+id)
	if diff := c.agentText()[n:]; !strings.Contains(diff, "-before\n+changed\n") || !strings.Contains(diff, "added b.txt") {
		t.Fatalf("/checkpoint-diff said:\n%s", diff)
	}

	n = len(c.agentText())
	c.mustPrompt(s.SessionId, "/restore "+id+" code")
	said := c.agentText()[n:]
	if b, _ := os.ReadFile(a); string(b) != "before\n" || !strings.Contains(said, "Undo: `/restore ") {
		t.Fatalf("after /restore: a.txt = %q; it said:\n%s", b, said)
	}
	if _, err := os.Stat(e.root + "/b.txt"); !os.IsNotExist(err) {
		t.Fatalf("b.txt is still there: %v", err)
	}
	n = len(c.agentText())
	c.mustPrompt(s.SessionId, "/restore "+id)
	if said := c.agentText()[n:]; !strings.Contains(said, "Usage: /restore <id> code|conversation|both") {
		t.Fatalf("/restore without a mode said:\n%s", said)
	}
}
