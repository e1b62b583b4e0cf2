//go:build unix

package childproc

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// GroupAlive reports whether the process group pgid has any member left.
func GroupAlive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func terminateGroup(pgid int) {
	if !GroupAlive(pgid) {
		return
	}
	_ = unix.Kill(-pgid, unix.SIGTERM)
	go func() {
		deadline := time.Now().Add(Grace)
		killed := false
		for GroupAlive(pgid) {
			if reapGroup(pgid) {
				continue
			}
			if !killed && time.Now().After(deadline) {
				_ = unix.Kill(-pgid, unix.SIGKILL)
				killed = true
			}
			if killed && time.Now().After(deadline.Add(Grace)) {
				return // members that are not zot's children: their parents reap them
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

func killGroupNow(pgid int) {
	_ = unix.Kill(-pgid, unix.SIGKILL)
}

// reapGroup collects one exited member of pgid that zot adopted (as the
// subreaper); the group's leader, the shell, was already waited for by
// os/exec, so no other waiter is robbed.
func reapGroup(pgid int) bool {
	var ws unix.WaitStatus
	pid, err := unix.Wait4(-pgid, &ws, unix.WNOHANG, nil)
	return err == nil && pid > 0
}
