package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/server/servertest"
)

// pi's ctx.compact, ctx.switchSession and ctx.shutdown under zot lsp
// (extensions/testdata/piext/lifecycle.ts): the compaction is a run the
// editor sees and onComplete gets its summary; switchSession resumes a
// session file and the editor is told to draw it (zot/session/changed
// reason resume); shutdown does not end the editor's server — the user is
// warned, naming the extension, and the server answers on.
func TestLSPPiSessionLifecycle(t *testing.T) {
	rt, examples := piPaths(t)
	e := newEnv(t, llmtest.TextReply("hi there"), llmtest.TextReply("SUMMARY of the greeting"))
	cfg := e.config("--ext", filepath.Join(examples, "..", "lifecycle.ts"))
	args := cfg.Args[:0]
	for _, a := range cfg.Args {
		if a != "--no-session" { // sessions on: a switch resumes a file
			args = append(args, a)
		}
	}
	cfg.Args = args
	cfg.Env = append(cfg.Env, extensions.EnvPiRuntime+"="+rt)
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "lifecycle", "loaded")
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(e.home, "logs", "ext-lifecycle.log")); err == nil && t.Failed() {
			t.Logf("ext-lifecycle.log:\n%s", b)
		}
	})
	command := func(name, args string) {
		t.Helper()
		ed.MustCall("zot/command", map[string]any{"name": name, "args": args}, nil)
	}
	notified := func(has string) string {
		t.Helper()
		var got string
		ed.Wait("zot/notify "+has, func() bool {
			for _, n := range ed.Notes("zot/notify") {
				if strings.Contains(string(n.Params), has) {
					got = string(n.Params)
					return true
				}
			}
			return false
		})
		return got
	}
	ed.WaitDone(ed.Prompt("hello").RunID)

	command("lc-compact", "")
	notified("lc compacted: SUMMARY of the greeting")
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	if b, _ := json.Marshal(msgs); !strings.Contains(string(b), "SUMMARY of the greeting") {
		t.Fatalf("the conversation after ctx.compact: %s", b)
	}

	// A new session, then the extension switches back to the first.
	var sessions struct {
		Sessions []struct{ ID, Path string } `json:"sessions"`
		Current  string                      `json:"current"`
	}
	ed.MustCall("zot/sessions", nil, &sessions)
	var orig string
	for _, s := range sessions.Sessions {
		if s.ID == sessions.Current {
			orig = s.Path
		}
	}
	if orig == "" {
		t.Fatalf("no file for the current session: %+v", sessions)
	}
	ed.MustCall("zot/session/new", nil, nil)
	command("lc-switch", orig)
	n := ed.WaitNote("zot/session/changed", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"reason":"resume"`)
	})
	if !strings.Contains(string(n.Params), `"sessionId":"`+sessions.Current+`"`) {
		t.Fatalf("zot/session/changed after ctx.switchSession: %s (want %s)", n.Params, sessions.Current)
	}
	notified("lc switch: cancelled=false")

	command("lc-shutdown", "")
	if got := notified("asked zot to shut down"); !strings.Contains(got, `"extension":"lifecycle"`) || !strings.Contains(got, `"level":"warn"`) {
		t.Fatalf("the shutdown warning: %s", got)
	}
	var st struct {
		SessionID string `json:"session_id"`
	}
	ed.MustCall("zot/state", nil, &st) // still serving
	if st.SessionID != sessions.Current {
		t.Fatalf("the session after ctx.shutdown: %s", st.SessionID)
	}
}
