package rpc

import (
	"context"
	"errors"
	"fmt"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/checkpoint"
)

// Checkpoints over RPC (issue 33, docs/rpc.md "Checkpoints"):
// checkpoints lists the session's, restore puts files and/or the
// conversation back, checkpoint_diff compares one with now.

// CheckpointsData answers checkpoints: oldest first.
type CheckpointsData struct {
	Checkpoints []agent.CheckpointInfo `json:"checkpoints"`
}

// CheckpointDiffData answers checkpoint_diff.
type CheckpointDiffData struct {
	Checkpoint string                `json:"checkpoint"`
	Files      []checkpoint.FileDiff `json:"files"`
}

func (s *Server) checkpointCommand(ctx context.Context, c Command, ok func(any), fail func(error)) {
	switch c.Type {
	case "checkpoints":
		cps, err := s.rt.Checkpoints(ctx)
		if err != nil {
			fail(err)
			return
		}
		ok(CheckpointsData{Checkpoints: cps})
	case "checkpoint_diff":
		if c.Checkpoint == "" {
			fail(errors.New(`checkpoint_diff needs a "checkpoint": an id from checkpoints`))
			return
		}
		files, err := s.rt.CheckpointDiff(ctx, c.Checkpoint)
		if err != nil {
			fail(fmt.Errorf("checkpoint_diff: %w", err))
			return
		}
		if files == nil {
			files = []checkpoint.FileDiff{}
		}
		ok(CheckpointDiffData{Checkpoint: c.Checkpoint, Files: files})
	case "restore":
		if c.Checkpoint == "" {
			fail(errors.New(`restore needs a "checkpoint" (an id from checkpoints) and a "mode": code, conversation or both`))
			return
		}
		if c.Mode == "" {
			fail(errors.New(`restore needs a "mode": code (the files), conversation (rewind to before the checkpoint's prompt) or both`))
			return
		}
		// Busy from a run's acceptance to its done, as clear sees it: a
		// restore never runs under a run or one about to start.
		s.mu.Lock()
		busy := s.pending > 0
		s.mu.Unlock()
		if busy {
			fail(errors.New("restore: a run is in progress or queued; stop it first (abort), or wait for its done"))
			return
		}
		res, err := s.rt.RestoreCheckpoint(ctx, c.Checkpoint, c.Mode)
		if errors.Is(err, agent.ErrBusy) {
			fail(errors.New("restore: a run is in progress or queued; stop it first (abort), or wait for its done"))
			return
		}
		if err != nil {
			fail(fmt.Errorf("restore: %w", err))
			return
		}
		ok(res)
	}
}
