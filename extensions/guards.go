package extensions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sync"

	"github.com/zot-editors/zot/internal/atomicfile"
)

// GuardsFile, in $ZOT_HOME, lists the extension directories whose last
// process intercepted tool_call. A guard is then known as one from the
// start of the next zot, before it has said hello: a tool call waits for
// it while it starts, and is blocked if it cannot start (the guard
// promise, docs/extensions.md), instead of running unchecked because the
// guard had not subscribed yet.
const GuardsFile = "guards.json"

// guardBook is the GuardsFile of one host.
type guardBook struct {
	path string
	mu   sync.Mutex
	dirs map[string]bool
}

func loadGuards(home string) *guardBook {
	g := &guardBook{path: filepath.Join(home, GuardsFile), dirs: map[string]bool{}}
	if b, err := os.ReadFile(g.path); err == nil {
		var doc struct {
			Guards []string `json:"guards"`
		}
		if json.Unmarshal(b, &doc) == nil {
			for _, d := range doc.Guards {
				g.dirs[d] = true
			}
		}
	}
	return g
}

func (g *guardBook) has(dir string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dirs[dir]
}

// set records whether the extension in dir guards; the file is written
// only when that changes. A write error only costs the head start.
func (g *guardBook) set(dir string, on bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dirs[dir] == on {
		return nil
	}
	if on {
		g.dirs[dir] = true
	} else {
		delete(g.dirs, dir)
	}
	doc := struct {
		Guards []string `json:"guards"`
	}{Guards: []string{}}
	for d := range g.dirs {
		doc.Guards = append(doc.Guards, d)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(g.path), 0o700); err != nil {
		return err
	}
	return atomicfile.Write(g.path, append(b, '\n'), 0o600)
}
