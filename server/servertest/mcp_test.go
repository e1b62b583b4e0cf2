package servertest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/mcptest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/server"
	"github.com/zot-editors/zot/server/servertest"
)

// everythingFile writes an MCP configuration with server-everything.
func (e *env) everythingFile() string {
	e.t.Helper()
	p := filepath.Join(e.t.TempDir(), "mcp.json")
	doc := fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": ["stdio"]}}}`, mcptest.Bin(e.t, "mcp-server-everything"))
	if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// startMCP starts an editor with server-everything (--mcp-config) and
// waits until zot/mcp lists it ready.
func (e *env) startMCP(tweak func(*servertest.Config)) *servertest.Editor {
	e.t.Helper()
	cfg := e.config("--mcp-config", e.everythingFile())
	if tweak != nil {
		tweak(&cfg)
	}
	ed := servertest.Start(e.t, cfg)
	ed.Initialize(nil)
	waitMCP(ed, "everything", "ready")
	return ed
}

func waitMCP(ed *servertest.Editor, name, state string) server.MCPServerStatus {
	var got server.MCPServerStatus
	ed.Wait("MCP server "+name+" "+state, func() bool {
		var r server.MCPResult
		ed.MustCall("zot/mcp", nil, &r)
		for _, s := range r.Servers {
			if s.Name == name && s.State == state {
				got = s
				return true
			}
		}
		return false
	})
	return got
}

// offered lists the tools of model request i.
func (e *env) offered(i int) string {
	e.t.Helper()
	reqs := e.llm.Requests()
	if len(reqs) <= i {
		e.t.Fatalf("only %d model calls", len(reqs))
	}
	var names []string
	ts, _ := reqs[i].Body["tools"].([]any)
	for _, x := range ts {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	return " " + strings.Join(names, " ") + " "
}

func TestMCPToolsInTheEditor(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("mcp__everything__get-tiny-image", map[string]any{}),
		llmtest.ToolReply("mcp__everything__trigger-long-running-operation", map[string]any{"duration": 1, "steps": 2}),
		llmtest.ToolReply("mcp__everything__get-sum", map[string]any{"a": 20, "b": 22}),
		llmtest.TextReply("done"),
	)
	ed := e.startMCP(nil)
	st := waitMCP(ed, "everything", "ready")
	if st.Scope != "flag" || st.Transport != "stdio" || st.PID == 0 || len(st.Tools) < 5 || !strings.Contains(st.Command, "mcp-server-everything stdio") {
		t.Fatalf("zot/mcp: %+v", st)
	}
	if len(ed.Notes("zot/mcp/changed")) == 0 {
		t.Fatal("no zot/mcp/changed")
	}
	run := ed.Prompt("use the tools").RunID
	evs := ed.WaitDone(run)
	if !strings.Contains(e.offered(0), " mcp__everything__echo ") {
		t.Fatalf("tools offered: %s", e.offered(0))
	}
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if len(results) != 3 {
		t.Fatalf("events: %s", servertest.Types(evs))
	}
	// The chat card gets the image block; the model got its bytes.
	if b, _ := json.Marshal(results[0]); !strings.Contains(string(b), `"image"`) || !strings.Contains(string(b), "image/png") {
		t.Fatalf("image result: %s", b)
	}
	if body, _ := json.Marshal(e.llm.Requests()[1].Body); !strings.Contains(string(body), `"media_type":"image/png"`) {
		t.Fatalf("the model did not receive the image: %.400s", body)
	}
	var progress []string
	for _, ev := range evs {
		if ev.Type() == "tool_progress" {
			progress = append(progress, ev.Str("text"))
		}
	}
	if len(progress) == 0 || progress[0] != "1/2" {
		t.Fatalf("tool_progress: %q (events %s)", progress, servertest.Types(evs))
	}
	if txt := servertest.ResultText(results[2]); !strings.Contains(txt, "42") {
		t.Fatalf("get-sum: %q", txt)
	}
}

func TestMCPAskModeAsksWithTheWholeArguments(t *testing.T) {
	long := strings.Repeat("x", 3000) + "END"
	e := newEnv(t,
		llmtest.ToolReply("mcp__everything__echo", map[string]any{"message": "read-only runs"}),
		llmtest.ToolReply("mcp__everything__toggle-simulated-logging", map[string]any{"note": long}),
		llmtest.TextReply("ok"),
	)
	var mu sync.Mutex
	var asked []string
	ed := e.startMCP(func(c *servertest.Config) { c.InitOptions = map[string]any{"permissionMode": "ask"} })
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg+" | "+strings.Join(actions, "/"))
		return server.Deny
	}
	evs := ed.WaitDone(ed.Prompt("go").RunID)
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 {
		t.Fatalf("asked %d times (echo is read-only and must not ask): %q", len(asked), asked)
	}
	q := asked[0]
	for _, want := range []string{server.MCPApprovalPrefix, "toggle-simulated-logging", "everything", long, "Deny/Allow once/Always allow for this session"} {
		if !strings.Contains(q, want) {
			t.Fatalf("the question lacks %.60q:\n%.300s", want, q)
		}
	}
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if len(results) != 2 || results[0]["is_error"] != false || results[1]["is_error"] != true || !strings.Contains(servertest.ResultText(results[1]), "denied") {
		t.Fatalf("results: %v", results)
	}
}

func TestMCPReadonlyModeOffersOnlyReadOnlyTools(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("mcp__everything__toggle-simulated-logging", map[string]any{}), llmtest.TextReply("ok"))
	ed := e.startMCP(func(c *servertest.Config) { c.InitOptions = map[string]any{"permissionMode": "readonly"} })
	evs := ed.WaitDone(ed.Prompt("go").RunID)
	tools := e.offered(0)
	if !strings.Contains(tools, " mcp__everything__echo ") || strings.Contains(tools, "toggle-simulated-logging") {
		t.Fatalf("readonly tools: %s", tools)
	}
	if tr := servertest.Find(evs, "tool_result"); tr["is_error"] != true || !strings.Contains(servertest.ResultText(tr), "readonly") {
		t.Fatalf("a non-read-only tool called anyway: %v", tr)
	}
}

func TestMCPProjectServerAsksForTrust(t *testing.T) {
	e := newEnv(t)
	doc := fmt.Sprintf(`{"mcpServers": {"fs": {"command": %q, "args": ["."]}}}`, mcptest.Bin(t, "mcp-server-filesystem"))
	if err := os.WriteFile(filepath.Join(e.root, ".mcp.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked string
	cfg := e.config()
	ed := servertest.Start(t, cfg)
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = msg
		return server.TrustYes
	}
	ed.Initialize(nil)
	st := waitMCP(ed, "fs", "ready")
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(asked, `Trust and run the project MCP server "fs"`) || !strings.Contains(asked, "mcp-server-filesystem .") {
		t.Fatalf("trust question: %q", asked)
	}
	if st.Scope != "project" || !strings.Contains(strings.Join(st.Tools, " "), "mcp__fs__read_text_file") {
		t.Fatalf("zot/mcp: %+v", st)
	}
}

func TestMCPRestartAndNoMcp(t *testing.T) {
	e := newEnv(t)
	ed := e.startMCP(nil)
	old := waitMCP(ed, "everything", "ready").PID
	var r server.MCPResult
	ed.MustCall("zot/mcp/restart", map[string]any{"name": "everything"}, &r)
	if len(r.Servers) != 1 || r.Servers[0].State != "ready" || r.Servers[0].PID == old || r.Servers[0].PID == 0 {
		t.Fatalf("after restart: %+v", r)
	}
	proctest.WaitGone(t, old, "the restarted server's old process")
	if err := ed.Call("zot/mcp/restart", map[string]any{"name": "nope"}, nil); err == nil || !strings.Contains(err.Message, `no MCP server named "nope"`) {
		t.Fatalf("unknown server: %v", err)
	}
	pid := r.Servers[0].PID
	ed.Shutdown()
	ed.WaitExit()
	proctest.WaitGone(t, pid, "the MCP server after zot lsp exited")

	cfg := e.config("--mcp-config", e.everythingFile())
	cfg.InitOptions = map[string]any{"noMcp": true}
	ed2 := servertest.Start(t, cfg)
	ed2.Initialize(nil)
	ed2.MustCall("zot/mcp", nil, &r)
	if !r.Disabled || len(r.Servers) != 0 {
		t.Fatalf("noMcp: %+v", r)
	}
}

func TestMCPPromptIsASlashCommand(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("sunny"))
	ed := e.startMCP(nil)
	var cmds server.CommandsResult
	ed.MustCall("zot/commands", nil, &cmds)
	var found *server.CommandInfo
	for _, c := range cmds.Commands {
		if c.Name == "mcp__everything__args-prompt" {
			found = &c
		}
	}
	if found == nil || found.Source != "mcp" || found.Extension != "everything" || !strings.HasSuffix(found.Description, "— arguments: city [state]") {
		t.Fatalf("zot/commands: %+v", cmds.Commands)
	}
	if err := ed.Call("zot/command", map[string]any{"name": "/mcp__everything__args-prompt"}, nil); err == nil || !strings.Contains(err.Message, "needs city") {
		t.Fatalf("without its argument: %v", err)
	}
	var res server.CommandResult
	ed.MustCall("zot/command", map[string]any{"name": "/mcp__everything__args-prompt", "args": "Chicago"}, &res)
	if res.Action != "prompt" || res.RunID == "" {
		t.Fatalf("zot/command: %+v", res)
	}
	ed.WaitDone(res.RunID)
	body, _ := json.Marshal(e.llm.Requests()[0].Body["messages"])
	if !strings.Contains(string(body), "What's weather in Chicago?") {
		t.Fatalf("the model got: %s", body)
	}
}
