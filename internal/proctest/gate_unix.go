//go:build unix

package proctest

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/zot-editors/zot/internal/testenv"
)

// Gate makes a fifo a test process reads to EOF before going on (the fake
// extension's -gate), so a test holds it at a known point without timing.
// release lets it through; the gate is also opened at the end of the test
// so nothing stays stuck on it.
func Gate(t testing.TB) (path string, release func()) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "gate")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		testenv.Skip(t, "mkfifo: %v", err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			// Opening for write waits until the reader has it open;
			// closing gives it EOF.
			f, err := os.OpenFile(path, os.O_WRONLY, 0)
			if err != nil {
				t.Errorf("opening the gate: %v", err)
				return
			}
			f.WriteString("go")
			f.Close()
		})
	}
	t.Cleanup(func() {
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	return path, release
}
