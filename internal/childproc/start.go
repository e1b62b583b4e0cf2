package childproc

import "os/exec"

// SupervisorName is the supervisor's argv[0] (Linux): what ps shows for
// it, and how a test that lists zot's children tells it apart.
const SupervisorName = "zot (supervisor)"

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
