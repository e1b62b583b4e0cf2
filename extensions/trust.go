package extensions

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/zot-editors/zot/internal/atomicfile"
)

// TrustFile is the trust store's name inside $ZOT_HOME.
const TrustFile = "trust.json"

// trustDoc is $ZOT_HOME/trust.json: workspace path → extension name →
// the hash that was trusted.
type trustDoc struct {
	Version    int                                `json:"version"`
	Workspaces map[string]map[string]trustedEntry `json:"workspaces"`
}

type trustedEntry struct {
	SHA256    string    `json:"sha256"`
	TrustedAt time.Time `json:"trusted_at"`
}

// trustMu serialises read-modify-write of trust files in this process.
var trustMu sync.Mutex

// TrustHash is the hash trust is recorded against (uncached; the host
// uses a Hasher). See Hasher.Hash for what it covers.
func TrustHash(dir string, m Manifest, raw []byte) (string, error) {
	return (&Hasher{}).Hash(dir, m, raw)
}

// workspaceKey is the canonical form of a workspace path.
func workspaceKey(cwd string) string {
	abs, err := filepath.Abs(cwd)
	if err != nil {
		abs = cwd
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return filepath.Clean(abs)
}

// trustCache is the last trust.json parsed, by path and stat key: a
// discovery of N project extensions asks IsTrusted N times, and parsing
// the file each time would be quadratic. Guarded by trustMu.
var trustCache struct {
	path string
	key  statKey
	doc  trustDoc
}

// readTrust returns the trust store; callers hold trustMu and must not
// modify the result (RecordTrust copies what it changes).
func readTrust(home string) (trustDoc, error) {
	doc := trustDoc{Version: 1, Workspaces: map[string]map[string]trustedEntry{}}
	path := filepath.Join(home, TrustFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return doc, nil
	}
	if err != nil {
		return doc, err
	}
	if k := fileID(fi); trustCache.path == path && trustCache.key == k && k.Ctime != 0 {
		return trustCache.doc, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return doc, err
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return doc, fmt.Errorf("%s: %w", TrustFile, err)
	}
	if doc.Workspaces == nil {
		doc.Workspaces = map[string]map[string]trustedEntry{}
	}
	trustCache.path, trustCache.key, trustCache.doc = path, fileID(fi), doc
	return doc, nil
}

// IsTrusted reports whether name, with this hash, is trusted in the
// workspace cwd.
func IsTrusted(home, cwd, name, hash string) bool {
	trustMu.Lock()
	defer trustMu.Unlock()
	doc, err := readTrust(home)
	if err != nil {
		return false
	}
	e, ok := doc.Workspaces[workspaceKey(cwd)][name]
	return ok && e.SHA256 == hash
}

// RecordTrust marks name with hash trusted in the workspace cwd.
func RecordTrust(home, cwd, name, hash string) error {
	trustMu.Lock()
	defer trustMu.Unlock()
	doc, err := readTrust(home)
	if err != nil {
		return err
	}
	ws := workspaceKey(cwd)
	// Copy what changes: the cached document is shared.
	all := make(map[string]map[string]trustedEntry, len(doc.Workspaces)+1)
	for k, v := range doc.Workspaces {
		all[k] = v
	}
	entries := make(map[string]trustedEntry, len(all[ws])+1)
	for k, v := range all[ws] {
		entries[k] = v
	}
	entries[name] = trustedEntry{SHA256: hash, TrustedAt: time.Now().UTC()}
	all[ws] = entries
	doc.Workspaces = all
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(home, TrustFile), append(b, '\n'), 0o600)
}

// TrustCandidate records trust for a discovered project-local candidate.
func TrustCandidate(home, cwd string, c Candidate) error {
	if c.Err != nil {
		return c.Err
	}
	hs := NewHasher(home)
	h, err := hs.Hash(c.Dir, c.Manifest, c.Raw)
	if err != nil {
		return err
	}
	hs.Save()
	return RecordTrust(home, cwd, c.Name, h)
}

// needsTrust reports whether a candidate's source requires trust:
// project-local extensions and extension paths an editor passed in that
// lie inside the workspace do; global installs and --ext paths are the
// user's own act.
func needsTrust(source string) bool { return source == SourceProject || source == SourceWorkspace }
