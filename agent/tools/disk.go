package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/zot-editors/zot/internal/atomicfile"
)

// ErrFileChanged is returned by EditFile when the file no longer holds the
// content the tool read.
var ErrFileChanged = errors.New("the file changed since it was read; read it again and redo the edit")

// diskWorkspace reads and writes the file system directly.
type diskWorkspace struct {
	root   string
	policy *WritePolicy
}

// NewDiskWorkspace returns the default Workspace: files on disk, relative
// paths against root. Writes are atomic (temp file in the same directory,
// fsync, rename), create parent directories and keep an existing file's
// mode. Sync is a no-op. Writes outside root and allowDirs are refused:
// there is no user to ask (zot -p, zot rpc).
func NewDiskWorkspace(root string, allowDirs ...string) Workspace {
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	root = filepath.Clean(root)
	return &diskWorkspace{root: root, policy: &WritePolicy{Root: root, AllowDirs: allowDirs}}
}

func (d *diskWorkspace) CheckWrite(ctx context.Context, tool, path string, change func() string) error {
	return d.policy.Check(ctx, tool, path, change)
}

func (d *diskWorkspace) SetWriteRules(rules ...WriteRule) {
	d.policy.Rules = slices.Clone(rules)
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
	return atomicfile.Write(path, data, 0o644)
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
	return atomicfile.Write(path, newData, 0o644)
}

func (d *diskWorkspace) Sync(context.Context) error { return nil }

// OverlaidPaths is empty: every read is the disk's.
func (d *diskWorkspace) OverlaidPaths() []string { return nil }
