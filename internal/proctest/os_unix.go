//go:build unix

package proctest

import (
	"os/exec"
	"syscall"
	"time"
)

// NewGroup makes cmd the leader of a new process group (call before
// Start), so KillGroup reaches what it starts.
func NewGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillGroup SIGKILLs the process group pgid.
func KillGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGKILL) }

// SelfCPU is this process's user+system CPU time so far.
func SelfCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
