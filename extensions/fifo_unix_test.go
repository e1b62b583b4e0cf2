//go:build unix

package extensions

import (
	"os"
	"syscall"
	"testing"
)

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o600) }

// releaseFifo opens the fifo for writing (it waits for the reader) and
// closes it: the reader gets EOF.
func releaseFifo(t *testing.T, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("opening %s: %v", path, err)
	}
	f.WriteString("go")
	f.Close()
}
