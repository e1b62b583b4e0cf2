package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/internal/testenv"
)

func needGit(t testing.TB) {
	t.Helper()
	testenv.NeedCommand(t, "git", "the checkpoint store")
}

func write(t testing.TB, path, text string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// userGit runs git on the user's repository, as the user would.
func userGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@x", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@x")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// userState is everything of the user's repository a checkpoint must not
// touch: status, staged diff, stash, branches, HEAD.
func userState(t testing.TB, dir string) string {
	return userGit(t, dir, "status", "--porcelain=v1", "-uall") + "\n--staged\n" + userGit(t, dir, "diff", "--cached") +
		"\n--stash\n" + userGit(t, dir, "stash", "list") + "\n--branches\n" + userGit(t, dir, "branch", "-a", "-v") +
		"\n--index\n" + userGit(t, dir, "ls-files", "-s")
}

func TestTakeRestoreDiff(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	home, ws := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "a.txt"), "one\ntwo\n", 0o644)
	write(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	write(t, filepath.Join(ws, "sub", "gone.txt"), "keep me\n", 0o644)
	write(t, filepath.Join(ws, ".gitignore"), "ignored.log\n", 0o644)
	write(t, filepath.Join(ws, "ignored.log"), "before\n", 0o644)
	// The user's repository, with a staged change and a stash.
	userGit(t, ws, "init", "-q")
	userGit(t, ws, "add", "a.txt", ".gitignore")
	userGit(t, ws, "commit", "-q", "-m", "first")
	write(t, filepath.Join(ws, "a.txt"), "one\ntwo\nstashed\n", 0o644)
	userGit(t, ws, "stash", "-q")
	write(t, filepath.Join(ws, "a.txt"), "one\ntwo\nstaged\n", 0o644)
	userGit(t, ws, "add", "a.txt")
	write(t, filepath.Join(ws, "a.txt"), "one\ntwo\nstaged\nunstaged\n", 0o644)
	before := userState(t, ws)

	s, err := Open(ctx, home, ws)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := s.Take(ctx, Meta{Session: "sess", MessageIndex: 0, Prompt: "change things", Kind: KindPrompt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := userState(t, ws); got != before {
		t.Fatalf("a checkpoint changed the user's repository:\nbefore:\n%s\nafter:\n%s", before, got)
	}

	// The turn: an edit, a mode change, a deletion, a new file in a new
	// directory, an ignored file changed.
	write(t, filepath.Join(ws, "a.txt"), "ONE\ntwo\n", 0o644)
	os.Chmod(filepath.Join(ws, "run.sh"), 0o644)
	os.RemoveAll(filepath.Join(ws, "sub"))
	write(t, filepath.Join(ws, "new", "dir", "made.txt"), "new\n", 0o600)
	write(t, filepath.Join(ws, "ignored.log"), "after\n", 0o644)

	now, err := s.Current(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	diffs, err := s.Diff(ctx, cp, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range diffs {
		got = append(got, d.Status+" "+d.Path)
	}
	want := "modified a.txt|added new/dir/made.txt|modified run.sh|deleted sub/gone.txt"
	if strings.Join(got, "|") != want {
		t.Fatalf("diff files = %q, want %q", strings.Join(got, "|"), want)
	}
	if !strings.Contains(diffs[0].Diff, "-one\n+ONE\n") || !strings.HasPrefix(diffs[0].Diff, "diff --git a/a.txt b/a.txt\n") {
		t.Fatalf("a.txt's diff is not the unified diff checkpoint → now:\n%s", diffs[0].Diff)
	}
	if !strings.Contains(diffs[2].Diff, "old mode 100755\nnew mode 100644") {
		t.Fatalf("run.sh's diff misses the mode change:\n%s", diffs[2].Diff)
	}
	counts, err := s.FilesChanged(ctx, []Checkpoint{cp}, now)
	if err != nil || counts[0] != 4 {
		t.Fatalf("files changed = %v, %v; want 4", counts, err)
	}

	undo, err := s.Take(ctx, Meta{Session: "sess", MessageIndex: 2, Prompt: "restore " + cp.ID, Kind: KindRestore}, nil)
	if err != nil {
		t.Fatal(err)
	}
	changes, err := s.RestoreFiles(ctx, cp, undo)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(changes) != "[{a.txt restored} {new/dir/made.txt removed} {run.sh restored} {sub/gone.txt recreated}]" {
		t.Fatalf("changes = %v", changes)
	}
	checkFile(t, filepath.Join(ws, "a.txt"), "one\ntwo\nstaged\nunstaged\n", 0o644)
	checkFile(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\necho hi\n", 0o755)
	checkFile(t, filepath.Join(ws, "sub", "gone.txt"), "keep me\n", 0o644)
	checkFile(t, filepath.Join(ws, "ignored.log"), "after\n", 0o644) // ignored: left alone
	if _, err := os.Stat(filepath.Join(ws, "new")); !os.IsNotExist(err) {
		t.Fatalf("the created directory is still there: %v", err)
	}
	if got := userState(t, ws); got != before {
		t.Fatalf("a restore changed the user's repository:\nbefore:\n%s\nafter:\n%s", before, got)
	}

	// Restoring the restore's checkpoint brings the turn's work back.
	again, err := s.Take(ctx, Meta{Session: "sess", MessageIndex: 2, Prompt: "restore " + undo.ID, Kind: KindRestore}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RestoreFiles(ctx, undo, again); err != nil {
		t.Fatal(err)
	}
	checkFile(t, filepath.Join(ws, "a.txt"), "ONE\ntwo\n", 0o644)
	checkFile(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\necho hi\n", 0o644)
	checkFile(t, filepath.Join(ws, "new", "dir", "made.txt"), "new\n", 0o644)
	if _, err := os.Stat(filepath.Join(ws, "sub", "gone.txt")); !os.IsNotExist(err) {
		t.Fatalf("sub/gone.txt is back after undoing the restore: %v", err)
	}

	list, err := s.List(ctx, "sess")
	if err != nil || len(list) != 3 || list[0].ID != cp.ID || list[1].ID != undo.ID || list[2].Kind != KindRestore || list[0].Prompt != "change things" {
		t.Fatalf("list = %+v, %v", list, err)
	}
	if other, _ := s.List(ctx, "other"); len(other) != 0 {
		t.Fatalf("another session sees %d checkpoints", len(other))
	}
}

func checkFile(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != text {
		t.Fatalf("%s = %q, want %q", path, b, text)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm()&0o111 != mode&0o111 {
		t.Fatalf("%s mode %v, want %v", path, fi.Mode().Perm(), mode)
	}
}

func TestBuffersAndLargeFiles(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	home, ws := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "a.go"), "package a\n", 0o644)
	big := strings.Repeat("x", MaxFileSize+1)
	write(t, filepath.Join(ws, "big.bin"), big, 0o644)
	s, err := Open(ctx, home, ws)
	if err != nil {
		t.Fatal(err)
	}
	// The editor's buffer of a.go has unsaved text.
	cp, err := s.Take(ctx, Meta{Session: "s", MessageIndex: 0, Prompt: "p", Kind: KindPrompt}, map[string]string{filepath.Join(ws, "a.go"): "package a // typed\n"})
	if err != nil {
		t.Fatal(err)
	}
	texts, err := s.Texts(ctx, cp, []string{"a.go", "big.bin", "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(texts) != 1 || texts["a.go"] != "package a // typed\n" {
		t.Fatalf("texts = %q; want the buffer's a.go only (big.bin is over the limit)", texts)
	}
	// A large file that appears later is left out too (found among what
	// the add took), and stays out.
	write(t, filepath.Join(ws, "later.bin"), big, 0o644)
	write(t, filepath.Join(ws, "small.txt"), "small", 0o644)
	cp2, err := s.Take(ctx, Meta{Session: "s", MessageIndex: 1, Prompt: "p2", Kind: KindPrompt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, "later.bin"), "small now", 0o644)
	cp3, err := s.Take(ctx, Meta{Session: "s", MessageIndex: 2, Prompt: "p3", Kind: KindPrompt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []Checkpoint{cp2, cp3} {
		texts, err := s.Texts(ctx, c, []string{"later.bin", "small.txt"})
		if err != nil || len(texts) != 1 || texts["small.txt"] != "small" {
			t.Fatalf("checkpoint %s recorded %d files (%v); want small.txt only", c.Prompt, len(texts), err)
		}
	}
	os.Remove(filepath.Join(ws, "later.bin"))
	os.Remove(filepath.Join(ws, "small.txt"))
	// The disk restore puts the disk's text back, not the buffer's.
	write(t, filepath.Join(ws, "a.go"), "package b\n", 0o644)
	os.Remove(filepath.Join(ws, "big.bin"))
	undo, err := s.Take(ctx, Meta{Session: "s", MessageIndex: 0, Prompt: "r", Kind: KindRestore}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RestoreFiles(ctx, cp, undo); err != nil {
		t.Fatal(err)
	}
	checkFile(t, filepath.Join(ws, "a.go"), "package a\n", 0o644)
	if _, err := os.Stat(filepath.Join(ws, "big.bin")); !os.IsNotExist(err) {
		t.Fatal("big.bin was recorded and restored despite the size limit")
	}
}

func TestPrune(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	home, ws := t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, "a"), "a", 0o644)
	s, err := Open(ctx, home, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, sess := range []string{"live", "gone", "gone"} {
		if _, err := s.Take(ctx, Meta{Session: sess, MessageIndex: 0, Prompt: "p", Kind: KindPrompt}, nil); err != nil {
			t.Fatal(err)
		}
	}
	n, err := s.Prune(ctx, func(sess string, _ time.Time) bool { return sess == "live" })
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v; want 2", n, err)
	}
	if l, _ := s.List(ctx, "gone"); len(l) != 0 {
		t.Fatalf("gone keeps %d checkpoints", len(l))
	}
	if l, _ := s.List(ctx, "live"); len(l) != 1 {
		t.Fatalf("live has %d checkpoints, want 1", len(l))
	}
}

func TestHomeAndRootAreNotRecorded(t *testing.T) {
	needGit(t)
	h, err := os.UserHomeDir()
	if err != nil {
		testenv.Skip(t, "no home directory: %v", err)
	}
	for _, ws := range []string{h, string(filepath.Separator)} {
		if _, err := Open(context.Background(), t.TempDir(), ws); err == nil || !strings.Contains(err.Error(), "checkpoints are off") {
			t.Errorf("Open(%s) = %v; want checkpoints off", ws, err)
		}
	}
}

// A directory that became a symlink to outside the workspace (ignored, so
// no restore removes it) does not carry a restored file out.
func TestRestoreStaysInTheWorkspace(t *testing.T) {
	needGit(t)
	ctx := context.Background()
	home, ws, outside := t.TempDir(), t.TempDir(), t.TempDir()
	write(t, filepath.Join(ws, ".gitignore"), "/link/\n", 0o644)
	write(t, filepath.Join(ws, "link", "f.txt"), "in the workspace\n", 0o644)
	s, err := Open(ctx, home, ws)
	if err != nil {
		t.Fatal(err)
	}
	// Recorded before it was ignored: drop the ignore for the first take.
	os.Remove(filepath.Join(ws, ".gitignore"))
	cp, err := s.Take(ctx, Meta{Session: "s", Prompt: "p", Kind: KindPrompt}, nil)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(ws, ".gitignore"), "/link\n", 0o644)
	os.RemoveAll(filepath.Join(ws, "link"))
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		testenv.Skip(t, "no symlinks here: %v", err)
	}
	undo, err := s.Take(ctx, Meta{Session: "s", Prompt: "r", Kind: KindRestore}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.RestoreFiles(ctx, cp, undo); err == nil || !strings.Contains(err.Error(), "out of the workspace") {
		t.Fatalf("restore through the symlink: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "f.txt")); !os.IsNotExist(err) {
		t.Fatalf("a file was written outside the workspace: %v", err)
	}
}
