//go:build unix

package acp_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
	"github.com/zot-editors/zot/internal/mcptest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

// choose answers a permission request with the option named name.
func choose(r sdk.RequestPermissionRequest, name string) sdk.RequestPermissionOutcome {
	for _, o := range r.Options {
		if o.Name == name {
			return sdk.NewRequestPermissionOutcomeSelected(o.OptionId)
		}
	}
	return sdk.NewRequestPermissionOutcomeCancelled()
}

// toolCallIDs are the ids of the tool_call updates of kind k, in order.
func (c *client) toolCallIDs(k sdk.ToolKind) []sdk.ToolCallId {
	var out []sdk.ToolCallId
	for _, u := range c.allUpdates() {
		if u.ToolCall != nil && u.ToolCall.Kind == k {
			out = append(out, u.ToolCall.ToolCallId)
		}
	}
	return out
}

// The permission-gate example asks with ui_request select: zot puts it to
// the user as session/request_permission on the bash tool call, one
// option per choice. "Allow once" runs the command; "Deny" blocks it and
// the model is told.
func TestExtensionUIRequestAsksPermission(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.TextReply("ok"))
	gate := examplestest.Build(t, "permission-gate")
	os.MkdirAll(filepath.Join(e.root, "build"), 0o755)
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	// auto: zot itself does not ask about bash, only the gate does.
	p := e.start("--ext", gate, "--mode", "auto")
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		if strings.Contains(jsonOf(r.ToolCall.Content), "rm -rf keep") {
			return choose(r, "Deny")
		}
		return choose(r, "Allow once")
	}
	s := c.newSession(e.root)
	if r := c.mustPrompt(s.SessionId, "clean up"); r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q", r.StopReason)
	}
	if _, err := os.Stat(filepath.Join(e.root, "build")); !os.IsNotExist(err) {
		t.Errorf("build survives the allowed rm -rf: %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Errorf("keep is gone after the user denied: %v", err)
	}
	c.mu.Lock()
	perms := append([]sdk.RequestPermissionRequest(nil), c.perms...)
	c.mu.Unlock()
	calls := c.toolCallIDs(sdk.ToolKindExecute)
	if len(perms) != 2 || len(calls) != 2 {
		t.Fatalf("%d permission requests for %d bash calls; want 2 and 2: %s", len(perms), len(calls), jsonOf(perms))
	}
	for i, r := range perms {
		var names []string
		for _, o := range r.Options {
			names = append(names, o.Name)
		}
		if got := strings.Join(names, "|"); got != "Deny|Allow once|Always allow this command" {
			t.Errorf("request %d options %q; want one per choice", i, got)
		}
		if r.ToolCall.ToolCallId != calls[i] {
			t.Errorf("request %d is about tool call %s; want the bash call %s", i, r.ToolCall.ToolCallId, calls[i])
		}
		if !strings.Contains(jsonOf(r.ToolCall.Content), "[permission-gate]") || !strings.Contains(jsonOf(r.Meta), `"extension":"permission-gate"`) {
			t.Errorf("request %d does not name the extension: %s", i, jsonOf(r))
		}
	}
	if !strings.Contains(jsonOf(perms[1].ToolCall.Content), "Allow this command?") {
		t.Errorf("the question is not shown: %s", jsonOf(perms[1].ToolCall.Content))
	}
	if !strings.Contains(lastRequest(e), "the user denied running: rm -rf keep") {
		t.Errorf("the model was not told of the denial: %s", lastRequest(e))
	}
}

// A question the user has not answered yet is withdrawn — the request's
// context on the client is cancelled — when the run is cancelled, and
// when the extension asking dies; the command does not run either way.
func TestExtensionUIRequestWithdrawn(t *testing.T) {
	for _, how := range []string{"session/cancel", "the extension dies"} {
		t.Run(strings.NewReplacer(" ", "_", "/", "_").Replace(how), func(t *testing.T) {
			if how != "session/cancel" && runtime.GOOS != "linux" {
				testenv.Skip(t, "finds the extension's process through /proc")
			}
			e := newEnv(t,
				llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
				llmtest.TextReply("ok"))
			gate := examplestest.Build(t, "permission-gate")
			os.MkdirAll(filepath.Join(e.root, "build"), 0o755)
			p := e.start("--ext", gate, "--mode", "auto")
			c, _ := e.connect(p, sdk.ClientCapabilities{})
			opened, ended := make(chan struct{}), make(chan error, 1)
			c.permitCtx = func(ctx context.Context, r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
				close(opened)
				select {
				case <-ctx.Done():
					ended <- ctx.Err()
				case <-time.After(waitTimeout):
					ended <- nil
				}
				return sdk.NewRequestPermissionOutcomeCancelled()
			}
			s := c.newSession(e.root)
			answer := make(chan sdk.PromptResponse, 1)
			go func() {
				r, err := c.prompt(s.SessionId, "clean up")
				if err != nil {
					t.Errorf("session/prompt: %v", err)
				}
				answer <- r
			}()
			select {
			case <-opened:
			case <-time.After(waitTimeout):
				t.Fatalf("the gate's question never reached the client; updates: %s", c.dump())
			}
			want := sdk.StopReasonCancelled
			if how == "session/cancel" {
				ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
				defer cancel()
				if err := c.conn.Cancel(ctx, sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
					t.Fatal(err)
				}
			} else {
				want = sdk.StopReasonEndTurn // the gate fails closed; the model goes on
				killed := 0
				for _, pid := range children(p.cmd.Process.Pid) {
					if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); strings.HasSuffix(exe, "permission-gate") {
						syscall.Kill(pid, syscall.SIGKILL)
						killed++
					}
				}
				if killed != 1 {
					t.Fatalf("found %d permission-gate processes under zot", killed)
				}
			}
			if err := <-ended; err == nil {
				t.Fatalf("the permission request stayed open after %s", how)
			}
			if r := <-answer; r.StopReason != want {
				t.Errorf("stopReason %q; want %q", r.StopReason, want)
			}
			if _, err := os.Stat(filepath.Join(e.root, "build")); err != nil {
				t.Errorf("the unanswered command ran: %v", err)
			}
		})
	}
}

// One extension host per workspace and process: two sessions share one
// extension process; a notice goes to the session whose command caused
// it; closing one session leaves the extension to the other, closing the
// last stops it.
func TestExtensionHostSharedAcrossSessions(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Skip(t, "finds the extension's process through /proc")
	}
	e := newEnv(t)
	p := e.start("--ext", e.installExt("lspext"))
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s1 := c.newSession(e.root)
	s2 := c.newSession(e.root)
	for _, s := range []sdk.SessionId{s1.SessionId, s2.SessionId} {
		c.waitNotification("the extension's commands in "+string(s), func(n sdk.SessionNotification) bool {
			return n.SessionId == s && n.Update.AvailableCommandsUpdate != nil && strings.Contains(jsonOf(n.Update.AvailableCommandsUpdate), `"warn"`)
		})
	}
	exts := func() []int {
		var out []int
		for _, pid := range children(p.cmd.Process.Pid) {
			if exe, _ := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "exe")); exe == extBin {
				out = append(out, pid)
			}
		}
		return out
	}
	first := exts()
	if len(first) != 1 {
		t.Fatalf("%d lspext processes for two sessions; want 1", len(first))
	}
	c.mustPrompt(s2.SessionId, "/warn from two")
	c.waitNotification("the notice in the second session", func(n sdk.SessionNotification) bool {
		return n.SessionId == s2.SessionId && n.Update.AgentMessageChunk != nil && strings.Contains(jsonOf(n.Update.AgentMessageChunk), "from two")
	})
	for _, n := range c.notifications() {
		if n.SessionId != s2.SessionId && strings.Contains(jsonOf(n.Update), "from two") {
			t.Errorf("the notice of a command in %s went to %s", s2.SessionId, n.SessionId)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s1.SessionId}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	c.mustPrompt(s2.SessionId, "/warn still here")
	c.waitNotification("a notice after the first session closed", func(n sdk.SessionNotification) bool {
		return n.SessionId == s2.SessionId && strings.Contains(jsonOf(n.Update), "still here")
	})
	if now := exts(); len(now) != 1 || now[0] != first[0] {
		t.Fatalf("lspext processes %v after closing one session; want the same %v", now, first)
	}
	if _, err := c.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s2.SessionId}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	proctest.WaitGone(t, first[0], "the extension after the last session closed")
}

// Untrusted project extensions and project MCP servers are asked about
// with session/request_permission showing what would run. A yes is
// recorded in zot's trust store (a later zot does not ask again); a no
// keeps it off with a message that says how to trust it.
func TestProjectTrustAsked(t *testing.T) {
	e := newEnv(t,
		llmtest.TextReply("hi"),
		llmtest.ToolReply("mcp__fake__add_tool", map[string]any{}),
		llmtest.TextReply("done"))
	e.write(".zot/extensions/lspext/extension.json", jsonOf(map[string]any{"name": "lspext", "version": "1.0.0", "exec": extBin, "args": []string{"lspext"}}))
	fake := mcptest.Fake(t)
	e.write(".mcp.json", jsonOf(map[string]any{"mcpServers": map[string]any{"fake": map[string]any{"command": fake, "args": []string{"--flag", "two words"}}}}))
	trustAnswers := func(c *client, mcpAnswer string) {
		c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
			if title := *r.ToolCall.Title; strings.Contains(title, "MCP server") {
				return choose(r, mcpAnswer)
			}
			return choose(r, "Trust and run")
		}
	}
	hasWarn := func(s sdk.SessionId) func(sdk.SessionNotification) bool {
		return func(n sdk.SessionNotification) bool {
			return n.SessionId == s && n.Update.AvailableCommandsUpdate != nil && strings.Contains(jsonOf(n.Update.AvailableCommandsUpdate), `"warn"`)
		}
	}

	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	trustAnswers(c, "Don't run")
	s := c.newSession(e.root)
	c.waitNotification("the trusted project extension's commands", hasWarn(s.SessionId))
	c.waitUpdate("the refusal of the MCP server", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed &&
			strings.Contains(jsonOf(u.ToolCallUpdate.Content), "Not trusted: the MCP server fake stays off (`zot mcp trust fake` trusts it)")
	})
	c.mu.Lock()
	perms := append([]sdk.RequestPermissionRequest(nil), c.perms...)
	c.mu.Unlock()
	if len(perms) != 2 {
		t.Fatalf("%d permission requests; want one per untrusted thing: %s", len(perms), jsonOf(perms))
	}
	for _, r := range perms {
		shown := jsonOf(r.ToolCall.Content)
		want := []string{extBin + " lspext", filepath.Join(e.root, ".zot", "extensions", "lspext")}
		if strings.Contains(*r.ToolCall.Title, "MCP server") {
			want = []string{fake, "--flag", "two words", ".mcp.json"}
		}
		for _, w := range want {
			if !strings.Contains(shown, w) {
				t.Errorf("the trust question %q does not show %q: %s", *r.ToolCall.Title, w, shown)
			}
		}
		if len(r.Options) != 2 || r.Options[0].Kind != sdk.PermissionOptionKindRejectOnce || r.Options[1].Kind != sdk.PermissionOptionKindAllowAlways {
			t.Errorf("trust options %s; want Don't run (reject_once) first, then Trust and run (allow_always)", jsonOf(r.Options))
		}
	}
	c.mustPrompt(s.SessionId, "hi")
	if strings.Contains(lastRequest(e), "mcp__fake__") {
		t.Errorf("the refused MCP server's tools reached the model")
	}

	// Another zot on the same trust store: the extension is trusted
	// already (no question, it starts); the server is asked again,
	// trusted this time, and its tools work.
	p2 := e.start()
	c2, _ := e.connect(p2, sdk.ClientCapabilities{})
	trustAnswers(c2, "Trust and run")
	s2 := c2.newSession(e.root)
	c2.waitNotification("the project extension's commands", hasWarn(s2.SessionId))
	if r := c2.mustPrompt(s2.SessionId, "use fake"); r.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason %q", r.StopReason)
	}
	if !strings.Contains(string(e.llm.Requests()[2].Raw), "added") {
		t.Errorf("the trusted MCP server's tool did not run: %s", e.llm.Requests()[2].Raw)
	}
	c2.mu.Lock()
	perms = append([]sdk.RequestPermissionRequest(nil), c2.perms...)
	c2.mu.Unlock()
	if len(perms) != 1 || !strings.Contains(*perms[0].ToolCall.Title, "MCP server fake") {
		t.Errorf("the second zot asked %s; want only the MCP server (the extension's trust is recorded)", jsonOf(perms))
	}
}
