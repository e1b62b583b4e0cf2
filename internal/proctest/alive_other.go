//go:build !unix

package proctest

import "os"

func kill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
		p.Release()
	}
}

func alive(pid int) bool {
	// Windows: a process handle opens while the process exists; an exited
	// one is not a zombie there once its last handle closes.
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
