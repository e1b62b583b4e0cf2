package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// ErrFileChanged is returned by EditFile when the file no longer holds the
// content the tool read.
var ErrFileChanged = errors.New("the file changed since it was read; read it again and redo the edit")

// diskWorkspace reads and writes the file system directly.
type diskWorkspace struct{ root string }

// NewDiskWorkspace returns the default Workspace: files on disk, relative
// paths against root. Writes are atomic (temp file in the same directory,
// fsync, rename), create parent directories and keep an existing file's
// mode. Sync is a no-op.
func NewDiskWorkspace(root string) Workspace {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	return &diskWorkspace{root: filepath.Clean(root)}
}

func (d *diskWorkspace) Root() string { return d.root }

func (d *diskWorkspace) ReadFile(ctx context.Context, path string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func (d *diskWorkspace) WriteFile(ctx context.Context, path string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return writeFileAtomic(path, data)
}

func (d *diskWorkspace) EditFile(ctx context.Context, path string, oldData, newData []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cur, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if !bytes.Equal(cur, oldData) {
		return fmt.Errorf("%s: %w", path, ErrFileChanged)
	}
	return writeFileAtomic(path, newData)
}

func (d *diskWorkspace) Sync(context.Context) error { return nil }

// writeFileAtomic replaces path with data so readers see either the old or
// the new content, never a mix. A symlink is followed and its target
// replaced; an existing file's permission bits are kept (new files: 0644).
func writeFileAtomic(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if fi.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		mode = fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".zot-*")
	if err != nil {
		return err
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		return err
	}
	if err := tmp.Chmod(mode); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmpName, path); err != nil {
		return err
	}
	ok = true
	// Make the rename itself durable; not every file system supports it.
	if df, err := os.Open(dir); err == nil {
		_ = df.Sync()
		df.Close()
	}
	return nil
}
