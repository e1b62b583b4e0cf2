package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/atomicfile"
	"github.com/zot-editors/zot/internal/ospath"
	"github.com/zot-editors/zot/internal/textdiff"
)

// editorWorkspace is the tools.Workspace of zot lsp: reads see the
// editor's unsaved buffers; writes become workspace/applyEdit with minimal
// edits (so they land in the buffers, undoable) when the client can apply
// edits, atomic disk writes otherwise; Sync makes the disk hold zot's
// changes before a process reads it (see flushSaves), never the user's
// unsaved typing.
type editorWorkspace struct {
	s *Server

	mu        sync.Mutex
	root      string
	allowDirs []string // --add-dir and initializationOptions.addDirs
	rules     []tools.WriteRule
	callID    string // the tool call running now (tools run one at a time)
	tool      string
	// known is the text of each file as the agent last read it (the read
	// tool, a file attached to a prompt) or changed it: what a write or
	// edit of an open document is judged against, so the user's typing
	// since is re-based or refused, never overwritten.
	known map[string]string
	// pending are documents the agent changed in the editor and the
	// client has not saved yet (path → uri).
	pending map[string]string
	// edits are zot's changes to each pending document (the text before →
	// after each one), replayed onto the disk text when the buffer also
	// holds the user's unsaved changes.
	edits map[string][]bufferEdit
	// shadow is the text of documents changed through applyEdit that are
	// not (yet) open in the overlay, until the client opens or saves them.
	shadow map[string]string
	// notes tell the model what the user changed in review, per call.
	notes map[string]string
	// diskOnly are zot's changes to open documents of a client without
	// workspace/applyEdit: in the file on disk, not in the editor's buffer
	// (see writeDisk and bufferView).
	diskOnly map[string]*diskOnlyChanges
}

// diskOnlyChanges are zot's changes written to a file whose open buffer
// does not hold them.
type diskOnlyChanges struct {
	edits   []bufferEdit // each on zot's view of the buffer then
	written string       // the file's text after zot's last write
	told    bool         // the user was told the buffer lacks them
}

var (
	_ tools.Workspace     = (*editorWorkspace)(nil)
	_ tools.OverlayLister = (*editorWorkspace)(nil)
	_ tools.WriteGuard    = (*editorWorkspace)(nil)
	_ tools.ReadNoter     = (*editorWorkspace)(nil)
)

func newEditorWorkspace(s *Server) *editorWorkspace {
	wd, _ := os.Getwd()
	return &editorWorkspace{s: s, root: wd, known: map[string]string{}, pending: map[string]string{},
		shadow: map[string]string{}, notes: map[string]string{}, edits: map[string][]bufferEdit{},
		diskOnly: map[string]*diskOnlyChanges{}}
}

func (w *editorWorkspace) setRoot(root string, allowDirs []string) {
	w.mu.Lock()
	w.root = filepath.Clean(root)
	w.allowDirs = allowDirs
	w.mu.Unlock()
}

// CheckWrite asks the user, in every permission mode, before a write
// outside the workspace and the allowed directories, or into a protected
// directory (the rules): one question, showing the whole change.
func (w *editorWorkspace) CheckWrite(ctx context.Context, tool, path string, change func() string) error {
	w.mu.Lock()
	policy := &tools.WritePolicy{Root: w.root, AllowDirs: w.allowDirs, Rules: w.rules, Ask: w.askWrite}
	w.mu.Unlock()
	return policy.Check(ctx, tool, path, change)
}

func (w *editorWorkspace) SetWriteRules(rules ...tools.WriteRule) {
	w.mu.Lock()
	w.rules = slices.Clone(rules)
	w.mu.Unlock()
}

// Write approval choices (window/showMessageRequest actions), asked
// safe answer first: a client that takes the first action as the default,
// or a user who presses Enter, denies.
const (
	AllowWrite = "Allow this write"
	DenyWrite  = "Deny"
)

func (w *editorWorkspace) askWrite(ctx context.Context, a tools.WriteApproval) (bool, error) {
	switch choice := w.s.ask(ctx, protocol.MessageTypeWarning, a.Message(), DenyWrite, AllowWrite); choice {
	case AllowWrite:
		return true, nil
	case "":
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return false, nil
	default:
		return false, nil
	}
}

// Root is the workspace directory.
func (w *editorWorkspace) Root() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.root
}

// beginCall records the tool call now running.
func (w *editorWorkspace) beginCall(id, tool string) {
	w.mu.Lock()
	w.callID, w.tool = id, tool
	w.mu.Unlock()
}

func (w *editorWorkspace) currentCall() (string, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.callID, w.tool
}

// callKey carries, in a context, the call a change belongs to when it is
// not the running tool call (zot/applyCode).
type callKey struct{}

type callRef struct{ id, tool string }

// withCall marks ctx's changes as made by the call id of tool.
func withCall(ctx context.Context, id, tool string) context.Context {
	return context.WithValue(ctx, callKey{}, callRef{id, tool})
}

// callOf is the call ctx's change belongs to: withCall's, else the
// running tool call.
func (w *editorWorkspace) callOf(ctx context.Context) (string, string) {
	if c, ok := ctx.Value(callKey{}).(callRef); ok {
		return c.id, c.tool
	}
	return w.currentCall()
}

func (w *editorWorkspace) takeNote(id string) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.notes[id]
	delete(w.notes, id)
	return n
}

// opened is called on didOpen: the overlay now has the text, the
// editor's.
func (w *editorWorkspace) opened(path string) {
	w.mu.Lock()
	delete(w.shadow, path)
	delete(w.diskOnly, path)
	w.mu.Unlock()
}

// closed is called on didClose: reads go to the disk, which holds zot's
// changes.
func (w *editorWorkspace) closed(path string) {
	w.mu.Lock()
	delete(w.diskOnly, path)
	w.mu.Unlock()
}

// saved is called on didSave: the file holds the buffer, which is now
// what zot reads too.
func (w *editorWorkspace) saved(path string) {
	w.mu.Lock()
	delete(w.pending, path)
	delete(w.shadow, path)
	delete(w.edits, path)
	delete(w.diskOnly, path)
	w.mu.Unlock()
}

// NoteRead records what the agent was shown of path: later writes and
// edits are judged against it.
func (w *editorWorkspace) NoteRead(path string, data []byte) {
	w.mu.Lock()
	w.known[path] = string(data)
	w.mu.Unlock()
}

// lastRead is path's text as the agent last read or changed it.
func (w *editorWorkspace) lastRead(path string) (string, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	k, ok := w.known[path]
	return k, ok
}

// forgetReads is called when the conversation starts over (a new or
// resumed session, zot/clear): the model no longer has what it read.
func (w *editorWorkspace) forgetReads() {
	w.mu.Lock()
	clear(w.known)
	w.mu.Unlock()
}

// bufferView is the open document at path as zot sees it: the editor's
// buffer, with zot's disk-only changes re-based onto it. A change the
// buffer took (the editor reloaded the file zot wrote) or that collides
// with what the user typed since on the same lines is dropped: the
// buffer, which is what the user will save, decides.
func (w *editorWorkspace) bufferView(path string) (document, bool) {
	d, ok := w.s.overlay.get(path)
	if !ok {
		return d, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c := w.diskOnly[path]
	if c == nil {
		return d, true
	}
	if d.text == c.written {
		delete(w.diskOnly, path)
		return d, true
	}
	text := d.text
	kept := c.edits[:0]
	for _, e := range c.edits {
		if t, err := textdiff.Rebase(e.before, e.after, text); err == nil {
			text = t
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		delete(w.diskOnly, path)
	} else {
		c.edits = kept
	}
	d.text = text
	return d, true
}

// bufferEdit is one change zot made to a document: its text before and
// after.
type bufferEdit struct{ before, after string }

// ReadFile returns the open buffer's text (with zot's changes an editor
// without applyEdit does not hold, see bufferView), else what zot last put
// in an unopened editor document, else the disk.
func (w *editorWorkspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if d, ok := w.bufferView(path); ok {
		return []byte(d.text), nil
	}
	w.mu.Lock()
	sh, ok := w.shadow[path]
	w.mu.Unlock()
	if ok {
		return []byte(sh), nil
	}
	return os.ReadFile(path)
}

// OverlaidPaths lists the files whose ReadFile is not the disk's: the open
// buffers and the documents zot changed that the editor has not saved. The
// search tools read every other file from disk directly.
func (w *editorWorkspace) OverlaidPaths() []string {
	paths := w.s.overlay.paths()
	w.mu.Lock()
	for p := range w.shadow {
		paths = append(paths, p)
	}
	w.mu.Unlock()
	return paths
}

// WriteFile replaces path with data. When the user typed in the buffer
// since the agent last read it, the write is re-based onto their text or
// refused; it never silently drops their typing.
func (w *editorWorkspace) WriteFile(ctx context.Context, path string, data []byte) error {
	snap := w.snapshot(path)
	base := snap.text
	if snap.open {
		if k, ok := w.lastRead(path); ok {
			base = k
		}
	}
	return w.change(ctx, path, base, string(data), snap.exists || snap.open)
}

// EditFile turns oldData → newData into a minimal edit of the buffer.
// The edit tool found its text in oldData, the buffer as it is now, but
// the model chose the edit from its last read of the file: when the user
// changed the lines the edit touches since then, the edit is refused (it
// would land on their typing); their changes elsewhere stay as they are.
func (w *editorWorkspace) EditFile(ctx context.Context, path string, oldData, newData []byte) error {
	old, proposed := string(oldData), string(newData)
	if read, ok := w.lastRead(path); ok && read != old {
		if _, open := w.s.overlay.get(path); open {
			// The user's changes since the read, seen from the buffer:
			// undoing them must not touch the edit's lines.
			if _, err := textdiff.Rebase(old, proposed, read); err != nil {
				return changedInEditor(w.display(path), err)
			}
		}
	}
	return w.change(ctx, path, old, proposed, true)
}

// changedInEditor is the refusal of a change that overlaps what the user
// changed in the editor since the agent read the file.
func changedInEditor(shown string, err error) error {
	return fmt.Errorf("%s changed in the editor while you were working: %v. No change was made; read the file again and redo the edit", shown, err)
}

// Sync makes the disk hold the agent's changes before a process (bash)
// reads it. Files whose unsaved user changes overlap the agent's stay as
// saved; a tools.SyncNotice names them.
func (w *editorWorkspace) Sync(ctx context.Context) error {
	notes, err := w.flushSaves(ctx)
	if err != nil {
		return err
	}
	if len(notes) > 0 {
		return &tools.SyncNotice{Text: strings.Join(notes, "\n")}
	}
	return nil
}

// snap is a document's state at one moment.
type snap struct {
	text    string
	exists  bool // on disk (or in the shadow)
	open    bool // in the overlay
	version int32
	uri     string
}

func (w *editorWorkspace) snapshot(path string) snap {
	if d, ok := w.bufferView(path); ok {
		_, err := os.Stat(path)
		return snap{text: d.text, open: true, exists: err == nil, version: d.version, uri: d.uri}
	}
	u := ospath.ToURI(path)
	w.mu.Lock()
	sh, ok := w.shadow[path]
	w.mu.Unlock()
	if ok {
		return snap{text: sh, exists: true, uri: u}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return snap{uri: u}
	}
	return snap{text: string(b), exists: true, uri: u}
}

// maxEditAttempts bounds re-basing when the buffer keeps moving.
const maxEditAttempts = 4

// change applies base → proposed to path: review (ask mode), re-base onto
// the user's typing, then the editor (applyEdit) or the disk.
func (w *editorWorkspace) change(ctx context.Context, path, base, proposed string, existed bool) error {
	s := w.s
	shown := w.display(path)
	if s.permissionMode() == ModeReadonly {
		return fmt.Errorf("zot is in readonly mode: %s was not changed. Tell the user what you would change instead", shown)
	}
	final, err := s.reviewChange(ctx, path, base, proposed)
	if err != nil {
		return err
	}
	if final != proposed || s.permissionMode() == ModeAsk {
		s.barrier(ctx) // typing during the review
	}
	if id, tool := w.callOf(ctx); final != proposed && tool != applyTool {
		w.mu.Lock()
		w.notes[id] = userEditNote(shown, proposed, final)
		w.mu.Unlock()
	}
	for attempt := 0; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		cur := w.snapshot(path)
		target := final
		if cur.exists || cur.open {
			if !existed && cur.text != "" {
				return fmt.Errorf("%s was created in the meantime (the editor or another process wrote it); no change was made. Read it and redo the change", shown)
			}
			if cur.text != base {
				target, err = textdiff.Rebase(base, final, cur.text)
				if err != nil {
					return changedInEditor(shown, err)
				}
			}
		} else if existed {
			return fmt.Errorf("%s was deleted in the meantime; no change was made", shown)
		}
		if target == cur.text && (cur.exists || cur.open) {
			w.remember(ctx, path, target)
			return nil
		}
		applied, reason, err := w.applyInEditor(ctx, path, cur, target)
		if err != nil {
			return err
		}
		if applied {
			s.awaitApplied(ctx, path, cur)
			w.remember(ctx, path, target)
			return nil
		}
		if reason == "" {
			if err := w.writeDisk(path, cur, target); err != nil {
				return err
			}
			w.remember(ctx, path, target)
			return nil
		}
		// Refused: most likely the version moved (the user typed) between
		// our snapshot and the client applying. Wait for the overlay to
		// catch up and re-base.
		if attempt+1 >= maxEditAttempts || !cur.open {
			return fmt.Errorf("the editor did not apply the change to %s: %s. No change was made", shown, reason)
		}
		s.barrier(ctx)
		s.overlay.waitChange(ctx, path, cur.version, time.Second)
	}
}

// remember records text as what the agent knows of path after its own
// change. An apply (zot/applyCode) is the user's doing: the model has not
// seen its result.
func (w *editorWorkspace) remember(ctx context.Context, path string, text string) {
	if _, tool := w.callOf(ctx); tool == applyTool {
		return
	}
	w.mu.Lock()
	w.known[path] = text
	w.mu.Unlock()
}

// writeDisk makes the change cur.text → target in the file itself, for a
// client that cannot take it into its buffer (no workspace/applyEdit, or
// a new file it cannot create). The rule of zot/save holds: the user's
// unsaved typing never reaches the disk behind their back. For an open
// buffer zot's change is replayed onto the file as saved, zot's reads see
// it re-based onto the buffer (bufferView) until the buffer takes it, and
// the user is told once that the buffer does not show it. A change on
// lines the user has not saved cannot be written without them: refused.
func (w *editorWorkspace) writeDisk(path string, cur snap, target string) error {
	if !cur.open {
		return atomicfile.Write(path, []byte(target), 0o644)
	}
	shown := w.display(path)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is open in the editor but was never saved, and this editor cannot take zot's edits into its buffer (it does not support workspace/applyEdit), so writing the file would write the user's unsaved text. No change was made; ask the user to save %s, then read it again and redo the change", shown, shown)
	}
	if err != nil {
		return err
	}
	saved := string(b)
	text, err := textdiff.Rebase(cur.text, target, saved)
	if err != nil {
		return fmt.Errorf("%s has unsaved changes in the editor on the lines you are changing (%v), and this editor cannot take zot's edits into its buffer (it does not support workspace/applyEdit), so the change cannot be written to the file without the user's unsaved text. No change was made; ask the user to save %s, then read it again and redo the change", shown, err, shown)
	}
	if err := atomicfile.Write(path, []byte(text), 0o644); err != nil {
		return err
	}
	// A buffer without unsaved changes is reloaded by the editor as usual;
	// one with them cannot be, without losing them: say so, once.
	w.mu.Lock()
	c := w.diskOnly[path]
	if c == nil {
		c = &diskOnlyChanges{}
		w.diskOnly[path] = c
	}
	c.edits = append(c.edits, bufferEdit{before: cur.text, after: target})
	c.written = text
	tell := !c.told && cur.text != saved
	c.told = c.told || tell
	w.mu.Unlock()
	if tell {
		w.s.showMessage(protocol.MessageTypeWarning, fmt.Sprintf(
			"zot changed %s on disk; your unsaved changes to it were kept out of the file. This editor does not take zot's edits into the buffer, so the buffer does not show zot's change: reload %s to see it (that discards your unsaved changes), or save to keep your changes (that overwrites zot's). zot itself works on your text with its change.", shown, shown))
	}
	return nil
}

// applyInEditor sends workspace/applyEdit. It reports applied=false with an
// empty reason when the client cannot take the edit (no applyEdit, or a
// new file without create support): the caller writes the disk instead.
func (w *editorWorkspace) applyInEditor(ctx context.Context, path string, cur snap, target string) (bool, string, error) {
	s := w.s
	s.mu.Lock()
	caps, enc := s.caps, s.enc
	s.mu.Unlock()
	if !caps.applyEdit {
		return false, "", nil
	}
	create := !cur.exists && !cur.open
	if create && !(caps.documentChanges && caps.createFiles) {
		return false, "", nil
	}
	var edit workspaceEdit
	var edits []protocol.TextEdit
	if create {
		edits = []protocol.TextEdit{{NewText: target}}
	} else {
		edits = toTextEdits(cur.text, textdiff.Compute(cur.text, target), enc)
	}
	if caps.documentChanges {
		var ver *int32
		if cur.open {
			v := cur.version
			ver = &v
		}
		if create {
			edit.DocumentChanges = append(edit.DocumentChanges, createFile{Kind: "create", URI: cur.uri, Options: &createFileOptions{IgnoreIfExists: true}})
		}
		edit.DocumentChanges = append(edit.DocumentChanges, textDocumentEdit{
			TextDocument: versionedDoc{URI: cur.uri, Version: ver}, Edits: edits})
	} else {
		edit.Changes = map[string][]protocol.TextEdit{cur.uri: edits}
	}
	var res applyEditResult
	err := s.call(ctx, protocol.MethodWorkspaceApplyEdit, &applyEditParams{Label: "zot: " + w.display(path), Edit: edit}, &res)
	if err != nil {
		if ctx.Err() != nil {
			return false, "", ctx.Err()
		}
		return false, "", fmt.Errorf("the editor failed to apply the change to %s: %v", w.display(path), err)
	}
	if !res.Applied {
		reason := res.FailureReason
		if reason == "" {
			reason = "the editor refused it"
		}
		return false, reason, nil
	}
	w.mu.Lock()
	w.pending[path] = cur.uri
	w.edits[path] = append(w.edits[path], bufferEdit{before: cur.text, after: target})
	if !cur.open {
		w.shadow[path] = target
	}
	w.mu.Unlock()
	return true, "", nil
}

// flushSaves makes the disk hold what the agent changed, without the
// user's unsaved typing. A buffer that differs from the disk only by the
// agent's changes is saved by the client (zot/save uris). A buffer that
// also holds unsaved user changes keeps them: zot replays its own changes
// onto the disk text and the client writes that to the file (zot/save
// rebased) the way its editor knows as saved, so the buffer stays modified
// and the editor neither reloads it nor reports a conflict. When the agent's changes overlap the
// user's unsaved ones they cannot be written without them: the file stays
// as saved and a note for the model says so (the returned notes).
// Clients without zot/save get the buffers' text written by zot when it is
// only the agent's changes, the rebased text otherwise.
func (w *editorWorkspace) flushSaves(ctx context.Context) (notes []string, err error) {
	w.mu.Lock()
	if len(w.pending) == 0 {
		w.mu.Unlock()
		return nil, nil
	}
	paths := make([]string, 0, len(w.pending))
	for p := range w.pending {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	uris := make([]string, len(paths))
	edits := make([][]bufferEdit, len(paths))
	for i, p := range paths {
		uris[i] = w.pending[p]
		edits[i] = slices.Clone(w.edits[p])
	}
	w.mu.Unlock()

	s := w.s
	s.mu.Lock()
	useSave := s.caps.zot.Save
	s.mu.Unlock()

	var toSave, toSaveURIs []string
	var rebased []RebasedDoc
	rebasedPath := map[string]string{}
	kept := map[string]bool{} // neither saved nor written: left pending
	for i, p := range paths {
		d, open := s.overlay.get(p)
		if !open {
			toSave, toSaveURIs = append(toSave, p), append(toSaveURIs, uris[i])
			continue
		}
		disk, onDisk, rerr := w.diskText(p, d.text, edits[i])
		switch {
		case rerr != nil:
			kept[p] = true
			notes = append(notes, fmt.Sprintf("%s: the user has unsaved changes in the editor that overlap your edits (%v), so your edits were not written to disk: the command sees the saved version of %s, without your edits, while read shows the editor's text. Ask the user to save %s if the command needs your edits.", w.display(p), rerr, w.display(p), w.display(p)))
		case d.text == disk || !onDisk:
			toSave, toSaveURIs = append(toSave, p), append(toSaveURIs, uris[i])
		default:
			rebased = append(rebased, RebasedDoc{URI: uris[i], Text: disk})
			rebasedPath[uris[i]] = p
		}
	}

	failed := map[string]string{}
	if useSave && (len(toSave) > 0 || len(rebased) > 0) {
		res, err := requestSave.call(ctx, s, &SaveParams{URIs: nonNil(toSaveURIs), Rebased: rebased})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("the editor could not save %s: %v", strings.Join(uris, ", "), err)
		}
		savedSet := map[string]bool{}
		for _, u := range res.Saved {
			savedSet[u] = true
		}
		for _, f := range res.Failed {
			failed[f.URI] = f.Reason
		}
		for _, u := range toSaveURIs {
			if !savedSet[u] && failed[u] == "" {
				failed[u] = "not saved"
			}
		}
		written := map[string]bool{}
		for _, u := range res.Written {
			written[u] = true
		}
		// A client that predates rebased neither writes nor answers them:
		// zot writes those itself.
		var unanswered []RebasedDoc
		for _, r := range rebased {
			if !written[r.URI] && failed[r.URI] == "" {
				unanswered = append(unanswered, r)
			}
		}
		rebased = unanswered
	} else if !useSave {
		for i, p := range toSave {
			snap := w.snapshot(p)
			if err := atomicfile.Write(p, []byte(snap.text), 0o644); err != nil {
				failed[toSaveURIs[i]] = err.Error()
			}
		}
	}
	for _, r := range rebased {
		if err := atomicfile.Write(rebasedPath[r.URI], []byte(r.Text), 0o644); err != nil {
			failed[r.URI] = err.Error()
		}
	}
	w.mu.Lock()
	for i, p := range paths {
		if _, bad := failed[uris[i]]; !bad && !kept[p] {
			delete(w.pending, p)
			delete(w.shadow, p)
			delete(w.edits, p)
		}
	}
	w.mu.Unlock()
	if len(failed) > 0 {
		var parts []string
		for u, r := range failed {
			parts = append(parts, u+": "+r)
		}
		sort.Strings(parts)
		return notes, errors.New("the editor did not save: " + strings.Join(parts, "; "))
	}
	return notes, nil
}

// diskText is what path's file on disk should hold: its saved text with
// the agent's edits replayed onto it. It fails when an edit overlaps the
// user's unsaved changes, or when the buffer no longer holds the agent's
// edits (the user undid them), so replaying would write what the buffer
// does not show. onDisk is false when the file does not exist.
func (w *editorWorkspace) diskText(path, buffer string, edits []bufferEdit) (text string, onDisk bool, err error) {
	b, rerr := os.ReadFile(path)
	if rerr != nil {
		return "", false, nil
	}
	text = string(b)
	if text == buffer {
		return text, true, nil
	}
	for _, e := range edits {
		if text, err = textdiff.Rebase(e.before, e.after, text); err != nil {
			return "", true, err
		}
	}
	// The buffer must still hold every edit: undoing them from it, newest
	// first, must not collide with what the user did since.
	user := buffer
	for i := len(edits) - 1; i >= 0; i-- {
		if user, err = textdiff.Rebase(edits[i].after, edits[i].before, user); err != nil {
			return "", true, err
		}
	}
	return text, true, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func (w *editorWorkspace) display(path string) string {
	root := w.Root()
	if rel, err := filepath.Rel(root, path); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
		return filepath.ToSlash(rel)
	}
	return path
}

// userEditNote is what the model is told when the user changed its
// proposal in review before accepting it: the changed lines, yours and
// theirs.
func userEditNote(shown, proposed, final string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "The user reviewed your change to %s and edited it before accepting. What was applied (and is now in the file) differs from your proposal:\n", shown)
	hunks := textdiff.LineHunks(proposed, final)
	for i, h := range hunks {
		if i == 10 {
			fmt.Fprintf(&b, "… and %d more changed blocks; read the file.\n", len(hunks)-i)
			break
		}
		lines := textdiff.LinesOf(proposed, h)
		fmt.Fprintf(&b, "- %s of your version:\n%s  became:\n%s", textdiff.LineRange(lines), indent(clip(proposed[h.Start:h.End])), indent(clip(h.Text)))
	}
	return strings.TrimRight(b.String(), "\n")
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:2000] + "…\n"
	}
	return s
}

func indent(s string) string {
	if s == "" {
		return "    (nothing)\n"
	}
	var b strings.Builder
	for _, l := range textdiff.SplitLines(s) {
		b.WriteString("    ")
		b.WriteString(strings.TrimRight(l, "\r\n"))
		b.WriteString("\n")
	}
	return b.String()
}

// Wire types of workspace/applyEdit. go.lsp.dev/protocol v0.12's
// WorkspaceEdit.DocumentChanges holds only TextDocumentEdits; creating a
// file needs a CreateFile among them.
type applyEditParams struct {
	Label string        `json:"label,omitempty"`
	Edit  workspaceEdit `json:"edit"`
}

type workspaceEdit struct {
	Changes         map[string][]protocol.TextEdit `json:"changes,omitempty"`
	DocumentChanges []any                          `json:"documentChanges,omitempty"`
}

type textDocumentEdit struct {
	TextDocument versionedDoc        `json:"textDocument"`
	Edits        []protocol.TextEdit `json:"edits"`
}

type versionedDoc struct {
	URI     string `json:"uri"`
	Version *int32 `json:"version"` // null: the document as on disk
}

type createFile struct {
	Kind    string             `json:"kind"`
	URI     string             `json:"uri"`
	Options *createFileOptions `json:"options,omitempty"`
}

type createFileOptions struct {
	Overwrite      bool `json:"overwrite,omitempty"`
	IgnoreIfExists bool `json:"ignoreIfExists,omitempty"`
}

type applyEditResult struct {
	Applied       bool   `json:"applied"`
	FailureReason string `json:"failureReason,omitempty"`
}

// editorTool wraps the built-in write and edit tools so that, when the
// user changed a proposal in review, the model is told what was really
// applied instead of its own diff.
type editorTool struct {
	tools.Tool
	s *Server
}

func (t *editorTool) Run(ctx context.Context, call tools.Call) tools.Result {
	t.s.ws.beginCall(call.ID, t.Name())
	res := t.Tool.Run(ctx, call)
	if note := t.s.ws.takeNote(call.ID); note != "" && !res.IsError {
		return tools.TextResult(note)
	}
	return res
}

// withEditorTools routes write and edit through editorTool: they leave the
// built-in set (cfg.Tools) and come back as extra tools, which the runtime
// consults before every model call together with the extensions' tools.
func (s *Server) withEditorTools(cfg agent.Config) agent.Config {
	cfg.ExtraTools = s.extraTools
	cfg.AwaitTool = s.awaitTool
	cfg.AwaitExtensions = s.awaitExtensions
	cfg.Providers = serverProviders{s}
	if cfg.NoTools {
		return cfg
	}
	allowed := map[string]bool{}
	for _, n := range cfg.Tools {
		allowed[n] = true
	}
	var keep []string
	var wrapped []tools.Tool
	builtin := map[string]bool{}
	for _, t := range tools.Builtins(s.ws) {
		builtin[t.Name()] = true
	}
	builtin["skill"] = true // the runtime's own built-in (agent.New adds it)
	for _, n := range cfg.Tools {
		if !builtin[strings.TrimSpace(n)] {
			keep = append(keep, n) // unknown: agent.New says so
		}
	}
	for _, t := range tools.Builtins(s.ws) {
		if len(allowed) > 0 && !allowed[t.Name()] {
			continue
		}
		if t.Name() == "write" || t.Name() == "edit" {
			wrapped = append(wrapped, &editorTool{Tool: t, s: s})
		} else {
			keep = append(keep, t.Name())
		}
	}
	if !cfg.NoSkills && (len(allowed) == 0 || allowed["skill"]) {
		keep = append(keep, "skill")
	}
	if len(keep) == 0 || len(wrapped) == 0 {
		return cfg // nothing to wrap, or no way to say "no other built-ins"
	}
	cfg.Tools = keep
	s.mu.Lock()
	s.editorTools = wrapped
	s.mu.Unlock()
	return cfg
}

// extraTools is agent.Config.ExtraTools: the wrapped write/edit, then the
// extensions' tools.
func (s *Server) extraTools() []tools.Tool {
	s.mu.Lock()
	out := append([]tools.Tool(nil), s.editorTools...)
	host := s.host
	s.mu.Unlock()
	if host != nil {
		out = append(out, host.Tools()...)
	}
	return append(out, s.mcpTools()...)
}

// awaitApplied lets an edit the client applied land in the overlay: the
// client sent didOpen/didChange for it before its answer (the barrier),
// or, for a client that answers first, sends its didChange within a
// moment (waited for, so the next read is not stale).
func (s *Server) awaitApplied(ctx context.Context, path string, cur snap) {
	s.barrier(ctx)
	if cur.open {
		s.overlay.waitChange(ctx, path, cur.version, 2*time.Second)
	}
}
