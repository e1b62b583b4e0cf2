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

// pi's session tree under zot lsp (extensions/testdata/piext/tree.ts):
// the editor's zot/session/fork goes through the pi extension's
// session_before_fork — its cancel refuses the fork and the session stays
// — and an allowed fork reaches its session_fork with pi's fields; the
// extension's own ctx.navigateTree moves the editor's conversation
// (zot/session/changed with the prompt as the editor text).
func TestLSPPiSessionTree(t *testing.T) {
	rt, examples := piPaths(t)
	e := newEnv(t, llmtest.TextReply("one"), llmtest.TextReply("two"))
	out := filepath.Join(t.TempDir(), "tree.ndjson")
	cfg := e.config("--ext", filepath.Join(examples, "..", "tree.ts"))
	// Sessions on: a fork branches a session file.
	args := cfg.Args[:0]
	for _, a := range cfg.Args {
		if a != "--no-session" {
			args = append(args, a)
		}
	}
	cfg.Args = args
	cfg.Env = append(cfg.Env, extensions.EnvPiRuntime+"="+rt, "PIEXT_OUT="+out)
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "tree", "loaded")
	// noted waits for the extension's line of that kind holding every has.
	noted := func(what string, has ...string) map[string]any {
		var got map[string]any
		ed.Wait("the extension noting "+what+" "+strings.Join(has, " "), func() bool {
			b, _ := os.ReadFile(out)
		lines:
			for _, l := range strings.Split(string(b), "\n") {
				var m map[string]any
				if json.Unmarshal([]byte(l), &m) != nil || m["what"] != what {
					continue
				}
				for _, h := range has {
					if !strings.Contains(l, h) {
						continue lines
					}
				}
				got = m
				return true
			}
			return false
		})
		return got
	}
	command := func(name, args string) {
		t.Helper()
		ed.MustCall("zot/command", map[string]any{"name": name, "args": args}, nil)
	}
	ed.WaitDone(ed.Prompt("first").RunID)
	ed.WaitDone(ed.Prompt("second").RunID)
	var st struct {
		SessionID string `json:"session_id"`
	}
	ed.MustCall("zot/state", nil, &st)
	orig := st.SessionID

	// Refused by the extension: the editor's fork fails, naming it.
	command("t-refuse", "on")
	err := ed.Call("zot/session/fork", map[string]any{"messageIndex": 2}, nil)
	if err == nil || !strings.Contains(err.Message, `cancelled by extension "tree"`) {
		t.Fatalf("a fork the extension refused: %v", err)
	}
	noted("session_before_fork", `"entryId":"`+orig+`:2"`, `"refuse":true`)
	ed.MustCall("zot/state", nil, &st)
	if st.SessionID != orig {
		t.Fatalf("a refused fork moved the session to %s", st.SessionID)
	}

	// Allowed: session_fork with pi's fields.
	command("t-refuse", "off")
	var fork struct {
		SessionID string `json:"sessionId"`
	}
	ed.MustCall("zot/session/fork", map[string]any{"messageIndex": 2}, &fork)
	ev := noted("session_fork", `"entryId":"`+orig+`:2"`)
	if prev, _ := ev["previousSessionFile"].(string); prev == "" || ev["sessionId"] != fork.SessionID {
		t.Fatalf("session_fork: %v (the fork is %s)", ev, fork.SessionID)
	}

	// The extension navigates: back to the first prompt, which the
	// editor gets as its input's text.
	command("t-nav", "0")
	noted("session_before_tree", `"targetId":"`+fork.SessionID+`:0"`, `"oldLeafId":"`+fork.SessionID+`:1"`)
	noted("session_tree", `"oldLeafId":"`+fork.SessionID+`:1"`)
	ed.WaitNote("zot/session/changed", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"editorText":"first"`)
	})

	// ctx.newSession: the editor is told to draw the new, empty session.
	command("t-new", "")
	n := ed.WaitNote("zot/session/changed", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"reason":"new"`)
	})
	var changed struct {
		SessionID    string `json:"sessionId"`
		MessageCount int    `json:"messageCount"`
	}
	json.Unmarshal(n.Params, &changed)
	ed.MustCall("zot/state", nil, &st)
	if changed.MessageCount != 0 || changed.SessionID == "" || changed.SessionID == fork.SessionID || st.SessionID != changed.SessionID {
		t.Fatalf("zot/session/changed after ctx.newSession: %s (zot/state: %s)", n.Params, st.SessionID)
	}
	noted("session_switch", `"reason":"new"`)

	// session_before_switch refuses the editor's new session and resume.
	command("t-refuse", "on")
	if err := ed.Call("zot/session/new", nil, nil); err == nil || !strings.Contains(err.Message, `cancelled by extension "tree"`) {
		t.Fatalf("zot/session/new refused by the extension: %v", err)
	}
	if err := ed.Call("zot/session/resume", map[string]any{"id": orig}, nil); err == nil || !strings.Contains(err.Message, `cancelled by extension "tree"`) {
		t.Fatalf("zot/session/resume refused by the extension: %v", err)
	}
	noted("session_before_switch", `"reason":"resume"`, `"targetSessionId":"`+orig+`"`, `"refuse":true`)
	ed.MustCall("zot/state", nil, &st)
	if st.SessionID != changed.SessionID {
		t.Fatalf("a refused switch moved the session to %s", st.SessionID)
	}
}

// pi's todo example (our re-write) keeps its list in its tool results'
// details and rebuilds it on session_fork from the session manager's
// branch: after the editor forks at the second prompt, /todos lists only
// what the first prompt added, as under pi's /fork.
func TestLSPPiTodoFollowsFork(t *testing.T) {
	rt, examples := piPaths(t)
	e := newEnv(t,
		llmtest.ToolReply("todo", map[string]any{"action": "add", "text": "milk"}), llmtest.TextReply("added"),
		llmtest.ToolReply("todo", map[string]any{"action": "add", "text": "eggs"}), llmtest.TextReply("added again"))
	cfg := e.config("--ext", filepath.Join(examples, "todo.ts"))
	args := cfg.Args[:0]
	for _, a := range cfg.Args {
		if a != "--no-session" {
			args = append(args, a)
		}
	}
	cfg.Args = args
	cfg.Env = append(cfg.Env, extensions.EnvPiRuntime+"="+rt)
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	waitExt(ed, "todo", "loaded")
	t.Cleanup(func() { // the extension's log, for a failure
		if b, err := os.ReadFile(filepath.Join(e.home, "logs", "ext-todo.log")); err == nil && t.Failed() {
			t.Logf("ext-todo.log:\n%s", b)
		}
	})
	ed.WaitDone(ed.Prompt("add milk").RunID)
	ed.WaitDone(ed.Prompt("add eggs").RunID)
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	second := -1
	for i, m := range msgs.Messages {
		if m["role"] == "user" && strings.Contains(jsonString(m), "add eggs") {
			second = i
		}
	}
	if second <= 0 {
		t.Fatalf("no second prompt in %v", msgs.Messages)
	}
	// todos runs /todos and returns the zot/notify it causes.
	seen := 0
	todos := func() string {
		t.Helper()
		ed.MustCall("zot/command", map[string]any{"name": "todos"}, nil)
		var got string
		ed.Wait("a new /todos answer", func() bool {
			notes := ed.Notes("zot/notify")
			var list []string
			for _, n := range notes {
				if strings.Contains(string(n.Params), "#1: milk") {
					list = append(list, string(n.Params))
				}
			}
			if len(list) > seen {
				got, seen = list[seen], seen+1
				return true
			}
			return false
		})
		return got
	}
	if got := todos(); !strings.Contains(got, "#2: eggs") {
		t.Fatalf("/todos before the fork: %s", got)
	}
	ed.MustCall("zot/session/fork", map[string]any{"messageIndex": second}, nil)
	if got := todos(); strings.Contains(got, "eggs") {
		t.Fatalf("/todos after forking before eggs was added: %s", got)
	}
}
