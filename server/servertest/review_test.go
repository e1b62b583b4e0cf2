package servertest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

func askMode(review bool) func(*servertest.Config) {
	return func(c *servertest.Config) {
		c.ReviewEdit = review
		c.InitOptions = map[string]any{"permissionMode": "ask"}
	}
}

// In ask mode the user reviews the edit and may change it: what they
// accept is what is applied and what the model is told.
func TestReviewEditUserChangesProposal(t *testing.T) {
	e := newEnv(t, editReply("a.go", "return 1", "return 2"), llmtest.TextReply("ok"))
	ed := e.start(askMode(true))
	ed.WriteFile("a.go", "func f() int {\n\treturn 1\n}\n")
	ed.Open("a.go", "func f() int {\n\treturn 1\n}\n")
	var got servertest.ReviewEdit
	ed.Review = func(p servertest.ReviewEdit) servertest.ReviewResult {
		got = p
		return servertest.ReviewResult{Decision: "accept", Text: ptr("func f() int {\n\treturn 42\n}\n")}
	}
	evs := ed.WaitDone(ed.Prompt("change it").RunID)
	call := servertest.Find(evs, "tool_call")
	if got.URI != ed.URI("a.go") || got.OldText != "func f() int {\n\treturn 1\n}\n" || got.NewText != "func f() int {\n\treturn 2\n}\n" ||
		got.ToolCallID != call.Str("id") || got.Tool != "edit" {
		t.Fatalf("zot/reviewEdit params: %+v (tool call %v)", got, call)
	}
	if buf, _ := ed.Buffer("a.go"); buf != "func f() int {\n\treturn 42\n}\n" {
		t.Fatalf("buffer %q", buf)
	}
	tr := servertest.Find(evs, "tool_result")
	if txt := servertest.ResultText(tr); tr["is_error"] != false || !strings.Contains(txt, "edited it before accepting") || !strings.Contains(txt, "42") {
		t.Fatalf("the model was not told: %v", tr)
	}
}

func TestReviewEditRejected(t *testing.T) {
	e := newEnv(t, editReply("a.txt", "x", "y"), llmtest.TextReply("ok"))
	ed := e.start(askMode(true))
	ed.WriteFile("a.txt", "x\n")
	ed.Review = func(servertest.ReviewEdit) servertest.ReviewResult {
		return servertest.ReviewResult{Decision: "reject", Message: "not like that"}
	}
	evs := ed.WaitDone(ed.Prompt("change it").RunID)
	tr := servertest.Find(evs, "tool_result")
	if txt := servertest.ResultText(tr); tr["is_error"] != true || !strings.Contains(txt, "rejected") || !strings.Contains(txt, "reject") || !strings.Contains(txt, "not like that") {
		t.Fatalf("tool_result: %v", tr)
	}
	if ed.ReadFile("a.txt") != "x\n" || len(ed.ApplyEdits()) != 0 {
		t.Fatalf("a rejected edit was applied")
	}
}

// Clients without experimental.zot.reviewEdit are asked with
// window/showMessageRequest.
func TestReviewFallsBackToShowMessageRequest(t *testing.T) {
	e := newEnv(t, editReply("a.txt", "x", "y"), editReply("a.txt", "y", "z"), llmtest.TextReply("ok"))
	ed := e.start(askMode(false))
	ed.WriteFile("a.txt", "x\n")
	var mu sync.Mutex
	var asked []string
	n := 0
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg+" "+strings.Join(actions, "/"))
		n++
		if n == 1 {
			return "Apply"
		}
		return "Reject"
	}
	evs := ed.WaitDone(ed.Prompt("change it twice").RunID)
	if len(asked) != 2 || !strings.Contains(asked[0], "a.txt") || !strings.Contains(asked[0], "Apply/Reject") {
		t.Fatalf("asked: %q", asked)
	}
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if results[0]["is_error"] != false || results[1]["is_error"] != true || !strings.Contains(servertest.ResultText(results[1]), `"Reject"`) {
		t.Fatalf("results: %v", results)
	}
	if buf, _ := ed.Buffer("a.txt"); buf != "y\n" {
		t.Fatalf("buffer %q", buf)
	}
}

// bash in ask mode: "Allow once", "Always allow for this session", "Deny".
func TestBashApproval(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "echo one"}),
		llmtest.ToolReply("bash", map[string]any{"command": "echo two"}),
		llmtest.ToolReply("bash", map[string]any{"command": "echo three"}),
		llmtest.ToolReply("bash", map[string]any{"command": "echo four"}),
		llmtest.TextReply("ok"))
	ed := e.start(askMode(true))
	answers := []string{"Deny", "Allow once", "Always allow for this session"}
	var mu sync.Mutex
	var asked [][]string
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, append([]string{msg}, actions...))
		a := answers[0]
		answers = answers[1:]
		return a
	}
	evs := ed.WaitDone(ed.Prompt("run things").RunID)
	if len(asked) != 3 {
		t.Fatalf("asked %d times, want 3 (the fourth is always allowed): %q", len(asked), asked)
	}
	if strings.Join(asked[0][1:], "|") != "Deny|Allow once|Always allow for this session" || !strings.Contains(asked[0][0], "echo one") {
		t.Fatalf("dialog: %q", asked[0])
	}
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if results[0]["is_error"] != true || !strings.Contains(servertest.ResultText(results[0]), `"Deny"`) {
		t.Fatalf("denied command: %v", results[0])
	}
	for i, want := range []string{"two", "three", "four"} {
		if r := results[i+1]; r["is_error"] != false || !strings.Contains(servertest.ResultText(r), want) {
			t.Fatalf("command %d: %v", i+2, r)
		}
	}
	// Each tool call reached the editor before the dialog about it.
	dialogs := ed.Requests("window/showMessageRequest")
	var calls []int
	for _, m := range ed.Notes("zot/event") {
		if strings.Contains(string(m.Params), `"type":"tool_call"`) {
			calls = append(calls, m.Seq)
		}
	}
	for i, d := range dialogs {
		if calls[i] > d.Seq {
			t.Fatalf("dialog %d arrived before its tool_call", i)
		}
	}
}

// "Always allow for this session" ends with the session: after /new (the
// chat's command, as zot/session/new) bash asks again.
func TestAlwaysAllowEndsWithTheSession(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "echo one"}), llmtest.TextReply("ok"),
		llmtest.ToolReply("bash", map[string]any{"command": "echo two"}), llmtest.TextReply("ok"))
	ed := e.start(askMode(true))
	answers := []string{"Always allow for this session", "Allow once"}
	var mu sync.Mutex
	var asked []string
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg)
		a := answers[0]
		answers = answers[1:]
		return a
	}
	ed.WaitDone(ed.Prompt("run one").RunID)
	var r commandResult
	ed.MustCall("zot/command", map[string]any{"name": "new"}, &r)
	ed.WaitDone(ed.Prompt("run two").RunID)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || !strings.Contains(asked[1], "echo two") {
		t.Fatalf("after /new the command was not asked about (asked %d times): %q", len(asked), asked)
	}
}

func TestReadonlyMode(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "x.txt", "content": "no"}),
		llmtest.ToolReply("bash", map[string]any{"command": "touch y"}),
		llmtest.ToolReply("read", map[string]any{"path": "r.txt"}),
		llmtest.TextReply("ok"))
	ed := e.start(func(c *servertest.Config) { c.InitOptions = map[string]any{"permissionMode": "readonly"} })
	ed.WriteFile("r.txt", "readable\n")
	evs := ed.WaitDone(ed.Prompt("try").RunID)
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if results[0]["is_error"] != true || !strings.Contains(servertest.ResultText(results[0]), "readonly") ||
		results[1]["is_error"] != true || results[2]["is_error"] != false {
		t.Fatalf("results: %v", results)
	}
	for _, name := range []string{"x.txt", "y"} {
		if _, err := os.Stat(ed.Path(name)); !os.IsNotExist(err) {
			t.Fatalf("readonly mode wrote %s (%v)", name, err)
		}
	}
}

// The permission mode can be switched at run time.
func TestSetPermissionMode(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("write", map[string]any{"path": "x.txt", "content": "yes\n"}), llmtest.TextReply("ok"))
	ed := e.start(func(c *servertest.Config) { c.InitOptions = map[string]any{"permissionMode": "readonly"} })
	var res map[string]string
	ed.MustCall("zot/setPermissionMode", map[string]any{"mode": "auto"}, &res)
	if res["mode"] != "auto" {
		t.Fatalf("zot/setPermissionMode: %v", res)
	}
	ed.WaitDone(ed.Prompt("write").RunID)
	if ed.ReadFile("x.txt") != "yes\n" {
		t.Fatalf("write in auto mode did not land: %q", ed.ReadFile("x.txt"))
	}
	if err := ed.Call("zot/setPermissionMode", map[string]any{"mode": "sometimes"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, `"mode"`) {
		t.Fatalf("bad mode: %v", err)
	}
}

// Aborting while a review is open ends the run without a change, and the
// server cancels its zot/reviewEdit request so the editor can close it.
func TestAbortDuringReviewCancelsTheRequest(t *testing.T) {
	e := newEnv(t, editReply("a.txt", "x", "y"), llmtest.TextReply("never"))
	ed := e.start(askMode(true))
	ed.WriteFile("a.txt", "x\n")
	release := make(chan struct{})
	defer close(release)
	ed.Review = func(servertest.ReviewEdit) servertest.ReviewResult {
		<-release // the user never decides
		return servertest.ReviewResult{Decision: "accept"}
	}
	run := ed.Prompt("change it").RunID
	ed.Wait("the review request", func() bool { return len(ed.Requests("zot/reviewEdit")) == 1 })
	ed.MustCall("zot/abort", nil, nil)
	evs := ed.WaitDone(run)
	// turn_end tool_use closed the model call; the abort during the tool
	// ends the run with turn_end aborted.
	if end := servertest.FindLast(evs, "turn_end"); end.Str("stop") != "aborted" {
		t.Fatalf("turn_end: %v (%s)", end, servertest.Types(evs))
	}
	reqID := string(ed.Requests("zot/reviewEdit")[0].ID)
	ed.WaitNote("$/cancelRequest", func(p json.RawMessage) bool {
		return strings.Contains(string(p), `"id":`+reqID)
	})
	if ed.ReadFile("a.txt") != "x\n" || len(ed.ApplyEdits()) != 0 {
		t.Fatalf("an edit under review was applied after the abort")
	}
}

// bash's description says what the command sees: files zot changed are
// saved first, the user's own unsaved typing is not. The run shows both.
func TestBashDescriptionMatchesWhatIsSaved(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("edit", map[string]any{"path": "mine.txt", "edits": []map[string]string{{"oldText": "old", "newText": "agent"}}}),
		llmtest.ToolReply("bash", map[string]any{"command": "cat mine.txt theirs.txt"}),
		llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.WriteFile("mine.txt", "old\n")
	ed.WriteFile("theirs.txt", "saved by the user\n")
	ed.Open("mine.txt", "old\n")
	ed.Open("theirs.txt", "saved by the user\n")
	ed.SetText("theirs.txt", "typed, not saved\n")
	evs := ed.WaitDone(ed.Prompt("edit and look").RunID)
	var out string
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			out = servertest.ResultText(ev)
		}
	}
	if out != "agent\nsaved by the user" {
		t.Fatalf("bash saw %q", out)
	}
	body, _ := json.Marshal(e.llm.Requests()[0].Body)
	desc := string(body)
	if strings.Contains(desc, "Unsaved editor buffers are saved first") ||
		!strings.Contains(desc, "changes the user typed in their editor and has not saved are not written") {
		t.Fatalf("the bash description does not say what is saved: %s", desc)
	}
}

// Even in auto mode a write outside the workspace asks the user, naming
// the whole resolved path; a directory in initializationOptions.addDirs
// needs no question.
func TestWriteOutsideWorkspaceAsks(t *testing.T) {
	outside, allowed := t.TempDir(), t.TempDir()
	if r, err := filepath.EvalSymlinks(outside); err == nil {
		outside = r
	}
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": filepath.Join(outside, "denied.txt"), "content": "no\n"}),
		llmtest.ToolReply("write", map[string]any{"path": "link/allowed.txt", "content": "yes\n"}),
		llmtest.ToolReply("write", map[string]any{"path": filepath.Join(allowed, "free.txt"), "content": "free\n"}),
		llmtest.TextReply("ok"))
	os.Symlink(outside, filepath.Join(e.root, "link"))
	var mu sync.Mutex
	var asked []string
	answers := []string{"Deny", "Allow this write"}
	ed := e.start(func(c *servertest.Config) {
		c.InitOptions = map[string]any{"permissionMode": "auto", "addDirs": []string{allowed}}
	})
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg+" ["+strings.Join(actions, "|")+"]")
		a := answers[0]
		answers = answers[1:]
		return a
	}
	evs := ed.WaitDone(ed.Prompt("write outside").RunID)
	if len(asked) != 2 {
		t.Fatalf("asked %d times: %q", len(asked), asked)
	}
	for i, name := range []string{"denied.txt", "allowed.txt"} {
		content := []string{"no\n", "yes\n"}[i] // the whole change is shown
		if !strings.Contains(asked[i], "outside the workspace") || !strings.Contains(asked[i], filepath.Join(outside, name)+"\n\n"+content) || !strings.HasSuffix(asked[i], "[Deny|Allow this write]") {
			t.Fatalf("question %d: %q", i, asked[i])
		}
	}
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if results[0]["is_error"] != true || !strings.Contains(servertest.ResultText(results[0]), "the user denied writing") {
		t.Fatalf("denied write: %v", results[0])
	}
	if _, err := os.Stat(filepath.Join(outside, "denied.txt")); err == nil {
		t.Fatal("the denied write happened")
	}
	if results[1]["is_error"] != false || results[2]["is_error"] != false {
		t.Fatalf("allowed writes: %v %v", results[1], results[2])
	}
	ed.Wait("the allowed files on disk", func() bool {
		a, _ := os.ReadFile(filepath.Join(outside, "allowed.txt"))
		b, _ := os.ReadFile(filepath.Join(allowed, "free.txt"))
		return string(a) == "yes\n" && string(b) == "free\n"
	})
}

// The approval carries the whole command: padding cannot push a payload
// out of what the user sees.
func TestBashApprovalShowsTheWholeCommand(t *testing.T) {
	command := "echo harmless" + strings.Repeat(" ", 5000) + "; echo hidden-payload\n" + strings.Repeat("# line\n", 300) + "echo last-line"
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": command}), llmtest.TextReply("ok"))
	ed := e.start(askMode(true))
	var asked string
	ed.Choose = func(msg string, actions []string) string {
		asked = msg
		return "Deny"
	}
	ed.WaitDone(ed.Prompt("run it").RunID)
	if asked != "zot wants to run a command:\n\n"+command {
		t.Fatalf("the approval does not carry the whole command (%d bytes, want %d): …%q", len(asked), len(command)+29, asked[max(0, len(asked)-80):])
	}
}
