// Package childproc makes sure no process zot starts outlives it. A
// command started through Prepare and Attach runs in a Group that holds it
// and everything it starts: a process group on Unix, a Job Object with
// kill-on-close on Windows. Groups whose commands left background jobs
// behind are tracked and killed when the agent's run ends or zot exits; on
// Linux zot is also a child subreaper, so descendants that escaped their
// group (setsid, double fork) are re-parented to zot and killed by Cleanup
// at exit. On Windows a job's processes die with its last handle, so they
// die with zot even when zot is killed. On Linux that is covered too: every
// child is started with Start (a parent-death signal), and a supervisor
// ends their descendants once zot is gone (supervise_linux.go).
package childproc

import (
	"sync"
	"time"
)

// Grace is how long a killed Unix group has between SIGTERM and SIGKILL.
const Grace = 2 * time.Second

var (
	mu   sync.Mutex
	live = map[*Group]struct{}{} // every tracked group, for Cleanup
)

// Groups is a set of Groups that belong to one owner (one bash tool):
// KillAll ends them together.
type Groups struct {
	mu     sync.Mutex
	groups map[*Group]struct{}
}

// Add tracks g until KillAll or Cleanup ends it.
func (gs *Groups) Add(g *Group) {
	gs.mu.Lock()
	if gs.groups == nil {
		gs.groups = map[*Group]struct{}{}
	}
	gs.groups[g] = struct{}{}
	gs.mu.Unlock()
	mu.Lock()
	live[g] = struct{}{}
	mu.Unlock()
}

// KillAll terminates every tracked group that still has members (on Unix:
// SIGTERM now, SIGKILL after Grace, and the members zot adopted are
// reaped). It does not wait.
func (gs *Groups) KillAll() {
	gs.mu.Lock()
	groups := gs.groups
	gs.groups = nil
	gs.mu.Unlock()
	for g := range groups {
		mu.Lock()
		delete(live, g)
		mu.Unlock()
		g.terminate()
	}
}

// Cleanup kills what is left at exit: every tracked group and, on Linux,
// every descendant of this process. Call it last, after the extensions
// were shut down.
func Cleanup() {
	mu.Lock()
	groups := live
	live = map[*Group]struct{}{}
	mu.Unlock()
	for g := range groups {
		g.killNow()
	}
	killDescendants()
}
