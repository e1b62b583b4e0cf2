package extensions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/childproc"
	"github.com/zot-editors/zot/internal/secrets"
)

// maxExecOutput bounds what an exec keeps of each stream (the rest is
// dropped, and the stream says so).
const maxExecOutput = 4 << 20

// onExec runs pi's exec (an extension starts a program) under the rules of
// the model's bash tool: the command line is first a bash tool call for
// every guard and the front's approval (a block is exit code 1 with the
// reason on stderr, the program never starts); it then runs in the
// workspace in its own process group, stopped with everything it started
// on cancel (pi's AbortSignal), on its timeout or when the extension dies,
// with zot's credentials removed from its environment.
func (p *proc) onExec(f wire.Frame) {
	res := wire.Frame{Type: wire.TypeActionResult, ID: f.ID}
	defer func() { p.send(res, false) }()
	if f.ID == "" || f.Name == "" {
		res.Error = "exec needs an id and a name (the program)"
		return
	}
	ctx, cancel := context.WithCancel(p.s.h.ctx)
	defer cancel()
	stopDead := context.AfterFunc(deadContext(p), cancel)
	defer stopDead()
	p.mu.Lock()
	if p.dialogCancel == nil {
		p.dialogCancel = map[string]context.CancelFunc{}
	}
	p.dialogCancel[f.ID] = cancel
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.dialogCancel, f.ID)
		p.mu.Unlock()
	}()

	line := shellLine(append([]string{f.Name}, f.Names...))
	args, _ := json.Marshal(map[string]string{"command": line})
	var dec struct {
		block  bool
		reason string
		args   json.RawMessage
	}
	if rc, ok := p.s.h.actions().(RunControl); ok {
		d := rc.CheckTool(ctx, "exec-"+f.ID, "bash", args)
		dec.block, dec.reason, dec.args = d.Block, d.Reason, d.ModifiedArgs
	} else {
		// A front without run control (zot acp): the guards still hold.
		d := p.s.h.BeforeTool(ctx, agent.ToolCallInfo{ID: "exec-" + f.ID, Name: "bash", Args: args})
		dec.block, dec.reason, dec.args = d.Block, d.Reason, d.ModifiedArgs
	}
	if dec.block {
		code := 1
		res.Code, res.Stderr = &code, "blocked: "+dec.reason
		p.log.printf("exec %s: blocked: %s", line, dec.reason)
		return
	}
	name, argv := f.Name, f.Names
	if len(dec.args) > 0 {
		// A guard rewrote the command line: it runs as the guard wrote it.
		var m struct {
			Command string `json:"command"`
		}
		if json.Unmarshal(dec.args, &m) == nil && m.Command != "" && m.Command != line {
			name, argv = "sh", []string{"-c", m.Command}
		}
	}
	if f.TimeoutMS > 0 {
		var c2 context.CancelFunc
		ctx, c2 = context.WithTimeout(ctx, time.Duration(f.TimeoutMS)*time.Millisecond)
		defer c2()
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = p.s.h.o.Cwd
	if f.Cwd != "" {
		cmd.Dir = f.Cwd
	}
	cmd.Env = secrets.ScrubEnv(os.Environ())
	stdout, stderr := &capBuffer{max: maxExecOutput}, &capBuffer{max: maxExecOutput}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	childproc.Prepare(cmd)
	var killed atomic.Bool
	var group *childproc.Group
	attached := make(chan struct{})
	cmd.Cancel = func() error {
		killed.Store(true)
		<-attached
		if group == nil {
			return cmd.Process.Kill()
		}
		return group.Stop()
	}
	cmd.WaitDelay = 2 * time.Second
	if err := childproc.Start(cmd); err != nil {
		close(attached)
		code := 127
		res.Code, res.Stderr = &code, err.Error()
		return
	}
	g, err := childproc.Attach(cmd)
	group = g
	close(attached)
	if err != nil {
		_ = cmd.Wait()
		res.Error = fmt.Sprintf("exec %s: %v", line, err)
		return
	}
	waitErr := cmd.Wait()
	if group.Alive() {
		_ = group.Stop() // what it left running goes with it
	}
	group.Release()
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	if code < 0 && waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		code = 1
	}
	res.Code, res.Killed = &code, killed.Load()
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
}

// shellLine is args as one POSIX shell command line (what a guard sees).
func shellLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
		}) < 0 {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// capBuffer keeps the first max bytes written to it.
type capBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	max     int
	dropped bool
}

func (c *capBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room < len(p) {
		c.dropped = true
		if room > 0 {
			c.b.Write(p[:room])
		}
		return len(p), nil
	}
	c.b.Write(p)
	return len(p), nil
}

func (c *capBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.dropped {
		return c.b.String() + fmt.Sprintf("\n[output past %d bytes dropped]", c.max)
	}
	return c.b.String()
}
