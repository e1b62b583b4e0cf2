package servertest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

func editReply(path, old, new string) llmtest.Reply {
	return llmtest.ToolReply("edit", map[string]any{"path": path, "edits": []map[string]string{{"oldText": old, "newText": new}}})
}

// The tools read what the user sees: read, grep and edit all see the
// unsaved buffer.
func TestToolsSeeUnsavedBuffers(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "notes.txt"}),
		llmtest.ToolReply("grep", map[string]any{"pattern": "UNSAVED"}),
		editReply("notes.txt", "UNSAVED line", "UNSAVED line, edited"),
		llmtest.TextReply("done"))
	ed := e.start(nil)
	ed.WriteFile("notes.txt", "on disk\n")
	ed.Open("notes.txt", "on disk\n")
	ed.Type("notes.txt", 1, 0, "UNSAVED line\n")
	evs := ed.WaitDone(ed.Prompt("look").RunID)
	var results []string
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			if ev["is_error"] != false {
				t.Fatalf("tool failed: %v", ev)
			}
			results = append(results, servertest.ResultText(ev))
		}
	}
	if len(results) != 3 || !strings.Contains(results[0], "UNSAVED line") || !strings.Contains(results[1], "UNSAVED line") {
		t.Fatalf("tools did not see the buffer:\n%s", strings.Join(results, "\n---\n"))
	}
	if buf, _ := ed.Buffer("notes.txt"); buf != "on disk\nUNSAVED line, edited\n" {
		t.Fatalf("buffer = %q", buf)
	}
}

// The agent's edit lands in the buffer, next to the user's unsaved text,
// as a minimal edit; the disk gets the agent's edit only (zot/save
// rebased), and the buffer stays modified with the user's text.
func TestEditLandsNextToUnsavedTyping(t *testing.T) {
	var src strings.Builder
	for i := 1; i <= 200; i++ {
		fmt.Fprintf(&src, "line %d\n", i)
	}
	e := newEnv(t, editReply("big.txt", "line 150\n", "line 150 (edited by zot)\n"), llmtest.TextReply("done"))
	ed := e.start(nil)
	ed.WriteFile("big.txt", src.String())
	ed.Open("big.txt", src.String())
	ed.Type("big.txt", 0, 0, "// user's unsaved note\n")
	run := ed.Prompt("edit line 150")
	evs := ed.WaitDone(run.RunID)
	if tr := servertest.Find(evs, "tool_result"); tr["is_error"] != false {
		t.Fatalf("edit failed: %s", servertest.ResultText(tr))
	}
	want := "// user's unsaved note\n" + strings.Replace(src.String(), "line 150\n", "line 150 (edited by zot)\n", 1)
	if buf, _ := ed.Buffer("big.txt"); buf != want {
		t.Fatalf("buffer:\n%s", buf)
	}
	edits := ed.ApplyEdits()
	if len(edits) != 1 || len(edits[0].Edit.DocumentChanges) != 1 {
		t.Fatalf("applyEdit requests: %+v", edits)
	}
	dc := edits[0].Edit.DocumentChanges[0]
	if dc.TextDocument == nil || dc.TextDocument.Version == nil || *dc.TextDocument.Version != 2 {
		t.Fatalf("edit not versioned against the buffer: %+v", dc)
	}
	// Minimal: one insertion on line 151 (the user's line shifted it).
	if len(dc.Edits) != 1 || dc.Edits[0].Range.Start.Line != 150 || dc.Edits[0].NewText != " (edited by zot)" {
		t.Fatalf("not a minimal edit: %s", jsonString(dc.Edits))
	}
	// Before done the disk has zot's edit and not the user's note; the
	// buffer was not saved.
	onDisk := strings.Replace(src.String(), "line 150\n", "line 150 (edited by zot)\n", 1)
	if got := ed.ReadFile("big.txt"); got != onDisk {
		t.Fatalf("disk:\n%s", got)
	}
	if !ed.Dirty("big.txt") {
		t.Fatal("the buffer was saved with the user's unsaved note")
	}
	saves := saveRequests(ed)
	if len(saves) != 1 || len(saves[0].URIs) != 0 || len(saves[0].Rebased) != 1 ||
		saves[0].Rebased[0].URI != ed.URI("big.txt") || saves[0].Rebased[0].Text != onDisk {
		t.Fatalf("zot/save: %s", jsonString(saves))
	}
}

type saveParams struct {
	URIs    []string `json:"uris"`
	Rebased []struct {
		URI  string `json:"uri"`
		Text string `json:"text"`
	} `json:"rebased"`
}

func saveRequests(ed *servertest.Editor) []saveParams {
	var out []saveParams
	for _, m := range ed.Requests("zot/save") {
		var p saveParams
		json.Unmarshal(m.Params, &p)
		out = append(out, p)
	}
	return out
}

// The user's unsaved typing is theirs: the agent edits a file the user
// has typed in and runs bash. bash sees the saved text plus the agent's
// edit; the buffer keeps the user's text plus the agent's edit, modified;
// nothing asks the editor to save it. The client writes the rebased text
// (zot/save rebased, answered in written); for a client that predates
// rebased zot writes it, atomically, keeping the file's mode.
func TestBashSeesEditsButNotUnsavedTyping(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			e := newEnv(t, editReply("s.go", "return 1", "return 2"),
				llmtest.ToolReply("bash", map[string]any{"command": "cat s.go"}), llmtest.TextReply("ok"))
			ed := e.start(nil)
			ed.IgnoreRebased = legacy
			disk := "package s\n\nfunc f() int {\n\treturn 1\n}\n"
			ed.WriteFile("s.go", disk)
			if err := os.Chmod(ed.Path("s.go"), 0o750); err != nil {
				t.Fatal(err)
			}
			ed.Open("s.go", disk)
			ed.Type("s.go", 1, 0, "// typed, not saved\n")
			evs := ed.WaitDone(ed.Prompt("edit then cat").RunID)
			var results []servertest.Event
			for _, ev := range evs {
				if ev.Type() == "tool_result" {
					results = append(results, ev)
				}
				if ev.Type() == "error" {
					t.Fatalf("error event: %v", ev)
				}
			}
			if len(results) != 2 || results[0]["is_error"] != false || results[1]["is_error"] != false {
				t.Fatalf("results: %v", results)
			}
			wantDisk := "package s\n\nfunc f() int {\n\treturn 2\n}\n"
			if got := servertest.ResultText(results[1]); got != strings.TrimSuffix(wantDisk, "\n") {
				t.Fatalf("bash saw %q", got)
			}
			if got := ed.ReadFile("s.go"); got != wantDisk {
				t.Fatalf("disk = %q", got)
			}
			if fi, err := os.Stat(ed.Path("s.go")); err != nil || fi.Mode().Perm() != 0o750 {
				t.Fatalf("mode after the write: %v %v", fi.Mode(), err)
			}
			wantBuf := "package s\n// typed, not saved\n\nfunc f() int {\n\treturn 2\n}\n"
			if buf, _ := ed.Buffer("s.go"); buf != wantBuf || !ed.Dirty("s.go") {
				t.Fatalf("buffer = %q, modified = %v", buf, ed.Dirty("s.go"))
			}
			saves := saveRequests(ed)
			if len(saves) == 0 || len(saves[0].Rebased) != 1 || saves[0].Rebased[0].Text != wantDisk {
				t.Fatalf("zot/save: %s", jsonString(saves))
			}
			for _, p := range saves {
				if len(p.URIs) != 0 {
					t.Fatalf("zot asked the editor to save: %s", jsonString(p))
				}
			}
		})
	}
}

// An agent edit that overlaps the user's unsaved typing cannot reach the
// disk without the user's text: the file stays as saved, bash's result
// says so, the buffer keeps both, modified; nothing is saved.
func TestBashEditOverlappingUnsavedTyping(t *testing.T) {
	e := newEnv(t, editReply("o.txt", "c typed", "C TYPED"),
		llmtest.ToolReply("bash", map[string]any{"command": "cat o.txt"}), llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.WriteFile("o.txt", "a\nb\nc\n")
	ed.Open("o.txt", "a\nb\nc\n")
	ed.Type("o.txt", 2, 1, " typed")
	evs := ed.WaitDone(ed.Prompt("edit then cat").RunID)
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
		if ev.Type() == "error" {
			t.Fatalf("error event: %v", ev)
		}
	}
	if len(results) != 2 || results[0]["is_error"] != false {
		t.Fatalf("results: %v", results)
	}
	out := servertest.ResultText(results[1])
	if !strings.HasPrefix(out, "a\nb\nc\n\n[o.txt: the user has unsaved changes in the editor that overlap your edits") ||
		!strings.Contains(out, "the command sees the saved version of o.txt, without your edits") {
		t.Fatalf("bash result: %q", out)
	}
	if got := ed.ReadFile("o.txt"); got != "a\nb\nc\n" {
		t.Fatalf("disk = %q", got)
	}
	if buf, _ := ed.Buffer("o.txt"); buf != "a\nb\nC TYPED\n" || !ed.Dirty("o.txt") {
		t.Fatalf("buffer = %q, modified = %v", buf, ed.Dirty("o.txt"))
	}
	for _, p := range saveRequests(ed) {
		if len(p.URIs) != 0 || len(p.Rebased) != 0 {
			t.Fatalf("zot/save: %s", jsonString(p))
		}
	}
}

// Positions are UTF-16 code units: CJK, emoji (surrogate pairs) and CRLF
// line endings survive an edit byte for byte.
func TestEditUTF16CJKEmojiCRLF(t *testing.T) {
	text := "第一行 🙂 hello\r\n二行目 👍🏽 world\r\nlast 🎉 line\r\n"
	e := newEnv(t, editReply("u.txt", "👍🏽 world", "👍🏽 wörld 🌍"), editReply("u.txt", "last 🎉", "最后 🎉"), llmtest.TextReply("done"))
	ed := e.start(nil)
	ed.WriteFile("u.txt", text)
	ed.Open("u.txt", text)
	ed.Type("u.txt", 0, 6, "✨") // after "第一行 🙂": 3 + 1 + 2 units
	ed.WaitDone(ed.Prompt("edit").RunID)
	want := "第一行 🙂✨ hello\r\n二行目 👍🏽 wörld 🌍\r\n最后 🎉 line\r\n"
	if buf, _ := ed.Buffer("u.txt"); buf != want {
		t.Fatalf("buffer:\n got %q\nwant %q", buf, want)
	}
	for _, ae := range ed.ApplyEdits() {
		for _, te := range ae.Edit.DocumentChanges[0].Edits {
			if strings.Contains(te.NewText, "\r\n") || te.Range.Start.Line != te.Range.End.Line {
				t.Fatalf("edit is not confined to the changed characters: %s", jsonString(te))
			}
		}
	}
}

// A new file is created through the editor: documentChanges CreateFile,
// then its text.
func TestWriteNewFileUsesCreateFile(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("write", map[string]any{"path": "pkg/new.go", "content": "package pkg\n"}), llmtest.TextReply("done"))
	ed := e.start(nil)
	evs := ed.WaitDone(ed.Prompt("create").RunID)
	if tr := servertest.Find(evs, "tool_result"); tr["is_error"] != false {
		t.Fatalf("write failed: %s", servertest.ResultText(tr))
	}
	edits := ed.ApplyEdits()
	if len(edits) != 1 || len(edits[0].Edit.DocumentChanges) != 2 || edits[0].Edit.DocumentChanges[0].Kind != "create" ||
		edits[0].Edit.DocumentChanges[0].URI != ed.URI("pkg/new.go") {
		t.Fatalf("applyEdit: %s", jsonString(edits))
	}
	if buf, ok := ed.Buffer("pkg/new.go"); !ok || buf != "package pkg\n" {
		t.Fatalf("buffer %q (open %v)", buf, ok)
	}
	if ed.ReadFile("pkg/new.go") != "package pkg\n" {
		t.Fatalf("not saved: %q", ed.ReadFile("pkg/new.go"))
	}
}

// An edit of a file the editor has not open also goes through applyEdit
// (the editor opens it), unversioned.
func TestEditOfUnopenedFileGoesThroughEditor(t *testing.T) {
	e := newEnv(t, editReply("closed.txt", "b\n", "B\n"), llmtest.TextReply("done"))
	ed := e.start(nil)
	ed.WriteFile("closed.txt", "a\nb\nc\n")
	ed.WaitDone(ed.Prompt("edit").RunID)
	edits := ed.ApplyEdits()
	if len(edits) != 1 || edits[0].Edit.DocumentChanges[0].TextDocument.Version != nil {
		t.Fatalf("applyEdit: %s", jsonString(edits))
	}
	if buf, _ := ed.Buffer("closed.txt"); buf != "a\nB\nc\n" || ed.ReadFile("closed.txt") != "a\nB\nc\n" {
		t.Fatalf("buffer %q disk %q", buf, ed.ReadFile("closed.txt"))
	}
}

// Clients without applyEdit get atomic disk writes.
func TestNoApplyEditWritesDisk(t *testing.T) {
	e := newEnv(t, editReply("f.txt", "old", "new"), llmtest.ToolReply("write", map[string]any{"path": "g.txt", "content": "fresh\n"}), llmtest.TextReply("done"))
	ed := e.start(func(c *servertest.Config) { c.NoApplyEdit = true })
	ed.WriteFile("f.txt", "old\n")
	ed.WaitDone(ed.Prompt("edit").RunID)
	if len(ed.ApplyEdits()) != 0 {
		t.Fatalf("applyEdit sent to a client without it")
	}
	if ed.ReadFile("f.txt") != "new\n" || ed.ReadFile("g.txt") != "fresh\n" {
		t.Fatalf("disk: %q %q", ed.ReadFile("f.txt"), ed.ReadFile("g.txt"))
	}
}

// The user types between the agent's snapshot and the editor applying the
// edit: the editor refuses the stale version, zot re-bases and retries.
func TestVersionMovedIsRebased(t *testing.T) {
	e := newEnv(t, editReply("r.txt", "three\n", "THREE\n"), llmtest.TextReply("done"))
	ed := e.start(nil)
	ed.WriteFile("r.txt", "one\ntwo\nthree\n")
	ed.Open("r.txt", "one\ntwo\nthree\n")
	typed := false
	ed.BeforeApply = func(json.RawMessage) {
		if !typed {
			typed = true
			ed.Type("r.txt", 0, 0, "zero\n") // lands before the edit is applied
		}
	}
	evs := ed.WaitDone(ed.Prompt("edit").RunID)
	if tr := servertest.Find(evs, "tool_result"); tr["is_error"] != false {
		t.Fatalf("edit failed: %s", servertest.ResultText(tr))
	}
	if buf, _ := ed.Buffer("r.txt"); buf != "zero\none\ntwo\nTHREE\n" {
		t.Fatalf("buffer %q", buf)
	}
	if n := len(ed.ApplyEdits()); n != 2 {
		t.Fatalf("%d applyEdit requests, want 2 (refused, then re-based)", n)
	}
}

// The user edits the very lines the agent changes: the edit is refused with
// a clear tool error and the user's typing is kept.
func TestOverlappingTypingIsNeverClobbered(t *testing.T) {
	e := newEnv(t, editReply("c.txt", "two\n", "TWO\n"), llmtest.TextReply("ok"))
	ed := e.start(func(c *servertest.Config) {
		c.ReviewEdit = true
		c.InitOptions = map[string]any{"permissionMode": "ask"}
	})
	ed.WriteFile("c.txt", "one\ntwo\nthree\n")
	ed.Open("c.txt", "one\ntwo\nthree\n")
	ed.Review = func(p servertest.ReviewEdit) servertest.ReviewResult {
		ed.Replace("c.txt", 1, 0, 1, 3, "two, as the user wants it") // while the user reviews
		return servertest.ReviewResult{Decision: "accept"}
	}
	evs := ed.WaitDone(ed.Prompt("edit").RunID)
	tr := servertest.Find(evs, "tool_result")
	if tr["is_error"] != true || !strings.Contains(servertest.ResultText(tr), "changed in the editor") {
		t.Fatalf("tool_result: %v", tr)
	}
	if buf, _ := ed.Buffer("c.txt"); buf != "one\ntwo, as the user wants it\nthree\n" {
		t.Fatalf("buffer %q", buf)
	}
}

// A full-content didChange (no range) replaces the overlay.
func TestFullTextChange(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("read", map[string]any{"path": "x.txt"}), llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.WriteFile("x.txt", "disk\n")
	ed.Open("x.txt", "first\n")
	ed.SetText("x.txt", "replaced wholesale\n")
	evs := ed.WaitDone(ed.Prompt("read").RunID)
	if got := servertest.ResultText(servertest.Find(evs, "tool_result")); !strings.Contains(got, "replaced wholesale") {
		t.Fatalf("read: %s", got)
	}
	ed.Close("x.txt")
	e.llm.Append(llmtest.ToolReply("read", map[string]any{"path": "x.txt"}), llmtest.TextReply("ok"))
	evs = ed.WaitDone(ed.Prompt("read again").RunID)
	if got := servertest.ResultText(servertest.Find(evs, "tool_result")); !strings.Contains(got, "disk") {
		t.Fatalf("read after close: %s", got)
	}
}

// bash sees the agent's edits on disk: zot/save comes first.
func TestBashSeesSavedEdits(t *testing.T) {
	e := newEnv(t, editReply("s.txt", "before", "after"), llmtest.ToolReply("bash", map[string]any{"command": "cat s.txt"}), llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.WriteFile("s.txt", "before\n")
	ed.Open("s.txt", "before\n")
	evs := ed.WaitDone(ed.Prompt("edit then cat").RunID)
	var bash servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			bash = ev
		}
	}
	if !strings.Contains(servertest.ResultText(bash), "after") {
		t.Fatalf("bash saw: %s", servertest.ResultText(bash))
	}
}

// A whole-file write is re-based onto typing the user did meanwhile (here
// during the review), when they touch different lines.
func TestWriteIsRebasedOntoTyping(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("read", map[string]any{"path": "w.txt"}),
		llmtest.ToolReply("write", map[string]any{"path": "w.txt", "content": "a\nb\nC\n"}), llmtest.TextReply("ok"))
	ed := e.start(askMode(true))
	ed.WriteFile("w.txt", "a\nb\nc\n")
	ed.Open("w.txt", "a\nb\nc\n")
	ed.Review = func(p servertest.ReviewEdit) servertest.ReviewResult {
		ed.Type("w.txt", 0, 0, "X")
		return servertest.ReviewResult{Decision: "accept"}
	}
	evs := ed.WaitDone(ed.Prompt("rewrite").RunID)
	for _, ev := range evs {
		if ev.Type() == "tool_result" && ev["is_error"] != false {
			t.Fatalf("tool failed: %s", servertest.ResultText(ev))
		}
	}
	if buf, _ := ed.Buffer("w.txt"); buf != "Xa\nb\nC\n" {
		t.Fatalf("buffer %q", buf)
	}
}

// Some editors answer applyEdit before sending the didChange of the edit;
// consecutive edits of the same buffer still build on each other.
func TestConsecutiveEditsWithLateDidChange(t *testing.T) {
	e := newEnv(t, editReply("l.txt", "one", "ONE"), editReply("l.txt", "two", "TWO"), editReply("l.txt", "ONE", "1"), llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.LateDidChange = true
	ed.WriteFile("l.txt", "one\ntwo\n")
	ed.Open("l.txt", "one\ntwo\n")
	evs := ed.WaitDone(ed.Prompt("edit thrice").RunID)
	for _, ev := range evs {
		if ev.Type() == "tool_result" && ev["is_error"] != false {
			t.Fatalf("tool failed: %s", servertest.ResultText(ev))
		}
	}
	if buf, _ := ed.Buffer("l.txt"); buf != "1\nTWO\n" {
		t.Fatalf("buffer %q", buf)
	}
}

// An edit is judged against the agent's last read of the file, not the
// buffer as the edit tool finds it: the user typed on line 3 after the
// read, so an edit of line 3 would land on their typing and is refused
// (also when it is one of several edits, and when the model saw the file
// attached to a prompt), while an edit of another line lands next to it.
// (issue 36)
func TestEditJudgedAgainstLastRead(t *testing.T) {
	const text = "line1\nline2\nline3\nline4\n"
	cases := []struct {
		name      string
		attach    bool // the model sees the file attached, not read
		typeLine  int  // 0-based line the user types at the end of
		edit      llmtest.Reply
		want      string
		refused   bool
		applyEdit int // workspace/applyEdit requests sent
	}{
		{"same line", false, 2, editReply("calc.py", "line3", "line3 MODEL"),
			"line1\nline2\nline3 TYPED\nline4\n", true, 0},
		{"same line, file attached", true, 2, editReply("calc.py", "line3", "line3 MODEL"),
			"line1\nline2\nline3 TYPED\nline4\n", true, 0},
		{"same line among several edits", false, 2, llmtest.ToolReply("edit", map[string]any{"path": "calc.py", "edits": []map[string]string{
			{"oldText": "line1", "newText": "LINE1"}, {"oldText": "line3", "newText": "line3 MODEL"}}}),
			"line1\nline2\nline3 TYPED\nline4\n", true, 0},
		{"other line", false, 0, editReply("calc.py", "line3", "line3 MODEL"),
			"line1 TYPED\nline2\nline3 MODEL\nline4\n", false, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			ed := e.start(nil)
			ed.WriteFile("calc.py", text)
			ed.Open("calc.py", text)
			if c.attach {
				e.llm.Append(llmtest.TextReply("seen it"))
				var r servertest.RunStarted
				ed.MustCall("zot/prompt", map[string]any{"text": "look at this", "attachments": []map[string]any{
					{"kind": "file", "uri": ed.URI("calc.py")}}}, &r)
				ed.WaitDone(r.RunID)
			} else {
				e.llm.Append(llmtest.ToolReply("read", map[string]any{"path": "calc.py"}), llmtest.TextReply("read it"))
				ed.WaitDone(ed.Prompt("read calc.py").RunID)
			}
			// The user types after the agent's read; the edit comes in the
			// next run, after zot has this didChange (messages are handled
			// in order).
			ed.Type("calc.py", c.typeLine, len("lineN"), " TYPED")
			e.llm.Append(c.edit, llmtest.TextReply("ok"))
			evs := ed.WaitDone(ed.Prompt("edit line 3").RunID)
			tr := servertest.Find(evs, "tool_result")
			got := servertest.ResultText(tr)
			if c.refused {
				if tr["is_error"] != true || !strings.Contains(got, "calc.py changed in the editor while you were working") ||
					!strings.Contains(got, "line 3") {
					t.Fatalf("tool_result: %v", tr)
				}
			} else if tr["is_error"] != false {
				t.Fatalf("edit failed: %s", got)
			}
			if buf, _ := ed.Buffer("calc.py"); buf != c.want {
				t.Fatalf("buffer %q, want %q", buf, c.want)
			}
			if n := len(ed.ApplyEdits()); n != c.applyEdit {
				t.Fatalf("%d applyEdit requests, want %d", n, c.applyEdit)
			}
		})
	}
}

// An editor without workspace/applyEdit: zot writes the file itself, but
// the user's unsaved typing never reaches the disk. zot's change is
// replayed onto the file as saved; zot's reads see the buffer with its
// change; the user is told the buffer does not show it. When the editor
// reloads the file, zot reads the buffer again, without applying its
// change twice. A change of the user's unsaved lines is refused. (issue 36)
func TestNoApplyEditKeepsUnsavedTypingOffDisk(t *testing.T) {
	const disk = "alpha\nbeta\ngamma\n"
	e := newEnv(t, editReply("f.txt", "gamma", "GAMMA"),
		llmtest.ToolReply("read", map[string]any{"path": "f.txt"}), llmtest.TextReply("ok"))
	ed := e.start(func(c *servertest.Config) { c.NoApplyEdit = true })
	ed.WriteFile("f.txt", disk)
	ed.Open("f.txt", disk)
	ed.Type("f.txt", 0, 0, "typed\n") // unsaved
	evs := ed.WaitDone(ed.Prompt("edit gamma").RunID)
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if len(results) != 2 || results[0]["is_error"] != false || results[1]["is_error"] != false {
		t.Fatalf("tool results: %v", results)
	}
	if got := ed.ReadFile("f.txt"); got != "alpha\nbeta\nGAMMA\n" {
		t.Fatalf("disk %q: want the saved text with zot's change only", got)
	}
	if got := servertest.ResultText(results[1]); !strings.Contains(got, "1\ttyped\n") || !strings.Contains(got, "4\tGAMMA") {
		t.Fatalf("read after the edit does not show the typing and zot's change:\n%s", got)
	}
	if buf, _ := ed.Buffer("f.txt"); buf != "typed\n"+disk {
		t.Fatalf("buffer %q", buf)
	}
	msg := ed.WaitNote("window/showMessage", func(p json.RawMessage) bool { return strings.Contains(string(p), "zot changed f.txt on disk") })
	if !strings.Contains(string(msg.Params), "kept out of the file") {
		t.Fatalf("showMessage: %s", msg.Params)
	}

	// The model changes a line the user has not saved: that cannot reach
	// the disk without their text.
	e.llm.Append(editReply("f.txt", "typed", "typed by the user"), llmtest.TextReply("ok"))
	evs = ed.WaitDone(ed.Prompt("edit the typed line").RunID)
	tr := servertest.Find(evs, "tool_result")
	if tr["is_error"] != true || !strings.Contains(servertest.ResultText(tr), "unsaved changes in the editor on the lines you are changing") {
		t.Fatalf("tool_result: %v", tr)
	}
	if got := ed.ReadFile("f.txt"); got != "alpha\nbeta\nGAMMA\n" {
		t.Fatalf("disk %q after the refused edit", got)
	}

	// The editor reloads the file (the user drops the typing): zot reads
	// the buffer, zot's change once.
	ed.SetText("f.txt", ed.ReadFile("f.txt"))
	e.llm.Append(llmtest.ToolReply("read", map[string]any{"path": "f.txt"}), llmtest.TextReply("ok"))
	evs = ed.WaitDone(ed.Prompt("read again").RunID)
	if got := servertest.ResultText(servertest.Find(evs, "tool_result")); got != "     1\talpha\n     2\tbeta\n     3\tGAMMA" {
		t.Fatalf("read after the reload:\n%s", got)
	}
	if n := len(ed.Notes("window/showMessage")); n != 1 {
		t.Fatalf("%d showMessage notifications, want 1", n)
	}
}
