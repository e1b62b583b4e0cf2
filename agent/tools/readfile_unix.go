//go:build unix

package tools

import (
	"os"
	"syscall"
)

// readFileInto reads the file at path into buf[:0], growing it as needed,
// and returns the bytes. A file larger than max is not read: tooBig is set
// and the returned bytes are empty. The search tools read thousands of
// files per call; raw open/read/close with a reused buffer costs four
// system calls and no allocation per small file, against seven and a
// fresh buffer through os.ReadFile after the walk's lstat. O_NONBLOCK keeps
// a FIFO reached through a symlink from blocking the search.
func readFileInto(buf []byte, path string, max int) (data []byte, tooBig bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return buf[:0], false, &os.PathError{Op: "open", Path: path, Err: err}
	}
	defer syscall.Close(fd)
	buf = buf[:0]
	statted := false
	for {
		if len(buf) == cap(buf) {
			if len(buf) > max {
				return buf[:0], true, nil
			}
			need := 2*cap(buf) + 4096
			if !statted {
				// Learn the size once the buffer fills: a huge file is
				// refused before it is read, and the buffer grows in one
				// step (one byte more, so the read that sees EOF has room).
				statted = true
				var st syscall.Stat_t
				if err := syscall.Fstat(fd, &st); err == nil {
					if st.Size > int64(max) {
						return buf[:0], true, nil
					}
					if int(st.Size) >= cap(buf) {
						need = int(st.Size) + 1
					}
				}
			}
			nb := make([]byte, len(buf), need)
			copy(nb, buf)
			buf = nb
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err == syscall.EAGAIN {
			return buf[:0], false, nil // a FIFO or socket: nothing to search
		}
		if err != nil {
			return buf[:0], false, &os.PathError{Op: "read", Path: path, Err: err}
		}
		if n <= 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	if len(buf) > max {
		return buf[:0], true, nil
	}
	return buf, false, nil
}
