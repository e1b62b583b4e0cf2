//go:build linux

package childproc

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// How no process outlives zot on Linux, even when zot is SIGKILLed (the
// OOM killer, kill -9) and runs none of its own cleanup
// (docs/decisions.md, "Nothing outlives a killed zot"):
//
//   - Every child gets a parent-death signal, SIGKILL. The kernel ties it
//     to the thread that forked the child, not the process, so every child
//     is started from one OS thread that never exits (onStarterThread).
//   - Grandchildren get nothing from that, and once zot is gone they are
//     re-parented to init, out of zot's reach. Their environment marks
//     them: Init puts ZOT_PROCESS_TREE=<random> in zot's environment, which
//     every descendant inherits. A supervisor — zot itself, re-executed,
//     in a session of its own, started with the first child — waits for
//     zot's end (EOF on a pipe only zot holds) and then SIGKILLs every
//     process whose environment carries the mark, and the process group of
//     each (which catches a member that cleared its environment).
//
// A descendant that both clears its environment and leaves its process
// group (setsid, then env -i) escapes; docs/protocol.md says so.

// TreeEnv names the variable whose value marks zot's descendants.
const TreeEnv = "ZOT_PROCESS_TREE"

// supervisorEnv, set in the supervisor's own environment only, makes Init
// run the supervisor instead of returning; its value is the process group
// to spare (zot's: the editor's, often).
const supervisorEnv = "ZOT_CHILDPROC_SUPERVISOR"

var supervisor struct {
	once    sync.Once
	enabled bool     // Init was called: this process is zot
	mark    string   // TreeEnv=value, as found in /proc/PID/environ
	pipe    *os.File // the write end; the supervisor sees EOF when zot is gone
	pid     int
}

// Init makes zot a child subreaper (orphaned descendants are re-parented
// to zot instead of init, so Cleanup still finds them) and marks its
// environment for the supervisor, which starts with the first child. Call
// it first thing in main: in the supervisor's process it runs the
// supervisor and never returns.
func Init() error {
	if v, ok := os.LookupEnv(supervisorEnv); ok {
		spare, _ := strconv.Atoi(v)
		supervise(TreeEnv+"="+os.Getenv(TreeEnv), spare)
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	value := strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(b[:])
	// A nested zot replaces its parent's mark: its own supervisor ends its
	// tree, and the parent's ends the nested zot.
	if err := os.Setenv(TreeEnv, value); err != nil {
		return err
	}
	supervisor.enabled = true
	supervisor.mark = TreeEnv + "=" + value
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// tie gives cmd a parent-death signal and makes sure the supervisor runs
// (once Init was called) and that cmd carries the mark even when its
// environment was built before.
func tie(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if !supervisor.enabled {
		return
	}
	supervisor.once.Do(startSupervisor)
	if cmd.Env != nil {
		cmd.Env = append(cmd.Env, supervisor.mark) // the last value wins
	}
}

// startSupervisor starts zot's supervisor; without one (it could not
// start), the children still have their parent-death signal.
func startSupervisor() {
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command("/proc/self/exe") // this binary, even if replaced on disk since
	cmd.Args = []string{SupervisorName}
	cmd.Env = append(os.Environ(), supervisorEnv+"="+strconv.Itoa(unix.Getpgrp()))
	cmd.Stdin = r // stdout and stderr: /dev/null, so it holds none of zot's pipes
	// Its own session: a signal to zot's process group or terminal does
	// not reach it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return
	}
	// Never waited for: it exits after zot. w stays open for zot's life.
	supervisor.pipe, supervisor.pid = w, cmd.Process.Pid
}

// supervise waits for zot to end, then kills what it left and exits.
func supervise(mark string, spare int) {
	_, _ = io.Copy(io.Discard, os.Stdin)
	if mark != TreeEnv+"=" {
		killMarked(mark, spare)
	}
	os.Exit(0)
}

// killMarked SIGKILLs every process whose environment holds mark, and the
// process group of each (except spare, zot's own), looking again until
// none is left (one may have forked meanwhile).
func killMarked(mark string, spare int) {
	self := os.Getpid()
	for round := 0; round < 200; round++ {
		found := false
		for _, pid := range allPIDs() {
			if pid == self {
				continue
			}
			// A pidfd pins the process: the signal cannot reach another
			// process that took the pid after this one exited.
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				if err != unix.ENOSYS { // Linux before 5.3 has no pidfds
					continue // gone already
				}
				fd = -1
			}
			if !hasMark(pid, mark) {
				if fd >= 0 {
					unix.Close(fd)
				}
				continue
			}
			found = true
			if pgid, err := unix.Getpgid(pid); err == nil && pgid > 1 && pgid != spare && pgid != self {
				_ = unix.Kill(-pgid, unix.SIGKILL)
			}
			if fd >= 0 {
				_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
				unix.Close(fd)
			} else {
				_ = unix.Kill(pid, unix.SIGKILL)
			}
		}
		if !found {
			return
		}
		time.Sleep(10 * time.Millisecond) // let the killed exit before looking again
	}
}

func allPIDs() []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	pids := make([]int, 0, len(ents))
	for _, e := range ents {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// hasMark reports whether pid's environment (as it was exec'd; a zombie
// has none) holds the entry mark. Another user's processes cannot be read,
// and are not zot's.
func hasMark(pid int, mark string) bool {
	env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
	if err != nil {
		return false
	}
	for _, kv := range bytes.Split(env, []byte{0}) {
		if string(kv) == mark {
			return true
		}
	}
	return false
}

// starter is the OS thread every child is started from. Its goroutine
// locks it and never returns, so the runtime never ends the thread (Go
// ends a thread only when a goroutine exits while locked to it): the
// children's parent-death signal fires when zot ends, not before.
var starter struct {
	once sync.Once
	jobs chan func()
}

func onStarterThread(start func() error) error {
	starter.once.Do(func() {
		starter.jobs = make(chan func())
		go starterLoop()
	})
	done := make(chan error, 1)
	starter.jobs <- func() {
		defer func() {
			if r := recover(); r != nil {
				done <- fmt.Errorf("starting a process: %v", r)
			}
		}()
		done <- start()
	}
	return <-done
}

func starterLoop() {
	runtime.LockOSThread() // never unlocked: see starter
	for job := range starter.jobs {
		job()
	}
}
