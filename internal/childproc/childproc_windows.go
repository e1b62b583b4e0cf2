package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Group is a Job Object holding the command and every process it starts
// (children join their parent's job). The job is created with
// kill-on-close: when its last handle closes — Cleanup, or zot's own exit
// however it happens — Windows ends every process in it.
type Group struct {
	mu  sync.Mutex
	job windows.Handle // 0 once closed
}

// Prepare creates cmd suspended, so Attach can put it in its job before it
// runs its first instruction (and before it can start anything outside
// the job).
func Prepare(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_SUSPENDED
}

// Attach puts a command started after Prepare into a new kill-on-close job
// and lets it run. If the job cannot be set up the command is killed: a
// command whose children could outlive zot is not run.
func Attach(cmd *exec.Cmd) (*Group, error) {
	pid := uint32(cmd.Process.Pid)
	job, err := newKillOnCloseJob()
	if err == nil {
		err = assign(job, pid)
		if err != nil {
			windows.CloseHandle(job)
		}
	}
	if err != nil {
		_ = cmd.Process.Kill()
		return nil, fmt.Errorf("could not put the command in a job object: %w", err)
	}
	if err := resume(pid); err != nil {
		windows.CloseHandle(job) // kill-on-close ends the suspended process
		return nil, fmt.Errorf("could not resume the command: %w", err)
	}
	return &Group{job: job}, nil
}

func newKillOnCloseJob() (windows.Handle, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{}
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return 0, err
	}
	return job, nil
}

func assign(job windows.Handle, pid uint32) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, pid)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(h)
	return windows.AssignProcessToJobObject(job, h)
}

// resume starts the threads of a process created suspended (it has one).
func resume(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	resumed := false
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return err
		}
		resumed = true
	}
	if !resumed {
		return errors.New("no thread of the process was found")
	}
	return nil
}

// jobAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION.
type jobAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// Alive reports whether any process in the job still runs.
func (g *Group) Alive() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return false
	}
	var info jobAccounting
	err := windows.QueryInformationJobObject(g.job, windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return err == nil && info.ActiveProcesses > 0
}

// Stop ends every process in the job at once (Windows has no SIGTERM for
// console programs that are not attached to a console of ours). Use it as
// exec.Cmd.Cancel.
func (g *Group) Stop() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job == 0 {
		return os.ErrProcessDone
	}
	return windows.TerminateJobObject(g.job, 1)
}

// Release closes the job; call it only when no process is left in it (a
// live one would be killed).
func (g *Group) Release() { g.killNow() }

func (g *Group) terminate() { g.killNow() }

func (g *Group) killNow() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.job != 0 {
		_ = windows.TerminateJobObject(g.job, 1)
		windows.CloseHandle(g.job)
		g.job = 0
	}
}
