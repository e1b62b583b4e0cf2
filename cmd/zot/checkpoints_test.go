package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/checkpoint"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// writeExt builds cmd/zot/testdata/writeext (its tool put writes a file).
func writeExt(t *testing.T) string {
	return testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/cmd/zot/testdata/writeext")
}

// userGit runs git in the user's repository, as the user would.
func (e *env) userGit(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = e.cwd
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// userRepoState is what checkpoints must never change in the user's
// repository: git status, the index, the stash, the branches.
func (e *env) userRepoState() string {
	return e.userGit("status", "--porcelain=v1", "-uall") + "--index\n" + e.userGit("ls-files", "-s") +
		"--stash\n" + e.userGit("stash", "list") + "--branches\n" + e.userGit("branch", "-a", "-v")
}

// fileState is each file of the workspace (outside .git) with its
// executable bit and bytes.
func (e *env) fileState() string {
	e.t.Helper()
	var lines []string
	filepath.WalkDir(e.cwd, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.IsDir() {
			return nil
		}
		fi, _ := d.Info()
		b, _ := os.ReadFile(p)
		rel, _ := filepath.Rel(e.cwd, p)
		lines = append(lines, fmt.Sprintf("%s %v %q", rel, fi.Mode().Perm()&0o111 != 0, b))
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

func dataOf(t *testing.T, r map[string]any) map[string]any {
	t.Helper()
	if r["success"] != true {
		t.Fatalf("%s failed: %v", r["command"], r["error"])
	}
	return r["data"].(map[string]any)
}

// A turn that edits with the edit tool, writes with bash and changes a
// file through an extension is undone by restoring its checkpoint's code:
// bytes and modes back, created files removed, deleted files back; the
// restore can be undone; the conversation is restored separately and
// together; the user's git state never changes; a restore during a run is
// refused.
func TestRPCCheckpointRestore(t *testing.T) {
	testenv.NeedCommand(t, "git", "checkpoints")
	e := newEnv(t)
	ext := e.write("ext.txt", "extension's before\n")
	e.write("edit.txt", "old line\nsecond\n")
	e.write("gone.txt", "deleted by bash\n")
	script := e.write("script.sh", "#!/bin/sh\necho hi\n")
	os.Chmod(script, 0o755)
	e.write(".gitignore", "*.log\n")
	// The user's repository: a commit, a stash, a staged change and an
	// unstaged one.
	e.userGit("init", "-q")
	e.userGit("add", ".")
	e.userGit("commit", "-q", "-m", "start")
	e.write("edit.txt", "old line\nsecond\nstashed\n")
	e.userGit("stash", "-q")
	e.write("gone.txt", "deleted by bash\nstaged\n")
	e.userGit("add", "gone.txt")
	e.write("ext.txt", "extension's before\nunstaged\n")
	repoBefore := e.userRepoState()
	filesBefore := e.fileState()

	e.llm.Append(
		llmtest.ToolReply("edit", map[string]any{"path": "edit.txt", "edits": []map[string]any{{"oldText": "old line", "newText": "new line"}}}),
		llmtest.ToolReply("bash", map[string]any{"command": "printf 'made by bash\\n' > made.txt && mkdir -p sub && echo deep > sub/deep.txt && chmod 644 script.sh && rm gone.txt"}),
		llmtest.ToolReply("put", map[string]any{"path": ext, "text": "written by the extension\n"}),
		llmtest.TextReply("Done."),
	)
	e.installGlobalExt("writeext", map[string]any{"exec": writeExt(t)})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "change things\nplease"})
	frames := p.until(isType("done"))
	for _, f := range frames {
		if f["type"] == "tool_result" && f["is_error"] != false {
			t.Fatalf("a tool failed: %v\nstderr: %s", f, p.errb.String())
		}
	}
	filesAfter := e.fileState()
	if filesAfter == filesBefore || e.read("ext.txt") != "written by the extension\n" {
		t.Fatalf("the turn changed nothing:\n%s", filesAfter)
	}

	p.send(map[string]any{"id": "l", "type": "checkpoints"})
	cps := dataOf(t, p.response("l"))["checkpoints"].([]any)
	if len(cps) != 1 {
		t.Fatalf("checkpoints = %v, want one", cps)
	}
	cp := cps[0].(map[string]any)
	if cp["message_index"] != float64(0) || cp["prompt"] != "change things" || cp["files_changed"] != float64(6) || cp["id"] == "" || cp["time"] == "" {
		t.Fatalf("checkpoint = %v", cp)
	}
	id := cp["id"].(string)

	p.send(map[string]any{"id": "d", "type": "checkpoint_diff", "checkpoint": id})
	files := dataOf(t, p.response("d"))["files"].([]any)
	var got []string
	for _, f := range files {
		m := f.(map[string]any)
		got = append(got, m["status"].(string)+" "+m["path"].(string))
		if m["path"] == "edit.txt" && !strings.Contains(m["diff"].(string), "-old line\n+new line\n") {
			t.Fatalf("edit.txt's diff: %s", m["diff"])
		}
	}
	if want := "modified edit.txt|modified ext.txt|deleted gone.txt|added made.txt|modified script.sh|added sub/deep.txt"; strings.Join(got, "|") != want {
		t.Fatalf("diff files = %s\nwant %s", strings.Join(got, "|"), want)
	}

	p.send(map[string]any{"id": "m", "type": "get_messages"})
	turn := len(dataOf(t, p.response("m"))["messages"].([]any))

	// Code only: the files come back, the conversation stays.
	p.send(map[string]any{"id": "r1", "type": "restore", "checkpoint": id, "mode": "code"})
	r1 := dataOf(t, p.response("r1"))
	if got := e.fileState(); got != filesBefore {
		t.Fatalf("after restoring the code:\n%s\nwant:\n%s", got, filesBefore)
	}
	if r1["message_count"] != float64(turn) || r1["messages_removed"] != float64(0) || len(r1["files"].([]any)) != 6 {
		t.Fatalf("restore answered %v", r1)
	}
	if got := e.userRepoState(); got != repoBefore {
		t.Fatalf("the user's repository changed:\n%s\nwant:\n%s", got, repoBefore)
	}

	// Restoring the restore's own checkpoint brings the turn's work back.
	p.send(map[string]any{"id": "r2", "type": "restore", "checkpoint": r1["undo"], "mode": "code"})
	dataOf(t, p.response("r2"))
	if got := e.fileState(); got != filesAfter {
		t.Fatalf("after undoing the restore:\n%s\nwant:\n%s", got, filesAfter)
	}

	// Conversation only: the files stay, the conversation goes back to
	// before the prompt; undoing that brings the messages back.
	p.send(map[string]any{"id": "r3", "type": "restore", "checkpoint": id, "mode": "conversation"})
	r3 := dataOf(t, p.response("r3"))
	if r3["message_count"] != float64(0) || r3["messages_removed"] != float64(turn) || e.fileState() != filesAfter {
		t.Fatalf("conversation restore answered %v; files:\n%s", r3, e.fileState())
	}
	p.send(map[string]any{"id": "m2", "type": "get_messages"})
	if n := len(dataOf(t, p.response("m2"))["messages"].([]any)); n != 0 {
		t.Fatalf("%d messages after the conversation restore", n)
	}
	p.send(map[string]any{"id": "r4", "type": "restore", "checkpoint": r3["undo"], "mode": "conversation"})
	if r4 := dataOf(t, p.response("r4")); r4["message_count"] != float64(turn) {
		t.Fatalf("undoing the conversation restore answered %v", r4)
	}
	p.send(map[string]any{"id": "m3", "type": "get_messages"})
	if msgs := dataOf(t, p.response("m3"))["messages"].([]any); len(msgs) != turn || !strings.Contains(toJSON(msgs[0]), "change things") {
		t.Fatalf("after undoing the conversation restore: %d messages, want %d: %s", len(msgs), turn, toJSON(msgs))
	}

	// Both at once.
	p.send(map[string]any{"id": "r5", "type": "restore", "checkpoint": id, "mode": "both"})
	r5 := dataOf(t, p.response("r5"))
	if r5["message_count"] != float64(0) || e.fileState() != filesBefore {
		t.Fatalf("restore both answered %v; files:\n%s", r5, e.fileState())
	}
	if got := e.userRepoState(); got != repoBefore {
		t.Fatalf("the user's repository changed:\n%s\nwant:\n%s", got, repoBefore)
	}

	// The list now has the prompt's checkpoint and one per restore, oldest
	// first.
	p.send(map[string]any{"id": "l2", "type": "checkpoints"})
	cps = dataOf(t, p.response("l2"))["checkpoints"].([]any)
	var kinds []string
	for _, c := range cps {
		kinds = append(kinds, c.(map[string]any)["kind"].(string))
	}
	if strings.Join(kinds, ",") != "prompt,restore,restore,restore,restore,restore" {
		t.Fatalf("checkpoint kinds = %v", kinds)
	}

	// Bad input and a busy run.
	p.send(map[string]any{"id": "b1", "type": "restore", "checkpoint": id, "mode": "everything"})
	if r := p.response("b1"); r["success"] != false || !strings.Contains(r["error"].(string), `"code", "conversation" or "both"`) {
		t.Fatalf("bad mode: %v", r)
	}
	p.send(map[string]any{"id": "b2", "type": "restore", "checkpoint": "nope", "mode": "code"})
	if r := p.response("b2"); r["success"] != false || !strings.Contains(r["error"].(string), "no such checkpoint") {
		t.Fatalf("unknown checkpoint: %v", r)
	}
	e.llm.Append(llmtest.Reply{Hang: true})
	p.send(map[string]any{"id": "busy", "type": "prompt", "message": "hang"})
	p.until(isType("user_message"))
	p.send(map[string]any{"id": "b3", "type": "restore", "checkpoint": id, "mode": "code"})
	if r := p.response("b3"); r["success"] != false || !strings.Contains(r["error"].(string), "a run is in progress") {
		t.Fatalf("restore during a run: %v", r)
	}
	p.send(map[string]any{"id": "a", "type": "abort"})
	p.until(isType("done"))

	// Without a session file nothing could restore them: they go when
	// zot rpc exits.
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("zot rpc exit: %v\n%s", err, p.errb.String())
	}
	root, _ := filepath.EvalSymlinks(e.cwd)
	store := checkpoint.Dir(e.home, root)
	refs, err := exec.Command("git", "--git-dir", store, "for-each-ref", "refs/zot/").CombinedOutput()
	if err != nil || len(refs) != 0 {
		t.Fatalf("the store keeps checkpoints of a session-less zot rpc after it exited: %s %v", refs, err)
	}
}
