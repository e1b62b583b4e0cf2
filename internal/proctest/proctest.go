// Package proctest answers, for tests, whether a process is still running:
// the check behind "no child process left behind". One helper, so every
// test means the same by "alive": the process exists (kill(pid, 0) does not
// fail with ESRCH) and is not a zombie (exited, not yet reaped). Where the
// zombie check cannot be made (no /proc and no ps), an existing process
// counts as alive: a test must never pass because it could not look.
package proctest

import (
	"testing"
	"time"
)

// Alive reports whether pid names a running process: it exists and is not
// a zombie.
func Alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	return alive(pid)
}

// WaitGone waits, within a generous bound that catches hangs, until pid has
// exited, and fails the test if it has not.
func WaitGone(t testing.TB, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for Alive(pid) {
		if time.Now().After(deadline) {
			kill(pid) // leave nothing behind
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
