package tools

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"
)

// ExecResult is a command run for an extension (SEP's exec/run): its
// output with stdout and stderr apart, and its exit code (-1 when it was
// killed by a signal, a timeout or a cancel).
type ExecResult struct {
	Stdout   string
	Stderr   string
	ExitCode int
}

// Execer runs a command under the bash tool's rules (the bash tool
// implements it): the same shell, workspace, environment scrubbing and
// process-group handling as a model's bash call, with stdout and stderr
// kept apart.
type Execer interface {
	Exec(ctx context.Context, command string, timeout time.Duration) (ExecResult, error)
}

// MaxExecOutput bounds each of an exec's streams; the rest is dropped
// with a note (an extension reading a huge output should redirect it to
// a file).
const MaxExecOutput = 1 << 20

// Exec runs command as the bash tool would (after saving the editor's
// buffers). A command that ran and failed is a result with its exit code;
// the error is for one that could not run or was killed.
func (t *bashTool) Exec(ctx context.Context, command string, timeout time.Duration) (ExecResult, error) {
	if timeout <= 0 {
		timeout = DefaultBashTimeout
	}
	var notice *SyncNotice
	if err := t.ws.Sync(ctx); err != nil && !errors.As(err, &notice) {
		return ExecResult{}, fmt.Errorf("could not save the editor's buffers to disk before running the command: %w", err)
	}
	var stdout, stderr cappedBuffer
	sp := t.spawn(ctx, command, min(timeout, maxBashTimeout), &stdout, &stderr, nil)
	res := ExecResult{Stdout: stdout.String(), Stderr: stderr.String(), ExitCode: -1}
	switch {
	case sp.startErr != "":
		return ExecResult{}, errors.New(sp.startErr)
	case sp.killed && ctx.Err() != nil:
		return res, fmt.Errorf("the command was cancelled; it and its child processes were killed")
	case sp.killed:
		return res, fmt.Errorf("the command timed out after %s and was killed with its child processes", fmtSeconds(timeout))
	case sp.state == nil:
		return res, fmt.Errorf("the command failed: %v", sp.waitErr)
	}
	if ws, ok := sp.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return res, fmt.Errorf("the command was killed by signal %v", ws.Signal())
	}
	res.ExitCode = sp.state.ExitCode()
	return res, nil
}

// cappedBuffer keeps the first MaxExecOutput bytes written to it.
type cappedBuffer struct {
	mu      sync.Mutex
	b       []byte
	dropped int
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p) // all of it is taken: a short write would stop the copy and stall the command
	if room := MaxExecOutput - len(c.b); room < len(p) {
		c.dropped += len(p) - room
		p = p[:room]
	}
	c.b = append(c.b, p...)
	return n, nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped > 0 {
		return fmt.Sprintf("%s\n[%d more bytes dropped: the limit is %d]", c.b, c.dropped, MaxExecOutput)
	}
	return string(c.b)
}

// UserRunResult is a command the user typed (pi's `!cmd`, RPC's bash):
// pi's BashResult. Output is stdout and stderr interleaved, cut as a
// model's bash result is (Truncated, Note says where the rest went).
type UserRunResult struct {
	Output    string
	ExitCode  int // -1 when it was killed (Cancelled) or never exited
	Cancelled bool
	Truncated bool
	// Note is what the bash tool adds to its output: the truncation
	// notice (with the full output's file), or why the command failed.
	Note string
}

// UserRunner runs a user's own command under the bash tool's rules (the
// bash tool implements it); progress gets its output line by line.
type UserRunner interface {
	RunUser(ctx context.Context, command string, progress func(string)) (UserRunResult, error)
}

// RunUser runs command as the bash tool would, without its timeout: the
// user typed it and stops it with abort (the whole process group is
// killed, as for a model's call). The error is for one that never ran.
func (t *bashTool) RunUser(ctx context.Context, command string, progress func(string)) (UserRunResult, error) {
	var notice *SyncNotice
	if err := t.ws.Sync(ctx); err != nil && !errors.As(err, &notice) {
		return UserRunResult{}, fmt.Errorf("could not save the editor's buffers to disk before running the command: %w", err)
	}
	if progress == nil {
		progress = func(string) {}
	}
	out := newOutputCollector(progress)
	defer out.cleanup()
	sp := t.spawn(ctx, command, maxBashTimeout, out, out, out.startProgress)
	if sp.startErr != "" {
		return UserRunResult{}, errors.New(sp.startErr)
	}
	out.finish()
	text, note := out.result()
	res := UserRunResult{Output: text, ExitCode: -1, Truncated: note != "", Note: note}
	switch {
	case sp.killed && ctx.Err() != nil:
		res.Cancelled = true
	case sp.killed:
		res.Note = joinNote(note, fmt.Sprintf("The command was stopped after %s.", fmtSeconds(maxBashTimeout)))
	case sp.state == nil:
		res.Note = joinNote(note, fmt.Sprintf("The command failed: %v", sp.waitErr))
	default:
		if ws, ok := sp.state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Note = joinNote(note, fmt.Sprintf("The command was killed by signal %v.", ws.Signal()))
		} else {
			res.ExitCode = sp.state.ExitCode()
		}
	}
	return res, nil
}

// joinNote adds status to a truncation note.
func joinNote(note, status string) string {
	if note == "" {
		return status
	}
	return note + "\n" + status
}
