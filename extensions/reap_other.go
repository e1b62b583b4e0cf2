//go:build !linux

package extensions

import "os/exec"

func requestPidfd(cmd *exec.Cmd) *int { fd := -1; return &fd }

// awaitExit: without pidfds the caller's Wait blocks a thread per child.
func awaitExit(fd int) {}
