package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/internal/proctest"
)

// An extension's exec is a bash call to the hooks (a guard may block or
// rewrite it, and the call names the extension), and runs under the bash
// tool's process rules: a cancel kills the command and what it started.
func TestExecThroughHooksAndProcessRules(t *testing.T) {
	var seen []agent.ToolCallInfo
	h := &hooks{tool: func(c agent.ToolCallInfo) agent.ToolDecision {
		seen = append(seen, c)
		switch {
		case strings.Contains(string(c.Args), "forbidden"):
			return agent.ToolDecision{Block: true, Reason: "no"}
		case strings.Contains(string(c.Args), "rewrite me"):
			return agent.ToolDecision{ModifiedArgs: json.RawMessage(`{"command":"echo rewritten"}`)}
		}
		return agent.ToolDecision{}
	}}
	cwd := t.TempDir()
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h; c.CWD = cwd })
	ctx := context.Background()

	res, err := rt.Exec(ctx, "ext", "echo out; echo err >&2; exit 4", 0)
	if err != nil || res.Stdout != "out\n" || res.Stderr != "err\n" || res.ExitCode != 4 {
		t.Fatalf("exec: %+v, %v", res, err)
	}
	if len(seen) != 1 || seen[0].Name != "bash" || seen[0].Requester != "ext" || string(seen[0].Args) != `{"command":"echo out; echo err \u003e\u00262; exit 4"}` {
		t.Fatalf("the hooks saw %+v", seen)
	}
	if _, err := rt.Exec(ctx, "ext", "echo forbidden", 0); err == nil || err.Error() != "blocked: no" {
		t.Fatalf("a blocked exec: %v", err)
	}
	if res, err := rt.Exec(ctx, "ext", "echo rewrite me", 0); err != nil || res.Stdout != "rewritten\n" {
		t.Fatalf("a rewritten exec: %+v, %v", res, err)
	}

	// A cancel stops the whole process group: the background sleep too.
	pidFile := filepath.Join(cwd, "pid")
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := rt.Exec(cctx, "ext", "sleep 300 & echo $! > pid.tmp && mv pid.tmp pid; wait", 0)
		done <- err
	}()
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(pidFile); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("a cancelled exec: %v", err)
	}
	proctest.WaitGone(t, pid, "the exec's background child")
}

// Without the bash tool (--tools), an extension cannot run commands.
func TestExecNeedsTheBashTool(t *testing.T) {
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Tools = []string{"read"} })
	if _, err := rt.Exec(context.Background(), "ext", "true", 0); err == nil || !strings.Contains(err.Error(), "bash tool is not enabled") {
		t.Fatalf("exec without bash: %v", err)
	}
}
