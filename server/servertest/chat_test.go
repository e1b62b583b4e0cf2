package servertest_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session/sessiontest"
	"github.com/zot-editors/zot/server/servertest"
)

// sent is what model request i carried: one "role: text" line per
// message, its text blocks joined by " | ".
func (e *env) sent(i int) []string {
	e.t.Helper()
	reqs := e.llm.Requests()
	if len(reqs) <= i {
		e.t.Fatalf("only %d model calls, want call %d", len(reqs), i+1)
	}
	var out []string
	msgs, _ := reqs[i].Body["messages"].([]any)
	for _, m := range msgs {
		mm := m.(map[string]any)
		var texts []string
		switch c := mm["content"].(type) {
		case string:
			texts = append(texts, c)
		case []any:
			for _, b := range c {
				bm := b.(map[string]any)
				if bm["type"] == "text" {
					texts = append(texts, bm["text"].(string))
				}
			}
		}
		out = append(out, mm["role"].(string)+": "+strings.Join(texts, " | "))
	}
	return out
}

func rng(l1, c1, l2, c2 int) map[string]any {
	return map[string]any{"start": map[string]int{"line": l1, "character": c1}, "end": map[string]int{"line": l2, "character": c2}}
}

// Attachments reach the model as delimited context blocks after the
// user's text: the file as the open buffer holds it (unsaved typing
// included), the selection's lines, the editor's problems, the terminal's
// output. The user_message event carries the same blocks (chips) and the
// message's index.
func TestPromptAttachmentsReachTheModel(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.WriteFile("calc.py", "def add(a, b):\n    return a + b\n")
	ed.Open("calc.py", "def add(a, b):\n    return a + b  # unsaved\n")
	ed.WriteFile("util/strings.go", "package util\n\nfunc Up(s string) string { return s }\n\nfunc Down(s string) string { return s }\n")
	var run servertest.RunStarted
	ed.MustCall("zot/prompt", map[string]any{"text": "why does this fail?", "attachments": []map[string]any{
		{"kind": "file", "uri": ed.URI("calc.py")},
		{"kind": "selection", "uri": ed.URI("util/strings.go"), "range": rng(2, 0, 3, 0)},
		{"kind": "problems", "uri": ed.URI("calc.py"), "diagnostics": []map[string]any{
			{"uri": ed.URI("calc.py"), "range": rng(1, 4, 1, 10), "severity": "error", "message": "undefined name 'x'", "source": "pyflakes", "code": "F821"},
		}},
		{"kind": "terminal", "label": "bash", "text": "$ pytest\nFAILED test_add - AssertionError\n"},
	}}, &run)
	evs := ed.WaitDone(run.RunID)

	sent := e.sent(0)
	if len(sent) != 1 {
		t.Fatalf("model messages: %q", sent)
	}
	blocks := strings.Split(strings.TrimPrefix(sent[0], "user: "), " | ")
	if len(blocks) != 5 || blocks[0] != "why does this fail?" {
		t.Fatalf("the user's text is not first, or the blocks are not separate: %q", blocks)
	}
	want := []struct{ head, body string }{
		{`<context kind="file" label="calc.py" path="calc.py" uri="` + ed.URI("calc.py") + `">`, "calc.py (2 lines):\n```py\ndef add(a, b):\n    return a + b  # unsaved\n```\n</context>"},
		{`<context kind="selection" label="strings.go:3-3" path="util/strings.go"`, "util/strings.go, lines 3–3:\n```go\nfunc Up(s string) string { return s }\n```\n</context>"},
		{`<context kind="problems" label="problems in calc.py"`, "calc.py:2:5: error: undefined name 'x' [pyflakes F821]\n</context>"},
		{`<context kind="terminal" label="bash">`, "The output of the terminal \"bash\":\n```\n$ pytest\nFAILED test_add - AssertionError\n```\n</context>"},
	}
	for i, w := range want {
		b := blocks[i+1]
		if !strings.HasPrefix(b, w.head) || !strings.HasSuffix(b, w.body) {
			t.Errorf("block %d:\n%s\nwant it to start with %s\nand end with %q", i+1, b, w.head, w.body)
		}
	}
	if strings.Contains(sent[0], "Down") {
		t.Errorf("the selection's exclusive end took the next line: %s", sent[0])
	}
	um := servertest.Find(evs, "user_message")
	if um["messageIndex"] != float64(0) {
		t.Fatalf("user_message messageIndex: %v", um)
	}
	content, _ := um["content"].([]any)
	if len(content) != 5 || !strings.HasPrefix(content[1].(map[string]any)["text"].(string), `<context kind="file"`) {
		t.Fatalf("user_message content: %v", content)
	}
}

// A prompt of attachments alone is a prompt; a bad attachment is refused
// before anything is sent, naming the field or the file.
func TestPromptAttachmentErrors(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.start(nil)
	for _, c := range []struct {
		att  map[string]any
		code int64
		msg  string
	}{
		{map[string]any{"kind": "folder", "uri": ed.URI("x")}, -32602, `"attachments[0].kind" must be file, selection, problems, terminal or mcpResource, not "folder"`},
		{map[string]any{"kind": "selection", "uri": ed.URI("a.go")}, -32602, `"attachments[0].range" is required`},
		{map[string]any{"kind": "terminal"}, -32602, `"attachments[0].text" is required`},
		{map[string]any{"kind": "mcpResource", "uri": "demo://x"}, -32602, `"attachments[0].server" is required`},
		{map[string]any{"kind": "file", "uri": ed.URI("missing.go")}, -32803, "attachments[0]: cannot read missing.go"},
	} {
		err := ed.Call("zot/prompt", map[string]any{"text": "look", "attachments": []any{c.att}}, nil)
		if err == nil || err.Code != c.code || !strings.Contains(err.Message, c.msg) {
			t.Errorf("%v: got %v, want %d %q", c.att, err, c.code, c.msg)
		}
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("a refused prompt reached the model (%d calls)", n)
	}
	ed.WriteFile("a.txt", "alpha\n")
	var run servertest.RunStarted
	ed.MustCall("zot/prompt", map[string]any{"text": "", "attachments": []any{map[string]any{"kind": "file", "uri": ed.URI("a.txt")}}}, &run)
	ed.WaitDone(run.RunID)
	if s := e.sent(0); len(s) != 1 || !strings.HasPrefix(s[0], `user: <context kind="file" label="a.txt"`) {
		t.Fatalf("attachments-only prompt: %q", s)
	}
}

// Retry sends the last prompt again without the answer it replaces; edit
// and resend replaces an earlier prompt and drops what followed. The
// session file keeps the old branch (x-rewind lines) and a resumed session
// continues the new one.
func TestRetryAndResend(t *testing.T) {
	e := newEnv(t,
		llmtest.TextReply("answer one"),
		llmtest.TextReply("answer two"),
		llmtest.TextReply("answer two, again"),
		llmtest.TextReply("answer uno"),
		llmtest.TextReply("after resume"))
	cfg := e.config()
	cfg.Args = []string{"--api-key", "k", "--base-url", e.llm.URL()} // sessions on
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	ed.WriteFile("notes.txt", "remember the milk\n")

	if err := ed.Call("zot/retry", nil, nil); err == nil || err.Code != -32803 || !strings.Contains(err.Message, "no prompt to retry") {
		t.Fatalf("zot/retry on an empty conversation: %v", err)
	}
	ed.WaitDone(ed.Prompt("one").RunID)
	var run servertest.RunStarted
	ed.MustCall("zot/prompt", map[string]any{"text": "two", "attachments": []any{map[string]any{"kind": "file", "uri": ed.URI("notes.txt")}}}, &run)
	evs := ed.WaitDone(run.RunID)
	if um := servertest.Find(evs, "user_message"); um["messageIndex"] != float64(2) {
		t.Fatalf("second prompt's messageIndex: %v", um)
	}

	// The file changes after it was attached: a retry sends the prompt as
	// it was first sent.
	ed.WriteFile("notes.txt", "changed\n")
	ed.MustCall("zot/retry", nil, &run)
	evs = ed.WaitDone(run.RunID)
	got := strings.Join(e.sent(2), "\n")
	if !strings.Contains(got, "user: one\nassistant: answer one\nuser: two | <context kind=\"file\"") || !strings.Contains(got, "remember the milk") ||
		strings.Contains(got, "answer two") || strings.Contains(got, "changed") || len(e.sent(2)) != 3 {
		t.Fatalf("the retried request:\n%s", got)
	}
	if um := servertest.Find(evs, "user_message"); um["messageIndex"] != float64(2) {
		t.Fatalf("retried prompt's messageIndex: %v", um)
	}

	// Edit and resend the first prompt.
	for _, c := range []struct {
		index int
		msg   string
	}{{9, "past the conversation's 4 messages"}, {1, "message 1 is a assistant message, not a prompt"}, {-1, `"messageIndex" must be the index`}} {
		if err := ed.Call("zot/resend", map[string]any{"messageIndex": c.index, "text": "x"}, nil); err == nil || !strings.Contains(err.Message, c.msg) {
			t.Fatalf("zot/resend %d: %v, want %q", c.index, err, c.msg)
		}
	}
	ed.MustCall("zot/resend", map[string]any{"messageIndex": 0, "text": "uno"}, &run)
	evs = ed.WaitDone(run.RunID)
	if got := e.sent(3); len(got) != 1 || got[0] != "user: uno" {
		t.Fatalf("the resent request: %q", got)
	}
	if um := servertest.Find(evs, "user_message"); um["messageIndex"] != float64(0) {
		t.Fatalf("resent prompt's messageIndex: %v", um)
	}
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	if b := jsonString(msgs); len(msgs.Messages) != 2 || !strings.Contains(b, "uno") || strings.Contains(b, "answer one") {
		t.Fatalf("zot/messages after resend: %s", b)
	}

	// The session file: zot's format, the old branch kept, the cuts recorded.
	var st map[string]any
	ed.MustCall("zot/state", nil, &st)
	id := st["session_id"].(string)
	files, _ := filepath.Glob(filepath.Join(e.home, "sessions", "*", "*-"+id[:8]+".jsonl"))
	if len(files) != 1 {
		t.Fatalf("session file of %s: %v", id, files)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatalf("the session file is not zot's format: %v", err)
	}
	text := string(data)
	if strings.Count(text, `"type":"x-rewind"`) != 2 || !strings.Contains(text, `"keep":2`) || !strings.Contains(text, `"keep":0`) ||
		!strings.Contains(text, "answer one") || !strings.Contains(text, "answer two, again") {
		t.Fatalf("session file (%d lines of other types):\n%s", len(f.Other), text)
	}

	// Resumed in a new zot lsp: the new branch only.
	ed.Shutdown()
	ed2 := servertest.Start(t, cfg)
	ed2.Initialize(nil)
	ed2.MustCall("zot/session/resume", map[string]any{"id": id}, nil)
	ed2.WaitDone(ed2.Prompt("and now?").RunID)
	if got := e.sent(4); strings.Join(got, "\n") != "user: uno\nassistant: answer uno\nuser: and now?" {
		t.Fatalf("after resume the model got:\n%s", strings.Join(got, "\n"))
	}
}

// Retry and resend wait for no one: while a run goes they are refused.
func TestRetryRefusedWhileRunning(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("first"), llmtest.Reply{Text: "held", Gate: "held"}, llmtest.TextReply("retried"))
	ed := e.start(nil)
	ed.WaitDone(ed.Prompt("one").RunID)
	run := ed.Prompt("two")
	<-e.llm.Arrived("held")
	for _, m := range []string{"zot/retry", "zot/resend"} {
		if err := ed.Call(m, map[string]any{"messageIndex": 0, "text": "x"}, nil); err == nil || err.Code != -32803 || !strings.Contains(err.Message, "a run is in progress") {
			t.Fatalf("%s while running: %v", m, err)
		}
	}
	e.llm.Release("held")
	ed.WaitDone(run.RunID)
	var again servertest.RunStarted
	ed.MustCall("zot/retry", nil, &again)
	ed.WaitDone(again.RunID)
	if got := strings.Join(e.sent(2), "\n"); got != "user: one\nassistant: first\nuser: two" {
		t.Fatalf("retry after the run:\n%s", got)
	}
}

type applyResult struct {
	Applied bool   `json:"applied"`
	Message string `json:"message"`
}

// Apply puts a code block into a file through the model's edit path: into
// the open buffer with workspace/applyEdit (unsaved), a range or the whole
// file; reviewed in ask mode; refused in readonly mode.
func TestApplyCode(t *testing.T) {
	e := newEnv(t)
	ed := e.start(askMode(true))
	ed.WriteFile("calc.py", "def add(a, b):\n    return a - b\n")
	ed.Open("calc.py", "def add(a, b):\n    return a - b\n")

	var reviews []servertest.ReviewEdit
	ed.Review = func(p servertest.ReviewEdit) servertest.ReviewResult {
		reviews = append(reviews, p)
		return servertest.ReviewResult{Decision: "reject", Message: "not now"}
	}
	var res applyResult
	ed.MustCall("zot/applyCode", map[string]any{"uri": ed.URI("calc.py"), "text": "def add(a, b):\n    return a + b"}, &res)
	if res.Applied || !strings.Contains(res.Message, "rejected") || len(reviews) != 1 || reviews[0].Tool != "apply" || reviews[0].ToolCallID != "" ||
		reviews[0].NewText != "def add(a, b):\n    return a + b\n" || reviews[0].OldText != "def add(a, b):\n    return a - b\n" {
		t.Fatalf("rejected apply: %+v, reviews %+v", res, reviews)
	}
	if buf, _ := ed.Buffer("calc.py"); buf != "def add(a, b):\n    return a - b\n" || len(ed.ApplyEdits()) != 0 {
		t.Fatalf("a rejected apply changed the buffer: %q", buf)
	}

	ed.Review = nil // accept
	ed.MustCall("zot/applyCode", map[string]any{"uri": ed.URI("calc.py"), "text": "def add(a, b):\n    return a + b"}, &res)
	if buf, _ := ed.Buffer("calc.py"); !res.Applied || buf != "def add(a, b):\n    return a + b\n" || len(ed.ApplyEdits()) != 1 {
		t.Fatalf("accepted apply: %+v, buffer %q", res, buf)
	}
	if ed.ReadFile("calc.py") != "def add(a, b):\n    return a - b\n" {
		t.Fatalf("apply saved the file: %q", ed.ReadFile("calc.py"))
	}

	ed.MustCall("zot/setPermissionMode", map[string]any{"mode": "auto"}, nil)
	ed.MustCall("zot/applyCode", map[string]any{"uri": ed.URI("calc.py"), "text": "sum", "range": rng(0, 4, 0, 7)}, &res)
	if buf, _ := ed.Buffer("calc.py"); !res.Applied || buf != "def sum(a, b):\n    return a + b\n" {
		t.Fatalf("range apply: %+v, buffer %q", res, buf)
	}
	ed.MustCall("zot/applyCode", map[string]any{"uri": ed.URI("new/mod.py"), "text": "X = 1\n"}, &res)
	if !res.Applied {
		t.Fatalf("apply to a new file: %+v", res)
	}
	// The apply waits for the editor's buffer changes, not for itself:
	// a barrier that counted the applyCode request ran to its timeout.
	if log := ed.Stderr(); strings.Contains(log, "barrier: messages still unhandled") {
		t.Fatalf("applyCode waited for itself:\n%s", log)
	}
	ed.Wait("new/mod.py created", func() bool {
		b, _ := ed.Buffer("new/mod.py")
		return b == "X = 1\n" || ed.ReadFile("new/mod.py") == "X = 1\n"
	})

	ed.MustCall("zot/setPermissionMode", map[string]any{"mode": "readonly"}, nil)
	ed.MustCall("zot/applyCode", map[string]any{"uri": ed.URI("calc.py"), "text": "gone"}, &res)
	if res.Applied || !strings.Contains(res.Message, "readonly") {
		t.Fatalf("apply in readonly mode: %+v", res)
	}
	if err := ed.Call("zot/applyCode", map[string]any{"uri": "untitled:1", "text": "x"}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, `"uri" must be a file: URI`) {
		t.Fatalf("apply to a non-file URI: %v", err)
	}
	if err := ed.Call("zot/applyCode", map[string]any{"uri": ed.URI("nope.py"), "text": "x", "range": rng(0, 0, 0, 1)}, nil); err == nil || err.Code != -32803 {
		t.Fatalf("range apply to a missing file: %v", err)
	}
}

// A zot/applyCode cancelled while its review is open is answered
// RequestCancelled, like any cancelled request, not as a rejection (whose
// message spoke of a run that does not exist); nothing is applied.
func TestApplyCodeCancelledDuringReview(t *testing.T) {
	e := newEnv(t)
	ed := e.start(askMode(true))
	ed.WriteFile("calc.py", "x = 1\n")
	ed.Open("calc.py", "x = 1\n")
	release := make(chan struct{})
	defer close(release)
	ed.Review = func(servertest.ReviewEdit) servertest.ReviewResult {
		<-release // the user never decides
		return servertest.ReviewResult{Decision: "accept"}
	}
	ch := ed.CallID("apply-1", "zot/applyCode", map[string]any{"uri": ed.URI("calc.py"), "text": "x = 2"})
	ed.Wait("the review request", func() bool { return len(ed.Requests("zot/reviewEdit")) == 1 })
	ed.Notify("$/cancelRequest", map[string]any{"id": "apply-1"})
	m := ed.Await(ch, "the cancelled apply")
	if m.Error == nil || m.Error.Code != -32800 {
		t.Fatalf("want RequestCancelled, got %s (error %+v)", m.Result, m.Error)
	}
	if buf, _ := ed.Buffer("calc.py"); buf != "x = 1\n" || len(ed.ApplyEdits()) != 0 {
		t.Fatalf("a cancelled apply changed the buffer: %q", buf)
	}
}

// An MCP server's resources are listed for the `@` picker and, attached,
// reach the model read through the MCP host.
func TestMCPResourceAttachment(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.startMCP(nil)
	var list struct {
		Resources []struct {
			Server, URI, Name, MimeType string
		} `json:"resources"`
	}
	ed.Wait("resources listed", func() bool {
		ed.MustCall("zot/mcp/resources", nil, &list)
		return len(list.Resources) > 0
	})
	// A static document server-everything lists (its own docs).
	const doc = "demo://resource/static/document/architecture.md"
	var pick *struct{ Server, URI, Name, MimeType string }
	for i, r := range list.Resources {
		if r.Server == "everything" && r.URI == doc {
			pick = &list.Resources[i]
			break
		}
	}
	if pick == nil || pick.MimeType != "text/markdown" {
		t.Fatalf("zot/mcp/resources lacks %s: %+v", doc, list.Resources)
	}
	var run servertest.RunStarted
	ed.MustCall("zot/prompt", map[string]any{"text": "summarise", "attachments": []any{map[string]any{"kind": "mcpResource", "server": "everything", "uri": pick.URI}}}, &run)
	// The chat gets the block in user_message too (its chip).
	if um := servertest.Find(ed.WaitDone(run.RunID), "user_message"); !strings.Contains(jsonString(um), `kind=\"mcpResource\"`) {
		t.Fatalf("user_message lacks the resource's block: %s", jsonString(um))
	}
	got := strings.Join(e.sent(0), "\n")
	if !strings.Contains(got, `<context kind="mcpResource" label="`+pick.URI+`" server="everything" uri="`+pick.URI+`"`) || !strings.Contains(got, "The resource "+pick.URI+" of the MCP server everything:") {
		t.Fatalf("the model got:\n%s", got)
	}
	// The block carries the resource's text, not just its name.
	if !strings.Contains(got, "```\n# Everything Server – Architecture\n") || !strings.Contains(got, `mimeType="text/markdown">`) {
		t.Fatalf("the resource's content is missing:\n%.600s", got)
	}

	// A resource that cannot be read ends the run with the reason.
	ed.MustCall("zot/prompt", map[string]any{"text": "x", "attachments": []any{map[string]any{"kind": "mcpResource", "server": "nosuch", "uri": "demo://x"}}}, &run)
	evs := ed.WaitDone(run.RunID)
	if er := servertest.Find(evs, "error"); !strings.Contains(er.Str("message"), `no MCP server named "nosuch"`) {
		t.Fatalf("unreadable resource: %s", jsonString(evs))
	}
}
