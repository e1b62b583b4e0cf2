//go:build !linux

package childproc

import "os/exec"

// Init does nothing where there is no subreaper and no parent-death
// signal: only tracked process groups (job objects on Windows) are cleaned
// up.
func Init() error { return nil }

func killDescendants() {}

func tie(*exec.Cmd) {}

func onStarterThread(start func() error) error { return start() }
