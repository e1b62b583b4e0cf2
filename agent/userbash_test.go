package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/proctest"
)

// bashHooks is hooks with the user_bash hook.
type bashHooks struct {
	hooks
	mu   sync.Mutex
	seen []agent.UserBashInfo
	fn   func(agent.UserBashInfo) agent.UserBashDecision
}

func (h *bashHooks) BeforeUserBash(_ context.Context, b agent.UserBashInfo) agent.UserBashDecision {
	h.mu.Lock()
	h.seen = append(h.seen, b)
	h.mu.Unlock()
	if h.fn == nil {
		return agent.UserBashDecision{}
	}
	return h.fn(b)
}

func lastUserBash(t *testing.T, evs []agent.Event) *agent.UserBashRun {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == agent.EventUserBash {
			return evs[i].UserBash
		}
	}
	t.Fatalf("no user_bash event in %+v", evs)
	return nil
}

// `!cmd` runs under the bash tool, its output streams, and command and
// output join the conversation: the next model call sees them. `!!cmd`
// runs the same but stays out of it. The hook sees both with the cwd.
func TestUserBashJoinsTheConversation(t *testing.T) {
	h := &bashHooks{}
	cwd := t.TempDir()
	rt, srv := newRuntime(t, func(c *agent.Config) { c.Hooks = h; c.CWD = cwd }, llmtest.TextReply("seen"))
	run := collect(t)

	evs := run(rt.UserBash(context.Background(), "echo visible; echo err >&2; exit 3", false))
	if evs[0].Type != agent.EventUserBashStart || evs[0].UserBash.Command == "" {
		t.Fatalf("first event: %+v", evs[0])
	}
	var streamed string
	for _, e := range evs {
		if e.Type == agent.EventUserBashOutput {
			streamed += e.Text
		}
	}
	if !strings.Contains(streamed, "visible") {
		t.Fatalf("no streamed output: %+v", evs)
	}
	b := lastUserBash(t, evs)
	if b.Output != "visible\nerr" || b.ExitCode != 3 || b.Cancelled || b.Blocked || b.MessageIndex != 0 {
		t.Fatalf("user_bash: %+v", b)
	}
	wire, _ := json.Marshal(agent.Event{Type: agent.EventUserBash, UserBash: b})
	if !strings.Contains(string(wire), `"exit_code":3`) || !strings.Contains(string(wire), `"message_index":0`) {
		t.Fatalf("wire: %s", wire)
	}

	evs = run(rt.UserBash(context.Background(), "echo secret-excluded", true))
	if b := lastUserBash(t, evs); b.Output != "secret-excluded" || b.MessageIndex != -1 || !b.ExcludeFromContext {
		t.Fatalf("!!: %+v", b)
	}
	if n := len(rt.Messages()); n != 1 {
		t.Fatalf("%d messages after ! and !!; want 1", n)
	}
	if len(h.seen) != 2 || h.seen[0].CWD != cwd || h.seen[0].ExcludeFromContext || !h.seen[1].ExcludeFromContext {
		t.Fatalf("the hook saw %+v", h.seen)
	}

	run(rt.Prompt(context.Background(), "what did it print?", nil))
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	body, _ := json.Marshal(reqs[0].Body)
	if !strings.Contains(string(body), "echo visible") || !strings.Contains(string(body), "exited with code 3") {
		t.Fatalf("the model did not see the command: %s", body)
	}
	if strings.Contains(string(body), "secret-excluded") {
		t.Fatalf("the model saw the !! command: %s", body)
	}
}

// The hook may block the command (it does not run) or answer it itself
// (pi's full replacement: its result is shown and kept).
func TestUserBashHookBlocksOrReplaces(t *testing.T) {
	cwd := t.TempDir()
	h := &bashHooks{fn: func(b agent.UserBashInfo) agent.UserBashDecision {
		if strings.Contains(b.Command, "rm") {
			return agent.UserBashDecision{Block: true, Reason: "no rm here", Extension: "guard"}
		}
		if strings.Contains(b.Command, "remote") {
			return agent.UserBashDecision{Result: &tools.UserRunResult{Output: "from ssh", ExitCode: 0}, Extension: "ssh"}
		}
		return agent.UserBashDecision{}
	}}
	rt, _ := newRuntime(t, func(c *agent.Config) { c.Hooks = h; c.CWD = cwd })
	run := collect(t)
	b := lastUserBash(t, run(rt.UserBash(context.Background(), "touch made && rm made", false)))
	if !b.Blocked || b.Reason != "no rm here" || b.Extension != "guard" || b.MessageIndex != -1 {
		t.Fatalf("blocked: %+v", b)
	}
	if _, err := os.Stat(filepath.Join(cwd, "made")); err == nil {
		t.Fatal("a blocked command ran")
	}
	b = lastUserBash(t, run(rt.UserBash(context.Background(), "remote uptime", false)))
	if b.Output != "from ssh" || b.Extension != "ssh" || b.MessageIndex != 0 {
		t.Fatalf("replaced: %+v", b)
	}
	if msgs := rt.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Content[0].Text, "from ssh") {
		t.Fatalf("messages: %+v", msgs)
	}
}

// Cancel stops the command with its process group (a background child
// too); a cancelled command is not added to the conversation.
func TestUserBashCancelKillsTheTree(t *testing.T) {
	cwd := t.TempDir()
	rt, _ := newRuntime(t, func(c *agent.Config) { c.CWD = cwd })
	ch, err := rt.UserBash(context.Background(), "sleep 300 & echo $! > pid.tmp && mv pid.tmp pid; wait", false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rt.Prompt(context.Background(), "meanwhile", nil); err != agent.ErrBusy {
		t.Fatalf("a prompt during a user command: %v", err)
	}
	var pid int
	for pid == 0 {
		if b, err := os.ReadFile(filepath.Join(cwd, "pid")); err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(5 * time.Millisecond)
	}
	rt.Cancel()
	b := lastUserBash(t, drain(t, ch, nil))
	if !b.Cancelled || b.MessageIndex != -1 {
		t.Fatalf("cancelled: %+v", b)
	}
	proctest.WaitGone(t, pid, "the user's command's background child")
	if n := len(rt.Messages()); n != 0 {
		t.Fatalf("%d messages after a cancelled command", n)
	}
}

// Bad input is refused with what to do.
func TestUserBashBadInput(t *testing.T) {
	rt, _ := newRuntime(t, nil)
	if _, err := rt.UserBash(context.Background(), "  ", false); err == nil || !strings.Contains(err.Error(), "needs a command") {
		t.Fatalf("empty: %v", err)
	}
	rt2, _ := newRuntime(t, func(c *agent.Config) { c.Tools = []string{"read"} })
	if _, err := rt2.UserBash(context.Background(), "true", false); err == nil || !strings.Contains(err.Error(), "bash tool is not enabled") {
		t.Fatalf("without bash: %v", err)
	}
}

// zot's provider key printed by a user's command is redacted in the event
// and in the conversation, as in a tool result.
func TestUserBashRedactsTheKey(t *testing.T) {
	const key = "sk-user-bash-secret-4242"
	rt, _ := newRuntime(t, func(c *agent.Config) { c.APIKey = key })
	b := lastUserBash(t, collect(t)(rt.UserBash(context.Background(), "echo "+key, false)))
	if strings.Contains(b.Output, key) || !strings.Contains(b.Output, "[REDACTED]") {
		t.Fatalf("output: %q", b.Output)
	}
	if msgs := rt.Messages(); len(msgs) != 1 || strings.Contains(msgs[0].Content[0].Text, key) {
		t.Fatalf("the conversation: %+v", msgs)
	}
}
