package main

import "golang.org/x/sys/windows"

// isTerminal tells whether fd is a console (a pipe or a file is not).
func isTerminal(fd uintptr) bool {
	var mode uint32
	return windows.GetConsoleMode(windows.Handle(fd), &mode) == nil
}
