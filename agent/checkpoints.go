package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/agent/checkpoint"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/session"
)

// Checkpoints (issue 33): before every prompt's run the runtime records
// the workspace (agent/checkpoint), so a user can restore its files, the
// conversation to that prompt, or both, and compare first.

// Buffers are the editor's open documents (zot lsp): a checkpoint records
// their unsaved text, and a restore puts text back into them through the
// editor.
type Buffers interface {
	// Unsaved is the text of every open buffer, by absolute path (the
	// store keeps those that differ from the disk).
	Unsaved() map[string]string
	// Restore puts texts into the open buffers of those paths; a nil
	// text means the checkpoint had no such file.
	Restore(ctx context.Context, texts map[string]*string) error
}

// Restore modes.
const (
	RestoreCode         = "code"
	RestoreConversation = "conversation"
	RestoreBoth         = "both"
)

// CheckpointInfo is one checkpoint as the fronts list it.
type CheckpointInfo struct {
	ID           string    `json:"id"`
	MessageIndex int       `json:"message_index"`
	Prompt       string    `json:"prompt"`
	Kind         string    `json:"kind"` // "prompt" or "restore" (taken before a restore: undoes it)
	Time         time.Time `json:"time"`
	FilesChanged int       `json:"files_changed"` // files that differ between it and now
}

// RestoreResult is what a restore did.
type RestoreResult struct {
	Checkpoint string `json:"checkpoint"`
	Mode       string `json:"mode"`
	// Undo is the checkpoint taken just before: restoring it undoes this
	// restore.
	Undo  string              `json:"undo"`
	Files []checkpoint.Change `json:"files"`
	// MessageCount is the conversation's length after the restore;
	// MessagesRemoved how many messages the restore took out of it.
	MessageCount    int `json:"message_count"`
	MessagesRemoved int `json:"messages_removed"`
}

// ErrNoCheckpoints is returned when checkpoints are off or unavailable.
var ErrNoCheckpoints = errors.New("checkpoints are not available in this zot")

// checkpoints is the runtime's share of the store.
type checkpoints struct {
	once      sync.Once
	store     *checkpoint.Store
	err       error
	ephemeral string             // the session id of a runtime without a session file (set once, under the runtime's mu)
	prune     sync.WaitGroup     // the pruning started at open
	stopPrune context.CancelFunc // ends it when the runtime closes

	// recording is closed when the checkpoint of the running prompt is
	// recorded (or failed); nil when none is being recorded. Guarded by
	// the runtime's mu.
	recording chan struct{}
	// Test hooks (export_test.go): hold runs in the recording before the
	// store takes it; awaiting when something waits for a recording.
	hold     func(ctx context.Context)
	awaiting func()
}

// ckptMeta is kept by the runtime beside each checkpoint it takes, in the
// store's commit message: see checkpoint.Meta.Extra.
type ckptExtra struct {
	// Prefix is the hash of the conversation before the prompt: a
	// conversation restore checks the conversation still starts with it.
	Prefix string `json:"prefix"`
	// Transcript (a restore's checkpoint) is the whole conversation, so
	// undoing a restore brings back the messages it removed.
	Transcript []message.Message `json:"transcript,omitempty"`
}

// openStore opens the workspace's store once; without git, checkpoints
// are off and the user is told once.
func (r *Runtime) openStore(ctx context.Context) (*checkpoint.Store, error) {
	if !r.cfg.Checkpoints {
		return nil, ErrNoCheckpoints
	}
	c := &r.ckpt
	c.once.Do(func() {
		// Not the run's context: an abort during the first prompt must
		// not leave the process without checkpoints.
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		c.store, c.err = checkpoint.Open(octx, r.cfg.Home, r.cfg.CWD)
		if c.err != nil {
			if r.cfg.Warn != nil {
				r.cfg.Warn(c.err.Error())
			}
			return
		}
		pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
		c.stopPrune = stop
		c.prune.Add(1)
		go func() {
			defer c.prune.Done()
			r.pruneCheckpoints(pctx)
		}()
	})
	if c.err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoCheckpoints, c.err)
	}
	return c.store, nil
}

// ephemeralAge is how long the checkpoints of a runtime without a session
// file outlive it when it could not delete them itself (it was killed).
const ephemeralAge = 24 * time.Hour

// pruneCheckpoints deletes the checkpoints of sessions whose file is gone
// (the user deleted the session) and of runtimes without a session file
// that ended over a day ago.
func (r *Runtime) pruneCheckpoints(ctx context.Context) {
	infos, err := session.ListWorkspace(r.cfg.Home, r.cfg.CWD)
	if err != nil {
		return
	}
	live := map[string]bool{}
	for _, in := range infos {
		live[in.ID] = true
	}
	mine := r.checkpointSession()
	r.ckpt.store.Prune(ctx, func(sess string, t time.Time) bool {
		if strings.HasPrefix(sess, "proc-") {
			return sess == mine || time.Since(t) < ephemeralAge
		}
		return live[sess] || sess == mine
	})
	r.ckpt.store.Collect(ctx)
}

// closeCheckpoints ends what the store runs, and deletes the checkpoints
// of a runtime without a session file: nothing could restore them.
func (r *Runtime) closeCheckpoints() {
	c := &r.ckpt
	r.awaitCheckpoint() // a recording of a cancelled run ends with it
	if c.stopPrune != nil {
		c.stopPrune()
	}
	c.prune.Wait()
	if c.store == nil {
		return
	}
	r.mu.Lock()
	hasSession, ephemeral := r.sess != nil, c.ephemeral
	r.mu.Unlock()
	if !hasSession {
		c.store.Prune(context.Background(), func(sess string, _ time.Time) bool { return sess != ephemeral })
	}
}

// checkpointSession is the session the checkpoints are filed under.
func (r *Runtime) checkpointSession() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sess != nil {
		return r.sess.ID()
	}
	if r.ckpt.ephemeral == "" {
		r.ckpt.ephemeral = fmt.Sprintf("proc-%d-%d", os.Getpid(), time.Now().UnixNano())
	}
	return r.ckpt.ephemeral
}

// transcriptHash identifies a conversation's first messages.
func transcriptHash(msgs []message.Message) string {
	b, _ := json.Marshal(nonNilMessages(msgs)) // none is [], however it was cut
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:12])
}

func (r *Runtime) buffers() map[string]string {
	if r.cfg.Buffers == nil {
		return nil
	}
	return r.cfg.Buffers.Unsaved()
}

// startCheckpoint starts recording the workspace before a prompt's run
// and returns at once: the model request does not wait for it (issue 37:
// it took most of zot's time to the first delta). What the checkpoint
// holds is read now — the conversation's length and the editor's unsaved
// buffers as the prompt arrived — and the files are read before anything
// of the run changes them: whatever can write waits in awaitCheckpoint
// (every tool call, an extension's exec, the extensions' input,
// before_agent_start and context hooks when one intercepts them, the
// run's end). A failure is
// told and does not stop the prompt; an abort stops the recording (no
// checkpoint, as before).
func (r *Runtime) startCheckpoint(ctx context.Context, prompt string) {
	if !r.cfg.Checkpoints {
		return
	}
	msgs := r.transcript()
	extra, _ := json.Marshal(ckptExtra{Prefix: transcriptHash(msgs)})
	md := checkpoint.Meta{Session: r.checkpointSession(), MessageIndex: len(msgs), Prompt: promptLine(prompt), Kind: checkpoint.KindPrompt, Extra: extra}
	buffers := r.buffers()
	done := make(chan struct{})
	r.mu.Lock()
	r.ckpt.recording = done
	r.mu.Unlock()
	go func() {
		defer close(done)
		if r.ckpt.hold != nil {
			r.ckpt.hold(ctx)
		}
		r.takeCheckpoint(ctx, md, buffers)
	}()
}

// takeCheckpoint records the workspace with the buffers' texts. A failure
// is told once and does not stop the prompt.
func (r *Runtime) takeCheckpoint(ctx context.Context, md checkpoint.Meta, buffers map[string]string) {
	store, err := r.openStore(ctx)
	if err != nil {
		return
	}
	if _, err := store.Take(ctx, md, buffers); err != nil && ctx.Err() == nil && r.cfg.Warn != nil {
		r.cfg.Warn("zot could not record a checkpoint before this prompt: " + err.Error())
	}
}

// awaitCheckpoint waits until the running prompt's checkpoint is recorded
// (at once when none is being recorded): what changes the workspace calls
// it first, so the checkpoint holds the files as the prompt found them.
// It waits on even when ctx ends: an aborted recording ends with its
// run's context.
func (r *Runtime) awaitCheckpoint() {
	r.mu.Lock()
	done := r.ckpt.recording
	r.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	if r.ckpt.awaiting != nil {
		r.ckpt.awaiting()
	}
	<-done
}

// awaitCheckpointFor waits for the prompt's checkpoint before the run's
// hooks on event call into the extensions: their code may write the
// workspace. When no extension intercepts event the first token does not
// wait.
func (r *Runtime) awaitCheckpointFor(hooks RunHooks, event string) {
	if ic, ok := hooks.(interface{ Intercepts(string) bool }); ok && !ic.Intercepts(event) {
		return
	}
	r.awaitCheckpoint()
}

// endCheckpoint waits for the run's checkpoint at the run's end, so the
// checkpoints list it once the run is done, and forgets it.
func (r *Runtime) endCheckpoint() {
	r.awaitCheckpoint()
	r.mu.Lock()
	r.ckpt.recording = nil
	r.mu.Unlock()
}

// promptLine is a prompt's first line, shortened.
func promptLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// Checkpoints lists this session's checkpoints, oldest first.
func (r *Runtime) Checkpoints(ctx context.Context) ([]CheckpointInfo, error) {
	r.awaitCheckpoint() // the running prompt's is listed too
	store, err := r.openStore(ctx)
	if err != nil {
		return nil, err
	}
	cps, err := store.List(ctx, r.checkpointSession())
	if err != nil {
		return nil, err
	}
	out := make([]CheckpointInfo, 0, len(cps))
	if len(cps) == 0 {
		return out, nil
	}
	now, err := store.Current(ctx, r.buffers())
	if err != nil {
		return nil, err
	}
	counts, err := store.FilesChanged(ctx, cps, now)
	if err != nil {
		return nil, err
	}
	for i, cp := range cps {
		out = append(out, CheckpointInfo{ID: cp.ID, MessageIndex: cp.MessageIndex, Prompt: cp.Prompt, Kind: cp.Kind, Time: cp.Time, FilesChanged: counts[i]})
	}
	return out, nil
}

// CheckpointDiff is the difference between a checkpoint and now, file by
// file (unified diffs, checkpoint → now).
func (r *Runtime) CheckpointDiff(ctx context.Context, id string) ([]checkpoint.FileDiff, error) {
	r.awaitCheckpoint()
	store, err := r.openStore(ctx)
	if err != nil {
		return nil, err
	}
	cp, err := store.Find(ctx, r.checkpointSession(), id)
	if err != nil {
		return nil, err
	}
	now, err := store.Current(ctx, r.buffers())
	if err != nil {
		return nil, err
	}
	return store.Diff(ctx, cp, now)
}

// RestoreCheckpoint restores a checkpoint's files (mode code), the
// conversation to just before its prompt (conversation), or both. It
// first takes a checkpoint of now, so the restore can be undone. ErrBusy
// during a run.
func (r *Runtime) RestoreCheckpoint(ctx context.Context, id, mode string) (RestoreResult, error) {
	if mode != RestoreCode && mode != RestoreConversation && mode != RestoreBoth {
		return RestoreResult{}, fmt.Errorf(`mode must be "code", "conversation" or "both", not %q`, mode)
	}
	r.mu.Lock()
	if r.busy || r.restoring {
		r.mu.Unlock()
		return RestoreResult{}, ErrBusy
	}
	r.restoring = true
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.restoring = false
		r.mu.Unlock()
	}()
	store, err := r.openStore(ctx)
	if err != nil {
		return RestoreResult{}, err
	}
	sess := r.checkpointSession()
	cp, err := store.Find(ctx, sess, id)
	if err != nil {
		return RestoreResult{}, err
	}
	var extra ckptExtra
	json.Unmarshal(cp.Extra, &extra)
	msgs := r.transcript()
	conversation := mode != RestoreCode
	// Check the conversation can go back before anything changes.
	if conversation && extra.Transcript == nil {
		if cp.MessageIndex > len(msgs) || transcriptHash(msgs[:cp.MessageIndex]) != extra.Prefix {
			return RestoreResult{}, fmt.Errorf("checkpoint %s's conversation is no longer this conversation (it was rewound or cleared since): restore its code only (mode \"code\")", cp.ID)
		}
	}
	undoExtra, _ := json.Marshal(ckptExtra{Prefix: transcriptHash(msgs), Transcript: nonNilMessages(msgs)})
	undo, err := store.Take(ctx, checkpoint.Meta{Session: sess, MessageIndex: len(msgs), Prompt: fmt.Sprintf("before restoring %s (%s)", cp.ID, mode), Kind: checkpoint.KindRestore, Extra: undoExtra}, r.buffers())
	if err != nil {
		return RestoreResult{}, err
	}
	res := RestoreResult{Checkpoint: cp.ID, Mode: mode, Undo: undo.ID, Files: []checkpoint.Change{}, MessageCount: len(msgs)}
	if mode != RestoreConversation {
		if res.Files, err = store.RestoreFiles(ctx, cp, undo); err != nil {
			return res, err
		}
		if r.cfg.Buffers != nil {
			if err := r.restoreBuffers(ctx, store, cp); err != nil {
				return res, err
			}
		}
	}
	if conversation {
		n, err := r.restoreConversation(cp.MessageIndex, extra.Transcript)
		if err != nil {
			return res, err
		}
		res.MessagesRemoved = len(msgs) - min(n, len(msgs))
		res.MessageCount = n
	}
	return res, nil
}

func nonNilMessages(m []message.Message) []message.Message {
	if m == nil {
		return []message.Message{}
	}
	return m
}

// restoreBuffers puts the checkpoint's text into the open buffers that
// differ from it, and into those the checkpoint had unsaved.
func (r *Runtime) restoreBuffers(ctx context.Context, store *checkpoint.Store, cp checkpoint.Checkpoint) error {
	open := r.cfg.Buffers.Unsaved()
	if len(open) == 0 {
		return nil
	}
	var rels []string
	abs := map[string]string{}
	for p := range open {
		if rel, ok := store.Rel(p); ok {
			rels = append(rels, rel)
			abs[rel] = p
		}
	}
	texts, err := store.Texts(ctx, cp, rels)
	if err != nil {
		return err
	}
	want := map[string]*string{}
	for _, rel := range rels {
		p := abs[rel]
		if t, ok := texts[rel]; ok {
			if t != open[p] {
				want[p] = &t
			}
		} else {
			want[p] = nil
		}
	}
	if len(want) == 0 {
		return nil
	}
	return r.cfg.Buffers.Restore(ctx, want)
}

// restoreConversation cuts the conversation to keep messages, or, given a
// transcript (undoing a restore), makes it that transcript: the messages
// it shares with now stay, the rest is cut and the transcript's appended.
// The session file records both (x-rewind, then the messages).
func (r *Runtime) restoreConversation(keep int, transcript []message.Message) (int, error) {
	if transcript == nil {
		return keep, r.Rewind(keep)
	}
	cur := r.transcript()
	same := 0
	for same < len(cur) && same < len(transcript) && transcriptHash(cur[same:same+1]) == transcriptHash(transcript[same:same+1]) {
		same++
	}
	if err := r.Rewind(same); err != nil {
		return 0, err
	}
	for _, m := range transcript[same:] {
		r.appendMessage(m)
	}
	return len(transcript), nil
}

// ForkResult is what ForkAt made.
type ForkResult struct {
	SessionID    string              `json:"session_id"`
	ForkedFrom   string              `json:"forked_from"`
	MessageCount int                 `json:"message_count"`
	Files        []checkpoint.Change `json:"files"`
	// Undo is the checkpoint the file restore took first (with files).
	Undo string `json:"undo,omitempty"`
}

// ForkAt continues the conversation before message messageIndex (a
// prompt's index, or the conversation's length) in a new session, a
// branch of this one: the session file of the new one holds those
// messages and the extensions' entries; this one is left as it is. The
// checkpoints taken up to that prompt come along (the new session's own
// from then on). withFiles also restores the files to the checkpoint
// taken before that prompt (a checkpoint of now is taken first, in the
// new session, so it can be undone). ErrBusy during a run. The
// extensions hear session_before_fork first (one may cancel: a
// *CancelledError), then session_start (reason fork) and session_fork.
func (r *Runtime) ForkAt(ctx context.Context, messageIndex int, withFiles bool) (ForkResult, error) {
	r.mu.Lock()
	if r.busy || r.restoring {
		r.mu.Unlock()
		return ForkResult{}, ErrBusy
	}
	if r.sess == nil {
		r.mu.Unlock()
		return ForkResult{}, errors.New("sessions are off (--no-session): a fork needs a session to branch from")
	}
	if messageIndex < 0 || messageIndex > len(r.messages) {
		n := len(r.messages)
		r.mu.Unlock()
		return ForkResult{}, fmt.Errorf("messageIndex %d is outside the conversation's %d messages", messageIndex, n)
	}
	r.restoring = true
	old := r.sess
	src := branchSource{id: old.ID(), messages: slices.Clone(r.messages[:messageIndex]), custom: slices.Clone(r.custom)}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.restoring = false
		r.mu.Unlock()
	}()
	entry := EntryID(old.ID(), messageIndex)
	if d := r.beforeFork(ctx, ForkPreparation{EntryID: entry, SessionID: old.ID(), MessageIndex: messageIndex, WithFiles: withFiles}); d.Cancel {
		return ForkResult{}, &CancelledError{What: "fork", Extension: d.Extension, Reason: d.Reason}
	}
	res, err := r.branch(ctx, src, withFiles)
	if err != nil {
		return res, err
	}
	r.ObserveSessionStart(SessionStartFork)
	r.observe(Lifecycle{Event: "session_fork", Tree: &TreeChange{EntryID: entry, MessageIndex: messageIndex,
		SessionID: res.SessionID, SessionFile: r.sessionPath(), PreviousSessionID: old.ID(), PreviousSessionFile: old.Path()}})
	return res, nil
}

// branchSource is the conversation a new branch starts with: the first
// messages of session id, and that session's extension entries.
type branchSource struct {
	id       string
	messages []message.Message
	custom   []session.Custom
}

// branch continues src in a new session file naming src.id its parent,
// and makes it the current session (the current file is closed). The
// checkpoints of src's conversation come along; withFiles restores the
// files to the checkpoint before its end. The caller holds r.restoring.
func (r *Runtime) branch(ctx context.Context, src branchSource, withFiles bool) (ForkResult, error) {
	keep, messageIndex := src.messages, len(src.messages)
	// The branch names its parent in its meta line, as zot's forks do.
	r.mu.Lock()
	meta := r.sessionMeta()
	r.mu.Unlock()
	meta.Parent = src.id

	// The checkpoints of the conversation being kept.
	var carried []checkpoint.Checkpoint
	var before *checkpoint.Checkpoint
	store, storeErr := r.openStore(ctx)
	if storeErr == nil {
		cps, err := store.List(ctx, src.id)
		if err != nil {
			return ForkResult{}, err
		}
		prefix := func(cp checkpoint.Checkpoint) bool {
			var extra ckptExtra
			json.Unmarshal(cp.Extra, &extra)
			return cp.MessageIndex <= len(keep) && extra.Transcript == nil && transcriptHash(keep[:cp.MessageIndex]) == extra.Prefix
		}
		for i := range cps {
			if cps[i].Kind == checkpoint.KindPrompt && prefix(cps[i]) {
				carried = append(carried, cps[i])
				if cps[i].MessageIndex == messageIndex {
					before = &cps[i]
				}
			}
		}
	}
	if withFiles && before == nil {
		if storeErr != nil {
			return ForkResult{}, storeErr
		}
		return ForkResult{}, fmt.Errorf("no checkpoint was taken before message %d of this conversation: fork it without its files", messageIndex)
	}

	w, err := session.CreateMeta(session.Dir(r.cfg.Home, r.cfg.CWD), meta)
	if err != nil {
		return ForkResult{}, err
	}
	w.SetRedact(r.redact.Bytes)
	if err := w.AppendTranscript(keep, message.Usage{}); err != nil {
		w.Close()
		return ForkResult{}, err
	}
	for _, c := range src.custom {
		w.AppendCustom(c)
	}
	r.mu.Lock()
	old := r.sess
	r.sess = w
	r.messages, r.usage, r.lastIn = keep, message.Usage{}, 0
	r.custom = src.custom
	r.forked, r.nextTurn = "", nil
	r.mu.Unlock()
	if old != nil {
		old.Close()
	}
	res := ForkResult{SessionID: w.ID(), ForkedFrom: src.id, MessageCount: len(keep), Files: []checkpoint.Change{}}
	if store != nil && len(carried) > 0 {
		if err := store.Copy(ctx, carried, w.ID()); err != nil {
			return res, err
		}
	}
	if withFiles {
		extra, _ := json.Marshal(ckptExtra{Prefix: transcriptHash(keep)})
		undo, err := store.Take(ctx, checkpoint.Meta{Session: w.ID(), MessageIndex: len(keep), Prompt: fmt.Sprintf("before forking at %s (files)", before.ID), Kind: checkpoint.KindRestore, Extra: extra}, r.buffers())
		if err != nil {
			return res, err
		}
		res.Undo = undo.ID
		if res.Files, err = store.RestoreFiles(ctx, *before, undo); err != nil {
			return res, err
		}
		if r.cfg.Buffers != nil {
			if err := r.restoreBuffers(ctx, store, *before); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
