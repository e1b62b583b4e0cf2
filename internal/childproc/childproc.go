// Package childproc makes sure no process zot starts outlives it: the
// bash tool's process groups are tracked and killed when the agent's run
// ends or zot exits, and on Linux zot is a child subreaper, so descendants
// that escaped their group (setsid, double fork) are re-parented to zot and
// killed by Cleanup at exit.
package childproc

import (
	"sync"
	"time"
)

// Grace is how long a killed group has between SIGTERM and SIGKILL.
const Grace = 2 * time.Second

var (
	mu   sync.Mutex
	live = map[int]struct{}{} // every tracked group, for Cleanup
)

// Groups is a set of process groups that belong to one owner (one bash
// tool): KillAll ends them together.
type Groups struct {
	mu    sync.Mutex
	pgids map[int]struct{}
}

// Add tracks the process group pgid.
func (g *Groups) Add(pgid int) {
	g.mu.Lock()
	if g.pgids == nil {
		g.pgids = map[int]struct{}{}
	}
	g.pgids[pgid] = struct{}{}
	g.mu.Unlock()
	mu.Lock()
	live[pgid] = struct{}{}
	mu.Unlock()
}

// KillAll terminates every tracked group that still has members: SIGTERM
// now, SIGKILL after Grace, and reaps the members zot adopted. It does not
// wait.
func (g *Groups) KillAll() {
	g.mu.Lock()
	pgids := g.pgids
	g.pgids = nil
	g.mu.Unlock()
	for pgid := range pgids {
		mu.Lock()
		delete(live, pgid)
		mu.Unlock()
		terminateGroup(pgid)
	}
}

// Cleanup kills what is left at exit: every tracked group and, on Linux,
// every descendant of this process. Call it last, after the extensions
// were shut down.
func Cleanup() {
	mu.Lock()
	pgids := live
	live = map[int]struct{}{}
	mu.Unlock()
	for pgid := range pgids {
		killGroupNow(pgid)
	}
	killDescendants()
}
