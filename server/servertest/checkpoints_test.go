package servertest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

type checkpointsResult struct {
	Checkpoints []struct {
		ID           string `json:"id"`
		MessageIndex int    `json:"messageIndex"`
		Prompt       string `json:"prompt"`
		Kind         string `json:"kind"`
		Time         string `json:"time"`
		FilesChanged int    `json:"filesChanged"`
	} `json:"checkpoints"`
}

type restoreResult struct {
	Checkpoint string `json:"checkpoint"`
	Undo       string `json:"undo"`
	Files      []struct {
		Path, URI, Action string
	} `json:"files"`
	MessageCount    int `json:"messageCount"`
	MessagesRemoved int `json:"messagesRemoved"`
}

// In zot lsp a checkpoint holds the unsaved buffers too: restoring the
// code puts the user's unsaved typing back into the buffer through
// workspace/applyEdit (not behind the editor) and the disk as it was; the
// compare shows the buffer's change; the conversation is restored on its
// own.
func TestCheckpointRestoresBuffersThroughTheEditor(t *testing.T) {
	testenv.NeedCommand(t, "git", "checkpoints")
	e := newEnv(t,
		editReply("notes.txt", "on disk\n", "on disk (zot)\n"),
		llmtest.ToolReply("bash", map[string]any{"command": "echo made > made.txt && echo changed > other.txt"}),
		llmtest.TextReply("done"))
	ed := e.start(nil)
	ed.WriteFile("notes.txt", "on disk\n")
	ed.WriteFile("other.txt", "other\n")
	ed.Open("notes.txt", "on disk\n")
	ed.Type("notes.txt", 0, 0, "typed, unsaved\n")
	evs := ed.WaitDone(ed.Prompt("change them").RunID)
	for _, ev := range evs {
		if ev.Type() == "tool_result" && ev["is_error"] != false {
			t.Fatalf("tool failed: %v", ev)
		}
	}
	if buf, _ := ed.Buffer("notes.txt"); buf != "typed, unsaved\non disk (zot)\n" {
		t.Fatalf("buffer after the run = %q", buf)
	}

	var list checkpointsResult
	ed.MustCall("zot/checkpoints", nil, &list)
	if len(list.Checkpoints) != 1 {
		t.Fatalf("checkpoints: %+v", list)
	}
	cp := list.Checkpoints[0]
	if cp.MessageIndex != 0 || cp.Prompt != "change them" || cp.Kind != "prompt" || cp.FilesChanged != 3 || cp.Time == "" {
		t.Fatalf("checkpoint: %+v", cp)
	}

	var diff struct {
		Files []struct{ Path, URI, Status, Diff string } `json:"files"`
	}
	ed.MustCall("zot/checkpoint/diff", map[string]any{"checkpoint": cp.ID}, &diff)
	var got []string
	for _, f := range diff.Files {
		got = append(got, f.Status+" "+f.Path)
		if f.Path == "notes.txt" && (!strings.Contains(f.Diff, "-on disk\n+on disk (zot)\n") || f.URI != ed.URI("notes.txt")) {
			t.Fatalf("notes.txt's diff (buffer at the checkpoint → buffer now): %+v", f)
		}
	}
	if strings.Join(got, "|") != "added made.txt|modified notes.txt|modified other.txt" {
		t.Fatalf("diff files: %v", got)
	}

	before := len(ed.ApplyEdits())
	var r restoreResult
	ed.MustCall("zot/checkpoint/restore", map[string]any{"checkpoint": cp.ID, "mode": "code"}, &r)
	if buf, _ := ed.Buffer("notes.txt"); buf != "typed, unsaved\non disk\n" {
		t.Fatalf("buffer after the restore = %q, want the unsaved text of the checkpoint", buf)
	}
	if len(ed.ApplyEdits()) <= before {
		t.Fatal("the buffer was restored without workspace/applyEdit")
	}
	if d := ed.ReadFile("notes.txt"); d != "on disk\n" {
		t.Fatalf("notes.txt on disk = %q", d)
	}
	if d := ed.ReadFile("other.txt"); d != "other\n" {
		t.Fatalf("other.txt on disk = %q", d)
	}
	if _, err := os.Stat(ed.Path("made.txt")); !os.IsNotExist(err) {
		t.Fatalf("made.txt was not removed: %v", err)
	}
	if r.MessagesRemoved != 0 || r.Undo == "" || r.MessageCount == 0 {
		t.Fatalf("restore result: %+v", r)
	}

	// The conversation alone.
	ed.MustCall("zot/checkpoint/restore", map[string]any{"checkpoint": cp.ID, "mode": "conversation"}, &r)
	var msgs struct {
		Messages []any `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	if len(msgs.Messages) != 0 || r.MessageCount != 0 {
		t.Fatalf("after the conversation restore: %d messages, result %+v", len(msgs.Messages), r)
	}
	if buf, _ := ed.Buffer("notes.txt"); buf != "typed, unsaved\non disk\n" {
		t.Fatalf("a conversation restore changed the buffer: %q", buf)
	}

	// Bad params are InvalidParams naming the field.
	if err := ed.Call("zot/checkpoint/restore", map[string]any{"checkpoint": cp.ID, "mode": "all"}, nil); err == nil || !strings.Contains(err.Message, "mode") {
		t.Fatalf("bad mode: %v", err)
	}
	if err := ed.Call("zot/checkpoint/diff", map[string]any{"checkpoint": "ffffffff"}, nil); err == nil || !strings.Contains(err.Message, "no such checkpoint") {
		t.Fatalf("unknown checkpoint: %v", err)
	}
}

// zot/session/fork branches the conversation at a prompt into a new
// session with that checkpoint's files; the checkpoints before it come
// along; the original session keeps its transcript and checkpoints and is
// resumed as it was.
func TestSessionForkWithFiles(t *testing.T) {
	testenv.NeedCommand(t, "git", "checkpoints")
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "echo one > a.txt"}), llmtest.TextReply("ok one"),
		llmtest.ToolReply("bash", map[string]any{"command": "echo two > a.txt && echo b > b.txt"}), llmtest.TextReply("ok two"))
	ed := e.start(func(c *servertest.Config) {
		// Sessions on: a fork branches a session file.
		args := c.Args[:0]
		for _, a := range c.Args {
			if a != "--no-session" {
				args = append(args, a)
			}
		}
		c.Args = args
	})
	ed.WaitDone(ed.Prompt("first").RunID)
	ed.WaitDone(ed.Prompt("second").RunID)
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	total := len(msgs.Messages)
	second := -1
	for i, m := range msgs.Messages {
		if m["role"] == "user" && strings.Contains(jsonString(m), "second") {
			second = i
		}
	}
	if second <= 0 || ed.ReadFile("a.txt") != "two\n" {
		t.Fatalf("second prompt at %d of %d; a.txt = %q", second, total, ed.ReadFile("a.txt"))
	}
	var st struct {
		SessionID string `json:"session_id"`
	}
	ed.MustCall("zot/state", nil, &st)
	orig := st.SessionID

	if err := ed.Call("zot/session/fork", map[string]any{"messageIndex": 1}, nil); err == nil || !strings.Contains(err.Message, "not a prompt") {
		t.Fatalf("fork at an answer: %v", err)
	}
	var fork struct {
		SessionID    string `json:"sessionId"`
		ForkedFrom   string `json:"forkedFrom"`
		MessageCount int    `json:"messageCount"`
		Files        []struct{ Path, Action string }
		Undo         string `json:"undo"`
	}
	ed.MustCall("zot/session/fork", map[string]any{"messageIndex": second, "withFiles": true}, &fork)
	if fork.ForkedFrom != orig || fork.SessionID == orig || fork.MessageCount != second || fork.Undo == "" {
		t.Fatalf("fork: %+v (original %s)", fork, orig)
	}
	if ed.ReadFile("a.txt") != "one\n" {
		t.Fatalf("a.txt after the fork with files = %q", ed.ReadFile("a.txt"))
	}
	if _, err := os.Stat(ed.Path("b.txt")); !os.IsNotExist(err) {
		t.Fatalf("b.txt is still there: %v", err)
	}
	ed.MustCall("zot/messages", nil, &msgs)
	if len(msgs.Messages) != second {
		t.Fatalf("the fork has %d messages, want %d", len(msgs.Messages), second)
	}
	var list checkpointsResult
	ed.MustCall("zot/checkpoints", nil, &list)
	var got []string
	for _, cp := range list.Checkpoints {
		got = append(got, cp.Kind+" "+cp.Prompt)
	}
	if len(got) != 3 || got[0] != "prompt first" || got[1] != "prompt second" || got[2] != "restore before forking at "+list.Checkpoints[1].ID+" (files)" {
		t.Fatalf("the fork's checkpoints: %q", got)
	}

	// The session list shows the branch.
	var sessions struct {
		Sessions []struct {
			ID     string `json:"id"`
			Parent string `json:"parent"`
		} `json:"sessions"`
	}
	ed.MustCall("zot/sessions", nil, &sessions)
	parents := map[string]string{}
	for _, si := range sessions.Sessions {
		parents[si.ID] = si.Parent
	}
	if p, ok := parents[fork.SessionID]; !ok || p != orig || parents[orig] != "" {
		t.Fatalf("zot/sessions: %+v; want the fork with parent %s", sessions.Sessions, orig)
	}

	// The original is as it was.
	var res struct {
		MessageCount int `json:"messageCount"`
	}
	ed.MustCall("zot/session/resume", map[string]any{"id": orig}, &res)
	if res.MessageCount != total {
		t.Fatalf("the original resumed with %d messages, want %d", res.MessageCount, total)
	}
	ed.MustCall("zot/checkpoints", nil, &list)
	if len(list.Checkpoints) != 2 {
		t.Fatalf("the original has %d checkpoints, want its 2", len(list.Checkpoints))
	}
}
