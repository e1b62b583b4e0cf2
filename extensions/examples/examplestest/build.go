// Package examplestest prepares zot's example extensions
// (extensions/examples) for tests: the examples' own tests and the
// host's, which run them as real subprocesses.
package examplestest

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/zot-editors/zot/internal/testenv"
)

// Names lists the examples, one per directory of extensions/examples.
var Names = []string{"hello", "guard", "todo", "python", "node"}

// Manifest is the part of an example's extension.json a test needs.
type Manifest struct {
	Name     string   `json:"name"`
	Version  string   `json:"version"`
	Exec     string   `json:"exec"`
	Args     []string `json:"args"`
	Language string   `json:"language"`
}

// Dir is the source directory of example name.
func Dir(name string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("examplestest: cannot locate the examples")
	}
	return filepath.Join(filepath.Dir(filepath.Dir(file)), name)
}

// ReadManifest reads dir/extension.json.
func ReadManifest(t testing.TB, dir string) Manifest {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "extension.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s/extension.json: %v", dir, err)
	}
	if m.Name == "" || m.Exec == "" {
		t.Fatalf("%s/extension.json lacks name or exec", dir)
	}
	return m
}

// Build returns a fresh directory holding a runnable copy of example
// name (hello, guard, todo, python or node): its extension.json, README
// and program copied into a t.TempDir(), with a Go example's binary
// built into place by `go build -o <exec> .`. Point a host at the
// returned directory as it would at an installed extension. When the
// example's interpreter (python3, node) is missing, Build skips the test
// and says so.
func Build(t testing.TB, name string) string {
	t.Helper()
	src := Dir(name)
	m := ReadManifest(t, src)
	switch m.Language {
	case "python":
		need(t, "python3", name)
	case "javascript", "typescript", "node":
		need(t, "node", name)
	}
	dst := filepath.Join(t.TempDir(), m.Name)
	exe := filepath.Clean(m.Exec)
	copyDir(t, src, dst, func(rel string) bool {
		// Leave out a binary built in the source tree and runtime state.
		return (m.Language == "go" && rel == exe) || rel == "todos.json"
	})
	if m.Language == "go" {
		gobin, err := exec.LookPath("go")
		if err != nil {
			t.Fatalf("building %s needs the go command on PATH: %v", name, err)
		}
		cmd := exec.Command(gobin, "build", "-o", filepath.Join(dst, exe), ".")
		cmd.Dir = src
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", name, err, out)
		}
	}
	return dst
}

func need(t testing.TB, interpreter, name string) {
	t.Helper()
	testenv.NeedCommand(t, interpreter, "the "+name+" example")
}

// copyDir copies regular files from src to dst, keeping their modes.
func copyDir(t testing.TB, src, dst string, skip func(rel string) bool) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel != "." && skip(rel) {
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		if !d.Type().IsRegular() || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return copyFile(p, filepath.Join(dst, rel), info.Mode().Perm())
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
