package servertest

import (
	"os"

	"golang.org/x/sys/unix"
)

// pipeBytes is how many bytes wait in the pipe behind f (FIONREAD).
func pipeBytes(f *os.File) int {
	raw, err := f.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	raw.Control(func(fd uintptr) { n, _ = unix.IoctlGetInt(int(fd), unix.TIOCINQ) })
	return n
}
