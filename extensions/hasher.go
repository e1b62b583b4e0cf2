package extensions

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/zot-editors/zot/extensions/sep"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/internal/atomicfile"
)

// HashCacheFile is the trust-hash cache's name inside $ZOT_HOME.
const HashCacheFile = "trust-cache.json"

// Limits of the trust hash: an extension directory with more files or
// bytes than this (outside the skipped directories) cannot be trusted;
// the error names the limit.
const (
	MaxTrustFiles = 20000
	MaxTrustBytes = 512 << 20
)

// TrustSkipDirs are directory names the trust hash does not descend into
// at any depth: version control, installed dependencies and build caches.
// A code file the manifest names (exec, args) is hashed even there.
var TrustSkipDirs = []string{
	".git", ".hg", ".svn", // version control
	"node_modules",                                // npm dependencies
	"__pycache__", ".mypy_cache", ".pytest_cache", // Python caches
	".ruff_cache", ".tox", ".cache", ".gradle",
}

// openHashFile opens a file to hash it; tests count calls through it.
var openHashFile = os.Open

var hashBufPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// statKey identifies one version of a file's content without reading it.
type statKey struct {
	Size  int64  `json:"size"`
	Mtime int64  `json:"mtime"`
	Ctime int64  `json:"ctime,omitempty"`
	Ino   uint64 `json:"ino,omitempty"`
	Dev   uint64 `json:"dev,omitempty"`
}

type cacheEntry struct {
	statKey
	SHA256 string `json:"sha256"`
}

// Hasher computes trust hashes, caching each file's sha256 by (path,
// size, mtime, ctime, inode) in $ZOT_HOME/trust-cache.json, so an
// unchanged extension is only stat'ed, never read. Safe for concurrent
// use. The zero Hasher hashes without a cache.
type Hasher struct {
	path string

	mu      sync.Mutex
	loaded  bool
	entries map[string]cacheEntry
	used    map[string]bool
	dirty   bool
}

// NewHasher returns a Hasher whose cache lives in home ("" = no cache).
func NewHasher(home string) *Hasher {
	hs := &Hasher{}
	if home != "" {
		hs.path = filepath.Join(home, HashCacheFile)
	}
	return hs
}

func (hs *Hasher) load() {
	if hs.loaded {
		return
	}
	hs.loaded = true
	hs.entries, hs.used = map[string]cacheEntry{}, map[string]bool{}
	if hs.path == "" {
		return
	}
	b, err := os.ReadFile(hs.path)
	if err != nil {
		return
	}
	var doc struct {
		Version int                   `json:"version"`
		Files   map[string]cacheEntry `json:"files"`
	}
	if json.Unmarshal(b, &doc) == nil && doc.Version == 1 && doc.Files != nil {
		hs.entries = doc.Files
	}
}

func (hs *Hasher) lookup(path string, k statKey) (string, bool) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.load()
	hs.used[path] = true
	e, ok := hs.entries[path]
	if !ok || e.statKey != k {
		return "", false
	}
	return e.SHA256, true
}

// hashFreshWindow: a file modified more recently than this could change
// again within the same timestamp tick without its key changing (coarse
// file system clocks), so its hash is not cached yet.
var hashFreshWindow = 2 * time.Second

func (hs *Hasher) store(path string, k statKey, sum string) {
	if time.Since(time.Unix(0, k.Mtime)) < hashFreshWindow || time.Since(time.Unix(0, k.Ctime)) < hashFreshWindow {
		return
	}
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.load()
	hs.entries[path] = cacheEntry{k, sum}
	hs.dirty = true
}

// Save writes the cache if it changed. Entries not used by this Hasher
// are dropped once the cache holds more than MaxTrustFiles of them.
func (hs *Hasher) Save() error {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.path == "" || !hs.dirty {
		return nil
	}
	if len(hs.entries) > MaxTrustFiles {
		for p := range hs.entries {
			if !hs.used[p] {
				delete(hs.entries, p)
			}
		}
	}
	b, err := json.Marshal(struct {
		Version int                   `json:"version"`
		Files   map[string]cacheEntry `json:"files"`
	}{1, hs.entries})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(hs.path), 0o700); err != nil {
		return err
	}
	if err := atomicfile.Write(hs.path, b, 0o600); err != nil {
		return err
	}
	hs.dirty = false
	return nil
}

// fileSum is path's sha256, from the cache when its stat key matches,
// else streamed from the file (and cached).
func (hs *Hasher) fileSum(path string, fi fs.FileInfo) (string, error) {
	k := fileID(fi)
	if hs.path != "" {
		if sum, ok := hs.lookup(path, k); ok {
			return sum, nil
		}
	}
	f, err := openHashFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	buf := hashBufPool.Get().(*[]byte)
	_, err = io.CopyBuffer(h, onlyReader{f}, *buf)
	hashBufPool.Put(buf)
	if err != nil {
		return "", fmt.Errorf("hash %s: %w", path, err)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if hs.path != "" {
		// Cache only if the file did not change while it was read.
		if after, err := f.Stat(); err == nil && fileID(after) == k {
			hs.store(path, k, sum)
		}
	}
	return sum, nil
}

// onlyReader hides *os.File's WriterTo/ReaderFrom, so CopyBuffer uses the
// pooled buffer.
type onlyReader struct{ io.Reader }

// Hash is the hash trust is recorded against: sha256 over the manifest
// (canonical JSON without "enabled", so enable/disable does not revoke
// trust), every file in the extension directory except those under
// TrustSkipDirs (each with its relative path; a symlink by its target, not
// followed), and every code file the manifest names outside the directory
// (an exec path, a file argument), each with its absolute path. A bare
// exec looked up on $PATH (python3, node) is not hashed.
func (hs *Hasher) Hash(dir string, m Manifest, raw []byte) (string, error) {
	h := sha256.New()
	var fields map[string]any
	if m.SEP != nil {
		var err error
		if fields, err = sep.Canonical(raw); err != nil {
			return "", err
		}
	} else if err := json.Unmarshal(raw, &fields); err != nil {
		return "", err
	}
	delete(fields, "enabled")
	canon, _ := json.Marshal(fields) // map keys are sorted
	fmt.Fprintf(h, "manifest %d\n", len(canon))
	h.Write(canon)

	hashed := map[string]bool{}
	if m.Pi == nil { // the manifest went in above (a pi module has none)
		hashed[filepath.Join(dir, m.FileName())] = true
	}
	var files, bytes int64
	limit := func(size int64) error {
		files++
		bytes += size
		if files > MaxTrustFiles {
			return fmt.Errorf("extension directory %s has more than %d files to hash; move data out of it or into a skipped directory (%s)", dir, MaxTrustFiles, strings.Join(TrustSkipDirs, ", "))
		}
		if bytes > MaxTrustBytes {
			return fmt.Errorf("extension directory %s holds more than %d MiB to hash; move data out of it or into a skipped directory (%s)", dir, MaxTrustBytes>>20, strings.Join(TrustSkipDirs, ", "))
		}
		return nil
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && slices.Contains(TrustSkipDirs, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if hashed[p] {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			hashed[p] = true
			fmt.Fprintf(h, "\nlink %s -> %s\n", rel, target)
			return limit(0)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if err := limit(fi.Size()); err != nil {
				return err
			}
			hashed[p] = true
			return hs.writeFile(h, "file "+rel, p, fi)
		}
		return nil // sockets, fifos: no content
	})
	if err != nil {
		return "", err
	}
	// Code files the walk did not cover: outside the directory (sorted by
	// absolute path), or inside a skipped directory.
	extra := m.trustFiles(dir)
	sort.Strings(extra)
	for _, p := range extra {
		if hashed[p] {
			continue
		}
		hashed[p] = true
		fi, err := os.Stat(p)
		if err != nil {
			return "", err
		}
		if err := limit(fi.Size()); err != nil {
			return "", err
		}
		name := "outside " + filepath.ToSlash(p)
		if within(dir, p) {
			rel, _ := filepath.Rel(dir, p)
			name = "file " + filepath.ToSlash(rel)
		}
		if err := hs.writeFile(h, name, p, fi); err != nil {
			return "", err
		}
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (hs *Hasher) writeFile(h hash.Hash, name, p string, fi fs.FileInfo) error {
	sum, err := hs.fileSum(p, fi)
	if err != nil {
		return err
	}
	fmt.Fprintf(h, "\n%s %d %s\n", name, fi.Size(), sum)
	return nil
}

// trustFiles are the code files the manifest names, inside the directory
// or not: an exec given as a path (not a bare name found on $PATH) and
// every argument naming a regular file.
func (m Manifest) trustFiles(dir string) []string {
	if m.Pi != nil {
		return m.piTrustFiles()
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if seen[p] {
			return
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			seen[p] = true
			out = append(out, p)
		}
	}
	if e := m.Exec; filepath.IsAbs(e) || strings.ContainsAny(e, `/\`) {
		if p, err := m.ExecPath(dir); err == nil {
			add(p)
		}
	} else if p, err := m.ExecPath(dir); err == nil && within(dir, p) {
		add(p)
	}
	for _, a := range m.Args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		if filepath.IsAbs(a) {
			add(a)
		} else {
			add(filepath.Join(dir, a))
		}
	}
	return out
}
