package childproc

import "os/exec"

// Start starts cmd so that it dies with zot, however zot ends (see Tie).
// Use it instead of cmd.Start for every process zot starts.
func Start(cmd *exec.Cmd) error { return StartWith(cmd, cmd.Start) }

// StartWith is Start for code that starts cmd itself (an SDK's transport
// calls cmd.Start inside its Connect): start runs where cmd.Start must run
// for cmd's parent-death signal to hold, and returns its error.
func StartWith(cmd *exec.Cmd, start func() error) error {
	tie(cmd)
	return onStarterThread(start)
}
