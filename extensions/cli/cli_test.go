package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/testenv"
)

// script writes a tiny shell extension (a real one: hello, a tool, ready).
func script(t *testing.T, dir, name string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	m := map[string]any{"name": name, "version": "1.2.3", "exec": "./run.sh", "description": name + " ext"}
	b, _ := json.Marshal(m)
	os.WriteFile(filepath.Join(dir, "extension.json"), b, 0o644)
	os.WriteFile(filepath.Join(dir, "run.sh"), []byte(`#!/bin/sh
echo '{"type":"hello","name":"`+name+`"}'
echo '{"type":"register_tool","name":"read"}'
echo '{"type":"register_tool","name":"`+name+`_tool"}'
echo '{"type":"ready"}'
while read -r line; do
  case "$line" in *'"shutdown"'*) echo '{"type":"shutdown_ack"}'; exit 0;; esac
done
`), 0o755)
	return dir
}

type fixture struct {
	c         Config
	out, errb bytes.Buffer
	srcRoot   string
}

func newFixture(t *testing.T) *fixture {
	root := t.TempDir()
	f := &fixture{c: Config{Cwd: filepath.Join(root, "ws"), Home: filepath.Join(root, "home")}, srcRoot: filepath.Join(root, "src")}
	os.MkdirAll(f.c.Cwd, 0o755)
	return f
}

func (f *fixture) run(args ...string) int {
	f.out.Reset()
	f.errb.Reset()
	return f.c.Run(args, &f.out, &f.errb)
}

func TestInstallListDisableEnableRemove(t *testing.T) {
	f := newFixture(t)
	src := script(t, filepath.Join(f.srcRoot, "weather-src"), "weather")
	os.MkdirAll(filepath.Join(src, ".git"), 0o755)
	if code := f.run("install", src); code != 0 {
		t.Fatalf("install: %d %s", code, f.errb.String())
	}
	dest := filepath.Join(f.c.Home, "extensions", "weather")
	if st, err := os.Stat(filepath.Join(dest, "run.sh")); err != nil || st.Mode()&0o111 == 0 {
		t.Fatalf("copied exec lost its mode: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dest, ".git")); err == nil {
		t.Fatal(".git copied")
	}
	if code := f.run("install", src); code != 1 || !strings.Contains(f.errb.String(), "already installed") {
		t.Fatalf("second install: %d %s", code, f.errb.String())
	}
	f.run("list")
	if !strings.Contains(f.out.String(), "weather") || !strings.Contains(f.out.String(), "enabled") || !strings.Contains(f.out.String(), "1.2.3") {
		t.Fatalf("list:\n%s", f.out.String())
	}
	f.run("disable", "weather")
	f.run("list", "--json")
	var sts []extensions.Status
	json.Unmarshal(f.out.Bytes(), &sts)
	if len(sts) != 1 || sts[0].State != extensions.StateDisabled {
		t.Fatalf("after disable: %s", f.out.String())
	}
	f.run("enable", "weather")
	f.run("list", "--json")
	json.Unmarshal(f.out.Bytes(), &sts)
	if sts[0].State != "enabled" {
		t.Fatalf("after enable: %s", f.out.String())
	}
	if code := f.run("remove", "weather"); code != 0 {
		t.Fatal(f.errb.String())
	}
	if _, err := os.Stat(dest); err == nil {
		t.Fatal("not removed")
	}
	if code := f.run("remove", "weather"); code != 1 {
		t.Fatal("removing twice succeeded")
	}
}

func TestInstallRollsBack(t *testing.T) {
	f := newFixture(t)
	bad := filepath.Join(f.srcRoot, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, "extension.json"), []byte(`{"name":"bad"}`), 0o644) // no exec
	if code := f.run("install", bad); code != 1 || !strings.Contains(f.errb.String(), "exec is required") {
		t.Fatalf("install: %d %s", code, f.errb.String())
	}
	entries, _ := os.ReadDir(filepath.Join(f.c.Home, "extensions"))
	if len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
	if code := f.run("install", filepath.Join(f.srcRoot, "missing")); code != 1 {
		t.Fatal("installing a missing path succeeded")
	}
}

func TestInstallFromGit(t *testing.T) {
	testenv.NeedCommand(t, "git", "installing from a git repository")
	f := newFixture(t)
	repo := script(t, filepath.Join(f.srcRoot, "repo"), "gitext")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if code := f.run("install", "file://"+repo); code != 0 {
		t.Fatalf("install: %s", f.errb.String())
	}
	if _, err := os.Stat(filepath.Join(f.c.Home, "extensions", "gitext", "run.sh")); err != nil {
		t.Fatal(err)
	}
	// A repository without a valid manifest rolls back.
	os.Remove(filepath.Join(repo, "extension.json"))
	exec.Command("git", "-C", repo, "-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qam", "rm").Run()
	f.run("remove", "gitext")
	if code := f.run("install", "file://"+repo); code != 1 {
		t.Fatal("install without manifest succeeded")
	}
	entries, _ := os.ReadDir(filepath.Join(f.c.Home, "extensions"))
	if len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestTrustAndListStates(t *testing.T) {
	f := newFixture(t)
	script(t, filepath.Join(f.c.Cwd, ".zot", "extensions", "local"), "local")
	script(t, filepath.Join(f.c.Cwd, ".zot", "extensions", "dup"), "dup")
	script(t, filepath.Join(f.c.Home, "extensions", "dup"), "dup")
	f.run("list")
	out := f.out.String()
	if !strings.Contains(out, "untrusted") || !strings.Contains(out, "zot ext trust local") || !strings.Contains(out, "shadowed") {
		t.Fatalf("list:\n%s", out)
	}
	if code := f.run("trust", "local"); code != 0 || !strings.Contains(f.out.String(), "trusted local") {
		t.Fatalf("trust: %s %s", f.out.String(), f.errb.String())
	}
	f.run("list", "--json")
	var sts []extensions.Status
	json.Unmarshal(f.out.Bytes(), &sts)
	states := map[string]string{}
	for _, s := range sts {
		states[s.Name+"@"+s.Source] = s.State
	}
	if states["local@project"] != "enabled" || states["dup@project"] != "untrusted" || states["dup@global"] != "shadowed" {
		t.Fatalf("states %v", states)
	}
	// --probe starts them: tools, and the built-in shadowing.
	f.c.BuiltinTools = []string{"read"}
	f.run("trust", "dup")
	if code := f.run("list", "--probe"); code != 0 {
		t.Fatal(f.errb.String())
	}
	out = f.out.String()
	for _, want := range []string{"ready", "tools: read, local_tool", "shadowed tool read (built-in wins)"} {
		if !strings.Contains(out, want) {
			t.Errorf("probe output lacks %q:\n%s", want, out)
		}
	}
	if code := f.run("trust", "nope"); code != 1 {
		t.Fatal("trusting an unknown extension succeeded")
	}
}

func TestLogsFollow(t *testing.T) {
	f := newFixture(t)
	logs := filepath.Join(f.c.Home, "logs")
	os.MkdirAll(logs, 0o755)
	path := filepath.Join(logs, "ext-x.log")
	os.WriteFile(path, []byte("first\n"), 0o644)
	if f.run("logs", "x"); f.out.String() != "first\n" {
		t.Fatalf("logs: %q", f.out.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	f.c.Ctx = ctx
	var mu sync.Mutex
	var buf bytes.Buffer
	done := make(chan int)
	go func() { done <- f.c.Run([]string{"logs", "x", "-f"}, &lockedWriter{&mu, &buf}, &f.errb) }()
	fh, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	fh.WriteString("second\n")
	fh.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		mu.Lock()
		s := buf.String()
		mu.Unlock()
		if s == "first\nsecond\n" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("follow got %q", s)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatal(code)
	}
	if code := f.run("logs", "nobody"); code != 1 {
		t.Fatal("logs of unknown extension succeeded")
	}
}

func TestUsage(t *testing.T) {
	f := newFixture(t)
	if f.run() != 2 || f.run("bogus") != 2 || f.run("logs") != 2 || f.run("list", "--nope") != 2 {
		t.Fatal("bad usage accepted")
	}
	if f.run("help") != 0 || !strings.Contains(f.out.String(), "install <path|git-url>") {
		t.Fatal("help")
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// sepManifest writes a SEP extension's extension.toml (not run here).
func sepManifest(t *testing.T, dir, name, version string) string {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	toml := "# a SEP extension\nname = \"" + name + "\"\nversion = \"" + version + "\"\nprotocol = 1\n\n[run]\ncommand = \"node\"\nargs = [\"index.js\"]\nenv = { KEY = \"${env:SEP_TEST_KEY}\" }\n\n[capabilities]\ntools = true\n"
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	os.WriteFile(filepath.Join(dir, "index.js"), []byte("// code\n"), 0o644)
	return dir
}

// SEP extensions (extension.toml) are found in SEP's own directories,
// the project's winning, and `zot ext` lists, trusts, disables and
// enables them like zot's; disabling keeps the file's other lines and
// does not revoke trust, a code change does.
func TestSEPExtensionsListTrustDisable(t *testing.T) {
	f := newFixture(t)
	sepHome := filepath.Join(f.c.Home, "user")
	t.Setenv(extensions.EnvSEPHome, sepHome)
	proj := sepManifest(t, filepath.Join(f.c.Cwd, ".smooth", "extensions", "gate"), "gate", "2.0.0")
	sepManifest(t, filepath.Join(sepHome, ".smooth", "extensions", "gate"), "gate", "1.0.0")
	sepManifest(t, filepath.Join(sepHome, ".smooth", "extensions", "todo"), "todo", "0.3.0")
	list := func() map[string]extensions.Status {
		t.Helper()
		if code := f.run("list", "--json"); code != 0 {
			t.Fatal(f.errb.String())
		}
		var sts []extensions.Status
		if err := json.Unmarshal(f.out.Bytes(), &sts); err != nil {
			t.Fatalf("%v: %s", err, f.out.String())
		}
		m := map[string]extensions.Status{}
		for _, s := range sts {
			m[s.Name+"@"+s.Source] = s
		}
		return m
	}
	sts := list()
	if sts["gate@project"].State != "untrusted" || sts["gate@global"].State != "shadowed" || sts["todo@global"].State != "enabled" {
		t.Fatalf("states %+v", sts)
	}
	if sts["gate@project"].Version != "2.0.0" {
		t.Fatalf("project gate: %+v", sts["gate@project"])
	}
	if code := f.run("trust", "gate"); code != 0 || !strings.Contains(f.out.String(), "SEP_TEST_KEY") {
		t.Fatalf("trust (should name the variable [run] env reads): %d %s %s", code, f.out.String(), f.errb.String())
	}
	if list()["gate@project"].State != "enabled" {
		t.Fatal("not trusted")
	}
	if code := f.run("disable", "gate"); code != 0 {
		t.Fatal(f.errb.String())
	}
	b, _ := os.ReadFile(filepath.Join(proj, "extension.toml"))
	if !strings.Contains(string(b), "disabled = true") || !strings.Contains(string(b), "# a SEP extension") || !strings.Contains(string(b), "[capabilities]") {
		t.Fatalf("after disable:\n%s", b)
	}
	if list()["gate@project"].State != extensions.StateDisabled {
		t.Fatal("not disabled")
	}
	f.run("enable", "gate")
	if st := list()["gate@project"].State; st != "enabled" {
		t.Fatalf("after enable: %s (trust must survive enable/disable)", st)
	}
	os.WriteFile(filepath.Join(proj, "index.js"), []byte("// changed\n"), 0o644)
	if st := list()["gate@project"].State; st != "untrusted" {
		t.Fatalf("after a code change: %s", st)
	}
	// A broken manifest is a clear error naming the file.
	os.WriteFile(filepath.Join(sepHome, ".smooth", "extensions", "todo", "extension.toml"), []byte("name = \"todo\"\n[run]\n"), 0o644)
	if st := list()["todo@global"]; st.State != extensions.StateInvalid || !strings.Contains(st.Reason, "extension.toml") || !strings.Contains(st.Reason, "command is required") {
		t.Fatalf("broken manifest: %+v", st)
	}
}
