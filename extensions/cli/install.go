package cli

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/childproc"
)

// RecordFile, inside an installed extension's directory, says where it
// came from and what was resolved, so `update` can fetch it again and
// `list` can show the pin. Written before the directory is renamed into
// place, so an extension is installed with its record or not at all.
const RecordFile = ".zot-install.json"

// record is RecordFile's content.
type record struct {
	Source  string `json:"source"` // as the user gave it (npm:NAME@1, git:URL@ref, a path)
	Kind    string `json:"kind"`   // npm, git, path
	Target  string `json:"target"` // package name / URL / directory
	Ref     string `json:"ref,omitempty"`
	Pinned  bool   `json:"pinned"`            // a version or ref was asked for: update skips it
	Version string `json:"version,omitempty"` // resolved (package.json or manifest version)
	Commit  string `json:"commit,omitempty"`  // git: the commit checked out
	// Type is "zot" (extension.json / extension.toml) or "pi" (a pi
	// package or module directory).
	Type      string    `json:"type"`
	Installed time.Time `json:"installed"`
}

func (r record) source() source { return source{Kind: r.Kind, Target: r.Target, Ref: r.Ref} }

// resolved is the version (and commit) a record pins, for messages.
func (r record) resolved() string {
	v := r.Version
	if r.Commit != "" {
		c := r.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if v != "" {
			return v + " (" + c + ")"
		}
		return c
	}
	return v
}

func readRecord(dir string) (record, bool) {
	b, err := os.ReadFile(filepath.Join(dir, RecordFile))
	if err != nil {
		return record{}, false
	}
	var r record
	if json.Unmarshal(b, &r) != nil || r.Kind == "" {
		return record{}, false
	}
	return r, true
}

// staged is a fetched tree in the staging directory, checked and ready
// to be renamed into place.
type staged struct {
	dir  string // the tree
	name string // its extension name (the installed directory's name)
	rec  record
}

// fetch brings src into stage/x: npm pack + unpack, git clone + checkout,
// or a copy; then checks it is an extension zot can load (a zot manifest,
// or a pi package or module directory) and installs a pi package's
// dependencies. Nothing outside stage is touched.
func (c Config) fetch(ctx context.Context, stage string, src source) (staged, error) {
	tree := filepath.Join(stage, "x")
	rec := record{Source: src.String(), Kind: src.Kind, Target: src.Target, Ref: src.Ref, Pinned: src.Pinned(), Installed: time.Now().UTC()}
	switch src.Kind {
	case kindNpm:
		v, err := npmFetch(ctx, stage, tree, src)
		if err != nil {
			return staged{}, err
		}
		rec.Version = v
	case kindGit:
		commit, err := gitFetch(ctx, tree, src)
		if err != nil {
			return staged{}, err
		}
		rec.Commit = commit
	default:
		st, err := os.Stat(src.Target)
		if err != nil {
			return staged{}, err
		}
		if !st.IsDir() {
			return staged{}, fmt.Errorf("%s is not a directory (a single pi module file is loaded with `-e %s`, not installed)", src.Target, src.Target)
		}
		if err := copyTree(src.Target, tree); err != nil {
			return staged{}, fmt.Errorf("copy %s: %v", src.Target, err)
		}
	}
	out := staged{dir: tree, rec: rec}
	// What zot would load from this directory, found as discovery finds
	// it: a zot or SEP manifest, else a pi module directory or package.
	cand := extensions.Discover("", "", []string{tree})[0]
	switch {
	case cand.Err != nil && (hasManifestFile(tree) || len(readPackageJSON(tree).Pi) > 0):
		return staged{}, fmt.Errorf("%s: %v; nothing installed", src, cand.Err)
	case cand.Manifest.Pi != nil:
		out.rec.Type = "pi"
		pkg := readPackageJSON(tree)
		if out.rec.Version == "" {
			out.rec.Version = pkg.Version
		}
		// A package is named as discovery names it (its package.json name
		// without the scope); a module directory after its source.
		out.name = cand.Name
		if cand.Manifest.Pi.Kind != "package" {
			out.name = dirName(sourceBaseName(src))
		}
		if len(pkg.Dependencies) > 0 {
			if err := npmInstallDeps(ctx, tree); err != nil {
				return staged{}, err
			}
		}
	case cand.Err == nil:
		out.name, out.rec.Type = cand.Manifest.Name, "zot"
		if out.rec.Version == "" {
			out.rec.Version = cand.Manifest.Version
		}
	default:
		return staged{}, fmt.Errorf("%s is neither a zot extension (extension.json or extension.toml) nor a pi package "+
			"(package.json with \"pi\": {\"extensions\": [...]}, or index.ts/index.js); nothing installed", src)
	}
	if !extensions.ValidExtensionName(out.name) {
		return staged{}, fmt.Errorf("%s: cannot make an extension name from %q; nothing installed", src, out.name)
	}
	rb, _ := json.MarshalIndent(out.rec, "", "  ")
	if err := os.WriteFile(filepath.Join(tree, RecordFile), append(rb, '\n'), 0o600); err != nil {
		return staged{}, err
	}
	return out, nil
}

func hasManifestFile(dir string) bool {
	for _, n := range []string{extensions.ManifestFile, "extension.toml"} {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			return true
		}
	}
	return false
}

// sourceBaseName is a repository's or folder's last path element, for a
// pi module directory without a package.json name.
func sourceBaseName(src source) string {
	t := strings.TrimSuffix(strings.TrimRight(src.Target, "/"), ".git")
	if i := strings.LastIndexAny(t, "/:"); i >= 0 {
		t = t[i+1:]
	}
	return t
}

// packageJSON is the part of a package.json zot reads.
type packageJSON struct {
	Version      string            `json:"version"`
	Pi           json.RawMessage   `json:"pi"`
	Dependencies map[string]string `json:"dependencies"`
}

func readPackageJSON(dir string) packageJSON {
	var pkg packageJSON
	if b, err := os.ReadFile(filepath.Join(dir, "package.json")); err == nil {
		json.Unmarshal(b, &pkg) // a bad one was reported by discovery
	}
	return pkg
}

// need finds a command the install needs, or says what to install.
func need(cmd, forWhat string) (string, error) {
	p, err := exec.LookPath(cmd)
	if err != nil {
		what := "Node.js 20 or newer (npm comes with it)"
		if cmd == "git" {
			what = "git"
		}
		return "", fmt.Errorf("%s is not on PATH; %s needs it: install %s and try again", cmd, forWhat, what)
	}
	return p, nil
}

// run runs a tool, its output kept for the error message.
func run(ctx context.Context, dir string, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// Credentials prompts would hang a CLI that is not a terminal's.
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0")
	err := childproc.Start(cmd)
	if err == nil {
		err = cmd.Wait()
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("interrupted")
	}
	if err != nil {
		return stdout.Bytes(), &toolError{err: err, stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

type toolError struct {
	err    error
	stderr string
}

func (e *toolError) Error() string {
	if t := tail(e.stderr, 6); t != "" {
		return t
	}
	return e.err.Error()
}

// tail is the last n non-empty lines of a tool's stderr, for an error.
func tail(s string, n int) string {
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n  ")
}

// npmFetch packs the package with the machine's npm (its configured
// registry) and unpacks it into tree; it returns the resolved version.
func npmFetch(ctx context.Context, stage, tree string, src source) (string, error) {
	npm, err := need("npm", "installing npm: packages")
	if err != nil {
		return "", err
	}
	spec := src.Target
	if src.Ref != "" {
		spec += "@" + src.Ref
	}
	// --ignore-scripts: packing runs no code of the package (its prepack
	// is its author's build step, not ours).
	out, err := run(ctx, stage, npm, "pack", spec, "--json", "--ignore-scripts", "--pack-destination", stage)
	if err != nil {
		var te *toolError
		if errors.As(err, &te) {
			switch {
			case strings.Contains(te.stderr, "ETARGET") || strings.Contains(te.stderr, "No matching version"):
				return "", fmt.Errorf("npm has no version %q of %s (`npm view %s versions` lists them); nothing installed", src.Ref, src.Target, src.Target)
			case strings.Contains(te.stderr, "E404") || strings.Contains(te.stderr, "404 Not Found"):
				return "", fmt.Errorf("npm has no package %s (check the name); nothing installed", src.Target)
			}
		}
		return "", fmt.Errorf("npm pack %s failed; nothing installed:\n  %v", spec, err)
	}
	var packed []struct {
		Name, Version, Filename string
	}
	if err := json.Unmarshal(out, &packed); err != nil || len(packed) != 1 || packed[0].Filename == "" {
		return "", fmt.Errorf("npm pack %s: unexpected output %q", spec, strings.TrimSpace(string(out)))
	}
	if err := untarPackage(filepath.Join(stage, filepath.Base(packed[0].Filename)), tree); err != nil {
		return "", fmt.Errorf("unpack %s: %v", packed[0].Filename, err)
	}
	return packed[0].Version, nil
}

// npmInstallDeps installs a package's own dependencies into its
// node_modules. pi's core packages are peer dependencies the pi runtime
// provides, so peers are not installed (--legacy-peer-deps); local file:
// dependencies are copied, not linked (--install-links), so the installed
// directory stands alone.
func npmInstallDeps(ctx context.Context, tree string) error {
	npm, err := need("npm", "installing a pi package's dependencies")
	if err != nil {
		return err
	}
	if _, err := run(ctx, tree, npm, "install", "--omit=dev", "--legacy-peer-deps", "--install-links", "--no-audit", "--no-fund"); err != nil {
		return fmt.Errorf("npm install (the package's dependencies) failed; nothing installed:\n  %v", err)
	}
	return nil
}

// untarPackage unpacks an npm tarball (its files under one top folder,
// "package/") into dir, refusing paths that leave it.
func untarPackage(tgz, dir string) error {
	f, err := os.Open(tgz)
	if err != nil {
		return err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return err
	}
	tr := tar.NewReader(gz)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		name := filepath.FromSlash(h.Name)
		if _, rest, ok := strings.Cut(h.Name, "/"); ok {
			name = filepath.FromSlash(rest) // strip "package/"
		}
		if name == "" || !filepath.IsLocal(name) {
			if h.Typeflag == tar.TypeDir {
				continue
			}
			return fmt.Errorf("refusing %q: outside the package", h.Name)
		}
		target := filepath.Join(dir, name)
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(target, 0o755); err != nil {
				return err
			}
		case tar.TypeReg:
			if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
				return err
			}
			mode := fs.FileMode(0o644)
			if h.FileInfo().Mode()&0o111 != 0 {
				mode = 0o755
			}
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, tr); err != nil {
				out.Close()
				return err
			}
			if err := out.Close(); err != nil {
				return err
			}
		}
		// Links and devices are not part of npm packages: skipped.
	}
}

// gitFetch clones the repository into tree and checks out the ref (the
// default branch without one); it returns the commit and leaves no .git
// behind (update clones again).
func gitFetch(ctx context.Context, tree string, src source) (string, error) {
	git, err := need("git", "installing git: packages")
	if err != nil {
		return "", err
	}
	args := []string{"clone", "--quiet"}
	if src.Ref == "" {
		args = append(args, "--depth", "1")
	}
	if _, err := run(ctx, "", git, append(args, "--", src.Target, tree)...); err != nil {
		return "", fmt.Errorf("git clone %s failed; nothing installed:\n  %v", src.Target, err)
	}
	if src.Ref != "" {
		// A tag or commit checks out as it is; a branch other than the
		// default one exists only as origin/<branch> in a fresh clone.
		_, err := run(ctx, tree, git, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", src.Ref, "--")
		if err != nil && ctx.Err() == nil {
			_, err = run(ctx, tree, git, "-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", "origin/"+src.Ref, "--")
		}
		if err != nil {
			return "", fmt.Errorf("%s has no branch, tag or commit %q (`git ls-remote %s` lists them); nothing installed", src.Target, src.Ref, src.Target)
		}
	}
	out, err := run(ctx, tree, git, "rev-parse", "HEAD")
	if err != nil {
		return "", fmt.Errorf("git rev-parse HEAD in the clone of %s: %v", src.Target, err)
	}
	if err := os.RemoveAll(filepath.Join(tree, ".git")); err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}
