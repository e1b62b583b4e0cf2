package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
)

// WriteRequest is a write by the agent into a protected directory, as
// Options.ApproveWrite sees it.
type WriteRequest struct {
	Tool string          // write or edit
	Path string          // absolute, as the tool will resolve it
	Root string          // the protected directory it falls in
	Args json.RawMessage // the tool call's arguments (the full new text or edits)
}

// writeTools are the tools whose "path" argument names a file they change.
var writeTools = []string{"write", "edit"}

// ProtectedDirs are the directories the agent's writes need the user's
// approval for, whatever the permission mode: $ZOT_HOME (global
// extensions, trust, settings), the project's .zot/extensions and every
// extension path. A write there can change what runs next (a guard's
// manifest, an extension's code) or what is trusted.
func (h *Host) ProtectedDirs() []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		p = filepath.Clean(p)
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	add(h.o.Home)
	if h.o.Cwd != "" {
		add(ProjectRoot(h.o.Cwd))
	}
	for _, p := range append(slices.Clone(h.o.ExtPaths), h.o.EditorExtPaths...) {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			p = filepath.Dir(p)
		}
		add(p)
	}
	return out
}

// protectedRoot returns the protected directory path falls in, comparing
// both the path as given and with symlinks resolved (the deepest existing
// ancestor), so neither a symlink into nor out of a root slips past.
func protectedRoot(roots []string, path string) (string, bool) {
	cands := []string{filepath.Clean(path), resolveExisting(path)}
	for _, r := range roots {
		rr := resolveExisting(r)
		for _, p := range cands {
			if within(r, p) || within(rr, p) {
				return r, true
			}
		}
	}
	return "", false
}

// resolveExisting resolves symlinks in the longest existing prefix of p
// and appends the rest.
func resolveExisting(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for cur := p; ; {
		if r, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// checkProtectedWrite asks the user (ApproveWrite) about a write or edit
// into a protected directory; without a way to ask it is refused.
func (h *Host) checkProtectedWrite(ctx context.Context, call agent.ToolCallInfo, args json.RawMessage) (agent.ToolDecision, bool) {
	if !slices.Contains(writeTools, call.Name) {
		return agent.ToolDecision{}, false
	}
	var a struct {
		Path string `json:"path"`
	}
	if json.Unmarshal(args, &a) != nil || a.Path == "" {
		return agent.ToolDecision{}, false // the tool reports the bad arguments
	}
	path := tools.ResolvePath(tools.NewDiskWorkspace(h.o.Cwd), a.Path)
	root, ok := protectedRoot(h.ProtectedDirs(), path)
	if !ok {
		return agent.ToolDecision{}, false
	}
	if h.o.ApproveWrite == nil {
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("%s was not changed: it is inside %s, where zot's extensions, trust and settings live, and writes there need the user's approval, which this front cannot ask for. Tell the user what you would change and let them do it.", path, root)}, true
	}
	if !h.o.ApproveWrite(ctx, WriteRequest{Tool: call.Name, Path: path, Root: root, Args: args}) {
		if ctx.Err() != nil {
			return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the run was aborted while the user was asked about the change to %s; nothing was written.", path)}, true
		}
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user did not allow the change to %s (inside %s, where zot's extensions, trust and settings live); nothing was written. Ask the user how to proceed.", path, root)}, true
	}
	return agent.ToolDecision{}, true
}
