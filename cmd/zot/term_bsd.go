//go:build unix && !linux

package main

import "golang.org/x/sys/unix"

// isTerminal tells whether fd is a terminal (a character device such as
// /dev/null is not).
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TIOCGETA)
	return err == nil
}
