//go:build !unix

package extensions

import (
	"os"
	"syscall"
)

func killGroup(pid int, sig syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
