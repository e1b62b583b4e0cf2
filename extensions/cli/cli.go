// Package cli is `zot ext`: list, install, update, remove, enable,
// disable, logs and trust, as zot's extension docs describe them
// (shared/seeds/000). install and update also take pi's package sources
// (npm:NAME[@version], git:URL[@ref]; see install.go).
//
// cmd/zot calls Run with the arguments after "ext":
//
//	case "ext":
//		os.Exit(cli.Run(os.Args[2:], os.Stdout, os.Stderr))
//
// `zot ext list` reads manifests and the trust store only: it is instant
// and never runs extension code. It shows every discovered extension with
// its source (project, global) and state (enabled, disabled, untrusted,
// shadowed by a same-named extension earlier in load order, invalid).
// `zot ext list --probe` also starts the enabled, trusted ones the way
// zot would, reports their live state (ready, failed and why), their tools
// and commands and every shadowed tool/command name, then stops them.
// `--json` prints the same as JSON.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zot-editors/zot/agent/home"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
)

// Config is where Run looks; Run fills it from the process.
type Config struct {
	Cwd  string // the workspace (project extensions live in Cwd/.zot/extensions)
	Home string // $ZOT_HOME
	// Ctx ends `logs -f`; nil means until SIGINT/SIGTERM.
	Ctx context.Context
	// BuiltinTools, ReplaceableTools and BuiltinCommands, for --probe's
	// report of name clashes (Run fills in zot's tools).
	BuiltinTools, ReplaceableTools, BuiltinCommands []string
}

const usage = `usage: zot ext <command>

  list [--probe] [--json]        list extensions and their state
  install <path|git-url>         copy / clone into $ZOT_HOME/extensions/
  install npm:NAME[@version]     an npm package (a pi package); a version pins it
  install git:URL[@ref]          a git repository (URL, host/user/repo); a ref pins it
  update [name|source]           fetch again what follows the newest (pinned ones stay)
  remove <name|source>           delete an installed extension
  enable <name>                  re-enable a disabled extension
  disable <name>                 disable without removing
  logs <name> [-f]               print (or follow) the extension's log
  trust <name>                   trust a project-local extension (.zot/extensions)
`

// Run runs `zot ext ARGS` in the current directory and $ZOT_HOME and
// returns the exit code.
func Run(args []string, builtinCommands []string, stdout, stderr io.Writer) int {
	wd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(stderr, "zot ext:", err)
		return 1
	}
	return Config{Cwd: wd, Home: home.Dir(), BuiltinTools: tools.Core, ReplaceableTools: tools.Replaceable, BuiltinCommands: builtinCommands}.Run(args, stdout, stderr)
}

// Run runs one `zot ext` command.
func (c Config) Run(args []string, stdout, stderr io.Writer) int {
	if c.Home == "" {
		c.Home = home.Dir()
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(stdout, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, rest := args[0], args[1:]
	var flags []string
	var pos []string
	for _, a := range rest {
		if strings.HasPrefix(a, "-") && len(a) > 1 {
			flags = append(flags, strings.TrimLeft(a, "-"))
		} else {
			pos = append(pos, a)
		}
	}
	has := func(names ...string) bool {
		for _, f := range flags {
			for _, n := range names {
				if f == n {
					return true
				}
			}
		}
		return false
	}
	allowed := map[string][]string{"list": {"probe", "json"}, "logs": {"f", "follow"}}
	for _, f := range flags {
		ok := false
		for _, a := range allowed[cmd] {
			ok = ok || f == a
		}
		if !ok {
			fmt.Fprintf(stderr, "zot ext %s: unknown flag -%s\n\n%s", cmd, f, usage)
			return 2
		}
	}
	wantArgs := map[string]int{"list": 0, "install": 1, "update": -1, "remove": 1, "enable": 1, "disable": 1, "logs": 1, "trust": 1}
	n, known := wantArgs[cmd]
	if !known {
		fmt.Fprintf(stderr, "zot ext: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	if n >= 0 && len(pos) != n {
		fmt.Fprintf(stderr, "zot ext %s: expected %d argument(s)\n\n%s", cmd, n, usage)
		return 2
	}
	ctx := c.Ctx
	if ctx == nil {
		// Ctrl-C ends a fetch through its context, so the staging
		// directory is removed on the way out.
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(context.Background(), os.Interrupt, sigterm)
		defer stop()
	}
	var err error
	switch cmd {
	case "list":
		err = c.list(stdout, has("probe"), has("json"))
	case "install":
		err = c.install(ctx, stdout, pos[0])
	case "update":
		err = c.update(ctx, stdout, pos)
	case "remove":
		err = c.remove(stdout, pos[0])
	case "enable":
		err = c.setEnabled(stdout, pos[0], true)
	case "disable":
		err = c.setEnabled(stdout, pos[0], false)
	case "logs":
		err = c.logs(ctx, stdout, pos[0], has("f", "follow"))
	case "trust":
		err = c.trust(stdout, pos[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "zot ext %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

func (c Config) list(w io.Writer, probe, asJSON bool) error {
	var sts []extensions.Status
	if probe {
		h := extensions.NewHost(extensions.Options{
			Cwd: c.Cwd, Home: c.Home, BuiltinTools: c.BuiltinTools, ReplaceableTools: c.ReplaceableTools, BuiltinCommands: c.BuiltinCommands,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := h.Start(ctx); err != nil {
			return err
		}
		sts = h.Status()
		h.Close(context.Background())
	} else {
		sts = c.staticStatus()
	}
	if asJSON {
		if sts == nil {
			sts = []extensions.Status{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(sts)
	}
	if len(sts) == 0 {
		fmt.Fprintf(w, "no extensions (looked in %s and %s)\n", extensions.ProjectRoot(c.Cwd), extensions.GlobalRoot(c.Home))
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tVERSION\tSOURCE\tSTATE\tDESCRIPTION")
	for _, s := range sts {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", s.Name, dash(s.Version), s.Source, s.State, s.Description)
	}
	tw.Flush()
	for _, s := range sts {
		var notes []string
		if r, ok := readRecord(s.Dir); ok {
			pin := "follows the newest: `zot ext update " + s.Name + "`"
			if r.Pinned {
				pin = "pinned"
			}
			notes = append(notes, fmt.Sprintf("installed from %s at %s (%s)", r.Source, dash(r.resolved()), pin))
		}
		if s.Reason != "" {
			notes = append(notes, s.Reason)
		}
		if len(s.Tools) > 0 {
			notes = append(notes, "tools: "+strings.Join(s.Tools, ", "))
		}
		if len(s.Commands) > 0 {
			notes = append(notes, "commands: /"+strings.Join(s.Commands, ", /"))
		}
		for _, sh := range s.Shadowed {
			notes = append(notes, "shadowed "+sh)
		}
		for _, r := range s.Replaces {
			notes = append(notes, "replaces the "+r)
		}
		notes = append(notes, s.Diagnostics...)
		if len(notes) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%s):\n", s.Name, s.Dir)
		for _, n := range notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
	if !probe {
		fmt.Fprintln(w, "\n(states from the manifests; `zot ext list --probe` starts them and reports tools, commands and name clashes)")
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// staticStatus derives states from manifests and the trust store alone.
func (c Config) staticStatus() []extensions.Status {
	var out []extensions.Status
	hasher := extensions.NewHasher(c.Home)
	defer hasher.Save()
	for _, cand := range extensions.Discover(c.Cwd, c.Home, nil) {
		s := extensions.Status{
			Name: cand.Name, Version: cand.Manifest.Version, Description: cand.Manifest.Description,
			Language: cand.Manifest.Language, Dir: cand.Dir, Source: cand.Source,
			LogPath: filepath.Join(c.Home, "logs", "ext-"+cand.Name+".log"),
		}
		switch {
		case cand.Err != nil:
			s.State, s.Reason = extensions.StateInvalid, cand.Err.Error()
		case cand.ShadowedBy != "":
			s.State, s.Reason = extensions.StateShadowed, "shadowed by "+cand.ShadowedBy
		case !cand.Manifest.IsEnabled():
			s.State = extensions.StateDisabled
		default:
			s.State = "enabled"
			if cand.Source == extensions.SourceProject {
				h, err := hasher.Hash(cand.Dir, cand.Manifest, cand.Raw)
				if err != nil || !extensions.IsTrusted(c.Home, c.Cwd, cand.Name, h) {
					s.State, s.Reason = extensions.StateUntrusted, fmt.Sprintf("project-local extension not trusted (new or changed); run `zot ext trust %s`", cand.Name)
				}
			}
		}
		out = append(out, s)
	}
	return out
}

// find returns the extension zot would load under name (the first in load
// order), considering project and global ones.
func (c Config) find(name string) (extensions.Candidate, error) {
	var invalid *extensions.Candidate
	for _, cand := range extensions.Discover(c.Cwd, c.Home, nil) {
		if cand.ShadowedBy != "" {
			continue
		}
		if cand.Name == name {
			return cand, nil
		}
		if cand.Err != nil && filepath.Base(cand.Dir) == name && invalid == nil {
			x := cand
			invalid = &x
		}
	}
	if invalid != nil {
		return *invalid, nil
	}
	return extensions.Candidate{}, fmt.Errorf("no extension named %q (see `zot ext list`)", name)
}

func (c Config) setEnabled(w io.Writer, name string, on bool) error {
	cand, err := c.find(name)
	if err != nil {
		return err
	}
	if cand.Manifest.Pi != nil {
		// pi has no switch either: an extension in its directories runs.
		return fmt.Errorf("%s is a pi extension (%s), which has no manifest to switch off: move it out of the extensions directory, or leave it out of -e", name, cand.Dir)
	}
	if err := extensions.SetEnabled(cand.Dir, on); err != nil {
		return err
	}
	verb := "disabled"
	if on {
		verb = "enabled"
	}
	fmt.Fprintf(w, "%s %s (%s)\n", verb, name, cand.Dir)
	return nil
}

func (c Config) remove(w io.Writer, name string) error {
	root := extensions.GlobalRoot(c.Home)
	if in, ok := findInstalled(root, name); ok {
		if err := os.RemoveAll(in.dir); err != nil {
			return err
		}
		fmt.Fprintf(w, "removed %s %s (%s)\n", filepath.Base(in.dir), in.rec.resolved(), in.dir)
		return nil
	}
	for _, cand := range extensions.Discover("", c.Home, nil) {
		if cand.Name == name || filepath.Base(cand.Dir) == name {
			if filepath.Dir(cand.Dir) != filepath.Clean(root) {
				return fmt.Errorf("refusing to remove %s: not under %s", cand.Dir, root)
			}
			if err := os.RemoveAll(cand.Dir); err != nil {
				return err
			}
			fmt.Fprintf(w, "removed %s (%s)\n", name, cand.Dir)
			return nil
		}
	}
	for _, cand := range extensions.Discover(c.Cwd, "", nil) {
		if cand.Name == name {
			return fmt.Errorf("%s is project-local (%s); delete that directory if you mean it", name, cand.Dir)
		}
	}
	return fmt.Errorf("no installed extension named %q", name)
}

func (c Config) trust(w io.Writer, name string) error {
	cand, err := c.find(name)
	if err != nil {
		return err
	}
	if cand.Err != nil {
		return cand.Err
	}
	if cand.Source != extensions.SourceProject {
		fmt.Fprintf(w, "%s is a %s extension: it needs no trust\n", name, cand.Source)
		return nil
	}
	hasher := extensions.NewHasher(c.Home)
	h, err := hasher.Hash(cand.Dir, cand.Manifest, cand.Raw)
	if err != nil {
		return err
	}
	hasher.Save()
	if err := extensions.RecordTrust(c.Home, c.Cwd, cand.Name, h); err != nil {
		return err
	}
	if cand.Manifest.Pi != nil {
		fmt.Fprintf(w, "trusted %s in %s (sha256 %s…); a change to %s or any file it loads (its imports, its node_modules packages) asks again\n", name, c.Cwd, h[:12], cand.Dir)
	} else {
		fmt.Fprintf(w, "trusted %s in %s (sha256 %s…); a change to any file in %s asks again\n", name, c.Cwd, h[:12], cand.Dir)
	}
	for _, n := range cand.Manifest.Env {
		if slices.Contains(extensions.SecretEnv, n) {
			fmt.Fprintf(w, "  it receives your %s (its manifest asks for it)\n", n)
		} else if cand.Manifest.SEP != nil {
			// A SEP manifest copies host variables in by name ([run] env).
			fmt.Fprintf(w, "  it receives your %s ([run] env in extension.toml)\n", n)
		}
	}
	return nil
}

func (c Config) logs(ctx context.Context, w io.Writer, name string, follow bool) error {
	path := filepath.Join(c.Home, "logs", "ext-"+name+".log")
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) && !follow {
			return fmt.Errorf("no log for %q yet (%s)", name, path)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	var off int64
	if f != nil {
		off, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	if !follow {
		return nil
	}
	t := time.NewTicker(200 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		st, err := os.Stat(path)
		if err != nil {
			continue
		}
		if st.Size() < off { // rotated or truncated: start over
			off = 0
		}
		if st.Size() == off {
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		if _, err := f.Seek(off, io.SeekStart); err == nil {
			n, _ := io.Copy(w, f)
			off += n
		}
		f.Close()
	}
}

func isGitURL(s string) bool {
	for _, p := range []string{"https://", "http://", "git@", "ssh://", "git://", "file://"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	if _, err := os.Stat(s); err == nil {
		return false
	}
	return strings.HasSuffix(s, ".git")
}

// install fetches arg (npm:, git:, a git URL or a directory) into a
// staging directory next to the destination, checks it there and renames
// it into place; any failure removes the staging directory, so nothing
// half-installed remains.
func (c Config) install(ctx context.Context, w io.Writer, arg string) error {
	src, err := parseSource(arg, c.Cwd)
	if err != nil {
		return err
	}
	root := extensions.GlobalRoot(c.Home)
	if err := os.MkdirAll(root, 0o700); err != nil {
		return err
	}
	if src.Kind != kindPath {
		for _, in := range installedPackages(root) {
			if in.rec.source().identity() == src.identity() {
				return fmt.Errorf("%s is already installed at %s (%s); `zot ext update %s`, or `zot ext remove %s` first",
					src.identity(), in.dir, in.rec.resolved(), filepath.Base(in.dir), filepath.Base(in.dir))
			}
		}
	}
	stage, err := os.MkdirTemp(root, ".install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage) // the rollback, and the cleanup after a rename
	s, err := c.fetch(ctx, stage, src)
	if err != nil {
		return err
	}
	dest := filepath.Join(root, s.name)
	if _, err := os.Lstat(dest); err == nil {
		return fmt.Errorf("%s is already installed at %s; `zot ext remove %s` first", s.name, dest, s.name)
	}
	if err := os.Rename(s.dir, dest); err != nil {
		return err
	}
	pin := ""
	switch {
	case src.Kind == kindPath:
	case s.rec.Pinned:
		pin = " (pinned; `zot ext update` leaves it)"
	default:
		pin = " (`zot ext update` moves it to the newest)"
	}
	fmt.Fprintf(w, "installed %s %s to %s%s\n", s.name, s.rec.resolved(), dest, pin)
	if s.rec.Type != "zot" {
		return nil
	}
	m, _, err := extensions.ReadManifest(dest)
	if err != nil {
		return nil
	}
	if p, err := m.ExecPath(dest); err != nil {
		fmt.Fprintf(w, "warning: %v; build it before starting zot (see its README)\n", err)
	} else if st, err := os.Stat(p); err != nil {
		fmt.Fprintf(w, "warning: exec %s does not exist yet; build it before starting zot (see its README)\n", m.Exec)
	} else if st.Mode()&0o111 == 0 {
		fmt.Fprintf(w, "warning: exec %s is not executable (chmod +x)\n", m.Exec)
	}
	return nil
}

// installedPkg is an installed extension with its install record.
type installedPkg struct {
	dir string
	rec record
}

// installedPackages lists root's extension directories that carry an
// install record, sorted by name.
func installedPackages(root string) []installedPkg {
	entries, _ := os.ReadDir(root) // sorted
	var out []installedPkg
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") || !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		if r, ok := readRecord(dir); ok {
			out = append(out, installedPkg{dir, r})
		}
	}
	return out
}

// findInstalled finds an installed extension by directory name or by
// source (npm:NAME, git:URL, with or without a version: the package, not
// the pin).
func findInstalled(root, arg string) (installedPkg, bool) {
	id := ""
	if strings.HasPrefix(arg, "npm:") || strings.HasPrefix(arg, "git:") || isGitURL(arg) {
		if src, err := parseSource(arg, ""); err == nil {
			id = src.identity()
		}
	}
	for _, in := range installedPackages(root) {
		if filepath.Base(in.dir) == arg || (id != "" && in.rec.source().identity() == id) {
			return in, true
		}
	}
	return installedPkg{}, false
}

// update fetches the installed extensions that follow the newest
// version again (all of them, or the one named), and swaps in each that
// changed; pinned ones are reported and left.
func (c Config) update(ctx context.Context, w io.Writer, names []string) error {
	root := extensions.GlobalRoot(c.Home)
	var todo []installedPkg
	if len(names) == 0 {
		todo = installedPackages(root)
		if len(todo) == 0 {
			fmt.Fprintf(w, "nothing to update: no extension in %s was installed from npm:, git: or a folder\n", root)
			return nil
		}
	}
	for _, n := range names {
		in, ok := findInstalled(root, n)
		if !ok {
			if _, err := os.Stat(filepath.Join(root, n)); err == nil {
				return fmt.Errorf("%s was installed without a record of its source (an older zot); remove it and install it again", n)
			}
			return fmt.Errorf("no installed extension named %q (see `zot ext list`)", n)
		}
		todo = append(todo, in)
	}
	var errs []error
	for _, in := range todo {
		name := filepath.Base(in.dir)
		if in.rec.Pinned {
			fmt.Fprintf(w, "%s: pinned at %s (%s); to move it, `zot ext remove %s` and install the version you want\n", name, in.rec.resolved(), in.rec.Source, name)
			continue
		}
		if err := c.updateOne(ctx, w, root, in); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return errors.Join(errs...)
}

func (c Config) updateOne(ctx context.Context, w io.Writer, root string, in installedPkg) error {
	name := filepath.Base(in.dir)
	stage, err := os.MkdirTemp(root, ".install-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage)
	s, err := c.fetch(ctx, stage, in.rec.source())
	if err != nil {
		return err
	}
	if s.name != name {
		return fmt.Errorf("the new version names itself %s; `zot ext remove %s` and install it again", s.name, name)
	}
	if in.rec.Kind != kindPath && s.rec.Version == in.rec.Version && s.rec.Commit == in.rec.Commit {
		fmt.Fprintf(w, "%s: up to date at %s\n", name, in.rec.resolved())
		return nil
	}
	// Swap: the old tree moves into the stage (removed with it), the new
	// one into place; a failed second rename puts the old one back.
	old := filepath.Join(stage, "old")
	if err := os.Rename(in.dir, old); err != nil {
		return err
	}
	if err := os.Rename(s.dir, in.dir); err != nil {
		if rerr := os.Rename(old, in.dir); rerr != nil {
			return fmt.Errorf("%v; and restoring the old version failed: %v (it is in %s)", err, rerr, old)
		}
		return err
	}
	fmt.Fprintf(w, "updated %s: %s → %s\n", name, dash(in.rec.resolved()), s.rec.resolved())
	return nil
}

// copyTree copies a directory, keeping modes and symlinks, without .git.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" && rel != "." {
			return filepath.SkipDir
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&fs.ModeSymlink != 0:
			link, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(link, target)
		case info.Mode().IsRegular():
			in, err := os.Open(p)
			if err != nil {
				return err
			}
			defer in.Close()
			out, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
			if err != nil {
				return err
			}
			if _, err := io.Copy(out, in); err != nil {
				out.Close()
				return err
			}
			return out.Close()
		}
		return nil // sockets, devices: skipped
	})
}
