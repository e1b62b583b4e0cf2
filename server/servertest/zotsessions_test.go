package servertest_test

import (
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session/sessiontest"
	"github.com/zot-editors/zot/server/servertest"
)

// zot/sessions lists a zot user's terminal sessions and our earlier
// layout's, and zot/session/resume continues the terminal one.
func TestSessionsListZotAndLegacy(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("continued in the editor"))
	sessiontest.WriteZotFixture(t, e.home, e.root)
	sessiontest.WriteLegacyFixture(t, e.home, e.root)
	cfg := e.config()
	cfg.Args = []string{"--api-key", "k", "--base-url", e.llm.URL()} // sessions on
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)

	var list struct {
		Sessions []struct {
			ID       string `json:"id"`
			Title    string `json:"title"`
			Messages int    `json:"messages"`
		} `json:"sessions"`
	}
	ed.MustCall("zot/sessions", nil, &list)
	found := map[string]string{}
	for _, s := range list.Sessions {
		found[s.ID] = s.Title
	}
	if found[sessiontest.ZotID] != sessiontest.ZotPrompt || found[sessiontest.LegacyID] != "legacy question" {
		t.Fatalf("zot/sessions: %+v", list)
	}

	var res struct {
		SessionID    string `json:"sessionId"`
		MessageCount int    `json:"messageCount"`
	}
	ed.MustCall("zot/session/resume", map[string]any{"id": sessiontest.ZotID}, &res)
	if res.SessionID != sessiontest.ZotID || res.MessageCount != 4 {
		t.Fatalf("zot/session/resume: %+v", res)
	}
	ed.WaitDone(ed.Prompt("and in the editor?").RunID)
	body := jsonString(e.llm.Requests()[0].Body)
	for _, want := range []string{sessiontest.ZotPrompt, sessiontest.PNG, sessiontest.ZotToolCallID, sessiontest.ZotToolResult, sessiontest.ZotAnswer, "and in the editor?"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the model did not get %q: %s", want, body)
		}
	}
}
