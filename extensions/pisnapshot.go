package extensions

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/internal/atomicfile"
	"github.com/zot-editors/zot/internal/childproc"
)

// The pi runtime's V8 startup snapshot: TypeBox (which every pi extension
// imports) already loaded in the heap Node starts with, so the shared
// Node process skips reading, compiling and running its ~200 files
// (extensions/pi/runtime/lib/snapshot.js; docs/decisions.md, "pi
// extensions: a faster start"). zot builds it in the background the first
// time a Node binary runs a runtime, and starts the sessions after that
// from it. It is kept in the user's cache directory
// (~/.cache/zot/pi-snapshot/KEY-CRC.blob, KEY.sum), KEY hashing what the
// blob depends on: node (path, version, size, mtime), the V8 flags, and
// the runtime's files the snapshot is made of. KEY.sum names the blob and
// holds its CRC-32C and size: a torn or corrupt blob (which Node would
// crash on) is never used, but rebuilt. A build that fails leaves KEY.failed, so a
// machine where snapshots do not work tries once per KEY, not per start;
// every failure only means the plain start.

// EnvPiSnapshot set to "off" starts the pi runtime without a snapshot and
// builds none.
const EnvPiSnapshot = "ZOT_PI_SNAPSHOT"

// piNodeFlags are the runtime's V8 flags. A snapshot is built with the
// same: V8 refuses (ends the process on) a snapshot made with others. A
// 1 MB young generation (V8's default is 16): extensions allocate little,
// and it keeps ~5 MB of the process's resident memory off.
var piNodeFlags = []string{"--max-semi-space-size=1"}

// piSnapshotInputs are the runtime's files a snapshot is made of (beside
// TypeBox's, pinned by the lockfile and its package.json).
var piSnapshotInputs = []string{
	"lib/snapshot.js",
	"lib/pack.js",
	"package-lock.json",
	"node_modules/@sinclair/typebox/package.json",
}

// piSnapshotBuildWait bounds a build (a hung one would hold Close).
const piSnapshotBuildWait = 30 * time.Second

// piSnapshotBuilds remembers the keys this process built or tried, so a
// key is built once per zot however many hosts start.
var piSnapshotBuilds sync.Map

// piSnapshotKey hashes what a snapshot for node (its version as
// `node --version` says it) and the runtime in rt depends on.
func piSnapshotKey(node, version, rt string) (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "zot-pi-snapshot 1\x00%s\x00%s\x00%s\x00%s\x00", node, version, strings.Join(piNodeFlags, " "), rt)
	st, err := os.Stat(node)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "%d\x00%d\x00", st.Size(), st.ModTime().UnixNano())
	for _, f := range piSnapshotInputs {
		b, err := os.ReadFile(filepath.Join(rt, filepath.FromSlash(f)))
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", f, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

func piSnapshotDir() string {
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "zot", "pi-snapshot")
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// piSnapshotSum is what KEY.sum holds: the blob's CRC-32C, size and
// file name (KEY-CRC.blob: two zot processes building the same KEY at
// once each put their own blob in place, and the sum written last names a
// whole one).
func piSnapshotSum(blob []byte, name string) string {
	return fmt.Sprintf("crc32c %08x size %d blob %s\n", crc32.Checksum(blob, castagnoli), len(blob), name)
}

// verifiedPiSnapshot returns KEY's blob when it is there and matches its
// sum; else why not.
func verifiedPiSnapshot(dir, key string) (blob string, ok bool, why string) {
	sum, err := os.ReadFile(filepath.Join(dir, key+".sum"))
	if err != nil {
		return "", false, "no sum"
	}
	f := strings.Fields(string(sum))
	if len(f) != 6 || f[4] != "blob" || filepath.Base(f[5]) != f[5] || !strings.HasPrefix(f[5], key+"-") {
		return "", false, fmt.Sprintf("its sum %q is not one zot wrote", strings.TrimSpace(string(sum)))
	}
	blob = filepath.Join(dir, f[5])
	b, err := os.ReadFile(blob)
	if err != nil {
		return blob, false, "no blob"
	}
	if got := piSnapshotSum(b, f[5]); got != string(sum) {
		return blob, false, fmt.Sprintf("the blob does not match its sum (%s, want %s)", strings.TrimSpace(got), strings.TrimSpace(string(sum)))
	}
	return blob, true, ""
}

// piRuntimeArgs are node's arguments for the shared runtime: from the
// snapshot when a verified one is there; else the plain start, and a
// snapshot is built in the background for the next start. h.piMu is held.
func (h *Host) piRuntimeArgs(node, rt string, lg *extLog) (args []string, snapshot string) {
	plain := append(append([]string{}, piNodeFlags...), filepath.Join(rt, "host.js"), "--shared")
	if os.Getenv(EnvPiSnapshot) == "off" || h.piNoSnapshot {
		return plain, ""
	}
	dir := piSnapshotDir()
	if dir == "" {
		return plain, ""
	}
	key, err := piSnapshotKey(node, piNodeVersion(), rt)
	if err != nil {
		lg.printf("no startup snapshot: %v", err)
		return plain, ""
	}
	blob, ok, why := verifiedPiSnapshot(dir, key)
	if ok {
		return append(append([]string{}, piNodeFlags...), "--snapshot-blob", blob, "--", "--shared"), blob
	}
	if _, err := os.Stat(filepath.Join(dir, key+".failed")); err == nil {
		return plain, "" // it failed here before: see the file
	}
	if why != "no sum" && why != "no blob" {
		lg.printf("the startup snapshot %s is not usable (%s): starting without it, and building it again", filepath.Join(dir, key+".sum"), why)
		piSnapshotBuilds.Delete(key) // built or tried before: this one is broken
	}
	if _, tried := piSnapshotBuilds.LoadOrStore(key, true); !tried {
		// Not cancelled when the host closes: Close waits for it (a build
		// takes about half a second of CPU), so a first session as short
		// as one `zot -p` still leaves the snapshot for the next.
		h.goBG(func() {
			ctx, cancel := context.WithTimeout(context.Background(), piSnapshotBuildWait)
			defer cancel()
			buildPiSnapshot(ctx, node, rt, dir, key, lg)
		})
	}
	return plain, ""
}

// buildPiSnapshot builds KEY's blob, checks that Node starts from it, and
// then puts it in place, and its sum after it (each written to a
// temporary file and renamed, so a reader sees the whole file or none).
func buildPiSnapshot(ctx context.Context, node, rt, dir, key string, lg *extLog) {
	tmp := filepath.Join(dir, key+"."+strconv.Itoa(os.Getpid())+".tmp")
	defer os.Remove(tmp)
	fail := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		lg.printf("cannot build the pi runtime's startup snapshot (pi extensions start without it): %s", msg)
		_ = os.WriteFile(filepath.Join(dir, key+".failed"), []byte(msg+"\n"), 0o644)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		lg.printf("cannot build the pi runtime's startup snapshot: %v", err)
		return
	}
	run := func(args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, node, args...)
		cmd.Dir = rt
		cmd.Env = extensionEnv(os.Environ(), nil)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &limitedWriter{w: &errb, n: 4096}
		childproc.Prepare(cmd)
		if err := childproc.Start(cmd); err != nil {
			return "", err
		}
		if err := cmd.Wait(); err != nil {
			return "", fmt.Errorf("%s %s: %v: %s", node, strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
		}
		return out.String(), nil
	}
	build := append(append([]string{}, piNodeFlags...), "--snapshot-blob", tmp, "--build-snapshot", filepath.Join(rt, "lib", "snapshot.js"))
	if _, err := run(build...); err != nil {
		fail("%v", err)
		return
	}
	probe := append(append([]string{}, piNodeFlags...), "--snapshot-blob", tmp, "--", "--probe")
	out, err := run(probe...)
	if err != nil {
		fail("the built snapshot does not start: %v", err)
		return
	}
	if out != "zot-pi-snapshot \"boolean\"\n" {
		fail("the built snapshot's probe said %q", out)
		return
	}
	b, err := os.ReadFile(tmp)
	if err != nil {
		fail("%v", err)
		return
	}
	crc := crc32.Checksum(b, castagnoli)
	name := fmt.Sprintf("%s-%08x.blob", key, crc)
	blob := filepath.Join(dir, name)
	if err := os.Rename(tmp, blob); err != nil {
		fail("%v", err)
		return
	}
	if err := atomicfile.Write(filepath.Join(dir, key+".sum"), []byte(piSnapshotSum(b, name)), 0o644); err != nil {
		fail("%v", err)
		return
	}
	// Blobs of this KEY that the sum no longer names (built before, or
	// beside this one by another zot).
	if old, err := filepath.Glob(filepath.Join(dir, key+"-*.blob")); err == nil {
		for _, o := range old {
			if o != blob {
				os.Remove(o)
			}
		}
	}
	lg.printf("built the pi runtime's startup snapshot %s (%d bytes): the next start uses it", blob, len(b))
}

// limitedWriter keeps the first n bytes written to it.
type limitedWriter struct {
	w io.Writer
	n int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		_, _ = l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// errPiSnapshotStart is a pi extension's start that failed because the
// shared runtime died from its snapshot: the slot starts it once more.
var errPiSnapshotStart = errors.New("the pi runtime did not start from its startup snapshot")

// piSnapshotCrashed is called when a runtime started from blob exited
// before it said anything: the snapshot is taken out of use (this host
// starts without one from now on) and removed, so the next start builds
// it again. h.piMu is not held.
func (h *Host) piSnapshotCrashed(blob string, lg *extLog) {
	h.piMu.Lock()
	h.piNoSnapshot = true
	h.piMu.Unlock()
	lg.printf("the pi runtime started from the snapshot %s exited before it said anything: starting without the snapshot from now on, and removing it", blob)
	os.Remove(blob)
	if key, _, ok := strings.Cut(filepath.Base(blob), "-"); ok {
		os.Remove(filepath.Join(filepath.Dir(blob), key+".sum"))
	}
}
