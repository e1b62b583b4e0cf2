//go:build unix

package checkpoint

import (
	"syscall"
	"time"
)

// childrenCPU is the CPU time of this process's waited-for children (the
// git processes a checkpoint runs).
func childrenCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) != nil {
		return -1
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
