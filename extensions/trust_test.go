package extensions

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// countHashReads counts files opened for hashing under dir (the seam).
func countHashReads(t *testing.T) func(dir string) int {
	t.Helper()
	var mu sync.Mutex
	var opened []string
	orig := openHashFile
	openHashFile = func(p string) (*os.File, error) {
		mu.Lock()
		opened = append(opened, p)
		mu.Unlock()
		return orig(p)
	}
	t.Cleanup(func() { openHashFile = orig })
	return func(dir string) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, p := range opened {
			if within(dir, p) {
				n++
			}
		}
		opened = nil
		return n
	}
}

// A trusted project extension whose files did not change is only
// stat'ed on the next start, never read; a changed file next to the
// entry point (lib.py next to main.py) asks again.
func TestTrustCoversDirectoryAndCachesUnchanged(t *testing.T) {
	reads := countHashReads(t)
	e := newEnv(t)
	dir := e.project("py", "-tools", "echo")
	lib := filepath.Join(dir, "lib.py")
	os.WriteFile(filepath.Join(dir, "main.py"), []byte("import lib\n"), 0o644)
	os.WriteFile(lib, []byte("def f(): return 1\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, "node_modules", "dep"), 0o755)
	os.WriteFile(filepath.Join(dir, "node_modules", "dep", "index.js"), []byte("x"), 0o644)
	freshWindow := hashFreshWindow
	hashFreshWindow = 0 // files written just now are cacheable in this test
	t.Cleanup(func() { hashFreshWindow = freshWindow })
	if err := TrustCandidate(e.home, e.cwd, Discover(e.cwd, e.home, nil)[0]); err != nil {
		t.Fatal(err)
	}
	if n := reads(dir); n == 0 {
		t.Fatal("trusting read no file of the extension directory")
	}
	h := e.start(nil)
	if st := statusOf(h, "py"); st.State != StateReady {
		t.Fatalf("trusted extension: %+v", st)
	}
	if r := callTool(t, h, "echo", `{"text":"x"}`); r.IsError {
		t.Fatal(resultText(r))
	}
	h.Close(context.Background())
	if n := reads(dir); n != 0 {
		t.Fatalf("start of an unchanged trusted extension read %d files (want 0: the cache)", n)
	}
	h = e.start(nil)
	if st := statusOf(h, "py"); st.State != StateReady {
		t.Fatalf("restart: %+v", st)
	}
	if n := reads(dir); n != 0 {
		t.Fatalf("restart of an unchanged trusted extension read %d files (want 0)", n)
	}
	h.Close(context.Background())

	// A skipped directory's content does not count.
	os.WriteFile(filepath.Join(dir, "node_modules", "dep", "index.js"), []byte("changed"), 0o644)
	h = e.start(nil)
	if st := statusOf(h, "py"); st.State != StateReady {
		t.Fatalf("after a node_modules change: %+v", st)
	}
	h.Close(context.Background())

	// The imported module changes (same size, too): asked again.
	os.WriteFile(lib, []byte("def f(): return 2\n"), 0o644)
	var asked []Status
	var mu sync.Mutex
	h = e.start(func(o *Options) {
		o.AskTrust = func(ctx context.Context, st Status) bool {
			mu.Lock()
			asked = append(asked, st)
			mu.Unlock()
			return false
		}
	})
	if st := statusOf(h, "py"); st.State != StateUntrusted {
		t.Fatalf("after lib.py changed: %+v", st)
	}
	eventually(t, "the trust question", func() bool { mu.Lock(); defer mu.Unlock(); return len(asked) == 1 })
	if n := reads(dir); n != 1 {
		t.Fatalf("a changed file should be read once, read %d", n)
	}
}

// A file argument outside the extension directory is covered too.
func TestTrustCoversArgumentFileOutsideDirectory(t *testing.T) {
	e := newEnv(t)
	shared := filepath.Join(t.TempDir(), "shared.py")
	os.WriteFile(shared, []byte("one\n"), 0o644)
	writeExt(t, filepath.Join(ProjectRoot(e.cwd), "arg"), "arg", nil, "-tools", "echo", shared)
	if err := TrustCandidate(e.home, e.cwd, Discover(e.cwd, e.home, nil)[0]); err != nil {
		t.Fatal(err)
	}
	h := e.start(nil)
	if st := statusOf(h, "arg"); st.State != StateReady {
		t.Fatalf("trusted: %+v", st)
	}
	h.Close(context.Background())
	os.WriteFile(shared, []byte("two\n"), 0o644)
	h = e.start(nil)
	if st := statusOf(h, "arg"); st.State != StateUntrusted {
		t.Fatalf("after the outside argument file changed: %+v", st)
	}
}

// The size cap fails closed with an error naming the fix.
func TestTrustHashCap(t *testing.T) {
	dir := t.TempDir()
	writeExt(t, dir, "big", nil)
	for i := 0; i <= MaxTrustFiles; i++ {
		if i%1000 == 0 {
			os.MkdirAll(filepath.Join(dir, "d", fmt.Sprint(i/1000)), 0o755)
		}
		os.WriteFile(filepath.Join(dir, "d", fmt.Sprint(i/1000), fmt.Sprint(i)), nil, 0o644)
	}
	c := readCandidate(dir, SourceProject)
	_, err := NewHasher("").Hash(c.Dir, c.Manifest, c.Raw)
	if err == nil || !strings.Contains(err.Error(), "more than") || !strings.Contains(err.Error(), "node_modules") {
		t.Fatalf("err = %v", err)
	}
}

// Provider keys and the RPC token reach an extension only when its
// manifest asks for them by name; the status (and so the trust question)
// lists what it asks for.
func TestExtensionEnvDropsSecretsUnlessAsked(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "sk-ant-secret-123")
	t.Setenv("OPENAI_API_KEY", "sk-openai-secret-456")
	t.Setenv("ZOTCORE_RPC_TOKEN", "rpc-token-789")
	t.Setenv("ZOT_TEST_PLAIN", "plain")
	e := newEnv(t)
	writeExt(t, filepath.Join(GlobalRoot(e.home), "plain"), "plain", nil, "-tools", "env")
	writeExt(t, filepath.Join(GlobalRoot(e.home), "asks"), "asks", map[string]any{"env": []string{"OPENAI_API_KEY"}}, "-tools", "envb")
	h := e.start(nil)
	get := func(tool, name string) string {
		return resultText(callTool(t, h, tool, `{"text":"`+name+`"}`))
	}
	for _, n := range []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ZOTCORE_RPC_TOKEN"} {
		if v := get("env", n); v != "<unset>" {
			t.Fatalf("%s reached an extension that did not ask: %q", n, v)
		}
	}
	if v := get("env", "ZOT_TEST_PLAIN"); v != "plain" {
		t.Fatalf("ordinary variable: %q", v)
	}
	if v := get("envb", "OPENAI_API_KEY"); v != "sk-openai-secret-456" {
		t.Fatalf("asked-for key: %q", v)
	}
	if v := get("envb", "ANTHROPIC_API_KEY"); v != "<unset>" {
		t.Fatalf("key not asked for: %q", v)
	}
	if st := statusOf(h, "asks"); len(st.Secrets) != 1 || st.Secrets[0] != "OPENAI_API_KEY" {
		t.Fatalf("status secrets: %+v", st.Secrets)
	}
}

// A crash restart runs the code on disk again: changed since it was
// trusted, it is not restarted but asked about.
func TestCrashRestartRechecksTrust(t *testing.T) {
	e := newEnv(t)
	dir := e.project("phoenix", "-tools", "crash,echo")
	lib := filepath.Join(dir, "lib.py")
	os.WriteFile(lib, []byte("one\n"), 0o644)
	if err := TrustCandidate(e.home, e.cwd, Discover(e.cwd, e.home, nil)[0]); err != nil {
		t.Fatal(err)
	}
	h := e.start(nil) // restart backoff 10 ms
	if st := statusOf(h, "phoenix"); st.State != StateReady {
		t.Fatalf("trusted: %+v", st)
	}
	os.WriteFile(lib, []byte("two\n"), 0o644)
	callTool(t, h, "crash", `{"text":"x"}`)
	eventually(t, "untrusted instead of restarted", func() bool { return statusOf(h, "phoenix").State == StateUntrusted })
	if n := strings.Count(e.logOf("phoenix"), "started phoenix"); n != 1 {
		t.Fatalf("started %d times", n)
	}
}
