package tools

import (
	"fmt"
	"path/filepath"
	"testing"
)

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".gitignore":           "vendor/\n*.gen.go\n!keep.gen.go\n",
		".git/x.go":            "",
		"main.go":              "",
		"main_test.go":         "",
		"a.txt":                "",
		"cmd/zot/main.go":      "",
		"cmd/zot/z.gen.go":     "",
		"cmd/zot/keep.gen.go":  "",
		"vendor/lib/lib.go":    "",
		"web/.gitignore":       "dist\n",
		"web/dist/app.js":      "",
		"web/src/app.ts":       "",
		"web/src/view.tsx":     "",
		"web/src/test/x.ts":    "",
		"docs/testdata/in.txt": "",
		"docs/testdata.txt":    "",
	})
	tool := NewFind(NewDiskWorkspace(dir))
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"basename any depth", map[string]any{"pattern": "*.go"}, "cmd/zot/keep.gen.go\ncmd/zot/main.go\nmain.go\nmain_test.go"},
		{"anchored path", map[string]any{"pattern": "cmd/*/main.go"}, "cmd/zot/main.go"},
		{"doublestar and braces", map[string]any{"pattern": "web/**/*.{ts,tsx}"}, "web/src/app.ts\nweb/src/test/x.ts\nweb/src/view.tsx"},
		{"in a path, relative to it", map[string]any{"pattern": "src/*.ts", "path": "web"}, "web/src/app.ts"},
		{"directories get a slash", map[string]any{"pattern": "testdata*"}, "docs/testdata/\ndocs/testdata.txt"},
		{"nested gitignore", map[string]any{"pattern": "*.js"}, "No files found matching \"*.js\" in the workspace root."},
		{"limit", map[string]any{"pattern": "*.go", "limit": 2}, "cmd/zot/keep.gen.go\ncmd/zot/main.go\n\n[limit of 2 results reached; narrow the pattern or path, or raise limit]"},
		{"absolute path", map[string]any{"pattern": "*.ts", "path": filepath.Join(dir, "web", "src", "test")}, "web/src/test/x.ts"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustOK(t, run(t, tool, c.args)); got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
	mustErr(t, run(t, tool, map[string]any{"pattern": ""}), "find needs a glob pattern")
	mustErr(t, run(t, tool, map[string]any{"pattern": "[a"}), "Invalid pattern")
	mustErr(t, run(t, tool, map[string]any{"pattern": "*", "path": "nope"}), "Directory not found")
	mustErr(t, run(t, tool, map[string]any{"pattern": "*", "path": "main.go"}), "is a file")
}

func TestFindLimitIsSortedPrefix(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("d%02d/f.txt", i)] = ""
		files[fmt.Sprintf("d%02d.txt", i)] = ""
	}
	writeFiles(t, dir, files)
	tool := NewFind(NewDiskWorkspace(dir))
	all := mustOK(t, run(t, tool, map[string]any{"pattern": "*.txt", "limit": 1000}))
	some := mustOK(t, run(t, tool, map[string]any{"pattern": "*.txt", "limit": 5}))
	if want := "d00/f.txt\nd00.txt\nd01/f.txt\nd01.txt\nd02/f.txt"; some[:len(want)] != want || all[:len(want)] != want {
		t.Fatalf("limited result is not the head of the full one:\n%s\n---\n%s", some, all[:60])
	}
}

func TestPathLess(t *testing.T) {
	want := []string{"a/", "a/b", "a/b/c", "a-b", "a.txt", "b"}
	for i := range want {
		for j := range want {
			if got := pathLess(want[i], want[j]); got != (i < j) {
				t.Errorf("pathLess(%q, %q) = %v", want[i], want[j], got)
			}
		}
	}
}

// Outside the workspace, results are absolute paths and globs with a slash
// are matched relative to the searched directory.
func TestFindOutsideTheWorkspace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"ws/a.go": "", "other/pkg/b.go": "needle\n", "other/c.txt": ""})
	ws := NewDiskWorkspace(filepath.Join(dir, "ws"))
	other := filepath.Join(dir, "other")
	want := filepath.Join(other, "pkg", "b.go")
	if got := mustOK(t, run(t, NewFind(ws), map[string]any{"pattern": "pkg/*.go", "path": other})); got != want {
		t.Fatalf("find: got %q, want %q", got, want)
	}
	if got := mustOK(t, run(t, NewGrep(ws), map[string]any{"pattern": "needle", "path": other, "glob": "pkg/*.go"})); got != want+":1: needle" {
		t.Fatalf("grep: got %q", got)
	}
}
