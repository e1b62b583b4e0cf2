package acp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/atomicfile"
	"github.com/zot-editors/zot/internal/textdiff"
)

// workspace is the tools.Workspace of an ACP session. When the client
// offers fs.readTextFile, reads of text files go through fs/read_text_file
// and so see the editor's unsaved buffers; when it offers
// fs.writeTextFile, write and edit go through fs/write_text_file (the
// editor shows the change and can undo it). Otherwise the disk. In ask
// mode every change is first shown as a diff in session/request_permission.
// A change is judged against the agent's last read of the file: what the
// user typed since is kept (re-based) or, on the change's lines, the
// change is refused.
type workspace struct {
	ss    *session
	root  string
	fs    sdk.FileSystemCapabilities
	guard *tools.WritePolicy

	mu sync.Mutex
	// overlaid are the files the client served or was sent: the search
	// tools read them through ReadFile (their buffer may differ from the
	// disk), every other file straight from disk.
	overlaid map[string]bool
	// diffs are the changes made per tool call, for its tool_call_update.
	diffs map[string][]fileDiff
	// known is each file's text as the agent last read it (the read tool)
	// or changed it: what a write or edit is judged against, so the
	// user's typing since is re-based or refused, never overwritten. A
	// workspace lives as long as its session: a new or loaded session
	// starts with none, as its model has read nothing yet. /clear keeps
	// them: a change the model then makes without reading again is still
	// kept off what the user typed since (re-based, or refused and read).
	known map[string]string
}

type fileDiff struct {
	path, oldText, newText string
	existed                bool
}

var (
	_ tools.Workspace     = (*workspace)(nil)
	_ tools.OverlayLister = (*workspace)(nil)
	_ tools.WriteGuard    = (*workspace)(nil)
	_ tools.ReadNoter     = (*workspace)(nil)
)

func newWorkspace(ss *session, root string, allowDirs []string, caps sdk.FileSystemCapabilities) *workspace {
	w := &workspace{ss: ss, root: filepath.Clean(root), fs: caps, overlaid: map[string]bool{}, diffs: map[string][]fileDiff{},
		known: map[string]string{}}
	w.guard = &tools.WritePolicy{Root: w.root, AllowDirs: allowDirs, Ask: w.askWrite}
	return w
}

// Root is the session's cwd.
func (w *workspace) Root() string { return w.root }

// CheckWrite asks the user, in every mode, before a write outside the
// workspace and the --add-dir directories, or into a protected directory
// (the rules): one question, showing the whole change.
func (w *workspace) CheckWrite(ctx context.Context, tool, path string, change func() string) error {
	w.mu.Lock()
	policy := *w.guard
	w.mu.Unlock()
	return policy.Check(ctx, tool, path, change)
}

// SetWriteRules sets the reasons to ask (protected paths).
func (w *workspace) SetWriteRules(rules ...tools.WriteRule) {
	w.mu.Lock()
	w.guard.Rules = slices.Clone(rules)
	w.mu.Unlock()
}

func (w *workspace) askWrite(ctx context.Context, a tools.WriteApproval) (bool, error) {
	ok := w.ss.askWrite(ctx, a.Path, a.Message())
	if !ok && ctx.Err() != nil {
		return false, ctx.Err()
	}
	return ok, nil
}

// ReadFile returns the editor's text of path when the client serves
// files, else the disk's. Files missing from disk, directories and binary
// files (images) are read from disk: fs/read_text_file is for text.
func (w *workspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	disk, err := os.ReadFile(path)
	if err != nil || !w.fs.ReadTextFile || looksBinary(disk) {
		return disk, err
	}
	res, cerr := w.ss.srv.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(w.ss.id), Path: path})
	if cerr != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		w.ss.srv.logf("fs/read_text_file %s: %v; reading the disk", path, cerr)
		return disk, nil
	}
	w.mu.Lock()
	w.overlaid[path] = true
	w.mu.Unlock()
	return []byte(res.Content), nil
}

// looksBinary: a NUL byte in the first 8 KiB.
func looksBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8<<10)], 0) >= 0
}

// OverlaidPaths lists the files whose editor text may differ from the
// disk: those the client served or zot wrote through it.
func (w *workspace) OverlaidPaths() []string {
	if !w.fs.ReadTextFile {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]string, 0, len(w.overlaid))
	for p := range w.overlaid {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// noteOverlaid records a file the client holds (an embedded resource of a
// prompt): grep then reads it through the client.
func (w *workspace) noteOverlaid(path string) {
	if path == "" || !filepath.IsAbs(path) {
		return
	}
	w.mu.Lock()
	w.overlaid[filepath.Clean(path)] = true
	w.mu.Unlock()
}

// NoteRead records what the agent was shown of path: later writes and
// edits are judged against it.
func (w *workspace) NoteRead(path string, data []byte) {
	w.mu.Lock()
	w.known[path] = string(data)
	w.mu.Unlock()
}

// lastRead is path's text as the agent last read or changed it.
func (w *workspace) lastRead(path string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.known[path]
	return k, ok
}

// current is path's text now, as the tools see it (the editor's buffer
// when the client serves files). exists is false when there is no file to
// read.
func (w *workspace) current(ctx context.Context, path string) (text string, exists bool, err error) {
	b, err := w.ReadFile(ctx, path)
	if err != nil {
		if ctx.Err() != nil {
			return "", false, ctx.Err()
		}
		return "", false, nil // missing (or unreadable): written as new
	}
	return string(b), true, nil
}

// WriteFile replaces (or creates) path with data. data is the whole file
// as the model made it from its last read: what the user changed since,
// on other lines, is kept; on the same lines the write is refused.
func (w *workspace) WriteFile(ctx context.Context, path string, data []byte) error {
	cur, existed, err := w.current(ctx, path)
	if err != nil {
		return err
	}
	target := string(data)
	if read, ok := w.lastRead(path); ok && existed && read != cur {
		if target, err = textdiff.Rebase(read, target, cur); err != nil {
			return changedInEditor(w.display(path), err)
		}
	}
	return w.change(ctx, path, cur, target, existed)
}

// EditFile replaces path's text, as the edit tool just read it (the
// buffer now), with newData. The model chose the edit from its last read
// of the file: when the user changed the edit's lines since, the edit is
// refused (it would land on their typing); their changes elsewhere stay.
func (w *workspace) EditFile(ctx context.Context, path string, oldData, newData []byte) error {
	old, proposed := string(oldData), string(newData)
	if read, ok := w.lastRead(path); ok && read != old {
		// The user's changes since the read, seen from the buffer: undoing
		// them must not touch the edit's lines.
		if _, err := textdiff.Rebase(old, proposed, read); err != nil {
			return changedInEditor(w.display(path), err)
		}
	}
	return w.change(ctx, path, old, proposed, true)
}

// changedInEditor is the refusal of a change that overlaps what the user
// changed in the editor since the agent read the file (zot lsp's words).
func changedInEditor(shown string, err error) error {
	return fmt.Errorf("%s changed in the editor while you were working: %v. No change was made; read the file again and redo the edit", shown, err)
}

// Sync: writes through the client land in the editor, which saves them;
// zot's own writes are on disk already.
func (w *workspace) Sync(ctx context.Context) error { return nil }

// change shows the diff oldText → newText (ask mode), reads the file again
// and re-bases the change onto what the user typed meanwhile (a review
// takes a while; fs/write_text_file replaces the whole buffer), then
// writes through the client or the disk, and keeps the diff for the tool
// call's update.
func (w *workspace) change(ctx context.Context, path, oldText, newText string, existed bool) error {
	shown := w.display(path)
	if err := w.ss.reviewEdit(ctx, path, shown, oldText, newText, existed); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	cur, exists, err := w.current(ctx, path)
	if err != nil {
		return err
	}
	switch {
	case existed && !exists:
		return fmt.Errorf("%s was deleted in the meantime; no change was made", shown)
	case exists && (!existed || cur != oldText):
		// A new file's base is empty: text the user put there meanwhile
		// collides with it unless the file is still empty.
		target, err := textdiff.Rebase(oldText, newText, cur)
		if err != nil {
			return changedInEditor(shown, err)
		}
		oldText, newText, existed = cur, target, true
	}
	if w.fs.WriteTextFile {
		if _, err := w.ss.srv.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(w.ss.id), Path: path, Content: newText}); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return errors.New("the editor did not write " + shown + ": " + clientError(err) + ". No change was made")
		}
		w.mu.Lock()
		w.overlaid[path] = true
		w.mu.Unlock()
	} else {
		if err := w.writeDisk(path, shown, oldText, newText, existed); err != nil {
			return err
		}
	}
	w.ss.mu.Lock()
	id := w.ss.current
	w.ss.mu.Unlock()
	w.mu.Lock()
	w.known[path] = newText // the agent's own change: its next base
	w.diffs[id] = append(w.diffs[id], fileDiff{path: path, oldText: oldText, newText: newText, existed: existed})
	w.mu.Unlock()
	return nil
}

// writeDisk makes the change oldText → newText in the file itself, for a
// client that does not offer fs/write_text_file. When reads come through
// the client, oldText is the editor's buffer, which may hold unsaved
// typing: as in zot lsp without workspace/applyEdit, the change is
// replayed onto the file as saved, so the user's unsaved text never
// reaches the disk behind their back; a change of lines they have not
// saved is refused.
func (w *workspace) writeDisk(path, shown, oldText, newText string, existed bool) error {
	text := newText
	if existed && w.fs.ReadTextFile {
		saved, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if text, err = textdiff.Rebase(oldText, newText, string(saved)); err != nil {
			return fmt.Errorf("%s has unsaved changes in the editor on the lines you are changing (%v), and this editor cannot take zot's changes into its buffer (it does not offer fs/write_text_file), so the change cannot be written to the file without the user's unsaved text. No change was made; ask the user to save %s, then read it again and redo the change", shown, err, shown)
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, []byte(text), 0o644)
}

// takeDiffs returns and forgets the changes a tool call made.
func (w *workspace) takeDiffs(id string) []fileDiff {
	w.mu.Lock()
	defer w.mu.Unlock()
	d := w.diffs[id]
	delete(w.diffs, id)
	return d
}

func (w *workspace) display(path string) string {
	if rel, err := filepath.Rel(w.root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.ToSlash(rel)
	}
	return path
}

// clientError is the message of an error the client answered with.
func clientError(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		msg := re.Message
		if m, ok := re.Data.(map[string]any); ok {
			for _, k := range []string{"details", "error", "message"} {
				if s, ok := m[k].(string); ok && s != "" {
					msg += ": " + s
					break
				}
			}
		}
		return msg
	}
	return err.Error()
}
