package extensions

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zot-editors/zot/internal/testenv"
)

func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// What counts as a pi extension, and its name: a .ts/.js file, a
// directory with index.ts (and no zot manifest), a package.json with a
// "pi" key naming its extensions; anything else is not one, and a "pi"
// key naming a missing file is an error saying which.
func TestDetectPi(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"one.ts":                "export default function (pi) {}",
		"types.d.ts":            "export {}",
		"notes.md":              "x",
		"dir/index.ts":          "export default function (pi) {}",
		"zotext/index.ts":       "",
		"zotext/extension.json": `{"name":"z","exec":"node"}`,
		"pkg/package.json":      `{"name":"@acme/pi-pack","pi":{"extensions":["./a.ts","sub"]}}`,
		"pkg/a.ts":              "",
		"pkg/sub/index.js":      "",
		"bad/package.json":      `{"name":"bad","pi":{"extensions":["./missing.ts"]}}`,
		"plainpkg/package.json": `{"name":"plain"}`,
		"plainpkg/index.ts":     "",
		"escape/package.json":   `{"pi":{"extensions":["../one.ts"]}}`,
	})
	for _, tc := range []struct {
		path, kind, name string
		entries          []string
		errHas           string
	}{
		{path: "one.ts", kind: "file", name: "one", entries: []string{"one.ts"}},
		{path: "dir", kind: "dir", name: "dir", entries: []string{"dir/index.ts"}},
		{path: "pkg", kind: "package", name: "pi-pack", entries: []string{"pkg/a.ts", "pkg/sub/index.js"}},
		{path: "plainpkg", kind: "dir", name: "plainpkg", entries: []string{"plainpkg/index.ts"}},
		{path: "bad", errHas: `names "./missing.ts", which does not exist`},
		{path: "escape", errHas: "outside the package"},
		{path: "types.d.ts"},
		{path: "notes.md"},
		{path: "zotext"},
		{path: "nothing-here"},
	} {
		p := filepath.Join(root, tc.path)
		m, err := detectPi(p)
		if tc.errHas != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errHas) {
				t.Errorf("%s: error %v, want one saying %q", tc.path, err, tc.errHas)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.path, err)
			continue
		}
		if tc.kind == "" {
			if m != nil {
				t.Errorf("%s: detected as a pi extension (%+v)", tc.path, m)
			}
			continue
		}
		if m == nil || m.Kind != tc.kind {
			t.Errorf("%s: %+v, want kind %s", tc.path, m, tc.kind)
			continue
		}
		var want []string
		for _, e := range tc.entries {
			want = append(want, filepath.Join(root, e))
		}
		if !slices.Equal(m.Entries, want) {
			t.Errorf("%s: entries %v, want %v", tc.path, m.Entries, want)
		}
		if n := piName(p, m); n != tc.name {
			t.Errorf("%s: name %q, want %q", tc.path, n, tc.name)
		}
	}
}

// The trust hash of a pi module covers every file it loads: a relative
// import outside its directory, the files of a node_modules package it
// imports (and that package's dependencies), but not the packages zot's
// runtime provides itself, nor unrelated files. A change to any loaded
// file changes the hash; a change elsewhere does not.
func TestPiTrustHashCoversImports(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"lib/shared.ts":                               "export const x = 1;",
		"ext/index.ts":                                "import { x } from \"../lib/shared.js\";\nimport left from 'left-pad';\nimport { Type } from \"@sinclair/typebox\";\nconst h = require('./helper');\nexport default function (pi) {}",
		"ext/helper.ts":                               "module.exports = 1;",
		"ext/node_modules/left-pad/package.json":      `{"name":"left-pad","dependencies":{"tiny":"1"}}`,
		"ext/node_modules/left-pad/index.js":          "module.exports = require('tiny');",
		"ext/node_modules/tiny/index.js":              "module.exports = 1;",
		"ext/node_modules/unused/index.js":            "module.exports = 1;",
		"ext/node_modules/@sinclair/typebox/index.js": "module.exports = {};",
		"unrelated.ts":                                "x",
	})
	dir := filepath.Join(root, "ext")
	m, err := detectPi(dir)
	if err != nil || m == nil {
		t.Fatalf("detect: %v %v", m, err)
	}
	c := readPiCandidate(dir, SourceProject, m)
	files := c.Manifest.piTrustFiles()
	for _, want := range []string{"lib/shared.ts", "ext/index.ts", "ext/helper.ts", "ext/node_modules/left-pad/index.js", "ext/node_modules/tiny/index.js"} {
		if !slices.Contains(files, filepath.Join(root, want)) {
			t.Errorf("trust files lack %s: %v", want, files)
		}
	}
	for _, not := range []string{"ext/node_modules/unused/index.js", "ext/node_modules/@sinclair/typebox/index.js", "unrelated.ts"} {
		if slices.Contains(files, filepath.Join(root, not)) {
			t.Errorf("trust files include %s", not)
		}
	}
	// Its code files (a save reloads) are the module's own imports.
	code := c.Manifest.codeFiles(c.Dir)
	if !slices.Contains(code, filepath.Join(root, "lib/shared.ts")) || slices.Contains(code, filepath.Join(root, "ext/node_modules/tiny/index.js")) {
		t.Errorf("code files: %v", code)
	}
	hs := NewHasher("")
	hash := func() string {
		t.Helper()
		h, err := hs.Hash(c.Dir, c.Manifest, c.Raw)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	base := hash()
	for _, f := range []string{"lib/shared.ts", "ext/node_modules/tiny/index.js", "ext/index.ts"} {
		writeFiles(t, root, map[string]string{f: "changed " + f})
		if h := hash(); h == base {
			t.Errorf("changing %s left the hash as it was", f)
		} else {
			base = h
		}
	}
	writeFiles(t, root, map[string]string{"unrelated.ts": "changed", "ext/node_modules/unused/index.js": "changed"})
	if hash() != base {
		t.Error("a file the module does not load changed the hash")
	}
}

// pi extensions are found in zot's own extension directories too, beside
// zot's: a .ts file and a directory with index.ts in $ZOT_HOME/extensions
// and the workspace's .zot/extensions, and pi's own .pi/extensions; files
// that are neither are ignored, and a broken "pi" package is listed as
// invalid with its error.
func TestDiscoverPiExtensions(t *testing.T) {
	cwd, home, piHome := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv(EnvPiHome, piHome)
	t.Setenv(EnvSEPHome, t.TempDir())
	writeFiles(t, cwd, map[string]string{
		".zot/extensions/zot-one/extension.json": `{"name":"zot-one","exec":"node"}`,
		".zot/extensions/proj.ts":                "export default function (pi) {}",
		".zot/extensions/README.md":              "not one",
		".pi/extensions/pidir/index.ts":          "export default function (pi) {}",
		".pi/extensions/broken/package.json":     `{"pi":{"extensions":["./gone.ts"]}}`,
	})
	writeFiles(t, home, map[string]string{"extensions/glob.js": "module.exports = function (pi) {}"})
	writeFiles(t, piHome, map[string]string{".pi/agent/extensions/pihome.ts": "export default function (pi) {}"})
	got := map[string]Candidate{}
	var order []string
	for _, c := range Discover(cwd, home, nil) {
		got[c.Name] = c
		order = append(order, c.Name)
	}
	for name, src := range map[string]string{"zot-one": SourceProject, "proj": SourceProject, "pidir": SourceProject, "glob": SourceGlobal, "pihome": SourceGlobal} {
		c, ok := got[name]
		if !ok || c.Source != src || c.Err != nil {
			t.Errorf("%s: %+v (found %v)", name, c, order)
			continue
		}
		if name != "zot-one" && c.Manifest.Pi == nil {
			t.Errorf("%s is not a pi extension: %+v", name, c.Manifest)
		}
	}
	if b := got["broken"]; b.Err == nil || !strings.Contains(b.Err.Error(), "gone.ts") {
		t.Errorf("broken: %+v", b)
	}
	if _, ok := got["README"]; ok {
		t.Error("README.md taken for an extension")
	}
}

// piRuntimeForTest points $ZOT_PI_RUNTIME at the source tree's runtime,
// skipping (testenv) without node or its node_modules.
func piRuntimeForTest(tb testing.TB) {
	tb.Helper()
	testenv.NeedCommand(tb, "node", "pi extensions")
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "pi", "runtime")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "sucrase")); err != nil {
		testenv.Skip(tb, "the pi runtime's node_modules are not installed (make pi-runtime)")
	}
	tb.Setenv(EnvPiRuntime, dir)
}
