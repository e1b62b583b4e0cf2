package extensions

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/zot-editors/zot/agent/tools"
)

// ProtectedDirs are the directories the agent's writes need the user's
// approval for, whatever the permission mode: $ZOT_HOME (global
// extensions, trust, settings), the project's .zot/extensions and every
// extension path. A write there can change what runs next (a guard's
// manifest, an extension's code) or what is trusted.
func (h *Host) ProtectedDirs() []string {
	return ProtectedDirs(h.o.Home, h.o.Cwd, append(slices.Clone(h.o.ExtPaths), h.o.EditorExtPaths...))
}

// ProtectedDirs is Host.ProtectedDirs for home, the workspace cwd and the
// extension paths, known before any host starts.
func ProtectedDirs(home, cwd string, extPaths []string) []string {
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
	add(home)
	if cwd != "" {
		add(ProjectRoot(cwd))
	}
	for _, p := range extPaths {
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

// ProtectedWriteRule is the write rule for dirs (ProtectedDirs): a write or
// edit there needs the user's approval in every permission mode, asked in
// the same question as any other (tools.WritePolicy), showing the whole
// change; a front that cannot ask refuses it.
func ProtectedWriteRule(dirs []string) tools.WriteRule {
	return func(path string) string {
		root, ok := protectedRoot(dirs, path)
		if !ok {
			return ""
		}
		return fmt.Sprintf("is inside %s, where zot's extensions, trust and settings live (a change there can change what runs)", root)
	}
}
