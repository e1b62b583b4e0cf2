package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

// SIGKILL of zot rpc (kill -9, the OOM killer: zot runs none of its
// cleanup) leaves nothing behind (issue 36): not an extension that ignores
// SIGTERM, not the running bash command, not what that command started
// in its process group, in a session of its own (setsid), or with a
// cleared environment (env -i), and not zot's supervisor.
func TestRPCKilledLeavesNoProcess(t *testing.T) {
	testenv.NeedCommand(t, "setsid", "starts a grandchild in its own session")
	command := strings.Join([]string{
		`sh -c 'echo $$ > child.pid; exec sleep 1000' &`,
		`setsid sh -c 'echo $$ > setsid.pid; exec sleep 1000' &`,
		`env -i sh -c 'echo $$ > clean.pid; exec sleep 1000' &`,
		`echo $$ > shell.pid`,
		`wait`,
	}, "\n")
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": command}), llmtest.TextReply("never reached"))
	ext := fakeExt(t)
	e.installGlobalExt("stubborn", map[string]any{"exec": ext, "args": []string{"-name", "stubborn", "-ignore-shutdown"}})
	p := e.startRPC(nil)
	zot := p.cmd.Process.Pid
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "run it"})
	p.until(isType("tool_call"))
	pids := map[string]int{}
	for _, name := range []string{"shell", "child", "setsid", "clean"} {
		pids["the command's "+name] = waitPIDFile(t, filepath.Join(e.cwd, name+".pid"))
	}
	pids["the extension"] = waitProcess(t, zot, ext)
	for _, pid := range descendantsOf(zot) {
		pids["zot's descendant "+strconv.Itoa(pid)] = pid
	}

	t.Cleanup(func() { // a failed test leaves nothing either
		for _, pid := range pids {
			if proctest.Alive(pid) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.rest(30 * time.Second) // stdout closes: zot is gone
	for what, pid := range pids {
		proctest.WaitGone(t, pid, what+" after zot was SIGKILLed")
	}
}

// waitProcess waits, within a bound that catches a hang, for a descendant
// of root running the executable exe and returns its pid.
func waitProcess(t *testing.T, root int, exe string) int {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, pid := range descendantsOf(root) {
			if path, err := os.Readlink("/proc/" + strconv.Itoa(pid) + "/exe"); err == nil && path == exe {
				return pid
			}
		}
	}
	t.Fatalf("no process of %s below %d", exe, root)
	return 0
}

// descendantsOf lists the processes below root (through /proc's ppids).
func descendantsOf(root int) []int {
	ents, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 1 {
			if ppid, err := strconv.Atoi(f[1]); err == nil {
				children[ppid] = append(children[ppid], pid)
			}
		}
	}
	var out []int
	for queue := []int{root}; len(queue) > 0; queue = queue[1:] {
		out = append(out, children[queue[0]]...)
		queue = append(queue, children[queue[0]]...)
	}
	return out
}
