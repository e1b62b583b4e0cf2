//go:build unix

package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/childproc"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

// installExt writes an extension directory whose manifest runs lspext.
func (e *env) installExt(name string) string {
	e.t.Helper()
	dir := filepath.Join(e.t.TempDir(), name)
	os.MkdirAll(dir, 0o755)
	m := map[string]any{"name": name, "version": "1.0.0", "exec": extBin, "args": []string{name}, "description": "test extension"}
	b, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return dir
}

// TestExtensionCommandsNoticesPanels: extension commands are listed and
// run from the prompt; notify arrives as a marked notice; a panel as a
// message; the end of input shuts the extension down with zot.
func TestExtensionCommandsNoticesPanels(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Skip(t, "finds the extension's process through /proc")
	}
	e := newEnv(t, llmtest.TextReply("Hi Bob!"))
	p := e.start("--ext", e.installExt("lspext"))
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	c.waitUpdate("the extension's commands", func(u sdk.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		for _, cmd := range u.AvailableCommandsUpdate.AvailableCommands {
			if cmd.Name == "warn" && strings.Contains(cmd.Description, "lspext") {
				return true
			}
		}
		return false
	})

	c.mustPrompt(s.SessionId, "/warn the stove is hot")
	notice := c.waitUpdate("the notice", func(u sdk.SessionUpdate) bool {
		return u.AgentMessageChunk != nil && u.AgentMessageChunk.Meta != nil && strings.Contains(u.AgentMessageChunk.Content.Text.Text, "careful: the stove is hot")
	})
	zot, _ := notice.AgentMessageChunk.Meta["zot"].(map[string]any)
	n, _ := zot["notice"].(map[string]any)
	if n["level"] != "warn" || n["extension"] != "lspext" {
		t.Errorf("notice _meta = %s, want zot.notice with level and extension", jsonOf(notice.AgentMessageChunk.Meta))
	}

	c.mustPrompt(s.SessionId, "/list")
	panel := c.waitUpdate("the panel", func(u sdk.SessionUpdate) bool {
		return u.AgentMessageChunk != nil && strings.Contains(u.AgentMessageChunk.Content.Text.Text, "> alpha")
	})
	if text := panel.AgentMessageChunk.Content.Text.Text; !strings.Contains(text, "zot lsp") || !strings.Contains(text, "gamma") {
		t.Errorf("panel message = %q", text)
	}

	if r := c.mustPrompt(s.SessionId, "/hi Bob"); r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("/hi: %q", r.StopReason)
	}
	if !strings.Contains(lastRequest(e), "Say hi to Bob") {
		t.Errorf("the command's prompt did not reach the model: %s", lastRequest(e))
	}
	if !strings.HasSuffix(c.agentText(), "Hi Bob!") {
		t.Errorf("answer = %q", c.agentText())
	}

	kids := children(p.cmd.Process.Pid)
	if len(kids) == 0 {
		t.Fatal("no extension process under zot")
	}
	// session/close shuts the session's extensions down; the session is gone.
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s.SessionId}); err != nil {
		t.Fatalf("session/close: %v", err)
	}
	for _, pid := range kids {
		proctest.WaitGone(t, pid, "the closed session's extension")
	}
	if _, err := c.prompt(s.SessionId, "hello?"); err == nil || !strings.Contains(err.Error(), "unknown session") {
		t.Errorf("a prompt on a closed session: %v", err)
	}
	// A new session starts its own extensions; the end of input stops them.
	c.newSession(e.root)
	c.waitUpdate("the new session's extension commands", func(u sdk.SessionUpdate) bool {
		return u.AvailableCommandsUpdate != nil && strings.Contains(jsonOf(u.AvailableCommandsUpdate), `"warn"`) && len(children(p.cmd.Process.Pid)) > 0
	})
	kids = children(p.cmd.Process.Pid)
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(waitTimeout):
		t.Fatal("zot acp did not exit at the end of its input")
	}
	for _, pid := range kids {
		proctest.WaitGone(t, pid, "the extension")
	}
}

// isSupervisor tells zot's supervisor (internal/childproc), a child of
// zot that is none of its extensions, from the others.
func isSupervisor(pid int) bool {
	b, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	return strings.HasPrefix(string(b), childproc.SupervisorName+"\x00")
}

// children are the pids whose parent is pid (Linux /proc), zot's
// supervisor left out.
func children(pid int) []int {
	var out []int
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		n, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …; comm may hold spaces.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) && !isSupervisor(n) {
			out = append(out, n)
		}
	}
	return out
}
