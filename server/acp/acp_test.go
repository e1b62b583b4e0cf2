//go:build unix

package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
)

var allCaps = sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}, Terminal: true}

// lastRequest is the raw body of the model's last request: what zot told
// the model (tool results included).
func lastRequest(e *env) string {
	reqs := e.llm.Requests()
	if len(reqs) == 0 {
		return ""
	}
	return string(reqs[len(reqs)-1].Raw)
}

func TestInitializeAndStreamedAnswer(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Thinking: "The user wants a greeting.", Text: "Hello there, from zot over ACP"})
	p := e.start()
	c, init := e.connect(p, sdk.ClientCapabilities{})
	if init.ProtocolVersion != sdk.ProtocolVersionNumber {
		t.Errorf("protocolVersion = %d, want %d", init.ProtocolVersion, sdk.ProtocolVersionNumber)
	}
	caps := init.AgentCapabilities
	if !caps.LoadSession || !caps.PromptCapabilities.Image || !caps.PromptCapabilities.EmbeddedContext || caps.SessionCapabilities.List == nil || caps.SessionCapabilities.Resume == nil {
		t.Errorf("agentCapabilities = %+v", caps)
	}
	if len(init.AuthMethods) != 0 {
		t.Errorf("authMethods = %+v with a key given", init.AuthMethods)
	}
	s := c.newSession(e.root)
	if s.Modes == nil || s.Modes.CurrentModeId != "ask" || len(s.Modes.AvailableModes) != 3 {
		t.Errorf("modes = %+v, want ask of ask/auto/readonly", s.Modes)
	}
	if s.Models == nil || s.Models.CurrentModelId == "" || len(s.Models.AvailableModels) == 0 {
		t.Errorf("models = %+v", s.Models)
	}
	res := c.mustPrompt(s.SessionId, "say hello")
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("stopReason = %q, want end_turn", res.StopReason)
	}
	if got := c.agentText(); got != "Hello there, from zot over ACP" {
		t.Errorf("agent text = %q", got)
	}
	var thought strings.Builder
	chunks := 0
	for _, u := range c.allUpdates() {
		if u.AgentThoughtChunk != nil {
			thought.WriteString(u.AgentThoughtChunk.Content.Text.Text)
		}
		if u.AgentMessageChunk != nil {
			chunks++
		}
	}
	if thought.String() != "The user wants a greeting." {
		t.Errorf("thought = %q", thought.String())
	}
	if chunks < 3 {
		t.Errorf("%d agent_message_chunk updates: the answer was not streamed", chunks)
	}
	if res.Usage == nil || res.Usage.OutputTokens == 0 {
		t.Errorf("usage = %+v", res.Usage)
	}
	c.waitUpdate("available_commands_update", func(u sdk.SessionUpdate) bool {
		if u.AvailableCommandsUpdate == nil {
			return false
		}
		for _, cmd := range u.AvailableCommandsUpdate.AvailableCommands {
			if cmd.Name == "compact" {
				return true
			}
		}
		return false
	})
}

func TestMissingKeyOffersAuth(t *testing.T) {
	e := newEnv(t)
	p := e.startNoKey()
	c, init := e.connect(p, sdk.ClientCapabilities{})
	if len(init.AuthMethods) != 1 || init.AuthMethods[0].Agent == nil || !strings.Contains(*init.AuthMethods[0].Agent.Description, "ANTHROPIC_API_KEY") ||
		!strings.Contains(*init.AuthMethods[0].Agent.Description, "auth.json") {
		t.Fatalf("authMethods = %s", jsonOf(init.AuthMethods))
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	_, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.root, McpServers: []sdk.McpServer{}})
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32000 || !strings.Contains(re.Message, "OPENAI_API_KEY") {
		t.Fatalf("session/new without a key: %v, want auth_required naming the variables", err)
	}
	// The user writes auth.json; authenticate now succeeds.
	os.WriteFile(filepath.Join(e.home, "auth.json"), []byte(`{"anthropic":{"api_key":"k"}}`), 0o600)
	if _, err := c.conn.Authenticate(ctx, sdk.AuthenticateRequest{MethodId: "zot-api-key"}); err != nil {
		t.Fatalf("authenticate after writing auth.json: %v", err)
	}
}

// startNoKey runs zot acp with no key anywhere and a remote base URL.
func (e *env) startNoKey() *proc {
	e.t.Helper()
	return e.startArgs("acp", "--base-url", "https://models.invalid")
}

func TestEditGoesThroughClientFS(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "notes.txt"}),
		llmtest.ToolReply("grep", map[string]any{"pattern": "unsaved"}),
		llmtest.ToolReply("edit", map[string]any{"path": "notes.txt", "edits": []map[string]any{{"oldText": "unsaved", "newText": "edited"}}}),
		llmtest.TextReply("done"))
	path := e.write("notes.txt", "hello from disk\n")
	p := e.start()
	c, _ := e.connect(p, allCaps)
	c.buffers[path] = "hello unsaved buffer\n"
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	res := c.mustPrompt(s.SessionId, "fix the note")
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d model requests, want 4", len(reqs))
	}
	// read saw the buffer, not the disk.
	if !bytes.Contains(reqs[1].Raw, []byte("hello unsaved buffer")) || bytes.Contains(reqs[1].Raw, []byte("hello from disk")) {
		t.Errorf("read did not return the unsaved buffer: %s", reqs[1].Raw)
	}
	// grep found the match that exists only in the buffer.
	if !bytes.Contains(reqs[2].Raw, []byte("notes.txt:1")) {
		t.Errorf("grep did not search the unsaved buffer: %s", reqs[2].Raw)
	}
	// The edit went to the editor, not the disk.
	c.mu.Lock()
	writes := append([]sdk.WriteTextFileRequest(nil), c.writes...)
	c.mu.Unlock()
	if len(writes) != 1 || writes[0].Path != path || writes[0].Content != "hello edited buffer\n" {
		t.Fatalf("fs/write_text_file = %s", jsonOf(writes))
	}
	if b, _ := os.ReadFile(path); string(b) != "hello from disk\n" {
		t.Errorf("the disk changed: %q", b)
	}
	// The tool call carries kind, title, location and the diff.
	start := c.waitUpdate("edit tool_call", func(u sdk.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.Kind == sdk.ToolKindEdit })
	if start.ToolCall.Title != "Edit notes.txt" || len(start.ToolCall.Locations) != 1 || start.ToolCall.Locations[0].Path != path || start.ToolCall.RawInput == nil {
		t.Errorf("tool_call = %s", jsonOf(start))
	}
	done := c.waitUpdate("edit diff", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.ToolCallId == start.ToolCall.ToolCallId && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusCompleted
	})
	if len(done.ToolCallUpdate.Content) != 1 || done.ToolCallUpdate.Content[0].Diff == nil {
		t.Fatalf("completed edit content = %s", jsonOf(done.ToolCallUpdate.Content))
	}
	d := done.ToolCallUpdate.Content[0].Diff
	if d.Path != path || d.OldText == nil || *d.OldText != "hello unsaved buffer\n" || d.NewText != "hello edited buffer\n" {
		t.Errorf("diff = %s", jsonOf(d))
	}
	read := c.waitUpdate("read tool_call", func(u sdk.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.Kind == sdk.ToolKindRead })
	if read.ToolCall.Title != "Read notes.txt" {
		t.Errorf("read title = %q", read.ToolCall.Title)
	}
	c.waitUpdate("grep as search", func(u sdk.SessionUpdate) bool { return u.ToolCall != nil && u.ToolCall.Kind == sdk.ToolKindSearch })
	c.waitUpdate("in_progress", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusInProgress
	})
}

func TestTerminalBash(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": "echo from-the-terminal; exit 3"}), llmtest.TextReply("ok"))
	p := e.start()
	c, _ := e.connect(p, allCaps)
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	c.mustPrompt(s.SessionId, "run it")
	c.mu.Lock()
	n := len(c.terminals)
	var req sdk.CreateTerminalRequest
	for _, term := range c.terminals {
		req = term.req
	}
	c.mu.Unlock()
	if n != 1 || len(req.Args) != 2 || req.Args[1] != "echo from-the-terminal; exit 3" || req.Cwd == nil || *req.Cwd != e.root {
		t.Fatalf("terminal/create = %s (%d terminals)", jsonOf(req), n)
	}
	c.waitUpdate("terminal content", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0 && u.ToolCallUpdate.Content[0].Terminal != nil
	})
	failed := c.waitUpdate("failed bash", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusFailed
	})
	_ = failed
	told := lastRequest(e)
	if !strings.Contains(told, "from-the-terminal") || !strings.Contains(told, "exit code 3") {
		t.Errorf("the model was not told the terminal's output and exit code: %s", told)
	}
	if c.waitUpdate("execute tool_call", func(u sdk.SessionUpdate) bool { return u.ToolCall != nil }).ToolCall.Kind != sdk.ToolKindExecute {
		t.Errorf("bash kind is not execute")
	}
}

func TestAskModeRejection(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"oldText": "one", "newText": "two"}}}),
		llmtest.ToolReply("bash", map[string]any{"command": "touch ran.txt"}),
		llmtest.TextReply("understood"))
	path := e.write("a.txt", "one\n")
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected("reject_once")
	}
	s := c.newSession(e.root) // ask is the default mode
	res := c.mustPrompt(s.SessionId, "change it")
	if res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q", res.StopReason)
	}
	if b, _ := os.ReadFile(path); string(b) != "one\n" {
		t.Errorf("a rejected edit changed the file: %q", b)
	}
	if _, err := os.Stat(filepath.Join(e.root, "ran.txt")); err == nil {
		t.Errorf("a rejected command ran")
	}
	c.mu.Lock()
	perms := append([]sdk.RequestPermissionRequest(nil), c.perms...)
	c.mu.Unlock()
	if len(perms) != 2 {
		t.Fatalf("%d permission requests, want 2 (edit, bash): %s", len(perms), jsonOf(perms))
	}
	edit := perms[0]
	if len(edit.ToolCall.Content) != 1 || edit.ToolCall.Content[0].Diff == nil || edit.ToolCall.Content[0].Diff.NewText != "two\n" ||
		*edit.ToolCall.Content[0].Diff.OldText != "one\n" || edit.ToolCall.Content[0].Diff.Path != path {
		t.Errorf("edit permission carries no diff: %s", jsonOf(edit.ToolCall))
	}
	kinds := map[sdk.PermissionOptionKind]bool{}
	for _, o := range edit.Options {
		kinds[o.Kind] = true
	}
	if !kinds[sdk.PermissionOptionKindAllowOnce] || !kinds[sdk.PermissionOptionKindAllowAlways] || !kinds[sdk.PermissionOptionKindRejectOnce] {
		t.Errorf("options = %s", jsonOf(edit.Options))
	}
	// The safe answer first: a client that takes the first option as
	// the default rejects.
	if edit.Options[0].Kind != sdk.PermissionOptionKindRejectOnce {
		t.Errorf("the first option is not the rejection: %s", jsonOf(edit.Options))
	}
	if !strings.Contains(jsonOf(perms[1].ToolCall.Content), "touch ran.txt") {
		t.Errorf("bash permission does not show the command: %s", jsonOf(perms[1].ToolCall))
	}
	// The model hears the user's decision, in the user's word.
	reqs := e.llm.Requests()
	if !bytes.Contains(reqs[1].Raw, []byte(`the user rejected this change to a.txt (chose \"Reject\")`)) {
		t.Errorf("the model was not told of the rejection: %s", reqs[1].Raw)
	}
	if !bytes.Contains(reqs[2].Raw, []byte(`the user rejected running this command (chose \"Reject\")`)) {
		t.Errorf("the model was not told of the rejected command: %s", reqs[2].Raw)
	}
}

func TestCancelMidStream(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "echo $$ > pid.txt; sleep 300"}),
		llmtest.TextReply("never"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{}) // bash runs in zot: its process group must die
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	type answer struct {
		res sdk.PromptResponse
		err error
	}
	got := make(chan answer, 1)
	go func() {
		r, err := c.prompt(s.SessionId, "sleep")
		got <- answer{r, err}
	}()
	c.waitUpdate("bash in progress", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && u.ToolCallUpdate.Status != nil && *u.ToolCallUpdate.Status == sdk.ToolCallStatusInProgress
	})
	pidFile := filepath.Join(e.root, "pid.txt")
	var pid int
	deadline := time.Now().Add(waitTimeout)
	for pid == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the command never started")
	}
	// A second prompt while busy is refused; the first goes on.
	if _, err := c.prompt(s.SessionId, "again"); err == nil || !strings.Contains(err.Error(), "busy") {
		t.Errorf("second prompt while busy: %v, want a busy error", err)
	}
	if err := c.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: s.SessionId}); err != nil {
		t.Fatal(err)
	}
	select {
	case a := <-got:
		if a.err != nil || a.res.StopReason != sdk.StopReasonCancelled {
			t.Fatalf("prompt after cancel: %+v, %v; want stopReason cancelled", a.res, a.err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("the prompt did not answer after session/cancel")
	}
	proctest.WaitGone(t, pid, "the cancelled command's shell")
	// The session takes prompts again.
	e.llm.Append(llmtest.TextReply("back"))
	if r := c.mustPrompt(s.SessionId, "hi"); r.StopReason != sdk.StopReasonEndTurn {
		t.Errorf("prompt after cancel: %q", r.StopReason)
	}
}

func TestLoadReplaysHistory(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("ls", map[string]any{}), llmtest.TextReply("the answer is 42"))
	e.write("x.txt", "x\n")
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	c.mustPrompt(s.SessionId, "what is the answer?")
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(waitTimeout):
		t.Fatal("zot acp did not exit at the end of its input")
	}

	p2 := e.start()
	c2, _ := e.connect(p2, sdk.ClientCapabilities{})
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	list, err := c2.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &e.root})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Sessions) != 1 || list.Sessions[0].SessionId != s.SessionId || list.Sessions[0].Title == nil {
		t.Fatalf("session/list = %s, want %s", jsonOf(list), s.SessionId)
	}
	if _, err := c2.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: s.SessionId, Cwd: e.root, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	// The replay is complete when session/load answers.
	var user, agentText strings.Builder
	var tool, result bool
	for _, u := range c2.allUpdates() {
		switch {
		case u.UserMessageChunk != nil:
			user.WriteString(u.UserMessageChunk.Content.Text.Text)
		case u.AgentMessageChunk != nil:
			agentText.WriteString(u.AgentMessageChunk.Content.Text.Text)
		case u.ToolCall != nil:
			tool = tool || u.ToolCall.Title == "List ."
		case u.ToolCallUpdate != nil:
			result = result || strings.Contains(jsonOf(u.ToolCallUpdate.Content), "x.txt")
		}
	}
	if user.String() != "what is the answer?" || agentText.String() != "the answer is 42" || !tool || !result {
		t.Fatalf("replay: user %q, agent %q, tool %v, result %v; updates %s", user.String(), agentText.String(), tool, result, c2.dump())
	}
	// The loaded session continues the conversation.
	e.llm.Append(llmtest.TextReply("still 42"))
	c2.mustPrompt(s.SessionId, "and now?")
	if !strings.Contains(lastRequest(e), "the answer is 42") {
		t.Errorf("the loaded session's history did not reach the model: %s", lastRequest(e))
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel2()
	if _, err := c2.conn.LoadSession(ctx2, sdk.LoadSessionRequest{SessionId: "no-such-session", Cwd: e.root, McpServers: []sdk.McpServer{}}); err == nil || !strings.Contains(err.Error(), "sessionId") {
		t.Errorf("loading an unknown session: %v, want an error naming sessionId", err)
	}
}

// TestBadInput speaks raw JSON lines: every bad message gets an error
// naming what is wrong, and the process lives on.
func TestBadInput(t *testing.T) {
	e := newEnv(t)
	p := e.start()
	r := bufio.NewReader(p.stdout)
	send := func(s string) { p.stdin.Write([]byte(s + "\n")) }
	read := func() map[string]any {
		t.Helper()
		type line struct {
			b   []byte
			err error
		}
		ch := make(chan line, 1)
		go func() { b, err := r.ReadBytes('\n'); ch <- line{b, err} }()
		select {
		case l := <-ch:
			if l.err != nil {
				t.Fatalf("read: %v", l.err)
			}
			var m map[string]any
			if err := json.Unmarshal(l.b, &m); err != nil {
				t.Fatalf("zot wrote a bad line %q: %v", l.b, err)
			}
			return m
		case <-time.After(waitTimeout):
			t.Fatal("no answer")
		}
		return nil
	}
	errOf := func(m map[string]any) (float64, string) {
		e, _ := m["error"].(map[string]any)
		if e == nil {
			t.Fatalf("not an error: %v", m)
		}
		code, _ := e["code"].(float64)
		return code, jsonOf(e)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize",`)
	if code, msg := errOf(read()); code != -32700 || !strings.Contains(msg, "Parse error") {
		t.Errorf("malformed JSON: %v %s", code, msg)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"session/frobnicate","params":{}}`)
	if code, msg := errOf(read()); code != -32601 || !strings.Contains(msg, "session/frobnicate") {
		t.Errorf("unknown method: %v %s", code, msg)
	}
	send(`{"jsonrpc":"2.0","id":3,"params":{}}`)
	if code, msg := errOf(read()); code != -32600 || !strings.Contains(msg, "method") {
		t.Errorf("no method: %v %s", code, msg)
	}
	send(`{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":1}}`)
	if m := read(); m["result"] == nil {
		t.Fatalf("initialize: %v", m)
	}
	send(`{"jsonrpc":"2.0","id":5,"method":"session/new","params":{"cwd":42,"mcpServers":[]}}`)
	if code, msg := errOf(read()); code != -32602 || !strings.Contains(msg, "cwd") {
		t.Errorf("cwd of the wrong type: %v %s", code, msg)
	}
	send(`{"jsonrpc":"2.0","id":6,"method":"session/new","params":{"cwd":"relative/dir","mcpServers":[]}}`)
	if code, msg := errOf(read()); code != -32602 || !strings.Contains(msg, "cwd must be an absolute path") {
		t.Errorf("relative cwd: %v %s", code, msg)
	}
	send(`{"jsonrpc":"2.0","id":7,"method":"session/prompt","params":{"sessionId":"nope","prompt":[{"type":"text","text":"hi"}]}}`)
	if code, msg := errOf(read()); code != -32602 || !strings.Contains(msg, `sessionId unknown session \"nope\"`) {
		t.Errorf("prompt on an unknown session: %v %s", code, msg)
	}
	send(`{"jsonrpc":"2.0","id":8,"method":"session/set_mode","params":{"sessionId":"nope","modeId":"auto"}}`)
	if code, _ := errOf(read()); code != -32602 {
		t.Errorf("set_mode on an unknown session: %v", code)
	}
	// Still alive and answering.
	send(`{"jsonrpc":"2.0","id":9,"method":"session/list","params":{"cwd":` + jsonOf(e.root) + `}}`)
	if m := read(); m["result"] == nil {
		t.Fatalf("session/list after bad input: %v", m)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestCancelKillsTerminal: a command running in the client's terminal is
// killed through terminal/kill when the run is cancelled.
func TestCancelKillsTerminal(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": "sleep 300"}), llmtest.TextReply("never"))
	p := e.start()
	c, _ := e.connect(p, allCaps)
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	got := make(chan sdk.StopReason, 1)
	go func() {
		r, err := c.prompt(s.SessionId, "sleep")
		if err != nil {
			t.Errorf("prompt: %v", err)
		}
		got <- r.StopReason
	}()
	c.waitUpdate("the terminal in the tool call", func(u sdk.SessionUpdate) bool {
		return u.ToolCallUpdate != nil && len(u.ToolCallUpdate.Content) > 0 && u.ToolCallUpdate.Content[0].Terminal != nil
	})
	c.conn.Cancel(context.Background(), sdk.CancelNotification{SessionId: s.SessionId})
	select {
	case r := <-got:
		if r != sdk.StopReasonCancelled {
			t.Fatalf("stopReason = %q, want cancelled", r)
		}
	case <-time.After(waitTimeout):
		t.Fatal("no answer after session/cancel")
	}
	c.mu.Lock()
	kills := append([]string(nil), c.kills...)
	term := c.terminals["term-1"]
	c.mu.Unlock()
	if len(kills) != 1 || kills[0] != "term-1" {
		t.Fatalf("terminal/kill calls = %v, want [term-1]", kills)
	}
	select {
	case <-term.done:
	case <-time.After(waitTimeout):
		t.Fatal("the terminal's command still runs")
	}
}

// TestModelsAndAllowAlways: session/set_model switches among the
// catalogue (the next request uses it) and names modelId when wrong;
// "allow always" stops asking for edits in the session.
func TestModelsAndAllowAlways(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "a.txt", "content": "1\n"}),
		llmtest.ToolReply("write", map[string]any{"path": "b.txt", "content": "2\n"}),
		llmtest.TextReply("written"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected("allow_always")
	}
	s := c.newSession(e.root)
	var other string
	for _, m := range s.Models.AvailableModels {
		if m.ModelId != s.Models.CurrentModelId {
			other = string(m.ModelId)
			break
		}
	}
	if other == "" {
		t.Fatalf("one model only: %s", jsonOf(s.Models))
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: sdk.UnstableModelId(other)}); err != nil {
		t.Fatalf("session/set_model %s: %v", other, err)
	}
	if _, err := c.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: "no-such-model"}); err == nil || !strings.Contains(err.Error(), "modelId") {
		t.Errorf("an unknown model: %v, want an error naming modelId", err)
	}
	c.mustPrompt(s.SessionId, "write two files")
	var body struct {
		Model string `json:"model"`
	}
	json.Unmarshal(e.llm.Requests()[0].Raw, &body)
	if body.Model != other {
		t.Errorf("the model call used %q, want %q", body.Model, other)
	}
	c.mu.Lock()
	asked := len(c.perms)
	c.mu.Unlock()
	if asked != 1 {
		t.Fatalf("%d permission requests, want 1 (then always allowed)", asked)
	}
	if d := c.perms[0].ToolCall.Content[0].Diff; d == nil || d.OldText != nil || d.NewText != "1\n" {
		t.Errorf("a new file's diff = %s, want newText and no oldText", jsonOf(c.perms[0].ToolCall.Content))
	}
	for name, want := range map[string]string{"a.txt": "1\n", "b.txt": "2\n"} {
		if b, _ := os.ReadFile(filepath.Join(e.root, name)); string(b) != want {
			t.Errorf("%s = %q, want %q (no fs capability: zot writes the disk)", name, b, want)
		}
	}
}

// TestPromptBlocks: text, a resource link, an embedded resource and an
// image become one user message; audio is refused naming the block.
func TestPromptBlocks(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("seen"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	res, err := c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("explain these"),
		sdk.ResourceLinkBlock("main.go", "file://"+filepath.Join(e.root, "main.go")),
		sdk.ResourceBlock(sdk.EmbeddedResourceResource{TextResourceContents: &sdk.TextResourceContents{Uri: "file://" + filepath.Join(e.root, "notes.txt"), Text: "the unsaved note\n"}}),
		sdk.ImageBlock(png, "image/png"),
	}})
	if err != nil || res.StopReason != sdk.StopReasonEndTurn {
		t.Fatalf("prompt: %+v, %v", res, err)
	}
	told := lastRequest(e)
	for _, want := range []string{"explain these", filepath.Join(e.root, "main.go"), "(Editor context: notes.txt)", "the unsaved note", png} {
		if !strings.Contains(told, want) {
			t.Errorf("the user message lacks %q: %s", want, told)
		}
	}
	_, err = c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{
		sdk.TextBlock("listen"), sdk.AudioBlock("AAAA", "audio/wav"),
	}})
	if err == nil || !strings.Contains(err.Error(), "prompt[1]") || !strings.Contains(err.Error(), "audio") {
		t.Errorf("an audio block: %v, want an error naming prompt[1]", err)
	}
}

// TestEOFMidRunLeavesNoChild: the editor goes away while a command runs;
// zot aborts the run, kills the command's process group and exits.
func TestEOFMidRunLeavesNoChild(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": "echo $$ > pid.txt; sleep 300"}), llmtest.TextReply("never"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	go c.prompt(s.SessionId, "sleep")
	var pid int
	deadline := time.Now().Add(waitTimeout)
	for pid == 0 && time.Now().Before(deadline) {
		b, _ := os.ReadFile(filepath.Join(e.root, "pid.txt"))
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		time.Sleep(20 * time.Millisecond)
	}
	if pid == 0 {
		t.Fatal("the command never started")
	}
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(waitTimeout):
		t.Fatal("zot acp did not exit at the end of its input")
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("exit code %d", code)
	}
	proctest.WaitGone(t, pid, "the command's shell")
}

// TestWriteOutsideWorkspaceAsks: even in auto mode, a write outside the
// workspace asks, showing the path and the whole content; a rejection
// leaves nothing written and the model is told the user denied it.
func TestWriteOutsideWorkspaceAsks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "elsewhere.txt")
	e := newEnv(t, llmtest.ToolReply("write", map[string]any{"path": outside, "content": "secret plan\n"}), llmtest.TextReply("ok"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	c.permit = func(r sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome {
		return sdk.NewRequestPermissionOutcomeSelected("reject_once")
	}
	s := c.newSession(e.root)
	c.setMode(s.SessionId, "auto")
	c.mustPrompt(s.SessionId, "write it there")
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a rejected write outside the workspace was written")
	}
	c.mu.Lock()
	perms := append([]sdk.RequestPermissionRequest(nil), c.perms...)
	c.mu.Unlock()
	if len(perms) != 1 {
		t.Fatalf("%d permission requests, want 1", len(perms))
	}
	q := jsonOf(perms[0].ToolCall.Content)
	if !strings.Contains(q, "outside the workspace") || !strings.Contains(q, outside) || !strings.Contains(q, "secret plan") {
		t.Errorf("the question does not show the reason, path and content: %s", q)
	}
	if !strings.Contains(lastRequest(e), "the user denied writing") {
		t.Errorf("the model was not told: %s", lastRequest(e))
	}
}

// TestOversizedLine: a line past the limit is answered with an error and
// the connection goes on (the SDK's reader would have ended it).
func TestOversizedLine(t *testing.T) {
	e := newEnv(t)
	p := e.start()
	r := bufio.NewReader(p.stdout)
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"_meta":{"pad":"` + strings.Repeat("x", 11<<20) + `"}}}` + "\n"
	go func() {
		p.stdin.Write([]byte(big))
		p.stdin.Write([]byte(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":1}}` + "\n"))
	}()
	var lines []string
	for len(lines) < 2 {
		type res struct {
			b   []byte
			err error
		}
		ch := make(chan res, 1)
		go func() { b, err := r.ReadBytes('\n'); ch <- res{b, err} }()
		select {
		case l := <-ch:
			if l.err != nil {
				t.Fatalf("read: %v (after %q)", l.err, lines)
			}
			lines = append(lines, string(l.b))
		case <-time.After(waitTimeout):
			t.Fatalf("no answer; got %q", lines)
		}
	}
	if !strings.Contains(lines[0], `"code":-32600`) || !strings.Contains(lines[0], "longer than") {
		t.Errorf("oversized line: %s", lines[0])
	}
	if !strings.Contains(lines[1], `"id":2`) || !strings.Contains(lines[1], `"result"`) {
		t.Errorf("the next message: %s", lines[1])
	}
}

// TestProviderErrorAnswersThePrompt: a turn that ends in a provider error
// answers the prompt with a JSON-RPC error carrying zot's message; the
// session takes the next prompt.
func TestProviderErrorAnswersThePrompt(t *testing.T) {
	e := newEnv(t, llmtest.ErrorReply(400, "prompt is too long: 300000 tokens > 200000 maximum"), llmtest.TextReply("fine again"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	_, err := c.prompt(s.SessionId, "a lot")
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32603 || !strings.Contains(re.Message, "too long") {
		t.Fatalf("prompt: %v, want a -32603 error with the provider's message", err)
	}
	if r := c.mustPrompt(s.SessionId, "less"); r.StopReason != sdk.StopReasonEndTurn || !strings.HasSuffix(c.agentText(), "fine again") {
		t.Errorf("the next prompt: %q, text %q", r.StopReason, c.agentText())
	}
}
