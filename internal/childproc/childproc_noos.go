//go:build !unix && !windows

package childproc

import (
	"os"
	"os/exec"
)

// Group is just the command's process where the platform has neither
// process groups nor job objects.
type Group struct{ p *os.Process }

// Prepare does nothing here.
func Prepare(*exec.Cmd) {}

// Attach returns the command's process.
func Attach(cmd *exec.Cmd) (*Group, error) { return &Group{p: cmd.Process}, nil }

// Alive is false: the command was waited for.
func (g *Group) Alive() bool { return false }

// Stop kills the command.
func (g *Group) Stop() error { return g.p.Kill() }

// Release does nothing.
func (g *Group) Release() {}

func (g *Group) terminate() {}

func (g *Group) killNow() {}
