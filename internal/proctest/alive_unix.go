//go:build unix

package proctest

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

func kill(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	// It exists (kill succeeded, or EPERM: someone else's process). A
	// zombie has exited: its state letter is Z (or X, dead).
	if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		// pid (comm) state …: comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return true
		}
		return b[i+2] != 'Z' && b[i+2] != 'X'
	} else if !errors.Is(err, os.ErrNotExist) {
		return true
	} else if _, serr := os.Stat("/proc/self/stat"); serr == nil {
		return false // /proc works and has no such process: it was just reaped
	}
	// No /proc (macOS, the BSDs): ask ps for the state.
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	if err != nil {
		// ps exits 1 when the process is gone; kill(0) just said it exists,
		// so it was reaped in between, unless ps itself is missing.
		var exit *exec.ExitError
		return !errors.As(err, &exit)
	}
	st := bytes.TrimSpace(out)
	return len(st) > 0 && st[0] != 'Z'
}
