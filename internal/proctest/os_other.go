//go:build !unix

package proctest

import (
	"os/exec"
	"time"
)

// NewGroup does nothing where there are no process groups.
func NewGroup(*exec.Cmd) {}

// KillGroup kills the process pgid (there are no groups to reach).
func KillGroup(pgid int) { kill(pgid) }

// SelfCPU is the process's CPU time, where the OS reports it: not here.
func SelfCPU() time.Duration { return 0 }
