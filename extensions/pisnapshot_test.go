package extensions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The pi runtime's startup snapshot (pisnapshot.go) and TypeBox's pack
// (pi/runtime/lib/pack.js).

func piRuntimeLog(e *env) string {
	b, _ := os.ReadFile(filepath.Join(e.home, "logs", "pi-runtime.log"))
	return string(b)
}

// piSnapshotCache gives the test its own cache directory (and so its own
// snapshots) and forgets which keys this process built before.
func piSnapshotCache(t *testing.T) string {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv(EnvPiSnapshot, "")
	piSnapshotBuilds.Clear()
	t.Cleanup(piSnapshotBuilds.Clear)
	return filepath.Join(cache, "zot", "pi-snapshot")
}

func closeHost(t *testing.T, h *Host) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// startLines are the runtime's start lines of its log.
func startLines(log string) []string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "started the pi runtime") {
			out = append(out, l)
		}
	}
	return out
}

// A first start builds the snapshot (and runs without it); the next
// starts from it; a blob that no longer matches its sum is not used, and
// is built again.
func TestPiSnapshotBuiltUsedAndRebuiltWhenCorrupt(t *testing.T) {
	dir := piSnapshotCache(t)
	files := map[string]string{"alpha.ts": piCounter("alpha", "A", "")}

	e := newEnv(t)
	h := startShared(t, e, files, []string{"alpha"}, nil)
	eventually(t, "alpha ready", func() bool { return toolNamed(h, "alpha_count") != nil })
	eventually(t, "the snapshot built", func() bool { return strings.Contains(piRuntimeLog(e), "built the pi runtime's startup snapshot") })
	closeHost(t, h)
	if l := startLines(piRuntimeLog(e)); len(l) != 1 || strings.Contains(l[0], "--snapshot-blob") {
		t.Fatalf("the first start (no snapshot yet): %q", l)
	}
	blobs, _ := filepath.Glob(filepath.Join(dir, "*.blob"))
	if len(blobs) != 1 {
		t.Fatalf("blobs in %s: %v", dir, blobs)
	}
	blob := blobs[0]
	key, _, _ := strings.Cut(filepath.Base(blob), "-")
	if got, ok, why := verifiedPiSnapshot(dir, key); !ok || got != blob {
		t.Fatalf("the built snapshot does not verify: %s (%s)", why, got)
	}

	e2 := newEnv(t)
	h2 := startShared(t, e2, files, []string{"alpha"}, nil)
	eventually(t, "alpha ready (from the snapshot)", func() bool { return toolNamed(h2, "alpha_count") != nil })
	if got := resultText(callTool(t, h2, "alpha_count", `{}`)); got != "A 1" {
		t.Fatalf("alpha_count from the snapshot: %q", got)
	}
	closeHost(t, h2)
	if l := startLines(piRuntimeLog(e2)); len(l) != 1 || !strings.Contains(l[0], "--snapshot-blob "+blob) {
		t.Fatalf("the second start, not from %s: %q", blob, l)
	}

	// A byte changed in the middle of the blob (Node would crash on it).
	b, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 0xff
	if err := os.WriteFile(blob, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e3 := newEnv(t)
	h3 := startShared(t, e3, files, []string{"alpha"}, nil)
	eventually(t, "alpha ready (without the snapshot)", func() bool { return toolNamed(h3, "alpha_count") != nil })
	if got := resultText(callTool(t, h3, "alpha_count", `{}`)); got != "A 1" {
		t.Fatalf("alpha_count without the snapshot: %q", got)
	}
	eventually(t, "the snapshot built again", func() bool { return strings.Contains(piRuntimeLog(e3), "built the pi runtime's startup snapshot") })
	closeHost(t, h3)
	log := piRuntimeLog(e3)
	if !strings.Contains(log, "is not usable (the blob does not match its sum") {
		t.Errorf("the log does not say why the snapshot was not used:\n%s", log)
	}
	if l := startLines(log); len(l) != 1 || strings.Contains(l[0], "--snapshot-blob") {
		t.Errorf("the start with a corrupt snapshot: %q", l)
	}
	if _, ok, why := verifiedPiSnapshot(dir, key); !ok {
		t.Errorf("the rebuilt snapshot does not verify: %s", why)
	}
	if blobs, _ := filepath.Glob(filepath.Join(dir, "*.blob")); len(blobs) != 1 {
		t.Errorf("blobs after the rebuild: %v (want the new one only)", blobs)
	}
}

// A snapshot that matches its sum but that Node cannot start from (here:
// not a snapshot at all) costs one restart: the runtime dies before it
// says anything, the host starts Node without a snapshot from then on,
// and removes the blob.
func TestPiSnapshotThatCrashesFallsBack(t *testing.T) {
	dir := piSnapshotCache(t)
	piRuntimeForTest(t)
	node, err := piNode()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := piRuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	key, err := piSnapshotKey(node, piNodeVersion(), rt)
	if err != nil {
		t.Fatal(err)
	}
	name := key + "-00000000.blob"
	blob := filepath.Join(dir, name)
	junk := bytes.Repeat([]byte("not a snapshot "), 1000)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blob, junk, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, key+".sum"), []byte(piSnapshotSum(junk, name)), 0o644); err != nil {
		t.Fatal(err)
	}

	e := newEnv(t)
	h := startShared(t, e, map[string]string{"alpha.ts": piCounter("alpha", "A", "")}, []string{"alpha"}, nil)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pi-runtime.log:\n%s\next-alpha.log:\n%s", piRuntimeLog(e), e.logOf("alpha"))
		}
	})
	eventually(t, "alpha ready after the fallback", func() bool {
		return statusOf(h, "alpha").State == StateReady && toolNamed(h, "alpha_count") != nil
	})
	if got := resultText(callTool(t, h, "alpha_count", `{}`)); got != "A 1" {
		t.Fatalf("alpha_count: %q", got)
	}
	log := piRuntimeLog(e)
	if !strings.Contains(log, "exited before it said anything: starting without the snapshot") {
		t.Fatalf("the log does not say the snapshot failed:\n%s", log)
	}
	l := startLines(log)
	if len(l) != 2 || !strings.Contains(l[0], "--snapshot-blob") || strings.Contains(l[1], "--snapshot-blob") {
		t.Fatalf("starts: %q (want the snapshot's, then a plain one)", l)
	}
	if _, err := os.Stat(blob); !os.IsNotExist(err) {
		t.Errorf("the blob that crashed Node is still there (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(dir, key+".sum")); !os.IsNotExist(err) {
		t.Errorf("the sum of the blob that crashed Node is still there (%v)", err)
	}
}

// The key names everything the blob depends on: the Node binary and its
// version, and the runtime's files the snapshot is made of.
func TestPiSnapshotKey(t *testing.T) {
	rt := t.TempDir()
	write := func(rel, text string) {
		t.Helper()
		p := filepath.Join(rt, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range piSnapshotInputs {
		write(f, f+" v1")
	}
	node := filepath.Join(t.TempDir(), "node")
	if err := os.WriteFile(node, []byte("a node"), 0o755); err != nil {
		t.Fatal(err)
	}
	key := func() string {
		t.Helper()
		k, err := piSnapshotKey(node, "v20.20.2", rt)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k0 := key()
	if key() != k0 {
		t.Fatal("the key is not stable")
	}
	seen := map[string]string{k0: "the first"}
	differs := func(what string, k string) {
		t.Helper()
		if prev, ok := seen[k]; ok {
			t.Errorf("%s: the key is %s's", what, prev)
		}
		seen[k] = what
	}
	if k, err := piSnapshotKey(node, "v20.20.3", rt); err != nil {
		t.Fatal(err)
	} else {
		differs("another Node version", k)
	}
	if err := os.WriteFile(node, []byte("another node binary"), 0o755); err != nil {
		t.Fatal(err)
	}
	differs("another Node binary", key())
	for _, f := range piSnapshotInputs {
		write(f, f+" v2")
		differs("a changed "+f, key())
	}
	if err := os.Remove(filepath.Join(rt, "lib", "snapshot.js")); err != nil {
		t.Fatal(err)
	}
	if _, err := piSnapshotKey(node, "v20.20.2", rt); err == nil {
		t.Error("a runtime without lib/snapshot.js has a key")
	}
}

// TypeBox's pack (a start without a snapshot): built and cached with its
// code cache; what runs is the cached pack; a pack that does not match
// its checksum is built again, a code cache that does not is ignored,
// and another version of the package is another pack.
func TestPiPack(t *testing.T) {
	piRuntimeForTest(t)
	rt, err := piRuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	node, err := piNode()
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	packs := filepath.Join(cache, "zot", "pi-pack")
	pkg := t.TempDir()
	for name, text := range map[string]string{
		"package.json":            `{"name":"@demo/pkg","version":"1.0.0","main":"index.js"}`,
		"index.js":                `exports.value = require("./lib/a").value + require("./lib").b + require("node:path").sep;`,
		"lib/a.js":                `exports.value = "A";`,
		"lib/index.js":            `exports.b = "B";`,
		"other/c.js":              `module.exports = "not loaded";`,
		"types/x.d.ts":            `export {};`,
		"node_modules/x/index.js": `module.exports = 1;`,
	} {
		p := filepath.Join(pkg, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	load := func() string {
		t.Helper()
		script := `const p = require(process.argv[1]);
const l = p.open(process.argv[2], { lockfile: "", log: (m) => console.error("log: " + m) });
console.log(l ? l.load(require("node:path").join(process.argv[2], "index.js")).value : "no pack");`
		cmd := exec.Command(node, "-e", script, filepath.Join(rt, "lib", "pack.js"), pkg)
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil || stderr.Len() > 0 {
			t.Fatalf("node: %v\n%s", err, stderr.String())
		}
		return strings.TrimSpace(string(out))
	}
	glob := func(pattern string) []string {
		m, _ := filepath.Glob(filepath.Join(packs, pattern))
		return m
	}
	want := "AB" + string(filepath.Separator)
	if got := load(); got != want {
		t.Fatalf("from a new pack: %q, want %q", got, want)
	}
	packFiles, codeFiles := glob("*.js"), glob("*.v8")
	if len(packFiles) != 1 || len(codeFiles) != 1 {
		t.Fatalf("cached: %v %v (want a pack and its code cache)", packFiles, codeFiles)
	}
	pack := packFiles[0]
	body := func(f string) []byte {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return b[65:]
	}
	rewrite := func(f string, b []byte, checksum bool) {
		t.Helper()
		sum := strings.Repeat("0", 64)
		if checksum {
			sum = sha256Hex(b)
		}
		if err := os.WriteFile(f, append([]byte(sum+"\n"), b...), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Contains(body(pack), []byte(`"other/c.js"`)) || bytes.Contains(body(pack), []byte("d.ts")) || bytes.Contains(body(pack), []byte("node_modules")) {
		t.Errorf("the pack holds the package's .js files, no others:\n%s", body(pack))
	}

	// What runs is the cached pack: changed (its checksum with it), it is
	// what loads, and the code cache made from it before is not used (V8
	// would take it: it checks only the source's length).
	rewrite(pack, bytes.Replace(body(pack), []byte(`"A"`), []byte(`"Z"`), 1), true)
	if got := load(); got != "ZB"+string(filepath.Separator) {
		t.Fatalf("from the cached pack: %q, want the changed pack's", got)
	}
	// A pack that does not match its checksum is built again.
	rewrite(pack, bytes.Replace(body(pack), []byte(`"Z"`), []byte(`"Y"`), 1), false)
	if got := load(); got != want {
		t.Fatalf("from a corrupt pack: %q, want %q (built again)", got, want)
	}
	if !bytes.Contains(body(pack), []byte(`"A"`)) {
		t.Error("the corrupt pack was not replaced")
	}
	// A code cache that does not match its checksum, or that V8 refuses
	// (junk with right checksums), is not used, and is written again.
	rewrite(codeFiles[0], []byte("junk"), false)
	if got := load(); got != want {
		t.Fatalf("with a corrupt code cache: %q", got)
	}
	rewrite(codeFiles[0], append([]byte(sha256Hex(body(pack))+"\n"), bytes.Repeat([]byte("junk"), 1000)...), true)
	if got := load(); got != want {
		t.Fatalf("with a refused code cache: %q", got)
	}
	if b := body(codeFiles[0]); bytes.HasPrefix(b, []byte("junk")) {
		t.Error("the refused code cache was not written again")
	}
	// Another version of the package: another pack.
	if err := os.WriteFile(filepath.Join(pkg, "package.json"), []byte(`{"name":"@demo/pkg","version":"1.0.1","main":"index.js"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pkg, "lib", "a.js"), []byte(`exports.value = "A2";`), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := load(); got != "A2B"+string(filepath.Separator) {
		t.Fatalf("another version: %q", got)
	}
	if n := len(glob("*.js")); n != 2 {
		t.Errorf("%d packs, want one per version", n)
	}
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
