//go:build unix

package extensions

import (
	"os/exec"
	"syscall"
)

// setProcGroup puts the extension in its own process group, so stopping
// it also stops whatever it spawned (a shell script's children).
func setProcGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

func killGroup(pid int, sig syscall.Signal) {
	if pid <= 0 {
		return
	}
	_ = syscall.Kill(-pid, sig)
}
