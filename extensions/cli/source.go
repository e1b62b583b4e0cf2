package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Install sources, as pi's `pi install` spells them (pi's
// docs/packages.md): npm:NAME[@version], git:URL[@ref], a git URL with a
// scheme, or a local path.
const (
	kindNpm  = "npm"
	kindGit  = "git"
	kindPath = "path"
)

// source is one parsed install argument.
type source struct {
	Kind string
	// Target is the npm package name (or a path npm accepts: a tarball or
	// a folder, made absolute), the git URL without its ref, or the
	// local directory.
	Target string
	// Ref is the version (npm) or ref (git) asked for; "" follows the
	// newest (npm's latest dist-tag, git's default branch).
	Ref string
}

// Pinned reports whether the user asked for one version: like pi, an
// install with a version or ref is skipped by `update`.
func (s source) Pinned() bool { return s.Ref != "" }

// String is the spec as the user would write it again.
func (s source) String() string {
	switch s.Kind {
	case kindNpm, kindGit:
		if s.Ref != "" {
			return s.Kind + ":" + s.Target + "@" + s.Ref
		}
		return s.Kind + ":" + s.Target
	}
	return s.Target
}

// identity is what names the same package across versions (pi: npm by
// package name, git by URL without ref, local by absolute path).
func (s source) identity() string { return s.Kind + ":" + s.Target }

// parseSource reads an install argument. cwd resolves relative paths.
func parseSource(arg, cwd string) (source, error) {
	switch {
	case strings.HasPrefix(arg, "npm:"):
		return parseNpm(strings.TrimPrefix(arg, "npm:"), cwd)
	case strings.HasPrefix(arg, "git:"):
		return parseGit(strings.TrimPrefix(arg, "git:"), true)
	case isGitURL(arg):
		return parseGit(arg, false)
	}
	p := arg
	if !filepath.IsAbs(p) {
		p = filepath.Join(cwd, p)
	}
	return source{Kind: kindPath, Target: filepath.Clean(p)}, nil
}

// looksLikePath reports whether an npm spec names a file or folder
// (npm accepts a tarball or a package folder) rather than a package.
func looksLikePath(s string) bool {
	return strings.HasPrefix(s, "./") || strings.HasPrefix(s, "../") || strings.HasPrefix(s, "/") ||
		strings.HasPrefix(s, "~/") || strings.HasPrefix(s, "file:") || filepath.IsAbs(s) ||
		strings.HasSuffix(s, ".tgz") || strings.HasSuffix(s, ".tar.gz")
}

func parseNpm(spec, cwd string) (source, error) {
	const form = "expected npm:NAME or npm:NAME@VERSION (NAME may be @scope/name), or npm:PATH to a tarball or package folder"
	if spec == "" {
		return source{}, fmt.Errorf("empty npm package name; %s", form)
	}
	if looksLikePath(spec) {
		p := strings.TrimPrefix(spec, "file:")
		if strings.HasPrefix(p, "~/") {
			if h, err := os.UserHomeDir(); err == nil {
				p = filepath.Join(h, p[2:])
			}
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if _, err := os.Stat(p); err != nil {
			return source{}, fmt.Errorf("npm:%s: no such tarball or folder (%s)", spec, p)
		}
		return source{Kind: kindNpm, Target: filepath.Clean(p)}, nil
	}
	name, ref := spec, ""
	// The version follows the last '@' that is not a scope's leading one.
	if i := strings.LastIndex(spec, "@"); i > 0 {
		name, ref = spec[:i], spec[i+1:]
		if ref == "" {
			return source{}, fmt.Errorf("npm:%s: empty version after @; %s", spec, form)
		}
	}
	if !validNpmName(name) {
		return source{}, fmt.Errorf("npm:%s: %q is not an npm package name; %s", spec, name, form)
	}
	return source{Kind: kindNpm, Target: name, Ref: ref}, nil
}

// validNpmName checks npm's rules loosely: lower-case URL-safe
// characters, an optional @scope/ prefix, ≤ 214 characters.
func validNpmName(n string) bool {
	if n == "" || len(n) > 214 {
		return false
	}
	rest := n
	if strings.HasPrefix(n, "@") {
		scope, pkg, ok := strings.Cut(n[1:], "/")
		if !ok || scope == "" || pkg == "" {
			return false
		}
		rest = scope + pkg
	}
	if strings.HasPrefix(rest, ".") || strings.HasPrefix(rest, "_") {
		return false
	}
	for _, r := range rest {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r)
		if !ok {
			return false
		}
	}
	return true
}

// parseGit reads URL[@ref]. With the git: prefix pi also accepts
// shorthands (host/user/repo, git@host:user/repo); without it only URLs
// with a scheme.
func parseGit(spec string, prefixed bool) (source, error) {
	const form = "expected git:URL or git:URL@REF (a branch, tag or commit), e.g. git:https://host/user/repo@v1 or git:git@host:user/repo"
	if spec == "" {
		return source{}, fmt.Errorf("empty git URL; %s", form)
	}
	url, ref := spec, ""
	if i := strings.LastIndex(spec, "@"); i > 0 && refAt(spec, i) {
		url, ref = spec[:i], spec[i+1:]
		if ref == "" {
			return source{}, fmt.Errorf("git:%s: empty ref after @; %s", spec, form)
		}
	}
	if !strings.Contains(url, "://") {
		switch {
		case !prefixed:
			return source{}, fmt.Errorf("%s: not a URL; %s", spec, form)
		case strings.Contains(url, "@") && strings.Contains(url, ":"):
			// scp-like git@host:user/repo: git reads it as it is.
		case strings.Count(url, "/") >= 2:
			url = "https://" + url // host/user/repo, as pi reads it
		default:
			return source{}, fmt.Errorf("git:%s: not a repository URL; %s", spec, form)
		}
	}
	if strings.HasPrefix(ref, "-") {
		return source{}, fmt.Errorf("git:%s: a ref cannot start with '-'", spec)
	}
	return source{Kind: kindGit, Target: url, Ref: ref}, nil
}

// refAt reports whether the '@' at i in a git spec starts a ref rather
// than ending user info (https://user@host/…, git@host:user/repo): a ref
// comes after the host, and holds no ':' (git forbids it in ref names).
func refAt(spec string, i int) bool {
	if strings.Contains(spec[i+1:], ":") {
		return false
	}
	if k := strings.Index(spec, "://"); k >= 0 {
		hostEnd := strings.Index(spec[k+3:], "/")
		return hostEnd >= 0 && i > k+3+hostEnd
	}
	// host/user/repo@ref or git@host:user/repo@ref: the path has begun.
	return strings.ContainsAny(spec[:i], "/:")
}

// dirName turns a package or repository name into an installed
// directory's (and extension's) name: letters, digits, '.', '_', '-'.
// @scope/name becomes scope-name.
func dirName(n string) string {
	n = strings.TrimPrefix(n, "@")
	var b strings.Builder
	for _, r := range n {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), ".-")
	if len(s) > 64 {
		s = s[:64]
	}
	return s
}
