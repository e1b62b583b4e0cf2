package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/zot-editors/zot/agent/tools"
)

// Exec runs command for extension ext (SEP's exec/run, zot's exec frame)
// exactly as a model's bash call would be judged and run: the hook
// chain's BeforeTool first — the extensions' tool_call guards, then the
// front's approval (--no-yolo, lsp's ask mode, readonly) which shows the
// user the whole command — and then the bash tool's process rules (its
// shell, the workspace root, credentials scrubbed, one process group
// killed on cancel or timeout). A block is an error with the guard's or
// the user's reason. The bash tool must be among the tools the user
// enabled (--tools, --no-tools): an extension cannot run commands the
// model could not.
func (r *Runtime) Exec(ctx context.Context, ext, command string, timeout time.Duration) (tools.ExecResult, error) {
	var bash tools.Execer
	for _, t := range r.builtins {
		if e, ok := t.(tools.Execer); ok && t.Name() == "bash" {
			bash = e
		}
	}
	if bash == nil {
		return tools.ExecResult{}, fmt.Errorf("the bash tool is not enabled here (--tools / --no-tools), and exec runs through it")
	}
	// The command may write: a prompt's checkpoint being recorded comes
	// first.
	r.awaitCheckpoint()
	args, _ := json.Marshal(map[string]string{"command": command})
	if h := r.cfg.Hooks; h != nil {
		id := "exec-" + strconv.FormatInt(r.execSeq.Add(1), 10)
		d := h.BeforeTool(ctx, ToolCallInfo{ID: id, Name: "bash", Args: args, Requester: ext})
		if d.Block {
			reason := d.Reason
			if reason == "" {
				reason = "blocked by an extension"
			}
			return tools.ExecResult{}, fmt.Errorf("blocked: %s", reason)
		}
		if len(d.ModifiedArgs) > 0 {
			var a struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(d.ModifiedArgs, &a) != nil || a.Command == "" {
				return tools.ExecResult{}, fmt.Errorf("blocked: a guard rewrote the command into something that is not {command}")
			}
			command = a.Command
		}
	}
	return bash.Exec(ctx, command, timeout)
}
