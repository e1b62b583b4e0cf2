package tools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDiskWorkspaceWriteCreatesParentsAndIsAtomic(t *testing.T) {
	dir := t.TempDir()
	ws := NewDiskWorkspace(dir)
	p := filepath.Join(dir, "a", "b", "c.txt")
	if err := ws.WriteFile(context.Background(), p, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "hello\n" {
		t.Fatalf("content %q", got)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("new file mode %v, want 0644", fi.Mode().Perm())
	}
	// No temp files are left next to it.
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("leftover files: %v", entries)
	}
}

func TestDiskWorkspacePreservesModeAndFollowsSymlink(t *testing.T) {
	dir := t.TempDir()
	ws := NewDiskWorkspace(dir)
	p := filepath.Join(dir, "run.sh")
	writeFiles(t, dir, map[string]string{"run.sh": "#!/bin/sh\n"})
	if err := os.Chmod(p, 0o751); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.sh")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(context.Background(), link, []byte("#!/bin/sh\necho hi\n")); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	if fi.Mode().Perm() != 0o751 {
		t.Fatalf("mode %v, want 0751", fi.Mode().Perm())
	}
	if li, _ := os.Lstat(link); li.Mode()&os.ModeSymlink == 0 {
		t.Fatal("symlink was replaced by a file")
	}
	if got := readFile(t, p); got != "#!/bin/sh\necho hi\n" {
		t.Fatalf("target content %q", got)
	}
}

func TestDiskWorkspaceEditFileRefusesStaleContent(t *testing.T) {
	dir := t.TempDir()
	ws := NewDiskWorkspace(dir)
	writeFiles(t, dir, map[string]string{"f.txt": "now\n"})
	p := filepath.Join(dir, "f.txt")
	err := ws.EditFile(context.Background(), p, []byte("before\n"), []byte("after\n"))
	if !errors.Is(err, ErrFileChanged) {
		t.Fatalf("err = %v, want ErrFileChanged", err)
	}
	if err := ws.EditFile(context.Background(), p, []byte("now\n"), []byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); got != "after\n" {
		t.Fatalf("content %q", got)
	}
	if err := ws.WriteFile(context.Background(), dir, []byte("x")); err == nil {
		t.Fatal("writing over a directory should fail")
	}
	if ws.Sync(context.Background()) != nil {
		t.Fatal("Sync should be a no-op")
	}
}

func TestResolvePath(t *testing.T) {
	ws := NewDiskWorkspace("/work/root")
	home, _ := os.UserHomeDir()
	cases := []struct{ in, want string }{
		{"a/b.go", "/work/root/a/b.go"},
		{"./a/../b.go", "/work/root/b.go"},
		{"/etc/hosts", "/etc/hosts"},
		{"", "/work/root"},
		{"~", home},
		{"~/x.txt", filepath.Join(home, "x.txt")},
		{"~user/x", "/work/root/~user/x"},
	}
	for _, c := range cases {
		if got := ResolvePath(ws, c.in); got != c.want {
			t.Errorf("ResolvePath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
