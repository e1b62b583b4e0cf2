//go:build unix

package extensions

import (
	"syscall"
)

func killGroup(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, sig)
}
