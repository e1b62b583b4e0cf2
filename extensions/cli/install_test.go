package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zot-editors/zot/internal/testenv"
)

func TestParseSource(t *testing.T) {
	cwd := t.TempDir()
	os.WriteFile(filepath.Join(cwd, "p.tgz"), nil, 0o644)
	good := []struct{ in, kind, target, ref string }{
		{"npm:pi-foo", kindNpm, "pi-foo", ""},
		{"npm:pi-foo@1.2.3", kindNpm, "pi-foo", "1.2.3"},
		{"npm:@scope/pi-foo", kindNpm, "@scope/pi-foo", ""},
		{"npm:@scope/pi-foo@^2", kindNpm, "@scope/pi-foo", "^2"},
		{"npm:./p.tgz", kindNpm, filepath.Join(cwd, "p.tgz"), ""},
		{"git:example.org/user/repo", kindGit, "https://example.org/user/repo", ""},
		{"git:example.org/user/repo@v1", kindGit, "https://example.org/user/repo", "v1"},
		{"git:git@example.org:user/repo", kindGit, "git@example.org:user/repo", ""},
		{"git:git@example.org:user/repo@feature/x", kindGit, "git@example.org:user/repo", "feature/x"},
		{"git:https://me@example.org/user/repo.git", kindGit, "https://me@example.org/user/repo.git", ""},
		{"git:file:///srv/repo@0123abc", kindGit, "file:///srv/repo", "0123abc"},
		{"https://example.org/user/repo@v2", kindGit, "https://example.org/user/repo", "v2"},
		{"./local", kindPath, filepath.Join(cwd, "local"), ""},
	}
	for _, g := range good {
		s, err := parseSource(g.in, cwd)
		if err != nil || s.Kind != g.kind || s.Target != g.target || s.Ref != g.ref {
			t.Errorf("parseSource(%q) = %+v, %v; want %s %s @%s", g.in, s, err, g.kind, g.target, g.ref)
		}
	}
	bad := map[string]string{
		"npm:":                   "empty npm package name",
		"npm:Pi Foo":             "not an npm package name",
		"npm:pi-foo@":            "empty version",
		"npm:./missing.tgz":      "no such tarball or folder",
		"git:":                   "empty git URL",
		"git:repo":               "not a repository URL",
		"git:example.org/u/r@":   "empty ref",
		"git:example.org/u/r@-x": "cannot start with '-'",
	}
	for in, want := range bad {
		if _, err := parseSource(in, cwd); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseSource(%q) = %v; want an error with %q", in, err, want)
		}
	}
}

// piPackageDir writes a pi package: package.json with a "pi" key, one
// extension module, and the dependencies given.
func piPackageDir(t *testing.T, dir, name, version string, deps map[string]string) string {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, "extensions"), 0o755)
	pkg := map[string]any{
		"name": name, "version": version, "keywords": []string{"pi-package"},
		"pi": map[string]any{"extensions": []string{"./extensions"}},
		// pi's core packages are peers the runtime provides: never fetched.
		"peerDependencies": map[string]string{"@mariozechner/pi-coding-agent": "*"},
	}
	if deps != nil {
		pkg["dependencies"] = deps
	}
	b, _ := json.MarshalIndent(pkg, "", "  ")
	os.WriteFile(filepath.Join(dir, "package.json"), b, 0o644)
	mod := "export default function (pi) { /* " + version + " */ }\n"
	if deps != nil {
		// The tool's name comes from the dependency, so loading it proves
		// the package's own node_modules resolve.
		mod = `import answer from "left-pad-ish";
export default function (pi) {
	pi.registerTool({ name: "hello_" + answer, label: "Hello", description: "` + version + `", parameters: { type: "object", properties: {} },
		async execute() { return { content: [{ type: "text", text: "hi" }] }; } });
}
`
	}
	os.WriteFile(filepath.Join(dir, "extensions", "hello.ts"), []byte(mod), 0o644)
	return dir
}

func readRecordT(t *testing.T, dir string) record {
	t.Helper()
	r, ok := readRecord(dir)
	if !ok {
		t.Fatalf("no install record in %s", dir)
	}
	return r
}

// noStaging fails when an install left anything but the named
// extensions in $ZOT_HOME/extensions.
func noStaging(t *testing.T, f *fixture, want ...string) {
	t.Helper()
	entries, _ := os.ReadDir(filepath.Join(f.c.Home, "extensions"))
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("$ZOT_HOME/extensions holds %v, want %v", got, want)
	}
}

// piRuntimeDir is the source tree's pi runtime when its node_modules are
// installed (make pi-runtime) and node is on PATH, else "" (the loading
// part of a test is then skipped; the install part still runs).
func piRuntimeDir() string {
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "pi", "runtime")
	if _, err := exec.LookPath("node"); err != nil {
		return ""
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "sucrase")); err != nil {
		return ""
	}
	return dir
}

// offlineNpm makes any npm network access fail at once: the tests install
// from local tarballs and folders only.
func offlineNpm(t *testing.T) {
	testenv.NeedCommand(t, "npm", "installing npm: packages")
	t.Setenv("npm_config_offline", "true")
	t.Setenv("npm_config_cache", filepath.Join(t.TempDir(), "npm-cache"))
	t.Setenv("npm_config_update_notifier", "false")
}

func TestInstallNpmFolderAndTarball(t *testing.T) {
	offlineNpm(t)
	f := newFixture(t)
	// A local dependency (file:folder): npm would link it back here.
	dep := filepath.Join(f.srcRoot, "dep")
	os.MkdirAll(dep, 0o755)
	os.WriteFile(filepath.Join(dep, "package.json"), []byte(`{"name":"left-pad-ish","version":"0.1.0","main":"index.js"}`), 0o644)
	os.WriteFile(filepath.Join(dep, "index.js"), []byte("module.exports = 42\n"), 0o644)
	depDir := dep
	pkg := piPackageDir(t, filepath.Join(f.srcRoot, "pkg"), "@me/pi-thing", "1.2.3", map[string]string{"left-pad-ish": "file:" + depDir})

	if code := f.run("install", "npm:"+pkg); code != 0 {
		t.Fatalf("install npm:folder: %d %s", code, f.errb.String())
	}
	dest := filepath.Join(f.c.Home, "extensions", "pi-thing")
	if !strings.Contains(f.out.String(), "installed pi-thing 1.2.3 to "+dest) {
		t.Fatalf("install said: %s", f.out.String())
	}
	if _, err := os.Stat(filepath.Join(dest, "extensions", "hello.ts")); err != nil {
		t.Fatal(err)
	}
	// The dependency is a real copy in the package's own node_modules, so
	// the directory stands alone (no link back into the source tree).
	st, err := os.Lstat(filepath.Join(dest, "node_modules", "left-pad-ish"))
	if err != nil || !st.IsDir() {
		t.Fatalf("dependency not installed as a directory: %v %v", st, err)
	}
	if _, err := os.Stat(filepath.Join(dest, "node_modules", "@mariozechner")); err == nil {
		t.Fatal("a pi core peer dependency was installed; the runtime provides it")
	}
	if r := readRecordT(t, dest); r.Kind != kindNpm || r.Version != "1.2.3" || r.Pinned || r.Type != "pi" || r.Target != pkg {
		t.Fatalf("record: %+v", r)
	}
	noStaging(t, f, "pi-thing")

	// zot finds it where it installed it, and (with the pi runtime) loads
	// it: its tool is named after what its dependency exports.
	f.run("list")
	if !strings.Contains(f.out.String(), "installed from npm:"+pkg+" at 1.2.3 (follows the newest") {
		t.Fatalf("list:\n%s", f.out.String())
	}
	if rt := piRuntimeDir(); rt == "" {
		if testenv.RequireAll() {
			t.Fatal("the pi runtime is not installed (make pi-runtime), and ZOT_REQUIRE_ALL=1")
		}
		t.Log("not loading it: no node, or the pi runtime's node_modules are not installed (make pi-runtime)")
	} else {
		t.Setenv("ZOT_PI_RUNTIME", rt)
		if code := f.run("list", "--probe"); code != 0 || !strings.Contains(f.out.String(), "tools: hello_42") {
			t.Fatalf("list --probe: %d\n%s%s", code, f.out.String(), f.errb.String())
		}
	}

	if code := f.run("install", "npm:"+pkg); code != 1 || !strings.Contains(f.errb.String(), "already installed") {
		t.Fatalf("second install: %d %s", code, f.errb.String())
	}

	// update: the folder moved on to 1.2.4.
	piPackageDir(t, pkg, "@me/pi-thing", "1.2.4", map[string]string{"left-pad-ish": "file:" + depDir})
	if code := f.run("update"); code != 0 || !strings.Contains(f.out.String(), "updated pi-thing: 1.2.3 → 1.2.4") {
		t.Fatalf("update: %d %s %s", code, f.out.String(), f.errb.String())
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "extensions", "hello.ts")); !strings.Contains(string(b), "1.2.4") {
		t.Fatalf("update did not swap the tree: %s", b)
	}
	if code := f.run("update", "pi-thing"); code != 0 || !strings.Contains(f.out.String(), "up to date at 1.2.4") {
		t.Fatalf("second update: %d %s %s", code, f.out.String(), f.errb.String())
	}
	noStaging(t, f, "pi-thing")

	// remove by source, then install the tarball npm packs.
	if code := f.run("remove", "npm:"+pkg); code != 0 {
		t.Fatalf("remove by source: %s", f.errb.String())
	}
	noStaging(t, f)
	if out, err := exec.Command("npm", "pack", pkg, "--pack-destination", f.srcRoot).CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v %s", err, out)
	}
	if code := f.run("install", "npm:"+filepath.Join(f.srcRoot, "me-pi-thing-1.2.4.tgz")); code != 0 {
		t.Fatalf("install npm:tarball: %s", f.errb.String())
	}
	if r := readRecordT(t, dest); r.Version != "1.2.4" {
		t.Fatalf("record: %+v", r)
	}
	if code := f.run("remove", "pi-thing"); code != 0 {
		t.Fatalf("remove by name: %s", f.errb.String())
	}
	noStaging(t, f)
}

func TestInstallNpmRollsBack(t *testing.T) {
	offlineNpm(t)
	f := newFixture(t)
	// Not a pi package: no "pi" key, no index.ts, no extensions/.
	plain := filepath.Join(f.srcRoot, "plain")
	os.MkdirAll(plain, 0o755)
	os.WriteFile(filepath.Join(plain, "package.json"), []byte(`{"name":"plain","version":"1.0.0"}`), 0o644)
	if code := f.run("install", "npm:"+plain); code != 1 || !strings.Contains(f.errb.String(), "neither a zot extension") {
		t.Fatalf("install of a plain package: %d %s", code, f.errb.String())
	}
	noStaging(t, f)
	// A dependency npm cannot get (offline, not in the cache): npm's own
	// words reach the user, and nothing is left.
	pkg := piPackageDir(t, filepath.Join(f.srcRoot, "pkg"), "pi-needs-dep", "1.0.0", map[string]string{"zot-no-such-package-xyz": "1.0.0"})
	if code := f.run("install", "npm:"+pkg); code != 1 || !strings.Contains(f.errb.String(), "npm install (the package's dependencies) failed") {
		t.Fatalf("install with a missing dependency: %d %s", code, f.errb.String())
	}
	noStaging(t, f)
}

// git runs git in dir for a test repository.
func gitT(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v %s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestInstallGitRefPinnedAndUpdate(t *testing.T) {
	testenv.NeedCommand(t, "git", "installing git: packages")
	f := newFixture(t)
	repo := filepath.Join(f.srcRoot, "pi-repo")
	os.MkdirAll(repo, 0o755)
	// A pi module directory (index.ts), no package.json: named after the repository.
	write := func(v string) string {
		os.WriteFile(filepath.Join(repo, "index.ts"), []byte("export default function (pi) { /* "+v+" */ }\n"), 0o644)
		gitT(t, repo, "add", ".")
		gitT(t, repo, "commit", "-qm", v)
		return gitT(t, repo, "rev-parse", "HEAD")
	}
	gitT(t, repo, "init", "-q")
	c1 := write("one")
	gitT(t, repo, "tag", "v1")
	c2 := write("two")
	gitT(t, repo, "checkout", "-qb", "feature")
	c3 := write("three")
	gitT(t, repo, "checkout", "-q", "main")
	url := "file://" + repo
	dest := filepath.Join(f.c.Home, "extensions", "pi-repo")
	content := func() string { b, _ := os.ReadFile(filepath.Join(dest, "index.ts")); return string(b) }

	// A tag pins it: update leaves it.
	if code := f.run("install", "git:"+url+"@v1"); code != 0 {
		t.Fatalf("install @v1: %s", f.errb.String())
	}
	if !strings.Contains(f.out.String(), "installed pi-repo "+c1[:12]+" to "+dest+" (pinned") {
		t.Fatalf("install said: %s", f.out.String())
	}
	if r := readRecordT(t, dest); r.Commit != c1 || !r.Pinned || r.Type != "pi" || !strings.Contains(content(), "one") {
		t.Fatalf("record %+v, content %q", r, content())
	}
	if _, err := os.Stat(filepath.Join(dest, ".git")); err == nil {
		t.Fatal(".git left in the installed tree")
	}
	if code := f.run("update", "pi-repo"); code != 0 || !strings.Contains(f.out.String(), "pinned at "+c1[:12]) {
		t.Fatalf("update of a pinned one: %d %s %s", code, f.out.String(), f.errb.String())
	}
	if !strings.Contains(content(), "one") {
		t.Fatal("update moved a pinned install")
	}
	f.run("remove", "git:"+url)
	noStaging(t, f)

	// A branch other than the default one.
	if code := f.run("install", "git:"+url+"@feature"); code != 0 {
		t.Fatalf("install @feature: %s", f.errb.String())
	}
	if r := readRecordT(t, dest); r.Commit != c3 {
		t.Fatalf("@feature checked out %s, want %s", r.Commit, c3)
	}
	f.run("remove", "pi-repo")

	// No ref: the default branch, followed by update.
	if code := f.run("install", "git:"+url); code != 0 {
		t.Fatalf("install: %s", f.errb.String())
	}
	if r := readRecordT(t, dest); r.Commit != c2 || r.Pinned {
		t.Fatalf("record %+v, want commit %s unpinned", r, c2)
	}
	c4 := write("four")
	if code := f.run("update"); code != 0 || !strings.Contains(f.out.String(), "updated pi-repo: "+c2[:12]+" → "+c4[:12]) {
		t.Fatalf("update: %d %s %s", code, f.out.String(), f.errb.String())
	}
	if !strings.Contains(content(), "four") {
		t.Fatalf("content after update: %q", content())
	}
	noStaging(t, f, "pi-repo")
	f.run("remove", "pi-repo")

	// A ref the repository does not have: a clear error, nothing left.
	if code := f.run("install", "git:"+url+"@v9"); code != 1 || !strings.Contains(f.errb.String(), `has no branch, tag or commit "v9"`) {
		t.Fatalf("install @v9: %d %s", code, f.errb.String())
	}
	noStaging(t, f)
	if code := f.run("install", "git:file://"+filepath.Join(f.srcRoot, "nope")); code != 1 || !strings.Contains(f.errb.String(), "git clone file://") {
		t.Fatalf("install of a missing repository: %d %s", code, f.errb.String())
	}
	noStaging(t, f)
}

func TestInstallNeedsNpmAndGit(t *testing.T) {
	f := newFixture(t)
	t.Setenv("PATH", t.TempDir()) // neither npm nor git
	if code := f.run("install", "npm:pi-foo"); code != 1 || !strings.Contains(f.errb.String(), "npm is not on PATH; installing npm: packages needs it: install Node.js 20 or newer") {
		t.Fatalf("without npm: %d %s", code, f.errb.String())
	}
	if code := f.run("install", "git:example.org/u/r"); code != 1 || !strings.Contains(f.errb.String(), "git is not on PATH") {
		t.Fatalf("without git: %d %s", code, f.errb.String())
	}
	noStaging(t, f)
}

// TestInstallNpmVersionNotFound runs a stand-in npm that answers as npm
// does for a version the registry lacks (the tests have no network).
func TestInstallNpmVersionNotFound(t *testing.T) {
	testenv.NeedCommand(t, "sh", "a stand-in npm")
	f := newFixture(t)
	bin := t.TempDir()
	os.WriteFile(filepath.Join(bin, "npm"), []byte(`#!/bin/sh
echo "npm error code ETARGET" >&2
echo "npm error notarget No matching version found for $2." >&2
exit 1
`), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	if code := f.run("install", "npm:pi-foo@9.9.9"); code != 1 || !strings.Contains(f.errb.String(), `npm has no version "9.9.9" of pi-foo`) {
		t.Fatalf("install: %d %s", code, f.errb.String())
	}
	noStaging(t, f)
}

// A zot extension installed from git:URL@ref keeps its pin, and list
// shows where it came from.
func TestInstallZotExtensionFromGitRefListsPin(t *testing.T) {
	testenv.NeedCommand(t, "git", "installing git: packages")
	f := newFixture(t)
	repo := script(t, filepath.Join(f.srcRoot, "repo"), "gitext")
	gitT(t, repo, "init", "-q")
	gitT(t, repo, "add", ".")
	gitT(t, repo, "commit", "-qm", "one")
	gitT(t, repo, "tag", "v1.2.3")
	commit := gitT(t, repo, "rev-parse", "HEAD")
	if code := f.run("install", "git:file://"+repo+"@v1.2.3"); code != 0 {
		t.Fatalf("install: %s", f.errb.String())
	}
	if st, err := os.Stat(filepath.Join(f.c.Home, "extensions", "gitext", "run.sh")); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("exec not installed executable: %v", err)
	}
	f.run("list")
	want := "installed from git:file://" + repo + "@v1.2.3 at 1.2.3 (" + commit[:12] + ") (pinned)"
	if !strings.Contains(f.out.String(), want) {
		t.Fatalf("list lacks %q:\n%s", want, f.out.String())
	}
}
