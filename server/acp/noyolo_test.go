//go:build unix

package acp_test

import (
	"bytes"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
)

// zot acp --no-yolo asks before every tool call, in auto mode too: the
// tool and its whole arguments; "allow always" covers that tool only.
func TestNoYoloAsksBeforeEveryTool(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "a.txt"}),
		llmtest.ToolReply("ls", map[string]any{"path": "."}),
		llmtest.ToolReply("ls", map[string]any{"path": "."}),
		llmtest.TextReply("ok"))
	e.write("a.txt", "secret\n")
	p := e.start("--no-yolo")
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	answers := []string{"reject_once", "allow_always"}
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		a := answers[0]
		answers = answers[1:]
		return sdk.NewRequestPermissionOutcomeSelected(sdk.PermissionOptionId(a))
	}
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	c.mustPrompt(s.SessionId, "look around")
	c.mu.Lock()
	perms := append([]sdk.RequestPermissionRequest(nil), c.perms...)
	c.mu.Unlock()
	if len(perms) != 2 || !strings.Contains(jsonOf(perms[0].ToolCall.Content), `{\"path\":\"a.txt\"}`) || *perms[1].ToolCall.Title != "ls" {
		t.Fatalf("%d permission requests, want read then ls once: %s", len(perms), jsonOf(perms))
	}
	reqs := e.llm.Requests()
	if !bytes.Contains(reqs[1].Raw, []byte(`the user rejected this read call`)) || bytes.Contains(reqs[1].Raw, []byte("secret")) {
		t.Fatalf("the model was not told of the rejection, or the file was read: %s", reqs[1].Raw)
	}
}
