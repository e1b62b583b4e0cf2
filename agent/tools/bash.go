package tools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zot-editors/zot/internal/childproc"
	"github.com/zot-editors/zot/internal/secrets"
)

// Bash tool tuning.
const (
	// DefaultBashTimeout is used when the model gives no timeout.
	DefaultBashTimeout = 120 * time.Second
	// maxBashTimeout bounds what the model may ask for.
	maxBashTimeout = 24 * time.Hour
	// killGrace is how long a cancelled command's process group has
	// between SIGTERM and SIGKILL; also how long a finished command's
	// background children may hold its output open before it is closed.
	killGrace = 2 * time.Second
	// progressInterval spaces progress updates (at most ~20 a second).
	progressInterval = 50 * time.Millisecond
	// maxPendingProgress bounds unsent progress text; older lines are
	// dropped from progress (never from the result) when output floods.
	maxPendingProgress = 64 * 1024
)

type bashTool struct {
	toolInfo
	ws    Workspace
	shell shell
	// background holds the process groups (job objects on Windows) of
	// finished commands whose background jobs still run; they are killed
	// when the run ends.
	background childproc.Groups
}

// EndRun kills the background jobs the run's commands left behind.
func (t *bashTool) EndRun() { t.background.KillAll() }

// NewBash returns the bash tool, running commands with the host's shell
// (see findShell); its description names that shell.
func NewBash(ws Workspace) Tool { return newBashWith(ws, hostShell()) }

func newBashWith(ws Workspace, sh shell) *bashTool {
	return &bashTool{toolInfo: declare[bashArgs]("bash", sh.description(), sh.schema()), ws: ws, shell: sh}
}

type bashArgs struct {
	Command string  `json:"command"`
	Timeout flexInt `json:"timeout"`
}

func (t *bashTool) Run(ctx context.Context, call Call) Result {
	var a bashArgs
	if r, ok := decodeArgs(t.name, call.Args, &a, t.schema); !ok {
		return r
	}
	if strings.TrimSpace(a.Command) == "" {
		return ErrorResult(`bash needs a command, e.g. {"command": "go test ./..."}.`)
	}
	if a.Timeout < 0 {
		return ErrorResult("timeout must be a positive number of seconds.")
	}
	timeout := DefaultBashTimeout
	if a.Timeout > 0 {
		timeout = min(time.Duration(a.Timeout)*time.Second, maxBashTimeout)
	}
	var notice *SyncNotice
	if err := t.ws.Sync(ctx); errors.As(err, &notice) {
		res := t.run(ctx, a.Command, timeout, call.Progress)
		if len(res.Content) == 1 {
			res.Content[0].Text += "\n\n[" + notice.Text + "]"
		}
		return res
	} else if err != nil {
		if ctx.Err() != nil {
			return ErrorResult("The command was cancelled before it started.")
		}
		return ErrorResult(fmt.Sprintf("Could not save the editor's buffers to disk before running the command: %v. Ask the user to save their files, then try again.", err))
	}
	return t.run(ctx, a.Command, timeout, call.Progress)
}

// run runs command once the disk agrees with the workspace.
func (t *bashTool) run(ctx context.Context, command string, timeout time.Duration, progress func(string)) Result {
	if progress == nil {
		progress = func(string) {}
	}
	out := newOutputCollector(progress)
	defer out.cleanup()

	sp := t.spawn(ctx, command, timeout, out, out, out.startProgress)
	if sp.startErr != "" {
		return ErrorResult(sp.startErr)
	}
	out.finish()

	text, note := out.result()
	// Cancel runs only when the context ends before the shell exits; a
	// shell that exited by itself is judged by its exit status even if the
	// deadline passed while its background children held the output.
	switch {
	case sp.killed && ctx.Err() != nil:
		return ErrorResult(joinOutput(text, note, "The command was cancelled; it and its child processes were killed."))
	case sp.killed:
		return ErrorResult(joinOutput(text, note, fmt.Sprintf("The command timed out after %s and was killed with its child processes. If it needs longer, raise timeout; for servers, run them in the background with output redirected to a file (they are killed when your turn ends).", fmtSeconds(timeout))))
	}
	state := sp.state
	if state == nil {
		return ErrorResult(joinOutput(text, note, fmt.Sprintf("The command failed: %v", sp.waitErr)))
	}
	if ws, ok := state.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ErrorResult(joinOutput(text, note, fmt.Sprintf("The command was killed by signal %v.", ws.Signal())))
	}
	if code := state.ExitCode(); code != 0 {
		return ErrorResult(joinOutput(text, note, fmt.Sprintf("The command failed with exit code %d.", code)))
	}
	if errors.Is(sp.waitErr, exec.ErrWaitDelay) {
		note = strings.TrimSpace(note + "\n[background processes kept the output open; what they print from now on is not captured]")
	}
	if text == "" && note == "" {
		return TextResult("(no output)")
	}
	return TextResult(joinOutput(text, note, ""))
}

// spawned is how a command run by spawn ended.
type spawned struct {
	state    *os.ProcessState
	killed   bool   // cancelled or timed out: its process group was stopped
	waitErr  error  // cmd.Wait's error
	startErr string // it never ran: why
}

// spawn runs command under the bash tool's process rules: the host's
// shell in the workspace root, zot's credentials scrubbed from its
// environment, the command and what it starts in one process group (a
// job object on Windows) stopped on cancel or timeout (SIGTERM, SIGKILL
// after childproc.Grace), and background jobs kept for EndRun. started
// runs once the process is attached.
func (t *bashTool) spawn(ctx context.Context, command string, timeout time.Duration, stdout, stderr io.Writer, started func()) spawned {
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(runCtx, t.shell.path, t.shell.argv(command)...)
	cmd.Dir = t.ws.Root()
	// zot's own credentials stay out of the commands the model runs.
	cmd.Env = append(secrets.ScrubEnv(os.Environ()), "PWD="+cmd.Dir, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0")
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// The command and what it starts share a process group (a job object
	// on Windows), so a cancel reaches all of them.
	childproc.Prepare(cmd)
	var killed atomic.Bool
	var group *childproc.Group
	attached := make(chan struct{}) // closed once group is set (or nil on failure)
	cmd.Cancel = func() error {
		killed.Store(true)
		<-attached
		if group == nil {
			return cmd.Process.Kill()
		}
		// Whatever ignores SIGTERM gets SIGKILL after childproc.Grace.
		return group.Stop()
	}
	// Don't wait forever for pipes held open by background children.
	cmd.WaitDelay = killGrace

	if err := childproc.Start(cmd); err != nil {
		return spawned{startErr: fmt.Sprintf("Could not start %s: %v", t.shell.path, err)}
	}
	group, err := childproc.Attach(cmd)
	close(attached)
	if err != nil {
		_ = cmd.Wait()
		return spawned{startErr: fmt.Sprintf("Could not run the command: %v", err)}
	}
	if started != nil {
		started()
	}
	waitErr := cmd.Wait()
	if group.Alive() {
		t.background.Add(group)
	} else {
		group.Release()
	}
	return spawned{state: cmd.ProcessState, killed: killed.Load(), waitErr: waitErr}
}

func fmtSeconds(d time.Duration) string {
	return fmt.Sprintf("%g s", d.Seconds())
}

func joinOutput(text, note, status string) string {
	var parts []string
	if text != "" {
		parts = append(parts, text)
	} else if status != "" {
		parts = append(parts, "(no output)")
	}
	if note != "" {
		parts = append(parts, note)
	}
	if status != "" {
		parts = append(parts, status)
	}
	return strings.Join(parts, "\n\n")
}

// outputCollector receives a command's merged output. It streams complete
// lines to progress at most every progressInterval, keeps a bounded tail
// for the result, and spills everything to a temp file once the output
// outgrows the result limits.
type outputCollector struct {
	progress func(string)

	mu      sync.Mutex
	tail    []byte // all output until spilled; then a rolling tail
	trimmed bool   // tail lost its beginning
	total   int64
	lines   int
	file    *os.File
	fileErr error
	partial []byte          // incomplete last line, for progress
	pending strings.Builder // complete lines not yet sent to progress
	dropped bool            // pending lost lines to maxPendingProgress

	stop chan struct{}
	done chan struct{}
	kept bool // the temp file is referenced by the result
}

func newOutputCollector(progress func(string)) *outputCollector {
	return &outputCollector{progress: progress}
}

func (o *outputCollector) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.total += int64(len(p))
	o.lines += bytes.Count(p, []byte("\n"))

	if o.file == nil && o.fileErr == nil && (o.total > MaxOutputBytes || o.lines >= MaxOutputLines) {
		o.file, o.fileErr = os.CreateTemp("", "zot-bash-*.log")
		if o.fileErr == nil {
			_, o.fileErr = o.file.Write(o.tail)
		}
	}
	if o.file != nil && o.fileErr == nil {
		_, o.fileErr = o.file.Write(p)
	}
	o.tail = append(o.tail, p...)
	if (o.file != nil || o.fileErr != nil) && len(o.tail) > 4*MaxOutputBytes {
		keep := 2 * MaxOutputBytes
		o.tail = append(o.tail[:0], o.tail[len(o.tail)-keep:]...)
		o.trimmed = true
	}

	// Progress: complete lines only; the partial line waits for its end.
	o.partial = append(o.partial, p...)
	if i := bytes.LastIndexByte(o.partial, '\n'); i >= 0 {
		o.pending.Write(o.partial[:i+1])
		o.partial = append(o.partial[:0], o.partial[i+1:]...)
		if o.pending.Len() > maxPendingProgress {
			s := o.pending.String()
			s = s[len(s)-maxPendingProgress/2:]
			if j := strings.IndexByte(s, '\n'); j >= 0 {
				s = s[j+1:]
			}
			o.pending.Reset()
			o.pending.WriteString(s)
			o.dropped = true
		}
	}
	if len(o.partial) > maxPendingProgress {
		// A huge line without an end: pass it on as it is.
		o.pending.Write(o.partial)
		o.pending.WriteByte('\n')
		o.partial = o.partial[:0]
	}
	return len(p), nil
}

// takePending returns the progress text waiting to be sent.
func (o *outputCollector) takePending(final bool) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if final && len(o.partial) > 0 {
		o.pending.Write(o.partial)
		o.partial = nil
	}
	s := o.pending.String()
	o.pending.Reset()
	if o.dropped && s != "" {
		s = "[…]\n" + s
		o.dropped = false
	}
	return strings.ToValidUTF8(strings.TrimSuffix(s, "\n"), "\uFFFD")
}

func (o *outputCollector) startProgress() {
	o.stop = make(chan struct{})
	o.done = make(chan struct{})
	go func() {
		defer close(o.done)
		tick := time.NewTicker(progressInterval)
		defer tick.Stop()
		for {
			select {
			case <-o.stop:
				return
			case <-tick.C:
				if s := o.takePending(false); s != "" {
					o.progress(s)
				}
			}
		}
	}()
}

// finish stops the progress loop and delivers the last lines. Call it
// after Wait, when no more writes can come.
func (o *outputCollector) finish() {
	if o.stop != nil {
		close(o.stop)
		<-o.done
	}
	if s := o.takePending(true); s != "" {
		o.progress(s)
	}
}

// result is the text for the model: the output's tail within the limits,
// and a note when it was cut.
func (o *outputCollector) result() (string, string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	buf := string(o.tail)
	if o.trimmed {
		if i := strings.IndexByte(buf, '\n'); i >= 0 {
			buf = buf[i+1:]
		}
	}
	buf = strings.TrimRight(buf, "\n")
	totalLines := o.lines
	if o.total > 0 && o.tail[len(o.tail)-1] != '\n' {
		totalLines++
	}
	text, shownLines, cut := tailLines(buf, MaxOutputLines, MaxOutputBytes)
	if o.trimmed {
		cut = true
	}
	text = strings.ToValidUTF8(text, "\uFFFD")
	if !cut {
		return text, ""
	}
	note := fmt.Sprintf("[output truncated: showing the last %s of %d (%s of %s)", plural(shownLines, "line"), totalLines, formatSize(int64(len(text))), formatSize(o.total))
	switch {
	case o.fileErr != nil:
		note += fmt.Sprintf("; the full output could not be saved: %v]", o.fileErr)
	case o.file != nil:
		note += fmt.Sprintf("; full output saved to %s]", o.file.Name())
		o.kept = true
	default:
		// Cut by the line limit before the spill threshold: save it now.
		f, err := os.CreateTemp("", "zot-bash-*.log")
		if err == nil {
			_, err = f.Write(o.tail)
		}
		if err != nil {
			note += fmt.Sprintf("; the full output could not be saved: %v]", err)
		} else {
			note += fmt.Sprintf("; full output saved to %s]", f.Name())
		}
		if f != nil {
			f.Close()
		}
	}
	return text, note
}

// cleanup closes the temp file, and removes it when the result does not
// point at it.
func (o *outputCollector) cleanup() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file == nil {
		return
	}
	o.file.Close()
	if !o.kept {
		os.Remove(o.file.Name())
	}
}

// tailLines keeps the end of s within maxLines lines and maxBytes bytes.
// It returns the kept text, how many lines it holds, and whether s was cut.
func tailLines(s string, maxLines, maxBytes int) (string, int, bool) {
	if s == "" {
		return "", 0, false
	}
	start, n := len(s), 0
	for n < maxLines {
		i := strings.LastIndexByte(s[:start], '\n')
		lineStart := i + 1
		if len(s)-lineStart > maxBytes {
			if n == 0 {
				// The last line alone is too long: keep its end.
				cutAt := len(s) - maxBytes
				for cutAt < len(s) && !isRuneStart(s[cutAt]) {
					cutAt++
				}
				return s[cutAt:], 1, true
			}
			break
		}
		start, n = lineStart, n+1
		if i < 0 {
			return s, n, false
		}
		start = i // keep the newline out of the next line's search
	}
	return s[start+1:], n, true
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
