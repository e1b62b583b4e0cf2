package acp

import (
	"context"
	"fmt"
	"strings"

	"github.com/zot-editors/zot/agent"
)

// Checkpoints in ACP (docs/acp.md, "Checkpoints"): ACP has no method for
// them, so they are slash commands whose answer is the turn's text.

// checkpointCommand runs /checkpoints, /checkpoint-diff and /restore; ok
// is false for another command.
func (ss *session) checkpointCommand(ctx context.Context, name, args string) (text string, ok bool) {
	switch name {
	case "checkpoints":
		cps, err := ss.rt.Checkpoints(ctx)
		if err != nil {
			return err.Error(), true
		}
		if len(cps) == 0 {
			return "No checkpoints yet: one is taken before each prompt.", true
		}
		var b strings.Builder
		b.WriteString("Checkpoints (oldest first; `/restore <id> code|conversation|both`, `/checkpoint-diff <id>`):\n")
		for _, cp := range cps {
			what := fmt.Sprintf("before %q", cp.Prompt)
			if cp.Kind != "prompt" {
				what = cp.Prompt
			}
			fmt.Fprintf(&b, "- `%s` %s — message %d, %s; %d file(s) differ now\n", cp.ID, cp.Time.Local().Format("15:04:05"), cp.MessageIndex, what, cp.FilesChanged)
		}
		return b.String(), true
	case "checkpoint-diff":
		if args == "" {
			return "Usage: /checkpoint-diff <id> (ids: /checkpoints).", true
		}
		files, err := ss.rt.CheckpointDiff(ctx, args)
		if err != nil {
			return err.Error(), true
		}
		if len(files) == 0 {
			return fmt.Sprintf("Nothing changed since checkpoint %s.", args), true
		}
		var b strings.Builder
		for _, f := range files {
			fmt.Fprintf(&b, "%s %s\n```diff\n%s```\n", f.Status, f.Path, f.Diff)
		}
		return b.String(), true
	case "restore":
		id, mode, _ := strings.Cut(args, " ")
		mode = strings.TrimSpace(mode)
		if id == "" || mode == "" {
			return "Usage: /restore <id> code|conversation|both (ids: /checkpoints).", true
		}
		r, err := ss.rt.RestoreCheckpoint(ctx, id, mode)
		if err != nil {
			return fmt.Sprintf("Restore failed: %v", err), true
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Restored checkpoint %s (%s).", r.Checkpoint, r.Mode)
		if mode != agent.RestoreConversation {
			fmt.Fprintf(&b, " %d file(s):", len(r.Files))
			for _, f := range r.Files {
				fmt.Fprintf(&b, "\n- %s %s", f.Action, f.Path)
			}
		}
		if mode != agent.RestoreCode {
			fmt.Fprintf(&b, "\nThe conversation is back to %d message(s) (%d removed); this client still shows them.", r.MessageCount, r.MessagesRemoved)
		}
		fmt.Fprintf(&b, "\nUndo: `/restore %s %s`.", r.Undo, mode)
		return b.String(), true
	}
	return "", false
}
