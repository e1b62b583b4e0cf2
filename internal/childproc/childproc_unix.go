//go:build unix

package childproc

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Group is a command's process group: the command leads it, and what it
// starts joins it unless it calls setsid.
type Group struct{ pgid int }

// Prepare makes cmd the leader of a new process group. Call it before
// cmd.Start.
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// Attach returns the group of a command started after Prepare.
func Attach(cmd *exec.Cmd) (*Group, error) {
	return &Group{pgid: cmd.Process.Pid}, nil
}

// Alive reports whether the group has any member left.
func (g *Group) Alive() bool {
	err := unix.Kill(-g.pgid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// Stop ends a running command and its group: SIGTERM now, SIGKILL to
// whatever is left after Grace. It returns os.ErrProcessDone when the
// group was already gone. Use it as exec.Cmd.Cancel.
func (g *Group) Stop() error {
	pgid := g.pgid
	err := unix.Kill(-pgid, unix.SIGTERM)
	time.AfterFunc(Grace, func() { _ = unix.Kill(-pgid, unix.SIGKILL) })
	if errors.Is(err, unix.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}

// Release lets go of a group that has no members left.
func (g *Group) Release() {}

func (g *Group) terminate() {
	pgid := g.pgid
	if !g.Alive() {
		return
	}
	_ = unix.Kill(-pgid, unix.SIGTERM)
	go func() {
		deadline := time.Now().Add(Grace)
		killed := false
		for g.Alive() {
			if reapGroup(pgid) {
				continue
			}
			if !killed && time.Now().After(deadline) {
				_ = unix.Kill(-pgid, unix.SIGKILL)
				killed = true
			}
			if killed && time.Now().After(deadline.Add(Grace)) {
				return // members that are not zot's children: their parents reap them
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
}

func (g *Group) killNow() {
	_ = unix.Kill(-g.pgid, unix.SIGKILL)
}

// reapGroup collects one exited member of pgid that zot adopted (as the
// subreaper); the group's leader, the shell, was already waited for by
// os/exec, so no other waiter is robbed.
func reapGroup(pgid int) bool {
	var ws unix.WaitStatus
	pid, err := unix.Wait4(-pgid, &ws, unix.WNOHANG, nil)
	return err == nil && pid > 0
}
