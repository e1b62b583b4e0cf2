package tools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/zot-editors/zot/internal/ospath"
)

// Writes outside the workspace need the user's approval, whatever the
// permission mode: write and edit resolve the path (symlinks included)
// and ask the workspace's WritePolicy before they touch anything. Other
// rules (protected paths: extension directories, $ZOT_HOME) plug into the
// same policy as WriteRules, so every "needs approval" goes through one
// ask.

// WriteRule says why a write to path (absolute, symlinks resolved) needs
// the user's approval, or "" when it does not.
type WriteRule func(path string) string

// WriteApproval is one question to the user.
type WriteApproval struct {
	Tool    string // write or edit
	Path    string // the resolved target
	Reasons []string
	// Change is the whole change: the new content (write) or the diff of
	// the edits (edit). The user approves what they see.
	Change string
}

// Message is the question, naming the whole path, every reason and the
// whole change.
func (a WriteApproval) Message() string {
	msg := fmt.Sprintf("zot wants to %s a file that %s:\n\n%s", verbOf(a.Tool), strings.Join(a.Reasons, "; "), a.Path)
	if a.Change != "" {
		msg += "\n\n" + a.Change
	}
	return msg
}

func verbOf(tool string) string {
	if tool == "edit" {
		return "edit"
	}
	return "write"
}

// WritePolicy decides which writes need approval and asks for it.
type WritePolicy struct {
	// Root is the workspace; AllowDirs are directories the user allowed
	// too (--add-dir). Writes under them need no approval.
	Root      string
	AllowDirs []string
	// Rules add reasons to ask (protected paths).
	Rules []WriteRule
	// Ask puts the question to the user: true allows this one write. nil
	// means the front has no UI (zot -p, zot rpc): the write is refused.
	Ask func(ctx context.Context, a WriteApproval) (bool, error)
}

// WriteGuard is implemented by workspaces whose writes are checked.
type WriteGuard interface {
	// CheckWrite asks about tool writing path (absolute, resolved);
	// change renders the whole change, shown if the user is asked.
	CheckWrite(ctx context.Context, tool, path string, change func() string) error
	// SetWriteRules sets the policy's reasons to ask (protected paths).
	SetWriteRules(rules ...WriteRule)
}

// Check returns nil when tool may write path (absolute, resolved), or an
// error for the model that says what happened and what the user can do.
// change renders the whole change (the new content, or the edits' diff)
// for the question; it is called only when the user is asked.
func (p *WritePolicy) Check(ctx context.Context, tool, path string, change func() string) error {
	if p == nil {
		return nil
	}
	var reasons []string
	outside := !p.inside(path)
	if outside {
		reasons = append(reasons, fmt.Sprintf("is outside the workspace (%s)", p.Root))
	}
	for _, r := range p.Rules {
		if why := r(path); why != "" {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) == 0 {
		return nil
	}
	a := WriteApproval{Tool: tool, Path: path, Reasons: reasons}
	if change != nil {
		a.Change = change()
	}
	if p.Ask == nil {
		hint := "Tell the user what you would change and let them do it"
		if outside && len(reasons) == 1 { // --add-dir lifts only this reason
			hint = "Tell the user; they can allow a directory with --add-dir DIR"
		}
		return fmt.Errorf("refused to %s %s: it %s, and writing there needs the user's approval, which cannot be asked here (no editor UI). Nothing was written. %s", verbOf(tool), path, strings.Join(reasons, "; "), hint)
	}
	ok, err := p.Ask(ctx, a)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("the run was aborted while the user was asked about writing %s; nothing was written", path)
		}
		return fmt.Errorf("could not ask the user about writing %s (%v); nothing was written", path, err)
	}
	if !ok {
		return fmt.Errorf("the user denied writing %s (it %s); nothing was written. Ask the user how to proceed", path, strings.Join(reasons, "; "))
	}
	return nil
}

func (p *WritePolicy) inside(path string) bool {
	for _, dir := range append([]string{p.Root}, p.AllowDirs...) {
		if dir == "" {
			continue
		}
		if within(resolveExisting(dir), path) {
			return true
		}
	}
	return false
}

// within compares names as the file system does: case-insensitively on
// Windows and macOS, so C:\Proj\x is inside c:\proj.
func within(dir, path string) bool {
	return ospath.Within(filepath.Clean(dir), filepath.Clean(path))
}

// maxSymlinks bounds link chains (as the kernel's ELOOP does).
const maxSymlinks = 40

// ErrDanglingSymlink is returned for a write through a symlink whose target
// does not exist: zot neither replaces the link with a regular file nor
// creates a file somewhere the path does not show.
var ErrDanglingSymlink = errors.New("dangling symlink")

// WriteTarget resolves the file a write to path really changes: symlinks
// are followed (the link stays a link, its target is written), and the
// directory part is resolved too, so ../ and linked directories cannot
// hide where the bytes go.
func WriteTarget(path string) (string, error) {
	p := filepath.Clean(path)
	for i := 0; ; i++ {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			break
		}
		if i == maxSymlinks {
			return "", fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		t, err := os.Readlink(p)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(t) {
			t = filepath.Join(filepath.Dir(p), t)
		}
		next := filepath.Clean(t)
		if _, err := os.Lstat(next); errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("%s is a symlink to %s, which does not exist: %w", path, next, ErrDanglingSymlink)
		}
		p = next
	}
	return filepath.Join(resolveExisting(filepath.Dir(p)), filepath.Base(p)), nil
}

// resolveExisting resolves the symlinks of the longest existing prefix of
// dir and keeps the rest as it is.
func resolveExisting(dir string) string {
	dir = filepath.Clean(dir)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return filepath.Join(append([]string{dir}, reverse(rest)...)...)
		}
		rest = append(rest, filepath.Base(dir))
		dir = parent
	}
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

// checkWrite resolves path and asks the workspace's policy; change renders
// the new content or the edits' diff if the user is asked. It returns the
// target to write.
func checkWrite(ctx context.Context, ws Workspace, tool, path string, change func() string) (string, error) {
	target, err := WriteTarget(path)
	if err != nil {
		return "", err
	}
	if g, ok := ws.(WriteGuard); ok {
		if err := g.CheckWrite(ctx, tool, target, change); err != nil {
			return "", err
		}
	}
	return target, nil
}
