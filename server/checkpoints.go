package server

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/checkpoint"
	"github.com/zot-editors/zot/internal/ospath"
)

// Checkpoints in zot lsp (issue 33; docs/protocol.md, "Checkpoints"): the
// runtime records the workspace before every prompt, the editor's unsaved
// buffers included (editorBuffers), and a restore puts the buffers back
// through workspace/applyEdit, as every change zot makes to them.

// checkpointer is the runtime's checkpoint API (agent.Runtime has it; a
// test's fake runtime may not).
type checkpointer interface {
	ForkAt(ctx context.Context, messageIndex int, withFiles bool) (agent.ForkResult, error)
	Checkpoints(ctx context.Context) ([]agent.CheckpointInfo, error)
	CheckpointDiff(ctx context.Context, id string) ([]checkpoint.FileDiff, error)
	RestoreCheckpoint(ctx context.Context, id, mode string) (agent.RestoreResult, error)
}

func (s *Server) checkpointer(method string) (checkpointer, error) {
	rt, err := s.runtime()
	if err != nil {
		return nil, err
	}
	c, ok := rt.(checkpointer)
	if !ok {
		return nil, rpcError(CodeRequestFailed, "%s: this runtime keeps no checkpoints", method)
	}
	return c, nil
}

// checkpointError turns the runtime's errors into the method's.
func checkpointError(method string, err error) error {
	if errors.Is(err, agent.ErrBusy) {
		return rpcError(CodeRequestFailed, "%s: a run is in progress; stop it first (zot/abort with clearQueue)", method)
	}
	return rpcError(CodeRequestFailed, "%s: %v", method, err)
}

func (s *Server) zotCheckpoints(ctx context.Context) (CheckpointsResult, error) {
	c, err := s.checkpointer(MethodCheckpoints)
	if err != nil {
		return CheckpointsResult{}, err
	}
	cps, err := c.Checkpoints(ctx)
	if err != nil {
		return CheckpointsResult{}, checkpointError(MethodCheckpoints, err)
	}
	res := CheckpointsResult{Checkpoints: make([]CheckpointInfo, 0, len(cps))}
	for _, cp := range cps {
		res.Checkpoints = append(res.Checkpoints, CheckpointInfo{ID: cp.ID, MessageIndex: cp.MessageIndex, Prompt: cp.Prompt,
			Kind: cp.Kind, Time: cp.Time.Format(time.RFC3339Nano), FilesChanged: cp.FilesChanged})
	}
	return res, nil
}

func (p *CheckpointDiffParams) validate(method string) error {
	if p.Checkpoint == "" {
		return fieldError(method, "checkpoint", "must be a checkpoint's id (zot/checkpoints)")
	}
	return nil
}

func (s *Server) zotCheckpointDiff(ctx context.Context, p *CheckpointDiffParams) (CheckpointDiffResult, error) {
	c, err := s.checkpointer(MethodCheckpointDiff)
	if err != nil {
		return CheckpointDiffResult{}, err
	}
	files, err := c.CheckpointDiff(ctx, p.Checkpoint)
	if err != nil {
		return CheckpointDiffResult{}, checkpointError(MethodCheckpointDiff, err)
	}
	res := CheckpointDiffResult{Checkpoint: p.Checkpoint, Files: make([]CheckpointFileDiff, 0, len(files))}
	for _, f := range files {
		res.Files = append(res.Files, CheckpointFileDiff{Path: f.Path, URI: s.fileURI(f.Path), Status: f.Status, Diff: f.Diff})
	}
	return res, nil
}

// fileURI is the URI of a workspace-relative path.
func (s *Server) fileURI(rel string) string {
	return ospath.ToURI(filepath.Join(s.ws.Root(), filepath.FromSlash(rel)))
}

func (p *CheckpointRestoreParams) validate(method string) error {
	if p.Checkpoint == "" {
		return fieldError(method, "checkpoint", "must be a checkpoint's id (zot/checkpoints)")
	}
	switch p.Mode {
	case agent.RestoreCode, agent.RestoreConversation, agent.RestoreBoth:
		return nil
	}
	return fieldError(method, "mode", `must be "code", "conversation" or "both", not %q`, p.Mode)
}

func (s *Server) zotCheckpointRestore(ctx context.Context, p *CheckpointRestoreParams) (CheckpointRestoreResult, error) {
	if err := s.idle(MethodCheckpointRestore); err != nil {
		return CheckpointRestoreResult{}, err
	}
	c, err := s.checkpointer(MethodCheckpointRestore)
	if err != nil {
		return CheckpointRestoreResult{}, err
	}
	// The buffers are restored through workspace/applyEdit, whose answer
	// arrives as a later message: let it be read meanwhile.
	release(ctx)
	r, err := c.RestoreCheckpoint(ctx, p.Checkpoint, p.Mode)
	if err != nil {
		return CheckpointRestoreResult{}, checkpointError(MethodCheckpointRestore, err)
	}
	if p.Mode != agent.RestoreCode {
		// The model's reads are from a conversation that is gone.
		s.ws.forgetReads()
	}
	res := CheckpointRestoreResult{Checkpoint: r.Checkpoint, Mode: r.Mode, Undo: r.Undo, MessageCount: r.MessageCount,
		MessagesRemoved: r.MessagesRemoved, Files: make([]CheckpointFileChange, 0, len(r.Files))}
	for _, f := range r.Files {
		res.Files = append(res.Files, CheckpointFileChange{Path: f.Path, URI: s.fileURI(f.Path), Action: f.Action})
	}
	return res, nil
}

func (p *SessionForkParams) validate(method string) error {
	if p.MessageIndex < 0 {
		return fieldError(method, "messageIndex", "must be the index of a user message (zot/messages), or the conversation's length, not %d", p.MessageIndex)
	}
	return nil
}

// zotSessionFork branches the conversation at a message into a new
// session (with the files of the checkpoint before it, if asked).
func (s *Server) zotSessionFork(ctx context.Context, p *SessionForkParams) (SessionForkResult, error) {
	if err := s.idle(MethodSessionFork); err != nil {
		return SessionForkResult{}, err
	}
	c, err := s.checkpointer(MethodSessionFork)
	if err != nil {
		return SessionForkResult{}, err
	}
	if p.MessageIndex > 0 {
		rt, _ := s.runtime()
		msgs := rt.Messages()
		if p.MessageIndex < len(msgs) && !isPrompt(msgs[p.MessageIndex]) {
			return SessionForkResult{}, rpcError(CodeRequestFailed, "%s: message %d is not a prompt of the user: fork at a user message (zot/messages) or at the end", MethodSessionFork, p.MessageIndex)
		}
	}
	release(ctx) // the files' buffers are restored through workspace/applyEdit
	r, err := c.ForkAt(ctx, p.MessageIndex, p.WithFiles)
	if err != nil {
		return SessionForkResult{}, checkpointError(MethodSessionFork, err)
	}
	s.sessionChanged()
	res := SessionForkResult{SessionID: r.SessionID, ForkedFrom: r.ForkedFrom, MessageCount: r.MessageCount, Undo: r.Undo, Files: make([]CheckpointFileChange, 0, len(r.Files))}
	for _, f := range r.Files {
		res.Files = append(res.Files, CheckpointFileChange{Path: f.Path, URI: s.fileURI(f.Path), Action: f.Action})
	}
	return res, nil
}

// editorBuffers are the runtime's view of the editor's documents for
// checkpoints: what zot reads of every open or zot-changed document, and
// restoring them through the editor.
type editorBuffers struct{ s *Server }

// withCheckpointBuffers lets checkpoints record and restore the buffers.
func (s *Server) withCheckpointBuffers(cfg agent.Config) agent.Config {
	cfg.Buffers = editorBuffers{s}
	return cfg
}

func (b editorBuffers) Unsaved() map[string]string {
	w := b.s.ws
	out := map[string]string{}
	for _, p := range w.OverlaidPaths() {
		out[p] = w.snapshot(p).text
	}
	return out
}

// Restore makes each open buffer hold its checkpoint text, through
// workspace/applyEdit (re-tried when the user typed meanwhile). A file
// the checkpoint did not have was removed from disk; its buffer is left
// to the editor. zot's own pending changes to the restored documents are
// dropped: the restored text is the user's again.
func (b editorBuffers) Restore(ctx context.Context, texts map[string]*string) error {
	s, w := b.s, b.s.ws
	var failed []string
	for path, text := range texts {
		if text == nil {
			// The checkpoint had no such file: it was removed from disk,
			// and nothing zot meant to save there is pending any more.
			w.saved(path)
			continue
		}
		done := false
		for attempt := 0; attempt < maxEditAttempts && !done; attempt++ {
			cur := w.snapshot(path)
			if cur.text == *text {
				done = true
				break
			}
			applied, _, err := w.applyInEditor(ctx, path, cur, *text)
			if err != nil {
				return err
			}
			if applied {
				s.awaitApplied(ctx, path, cur)
				done = true
				break
			}
			if !cur.open {
				break
			}
			s.barrier(ctx)
			s.overlay.waitChange(ctx, path, cur.version, time.Second)
		}
		w.saved(path)
		if !done {
			failed = append(failed, w.display(path))
		}
	}
	w.forgetReads()
	if len(failed) > 0 {
		return fmt.Errorf("the files were restored, but the editor did not take the restored text into the buffers of %v: reload them from disk", failed)
	}
	return nil
}
