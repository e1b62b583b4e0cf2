package sep

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/zot-editors/zot/internal/atomicfile"
)

// KV is one extension's kv/* store: a JSON file (SEP's CLI hosts use
// one too), private to the user, rewritten whole on each change. It
// outlives the process, so a restarted extension finds its values.
type KV struct {
	path string
	mu   sync.Mutex
}

// MaxKVBytes bounds the store file, so an extension cannot fill the disk.
const MaxKVBytes = 16 << 20

// OpenKV returns the store at path (created on the first kv/set).
func OpenKV(path string) *KV { return &KV{path: path} }

// KVPath is where extension name keeps its store under zot's home.
func KVPath(zotHome, name string) string {
	return filepath.Join(zotHome, "extension-data", name, "kv.json")
}

func (k *KV) load() (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	raw, err := os.ReadFile(k.path)
	if os.IsNotExist(err) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object (%v); remove it to start over", k.path, err)
	}
	return m, nil
}

func (k *KV) save(m map[string]json.RawMessage) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	if len(raw) > MaxKVBytes {
		return fmt.Errorf("the store would be %d bytes; the limit is %d", len(raw), MaxKVBytes)
	}
	if err := os.MkdirAll(filepath.Dir(k.path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(k.path, append(raw, '\n'), 0o600)
}

// Serve answers kv/get, kv/set, kv/delete and kv/list.
func (k *KV) Serve(method string, params json.RawMessage) (any, *Error) {
	var p struct {
		Key    *string         `json:"key"`
		Value  json.RawMessage `json:"value"`
		Prefix string          `json:"prefix"`
	}
	if len(params) > 0 {
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, Errorf(CodeInvalidParams, "%s: %v", method, err)
		}
	}
	if method != "kv/list" && p.Key == nil {
		return nil, Errorf(CodeInvalidParams, "%s needs a key", method)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	m, err := k.load()
	if err != nil {
		return nil, Errorf(CodeInternalError, "%s: %v", method, err)
	}
	switch method {
	case "kv/get":
		v, ok := m[*p.Key]
		if !ok {
			v = json.RawMessage("null")
		}
		return map[string]json.RawMessage{"value": v}, nil
	case "kv/set":
		if len(p.Value) == 0 {
			return nil, Errorf(CodeInvalidParams, "kv/set needs a value")
		}
		m[*p.Key] = p.Value
	case "kv/delete":
		delete(m, *p.Key)
	case "kv/list":
		keys := []string{}
		for key := range m {
			if strings.HasPrefix(key, p.Prefix) {
				keys = append(keys, key)
			}
		}
		sort.Strings(keys)
		return map[string]any{"keys": keys}, nil
	}
	if err := k.save(m); err != nil {
		return nil, Errorf(CodeInternalError, "%s: %v", method, err)
	}
	return struct{}{}, nil
}
