//go:build linux

package extensions

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// requestPidfd asks the kernel for a pidfd of the child (Linux 5.3+); the
// value stays -1 where that is not supported.
func requestPidfd(cmd *exec.Cmd) *int {
	fd := -1
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.PidFD = &fd
	return &fd
}

// awaitExit returns once the process behind pidfd has exited, waiting in
// the runtime's network poller (a pidfd is readable once its process
// exits) instead of an OS thread blocked in wait: with N extensions that is
// no N blocked threads. It closes pidfd. Without a pidfd (fd < 0) it
// returns at once and the caller's Wait blocks as usual.
func awaitExit(fd int) {
	if fd < 0 {
		return
	}
	if err := syscall.SetNonblock(fd, true); err != nil {
		syscall.Close(fd)
		return
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	defer f.Close()
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Read(func(fd uintptr) bool {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(pfd, 0)
		return err != nil || n > 0 // exited (or cannot tell: let Wait block)
	})
}
