// Package checkpoint records the workspace's files before every prompt's
// run, so that a user can go back to them: restore the files, compare
// them with now.
//
// The store is a shadow git repository outside the user's: its git
// directory is $ZOT_HOME/checkpoints/<workspace hash>/, its work tree the
// workspace, its index its own. The user's .git, index, stash, branches
// and hooks are never read or written (docs/decisions.md, "Checkpoints").
// What a checkpoint records: every file git would add (the workspace's
// .gitignore files and .git/info/exclude are honoured), but files larger
// than MaxFileSize and the contents of nested repositories (a directory
// with its own .git is recorded as that repository's commit only, and a
// restore leaves it alone). A checkpoint taken in zot lsp also records
// the editor's unsaved buffers (a second commit over the disk's).
//
// Each checkpoint is a commit under refs/zot/<session>/; its message is
// its metadata (JSON). Storage is shared by the checkpoints (git stores
// one blob per distinct content), bounded per session (MaxPerSession) and
// pruned with the sessions (Prune).
package checkpoint

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/internal/atomicfile"
)

// MaxFileSize is the largest file a checkpoint records. Larger files (a
// build artefact, a data set) are left out: a restore neither brings them
// back nor removes them.
const MaxFileSize = 10 << 20

// MaxPerSession bounds a session's checkpoints: taking one more drops the
// oldest.
const MaxPerSession = 200

// Kinds of checkpoint: before a prompt's run, or before a restore (so the
// restore can be undone).
const (
	KindPrompt  = "prompt"
	KindRestore = "restore"
)

// Checkpoint is one recorded state of the workspace.
type Checkpoint struct {
	ID           string          // the commit's id, abbreviated
	Session      string          // the session it belongs to
	MessageIndex int             // the conversation's length when it was taken: the prompt's index
	Prompt       string          // the prompt's text (its first line), or what the restore was
	Kind         string          // KindPrompt or KindRestore
	Time         time.Time       // when it was taken
	Extra        json.RawMessage // the caller's (Meta.Extra)
	disk         string          // the tree of the files on disk
	view         string          // the tree with the editor's unsaved buffers over the disk's
	ref          string
	commitID     string
}

// Meta is what a checkpoint records beside the files.
type Meta struct {
	Session      string `json:"session"`
	MessageIndex int    `json:"message_index"`
	Prompt       string `json:"prompt"`
	Kind         string `json:"kind"`
	// Extra is the caller's own (the runtime's conversation data).
	Extra json.RawMessage `json:"extra,omitempty"`
}

// meta is a checkpoint commit's message.
type meta struct {
	Meta
	Time int64  `json:"time"`           // unix nanoseconds
	Disk string `json:"disk,omitempty"` // the disk's tree when the commit's own tree has the buffers
}

// Store is one workspace's checkpoints. It is safe for concurrent use.
type Store struct {
	root    string // the workspace
	dir     string // the shadow git directory
	index   string
	gitPath string
	mu      sync.Mutex // one git index operation at a time
	takes   int        // checkpoints taken by this process (bound runs every 16th)
	primed  bool       // the first snapshot of this process looked for large files
}

// Dir is where the checkpoints of workspace live under home.
func Dir(home, workspace string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(workspace)))
	return filepath.Join(home, "checkpoints", hex.EncodeToString(sum[:8]))
}

// Open opens (creating it when needed) the store of workspace under home.
func Open(ctx context.Context, home, workspace string) (*Store, error) {
	gitPath, err := exec.LookPath("git")
	if err != nil {
		return nil, errNoGit
	}
	root, err := filepath.Abs(workspace)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if err := tooBroad(root); err != nil {
		return nil, err
	}
	dir := Dir(home, root)
	s := &Store{root: root, dir: dir, index: filepath.Join(dir, "zot-index"), gitPath: gitPath}
	if _, err := os.Stat(filepath.Join(dir, "HEAD")); err == nil {
		return s, nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	if _, err := s.git(ctx, "", nil, "init", "-q"); err != nil {
		return nil, err
	}
	// Bytes as they are: no end-of-line conversion, filter (LFS) or
	// ident expansion from the workspace's .gitattributes.
	attrs := "* -text -filter -ident -working-tree-encoding\n"
	if err := os.WriteFile(filepath.Join(dir, "info", "attributes"), []byte(attrs), 0o600); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	// zot's own home, when it lies in the workspace (a test's), is not
	// the user's work.
	var exclude strings.Builder
	if rel, err := filepath.Rel(root, home); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		fmt.Fprintf(&exclude, "/%s/\n", filepath.ToSlash(rel))
	}
	if err := os.WriteFile(filepath.Join(dir, "info", "exclude"), []byte(exclude.String()), 0o600); err != nil {
		return nil, fmt.Errorf("checkpoint: %w", err)
	}
	os.WriteFile(filepath.Join(dir, "description"), []byte("zot's checkpoints of "+root+"\n"), 0o600)
	return s, nil
}

// tooBroad refuses a workspace that is the user's home directory or a
// filesystem root: recording it would copy everything the user has.
func tooBroad(root string) error {
	if filepath.Dir(root) == root {
		return fmt.Errorf("checkpoints are off: the workspace %s is a filesystem root; open a project directory", root)
	}
	if h, err := os.UserHomeDir(); err == nil {
		if r, err := filepath.EvalSymlinks(h); err == nil {
			h = r
		}
		if filepath.Clean(h) == root {
			return fmt.Errorf("checkpoints are off: the workspace %s is your home directory; open a project directory", root)
		}
	}
	return nil
}

// Root is the workspace.
func (s *Store) Root() string { return s.root }

// Rel is path relative to the workspace, slash-separated; ok is false
// outside it.
func (s *Store) Rel(path string) (string, bool) {
	r, err := filepath.Rel(s.root, path)
	if err != nil || r == "." || strings.HasPrefix(r, ".."+string(filepath.Separator)) || r == ".." || filepath.IsAbs(r) {
		return "", false
	}
	return filepath.ToSlash(r), true
}

// Abs is the file of a checkpoint path.
func (s *Store) Abs(rel string) string { return filepath.Join(s.root, filepath.FromSlash(rel)) }

// Take records the workspace now: its disk, and buffers (absolute path →
// text: the editor's unsaved buffers; nil outside zot lsp) over it.
func (s *Store) Take(ctx context.Context, md Meta, buffers map[string]string) (Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, view, err := s.snapshot(ctx, buffers)
	if err != nil {
		return Checkpoint{}, err
	}
	now := time.Now().UTC()
	m := meta{Meta: md, Time: now.UnixNano()}
	if view != disk {
		m.Disk = disk
	}
	msg, _ := json.Marshal(m)
	commit, err := s.writeCommit(view, now, msg)
	if err != nil {
		return Checkpoint{}, err
	}
	ref := fmt.Sprintf("%s%020d", sessionRefs(md.Session), now.UnixNano())
	if err := s.writeRef(ref, commit); err != nil {
		return Checkpoint{}, err
	}
	s.takes++
	if s.takes%16 == 0 {
		s.bound(ctx, md.Session)
	}
	cp := Checkpoint{ID: commit[:12], Session: md.Session, MessageIndex: md.MessageIndex, Prompt: md.Prompt, Kind: md.Kind, Time: now, Extra: md.Extra, disk: disk, view: view, ref: ref, commitID: commit}
	return cp, nil
}

// writeCommit stores a commit of tree with msg as a loose object, as git
// commit-tree would, without the process it costs: the checkpoint's
// bound is 50 ms.
func (s *Store) writeCommit(tree string, at time.Time, msg []byte) (string, error) {
	body := fmt.Sprintf("tree %s\nauthor zot <zot@localhost> %d +0000\ncommitter zot <zot@localhost> %d +0000\n\n%s\n", tree, at.Unix(), at.Unix(), msg)
	obj := fmt.Sprintf("commit %d\x00%s", len(body), body)
	sum := sha1.Sum([]byte(obj))
	id := hex.EncodeToString(sum[:])
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(obj))
	if err := zw.Close(); err != nil {
		return "", err
	}
	path := filepath.Join(s.dir, "objects", id[:2], id[2:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	if err := atomicfile.Write(path, z.Bytes(), 0o444); err != nil {
		return "", fmt.Errorf("checkpoint: %w", err)
	}
	return id, nil
}

// writeRef points ref at commit, as git update-ref would (a loose ref).
func (s *Store) writeRef(ref, commit string) error {
	path := filepath.Join(s.dir, filepath.FromSlash(ref))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if err := atomicfile.Write(path, []byte(commit+"\n"), 0o644); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return nil
}

// sessionRefs is the ref prefix of a session's checkpoints.
func sessionRefs(session string) string {
	return "refs/zot/" + refSafe(session) + "/"
}

var unsafeRef = regexp.MustCompile(`[^A-Za-z0-9_.-]`)

func refSafe(s string) string {
	s = unsafeRef.ReplaceAllString(s, "_")
	s = strings.Trim(s, ".")
	if s == "" {
		return "_"
	}
	return s
}

// bound drops a session's oldest checkpoints past MaxPerSession.
func (s *Store) bound(ctx context.Context, session string) {
	refs, err := s.refs(ctx, sessionRefs(session))
	if err != nil || len(refs) <= MaxPerSession {
		return
	}
	var del strings.Builder
	for _, r := range refs[:len(refs)-MaxPerSession] {
		fmt.Fprintf(&del, "delete %s\n", r.ref)
	}
	s.git(ctx, "", strings.NewReader(del.String()), "update-ref", "--stdin")
}

// snapshot writes the disk's tree and the tree with buffers over it (the
// same tree without buffers).
func (s *Store) snapshot(ctx context.Context, buffers map[string]string) (disk, view string, err error) {
	if !s.primed {
		// The first checkpoint of this process looks for large files
		// among all the changed and new ones; later ones among what their
		// add took (a full scan more would double a checkpoint's cost).
		big, err := s.largeFiles(ctx)
		if err != nil {
			return "", "", err
		}
		if err := s.leaveOut(ctx, big); err != nil {
			return "", "", err
		}
		s.primed = true
	}
	out, err := s.git(ctx, "", nil, "add", "-A", "-v", "--ignore-errors", "--", ".")
	if err != nil {
		return "", "", err
	}
	var big []string
	for _, line := range strings.Split(string(out), "\n") {
		p, ok := strings.CutPrefix(line, "add '")
		if !ok || !strings.HasSuffix(p, "'") {
			continue
		}
		p = strings.TrimSuffix(p, "'")
		if fi, err := os.Lstat(s.Abs(p)); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
			big = append(big, p)
		}
	}
	if err := s.leaveOut(ctx, big); err != nil {
		return "", "", err
	}
	out, err = s.git(ctx, "", nil, "write-tree")
	if err != nil {
		return "", "", err
	}
	disk = strings.TrimSpace(string(out))
	view, err = s.overlay(ctx, disk, buffers)
	return disk, view, err
}

// leaveOut takes large files out of the store's index and excludes them
// from then on (the store's info/exclude): a file once seen over
// MaxFileSize is not recorded again, whatever its size later.
func (s *Store) leaveOut(ctx context.Context, big []string) error {
	if len(big) == 0 {
		return nil
	}
	rm := []string{"rm", "--cached", "-q", "--ignore-unmatch", "--"}
	var ex strings.Builder
	for _, p := range big {
		rm = append(rm, ":(literal)"+p)
		ex.WriteString("/" + ignoreEscape.Replace(p) + "\n")
	}
	if _, err := s.git(ctx, "", nil, rm...); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(s.dir, "info", "exclude"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	defer f.Close()
	_, err = f.WriteString(ex.String())
	return err
}

// ignoreEscape makes a path a literal gitignore pattern.
var ignoreEscape = strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "!", `\!`, "#", `\#`, " ", `\ `)

// largeFiles lists the changed or new files over MaxFileSize.
func (s *Store) largeFiles(ctx context.Context) ([]string, error) {
	out, err := s.git(ctx, "", nil, "ls-files", "-z", "-m", "-o", "--exclude-standard")
	if err != nil {
		return nil, err
	}
	var big []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p == "" {
			continue
		}
		if fi, err := os.Lstat(s.Abs(p)); err == nil && fi.Mode().IsRegular() && fi.Size() > MaxFileSize {
			big = append(big, p)
		}
	}
	return big, nil
}

// overlay writes the tree of disk with buffers' texts over it.
func (s *Store) overlay(ctx context.Context, disk string, buffers map[string]string) (string, error) {
	type entry struct{ rel, mode, text string }
	var entries []entry
	for path, text := range buffers {
		rel, ok := s.Rel(path)
		if !ok || len(text) > MaxFileSize {
			continue
		}
		if b, err := os.ReadFile(path); err == nil && string(b) == text {
			continue // the buffer is what the disk has
		}
		mode := "100644"
		if fi, err := os.Stat(path); err == nil && fi.Mode()&0o111 != 0 {
			mode = "100755"
		}
		entries = append(entries, entry{rel, mode, text})
	}
	if len(entries) == 0 {
		return disk, nil
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].rel < entries[j].rel })
	idx := s.index + ".buffers"
	defer os.Remove(idx)
	if _, err := s.git(ctx, idx, nil, "read-tree", disk); err != nil {
		return "", err
	}
	var info strings.Builder
	for _, e := range entries {
		out, err := s.git(ctx, "", strings.NewReader(e.text), "hash-object", "-w", "--no-filters", "--stdin")
		if err != nil {
			return "", err
		}
		fmt.Fprintf(&info, "%s %s\t%s\n", e.mode, strings.TrimSpace(string(out)), e.rel)
	}
	if _, err := s.git(ctx, idx, strings.NewReader(info.String()), "update-index", "--index-info"); err != nil {
		return "", err
	}
	out, err := s.git(ctx, idx, nil, "write-tree")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

type refEntry struct{ ref, commit, tree, body string }

func (s *Store) refs(ctx context.Context, prefix string) ([]refEntry, error) {
	out, err := s.git(ctx, "", nil, "for-each-ref", "--sort=refname", "--format=%(refname)%00%(objectname)%00%(tree)%00%(contents)%00%00", prefix)
	if err != nil {
		return nil, err
	}
	var refs []refEntry
	for _, rec := range strings.Split(string(out), "\x00\x00") {
		rec = strings.TrimLeft(rec, "\n")
		parts := strings.SplitN(rec, "\x00", 4)
		if len(parts) != 4 {
			continue
		}
		refs = append(refs, refEntry{ref: parts[0], commit: parts[1], tree: parts[2], body: strings.TrimSpace(parts[3])})
	}
	return refs, nil
}

// List is a session's checkpoints, oldest first.
func (s *Store) List(ctx context.Context, session string) ([]Checkpoint, error) {
	refs, err := s.refs(ctx, sessionRefs(session))
	if err != nil {
		return nil, err
	}
	cps := make([]Checkpoint, 0, len(refs))
	for _, r := range refs {
		var m meta
		if json.Unmarshal([]byte(r.body), &m) != nil {
			continue
		}
		cp := Checkpoint{ID: r.commit[:12], Session: m.Session, MessageIndex: m.MessageIndex, Prompt: m.Prompt, Kind: m.Kind, Time: time.Unix(0, m.Time).UTC(), Extra: m.Extra, ref: r.ref, commitID: r.commit}
		cp.view = r.tree
		cp.disk = cp.view
		if m.Disk != "" {
			cp.disk = m.Disk
		}
		cps = append(cps, cp)
	}
	return cps, nil
}

// ErrUnknown is a checkpoint id not among the session's.
var ErrUnknown = errors.New("no such checkpoint")

// Find is the session's checkpoint id (or a prefix of it, at least 4
// characters).
func (s *Store) Find(ctx context.Context, session, id string) (Checkpoint, error) {
	cps, err := s.List(ctx, session)
	if err != nil {
		return Checkpoint{}, err
	}
	if len(id) >= 4 {
		for _, cp := range cps {
			if strings.HasPrefix(cp.ID, id) {
				return cp, nil
			}
		}
	}
	return Checkpoint{}, fmt.Errorf("%w %q in this session (list them with checkpoints)", ErrUnknown, id)
}

// Current writes the workspace's trees now without taking a checkpoint:
// what compare and files_changed compare with.
func (s *Store) Current(ctx context.Context, buffers map[string]string) (State, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	disk, view, err := s.snapshot(ctx, buffers)
	return State{disk: disk, view: view}, err
}

// State is the workspace at one moment (Current).
type State struct{ disk, view string }

// FilesChanged counts, for each checkpoint, the files that differ between
// it and now (with the buffers): what restoring its code would change.
func (s *Store) FilesChanged(ctx context.Context, cps []Checkpoint, now State) ([]int, error) {
	counts := make([]int, len(cps))
	if len(cps) == 0 {
		return counts, nil
	}
	// One diff-tree for all of them: each pair of trees on a line (the
	// trees as hex ids: diff-tree --stdin takes nothing else).
	trees := make([]string, len(cps))
	var in strings.Builder
	for i, cp := range cps {
		trees[i] = cp.view
		fmt.Fprintf(&in, "%s %s\n", trees[i], now.view)
	}
	out, err := s.git(ctx, "", strings.NewReader(in.String()), "diff-tree", "--stdin", "-r", "--no-renames", "--name-only")
	if err != nil {
		return nil, err
	}
	i := -1
	for _, line := range strings.Split(string(out), "\n") {
		if i+1 < len(trees) && line == trees[i+1]+" "+now.view {
			i++
			continue
		}
		if line != "" && i >= 0 {
			counts[i]++
		}
	}
	return counts, nil
}

// FileDiff is one file's difference between a checkpoint and now.
type FileDiff struct {
	Path   string `json:"path"`   // slash-separated, relative to the workspace
	Status string `json:"status"` // "added" (since the checkpoint), "deleted" or "modified"
	Diff   string `json:"diff"`   // unified diff, checkpoint → now
}

// Diff is the difference between cp and now (with the buffers), file by
// file.
func (s *Store) Diff(ctx context.Context, cp Checkpoint, now State) ([]FileDiff, error) {
	names, err := s.git(ctx, "", nil, "diff-tree", "-r", "-z", "--no-renames", "--name-status", cp.view, now.view)
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimSuffix(string(names), "\x00"), "\x00")
	var diffs []FileDiff
	for i := 0; i+1 < len(f); i += 2 {
		st := map[string]string{"A": "added", "D": "deleted"}[f[i]]
		if st == "" {
			st = "modified"
		}
		diffs = append(diffs, FileDiff{Path: f[i+1], Status: st})
	}
	if len(diffs) == 0 {
		return nil, nil
	}
	patch, err := s.git(ctx, "", nil, "diff-tree", "-r", "-p", "--no-renames", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/", cp.view, now.view)
	if err != nil {
		return nil, err
	}
	parts := splitPatch(string(patch))
	if len(parts) == len(diffs) {
		for i := range diffs {
			diffs[i].Diff = parts[i]
		}
	}
	return diffs, nil
}

// splitPatch cuts a multi-file patch at its "diff --git" lines.
func splitPatch(p string) []string {
	var parts []string
	start := -1
	for i := 0; i < len(p); {
		if strings.HasPrefix(p[i:], "diff --git ") {
			if start >= 0 {
				parts = append(parts, p[start:i])
			}
			start = i
		}
		nl := strings.IndexByte(p[i:], '\n')
		if nl < 0 {
			break
		}
		i += nl + 1
	}
	if start >= 0 {
		parts = append(parts, p[start:])
	}
	return parts
}

// Change is one file a restore changed.
type Change struct {
	Path   string `json:"path"`   // slash-separated, relative to the workspace
	Action string `json:"action"` // "restored" (its bytes and mode put back), "removed" (created since) or "recreated" (deleted since)
}

// RestoreFiles puts the disk back as cp recorded it: files changed since
// get their bytes and mode back, files created since are removed, files
// deleted since come back. now is the disk as it is (a checkpoint taken
// just before, so the restore can be undone). Large files and nested
// repositories are left as they are.
func (s *Store) RestoreFiles(ctx context.Context, cp Checkpoint, now Checkpoint) ([]Change, error) {
	out, err := s.git(ctx, "", nil, "diff-tree", "-r", "-z", "--no-renames", "--raw", cp.disk, now.disk)
	if err != nil {
		return nil, err
	}
	type entry struct{ mode, sha, status, path string }
	var entries []entry
	f := strings.Split(string(out), "\x00")
	for i := 0; i+1 < len(f); i += 2 {
		// :<src mode> <dst mode> <src sha> <dst sha> <status>
		h := strings.Fields(strings.TrimPrefix(f[i], ":"))
		if len(h) != 5 {
			continue
		}
		if h[0] == "160000" || h[1] == "160000" {
			continue // a nested repository: not ours to restore
		}
		entries = append(entries, entry{mode: h[0], sha: h[2], status: h[4], path: f[i+1]})
	}
	var changes []Change
	// Created files go first: a file may stand where a directory must be
	// made again.
	for _, e := range entries {
		if e.status != "A" {
			continue
		}
		abs := s.Abs(e.path)
		if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return changes, fmt.Errorf("checkpoint: removing %s: %w", e.path, err)
		}
		s.removeEmptyParents(filepath.Dir(abs))
		changes = append(changes, Change{Path: e.path, Action: "removed"})
	}
	var want []entry
	for _, e := range entries {
		if e.status != "A" {
			want = append(want, e)
		}
	}
	if len(want) == 0 {
		return changes, nil
	}
	var in strings.Builder
	for _, e := range want {
		in.WriteString(e.sha + "\n")
	}
	blobs, err := s.git(ctx, "", strings.NewReader(in.String()), "cat-file", "--batch")
	if err != nil {
		return changes, err
	}
	r := bufio.NewReader(bytes.NewReader(blobs))
	for _, e := range want {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return changes, fmt.Errorf("checkpoint: reading %s from the store: %w", e.path, err)
		}
		h := strings.Fields(hdr)
		if len(h) != 3 {
			return changes, fmt.Errorf("checkpoint: %s is missing from the store: %s", e.path, strings.TrimSpace(hdr))
		}
		n, _ := strconv.Atoi(h[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return changes, fmt.Errorf("checkpoint: reading %s from the store: %w", e.path, err)
		}
		data = data[:n]
		if err := s.writeFile(e.path, e.mode, data); err != nil {
			return changes, err
		}
		action := "restored"
		if e.status == "D" {
			action = "recreated"
		}
		changes = append(changes, Change{Path: e.path, Action: action})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}

// writeFile puts a recorded file back with its mode.
func (s *Store) writeFile(rel, mode string, data []byte) error {
	abs := s.Abs(rel)
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return fmt.Errorf("checkpoint: restoring %s: %w", rel, err)
	}
	// A directory of the path that became a symlink (an ignored one, which
	// no restore removes) must not take the write out of the workspace.
	if real, err := filepath.EvalSymlinks(filepath.Dir(abs)); err != nil || (real != s.root && !strings.HasPrefix(real, s.root+string(filepath.Separator))) {
		return fmt.Errorf("checkpoint: not restoring %s: its directory leads out of the workspace (a symlink)", rel)
	}
	if fi, err := os.Lstat(abs); err == nil && fi.IsDir() {
		// A directory stands where the file was: its contents were
		// created since and were removed, unless ignored ones remain.
		if err := os.Remove(abs); err != nil {
			return fmt.Errorf("checkpoint: restoring %s: a directory is in the way: %w", rel, err)
		}
	}
	switch mode {
	case "120000":
		os.Remove(abs)
		if err := os.Symlink(string(data), abs); err != nil {
			return fmt.Errorf("checkpoint: restoring %s: %w", rel, err)
		}
		return nil
	case "100755":
		if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			os.Remove(abs)
		}
		if err := atomicfile.Write(abs, data, 0o755); err != nil {
			return fmt.Errorf("checkpoint: restoring %s: %w", rel, err)
		}
		return os.Chmod(abs, 0o755)
	default:
		if fi, err := os.Lstat(abs); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			os.Remove(abs)
		}
		if err := atomicfile.Write(abs, data, 0o644); err != nil {
			return fmt.Errorf("checkpoint: restoring %s: %w", rel, err)
		}
		return os.Chmod(abs, 0o644)
	}
}

// removeEmptyParents removes the directories a removed file leaves empty,
// up to the workspace.
func (s *Store) removeEmptyParents(dir string) {
	for dir != s.root && strings.HasPrefix(dir, s.root+string(filepath.Separator)) {
		if os.Remove(dir) != nil {
			return
		}
		dir = filepath.Dir(dir)
	}
}

// Texts reads what cp recorded of the given files (workspace-relative):
// the buffers' text where the editor had one, else the disk's. A file
// cp did not have is absent from the map.
func (s *Store) Texts(ctx context.Context, cp Checkpoint, rels []string) (map[string]string, error) {
	texts := map[string]string{}
	if len(rels) == 0 {
		return texts, nil
	}
	var in strings.Builder
	for _, r := range rels {
		fmt.Fprintf(&in, "%s:%s\n", cp.view, r)
	}
	out, err := s.git(ctx, "", strings.NewReader(in.String()), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	r := bufio.NewReader(bytes.NewReader(out))
	for _, rel := range rels {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		h := strings.Fields(hdr)
		if len(h) != 3 || h[1] != "blob" {
			continue // missing (or a tree): not in the checkpoint
		}
		n, _ := strconv.Atoi(h[2])
		data := make([]byte, n+1)
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, err
		}
		texts[rel] = string(data[:n])
	}
	return texts, nil
}

// Copy files checkpoints under another session too (a fork carries the
// checkpoints of the conversation it keeps). The commits are shared.
func (s *Store) Copy(ctx context.Context, cps []Checkpoint, session string) error {
	var in strings.Builder
	for _, cp := range cps {
		tail := cp.ref[strings.LastIndexByte(cp.ref, '/')+1:]
		fmt.Fprintf(&in, "create %s%s %s\n", sessionRefs(session), tail, cp.commitID)
	}
	_, err := s.git(ctx, "", strings.NewReader(in.String()), "update-ref", "--stdin")
	return err
}

// Prune deletes the checkpoints keep says no to (their session is gone).
// The objects no checkpoint reaches any more stay until Collect.
func (s *Store) Prune(ctx context.Context, keep func(session string, taken time.Time) bool) (int, error) {
	refs, err := s.refs(ctx, "refs/zot/")
	if err != nil {
		return 0, err
	}
	var del strings.Builder
	n := 0
	for _, r := range refs {
		var m meta
		json.Unmarshal([]byte(r.body), &m)
		// The session it is filed under (a fork's copy names the
		// original in its commit).
		sess := strings.TrimPrefix(r.ref, "refs/zot/")
		sess = sess[:max(strings.IndexByte(sess, '/'), 0)]
		if !keep(sess, time.Unix(0, m.Time)) {
			fmt.Fprintf(&del, "delete %s\n", r.ref)
			n++
		}
	}
	if n == 0 {
		return 0, nil
	}
	_, err = s.git(ctx, "", strings.NewReader(del.String()), "update-ref", "--stdin")
	return n, err
}

// Collect packs the store and deletes the objects no checkpoint reaches,
// when git finds enough loose objects to be worth it (gc --auto: cheap
// otherwise). Objects younger than an hour are kept: a checkpoint being
// written by another zot on the same workspace keeps its objects.
func (s *Store) Collect(ctx context.Context) error {
	_, err := s.git(ctx, "", nil, "-c", "gc.auto=2000", "-c", "gc.pruneExpire=1.hour.ago", "-c", "gc.reflogExpireUnreachable=now", "gc", "--auto", "--quiet")
	return err
}
