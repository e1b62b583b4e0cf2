package tools

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func lsTree(t *testing.T) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".gitignore":        "*.log\nnode_modules/\n!keep.log\n",
		".git/HEAD":         "ref",
		"b.go":              "",
		"a.go":              "",
		"debug.log":         "",
		"keep.log":          "",
		"node_modules/x.js": "",
		"src/main.go":       "",
		"src/.gitignore":    "*.gen\n",
		"src/a.gen":         "",
		"src/b.txt":         "",
		".env":              "",
	})
	return dir
}

func TestLs(t *testing.T) {
	dir := lsTree(t)
	if err := os.Symlink(filepath.Join(dir, "src"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tool := NewLs(NewDiskWorkspace(dir))
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"root", map[string]any{}, ".env\n.gitignore\na.go\nb.go\nkeep.log\nlink/\nsrc/\n[3 entries hidden: .git or ignored by .gitignore]"},
		{"nested gitignore", map[string]any{"path": "src"}, ".gitignore\nb.txt\nmain.go\n[1 entry hidden: .git or ignored by .gitignore]"},
		{"limit", map[string]any{"limit": 2}, ".env\n.gitignore\n\n[limit of 2 entries reached; 5 more not shown. Use find with a pattern, or list a subdirectory]\n[3 entries hidden: .git or ignored by .gitignore]"},
		{"absolute", map[string]any{"path": filepath.Join(dir, "src")}, ".gitignore\nb.txt\nmain.go\n[1 entry hidden: .git or ignored by .gitignore]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustOK(t, run(t, tool, c.args)); got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestLsErrorsAndEmpty(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"f.txt": "x"})
	if err := os.Mkdir(filepath.Join(dir, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	tool := NewLs(NewDiskWorkspace(dir))
	mustErr(t, run(t, tool, map[string]any{"path": "nope"}), "Directory not found: nope")
	mustErr(t, run(t, tool, map[string]any{"path": "f.txt"}), "is a file", "read")
	contains(t, mustOK(t, run(t, tool, map[string]any{"path": "empty"})), "(empty is empty)")
}

func TestLsLargeDirectory(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 600 {
		files[fmt.Sprintf("f%04d", i)] = ""
	}
	writeFiles(t, dir, files)
	out := mustOK(t, run(t, NewLs(NewDiskWorkspace(dir)), map[string]any{}))
	contains(t, out, "f0499\n\n[limit of 500 entries reached; 100 more")
	notContains(t, out, "f0500")
}
