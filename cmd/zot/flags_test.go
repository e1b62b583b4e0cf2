package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session/sessiontest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
)

// requestText is the JSON body of the i-th request the scripted model got.
func requestText(t *testing.T, e *env, i int) string {
	t.Helper()
	reqs := e.llm.Requests()
	if len(reqs) <= i {
		t.Fatalf("the model got %d requests, want more than %d", len(reqs), i)
	}
	b, _ := json.Marshal(reqs[i].Body)
	return string(b)
}

func TestContinueAndSessionPathResume(t *testing.T) {
	e := newEnv(t,
		llmtest.TextReply("noted: the password is swordfish"),
		llmtest.TextReply("continued"),
		llmtest.TextReply("resumed by path"),
	)
	if out, errOut, code := e.runZot(e.args("-p", "remember swordfish")...); code != 0 {
		t.Fatalf("first run: exit %d out %q err %s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}

	if out, errOut, code := e.runZot(e.args("--continue", "-p", "what was it?")...); code != 0 || strings.TrimSpace(out) != "continued" {
		t.Fatalf("--continue: exit %d out %q err %s", code, out, errOut)
	}
	if body := requestText(t, e, 1); !strings.Contains(body, "remember swordfish") || !strings.Contains(body, "noted: the password is swordfish") {
		t.Fatalf("--continue did not send the earlier conversation: %s", body)
	}

	// --session PATH works from another directory, whatever the workspace.
	other := t.TempDir()
	args := []string{"--api-key", "k", "--base-url", e.llm.URL(), "--cwd", other, "--session", files[0], "-p", "and now?"}
	if out, errOut, code := e.runZot(args...); code != 0 || strings.TrimSpace(out) != "resumed by path" {
		t.Fatalf("--session: exit %d out %q err %s", code, out, errOut)
	}
	body := requestText(t, e, 2)
	for _, want := range []string{"remember swordfish", "noted: the password is swordfish", "what was it?", "continued", "and now?"} {
		if !strings.Contains(body, want) {
			t.Fatalf("--session request lacks %q: %s", want, body)
		}
	}

	_, errOut, code := e.runZot(e.args("--session", filepath.Join(e.home, "nope.jsonl"), "-p", "x")...)
	if code != 1 || !strings.Contains(errOut, "--session") || !strings.Contains(errOut, "nope.jsonl") {
		t.Fatalf("missing --session file: exit %d stderr %q", code, errOut)
	}
}

func TestAppendSystemPromptRepeatable(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	if out, errOut, code := e.runZot(e.args("--no-session", "--append-system-prompt", "RULE-ONE", "--append-system-prompt", "RULE-TWO", "-p", "hi")...); code != 0 {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	body := requestText(t, e, 0)
	if !strings.Contains(body, `RULE-ONE\n\nRULE-TWO`) {
		t.Fatalf("system prompt lacks both appended paragraphs: %s", body)
	}
}

func TestNoExtLoadsNoExtension(t *testing.T) {
	guard := examplestest.Build(t, "guard")
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf victim && echo deleted"}),
		llmtest.TextReply("done"),
	)
	e.write("victim/keep.txt", "precious\n")
	out, errOut, code := e.runZot(e.args("--no-session", "-p", "clean up", "--ext", guard, "--no-ext")...)
	if code != 0 || !strings.Contains(out, "done") {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "victim")); !os.IsNotExist(err) {
		t.Fatalf("the guard extension ran despite --no-ext (victim still there: %v)", err)
	}
}

func TestVersionFlags(t *testing.T) {
	e := newEnv(t)
	for _, f := range []string{"-v", "--version", "version"} {
		out, errOut, code := e.runZot(f)
		if code != 0 || !strings.HasPrefix(out, "zot ") || len(strings.TrimSpace(out)) <= len("zot ") {
			t.Errorf("%s: exit %d out %q err %q", f, code, out, errOut)
		}
	}
}

func TestUnknownFlagNamesClosest(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--modle", "x", "-p", "hi"}, "unknown flag --modle (did you mean --model?)"},
		{[]string{"--contnue"}, "unknown flag --contnue (did you mean --continue?)"},
		{[]string{"rpc", "--no-extt"}, "unknown flag --no-extt (did you mean --no-ext?)"},
		{[]string{"lsp", "--sesion", "x"}, "unknown flag --sesion (did you mean --session?)"},
	} {
		_, errOut, code := e.runZot(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d stderr %q, want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}

// Every time a session file holds is real (no zero time), and every line
// is one zot reads.
func TestSessionLinesCarryTheirTime(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("ls", map[string]any{"path": "."}),
		llmtest.TextReply("listed"),
	)
	if out, errOut, code := e.runZot(e.args("-p", "list")...); code != 0 {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files: %v", files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Messages) != 4 || len(f.Usages) != 2 {
		t.Fatalf("want 4 messages and 2 usage lines:\n%s", data)
	}
	recent := func(what string, at time.Time) {
		if time.Since(at) > time.Hour || time.Until(at) > time.Minute {
			t.Errorf("%s at %v", what, at)
		}
	}
	recent("meta.started", f.Meta.Started)
	for i, m := range f.Messages {
		recent(fmt.Sprintf("message %d", i), m.Time)
	}
}

// -r without an id and without a terminal lists the workspace's sessions,
// newest first, and exits 2; -r ID resumes one of them.
func TestResumeWithoutIDListsSessions(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("one"), llmtest.TextReply("two"), llmtest.TextReply("three"))
	for _, p := range []string{"older prompt", "newer prompt"} {
		if out, errOut, code := e.runZot(e.args("-p", p)...); code != 0 {
			t.Fatalf("exit %d out %q err %s", code, out, errOut)
		}
	}
	_, errOut, code := e.runZot(e.args("-r", "-p", "x")...)
	older, newer := strings.Index(errOut, "older prompt"), strings.Index(errOut, "newer prompt")
	if code != 2 || older < 0 || newer < 0 || newer > older || !strings.Contains(errOut, "needs a terminal") {
		t.Fatalf("exit %d stderr %q; want exit 2, the newer session listed first, and why", code, errOut)
	}
	if e.llm.Served() != 2 {
		t.Fatalf("the model was called without a session picked (%d calls)", e.llm.Served())
	}
	// The listed id resumes that session.
	var id string
	for _, line := range strings.Split(errOut, "\n") {
		if strings.Contains(line, "older prompt") {
			id = strings.Fields(line)[3]
		}
	}
	if out, errOut, code := e.runZot(e.args("-r", id, "-p", "again")...); code != 0 || strings.TrimSpace(out) != "three" {
		t.Fatalf("-r %s: exit %d out %q err %s", id, code, out, errOut)
	}
	if body := requestText(t, e, 2); !strings.Contains(body, "older prompt") || strings.Contains(body, "newer prompt") {
		t.Fatalf("-r %s sent the wrong history: %s", id, body)
	}
}
