package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/agent/session"
	"github.com/zot-editors/zot/agent/session/sessiontest"
	"github.com/zot-editors/zot/internal/proctest"
)

func TestPrintAnswers(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("Hello from the scripted model."))
	out, errOut, code := e.runZot(e.args("-p", "hello")...)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	if strings.TrimSpace(out) != "Hello from the scripted model." {
		t.Fatalf("stdout = %q", out)
	}
}

func TestPrintEditsFileAndRunsBash(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("edit", map[string]any{"path": "main.go", "edits": []map[string]string{{"oldText": "return 1", "newText": "return 2"}}}),
		llmtest.ToolReply("bash", map[string]any{"command": "grep -c 'return 2' main.go && echo ran-in-$(basename $PWD)"}),
		llmtest.TextReply("Changed it."),
	)
	e.write("main.go", "package main\n\nfunc f() int {\n\treturn 1\n}\n")
	out, errOut, code := e.runZot(e.args("-p", "change the return value")...)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	if got := e.read("main.go"); !strings.Contains(got, "return 2") || strings.Contains(got, "return 1") {
		t.Fatalf("file not edited: %q", got)
	}
	if !strings.Contains(out, "Changed it.") {
		t.Fatalf("stdout = %q", out)
	}
	if !strings.Contains(errOut, "→ edit main.go") || !strings.Contains(errOut, "→ bash") {
		t.Fatalf("stderr lacks tool activity: %s", errOut)
	}
	// The bash result the model saw came from a real shell in the workspace.
	reqs := e.llm.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model calls = %d, want 3", len(reqs))
	}
	body, _ := json.Marshal(reqs[2].Body)
	if !strings.Contains(string(body), "ran-in-"+filepath.Base(e.cwd)) {
		t.Fatalf("third request lacks the bash output: %s", body)
	}
}

func TestPrintJSONEvents(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Deltas: []string{"a", "b", "c"}})
	out, errOut, code := e.runZot(e.args("-p", "hi", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var seen []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		seen = append(seen, m["type"].(string))
	}
	want := "user_message turn_start assistant_start text_delta text_delta text_delta usage assistant_message turn_end done"
	if strings.Join(seen, " ") != want {
		t.Fatalf("events:\n got %s\nwant %s", strings.Join(seen, " "), want)
	}
}

func TestPrintNoAPIKeyNamesTheVariable(t *testing.T) {
	e := newEnv(t)
	_, errOut, code := e.runZot("-p", "hi", "--cwd", e.cwd)
	if code == 0 {
		t.Fatal("want a failure without a key")
	}
	if !strings.Contains(errOut, "ANTHROPIC_API_KEY") {
		t.Fatalf("error does not name the variable: %s", errOut)
	}
	_, errOut, code = e.runZot("-p", "hi", "--provider", "openai", "--cwd", e.cwd)
	if code == 0 {
		t.Fatal("want a failure without a key (openai)")
	}
	if !strings.Contains(errOut, "OPENAI_API_KEY") {
		t.Fatalf("error does not name the variable: %s", errOut)
	}
	// (No base URL is given: a loopback one needs no key. So a model call
	// would go to the provider, not to e.llm, and cannot be counted here.)
}

func TestPrintRetriesRateLimit(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "after retry", FailTimes: 2, RetryAfter: llmtest.Seconds(0)})
	out, errOut, code := e.runZot(e.args("-p", "hi")...)
	if code != 0 || !strings.Contains(out, "after retry") {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	if n := len(e.llm.Requests()); n != 3 {
		t.Fatalf("attempts = %d, want 3 (two 429s, then success)", n)
	}
}

func TestPrintProviderErrorIsReadable(t *testing.T) {
	e := newEnv(t, llmtest.ErrorReply(400, "prompt is too long"))
	_, errOut, code := e.runZot(e.args("-p", "hi")...)
	if code == 0 || !strings.Contains(errOut, "prompt is too long") {
		t.Fatalf("exit %d, stderr %s", code, errOut)
	}
}

func TestOpenAIProviderThroughBaseURL(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "notes.txt"}),
		llmtest.TextReply("The note says hi."),
	)
	e.write("notes.txt", "hi\n")
	out, errOut, code := e.runZot("-p", "read notes", "--provider", "openai", "--model", "qwen2.5-coder:7b",
		"--api-key", "k", "--base-url", e.llm.OpenAIURL(), "--cwd", e.cwd)
	if code != 0 || !strings.Contains(out, "The note says hi.") {
		t.Fatalf("exit %d out %q err %s", code, out, errOut)
	}
	if reqs := e.llm.Requests(); len(reqs) != 2 || !strings.Contains(reqs[0].Path, "chat/completions") {
		t.Fatalf("requests: %+v", reqs)
	}
}

// A kill -9 while a tool runs loses nothing already finished, and the next
// run resumes the session with the orphaned tool call repaired.
func TestKill9LosesNoFinishedMessage(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "echo $$ > started.pid; sleep 300"}),
		llmtest.TextReply("resumed fine"),
	)
	cmd := e.command(e.args("-p", "run the long thing")...)
	proctest.NewGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(e.cwd, "started.pid")
	var bashPID int
	for i := 0; i < 600 && bashPID == 0; i++ {
		if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
			bashPID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if bashPID == 0 {
		t.Fatal("bash never started")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	proctest.KillGroup(bashPID) // the orphaned tool process group, as closing a terminal would

	infos, err := session.List(session.Dir(e.home, e.cwd))
	if err != nil || len(infos) != 1 {
		t.Fatalf("sessions: %v %v", infos, err)
	}
	l, err := session.Load(infos[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	// user prompt + assistant tool call survived; the orphan was repaired.
	if len(l.Messages) < 2 || l.Messages[0].Role != "user" || len(l.Messages[1].ToolCalls()) != 1 || l.Repaired != 1 {
		t.Fatalf("after kill -9: %d messages, repaired %d: %+v", len(l.Messages), l.Repaired, l.Messages)
	}

	out, errOut, code := e.runZot(e.args("-c", "-p", "go on")...)
	if code != 0 || !strings.Contains(out, "resumed fine") {
		t.Fatalf("resume: exit %d out %q err %s", code, out, errOut)
	}
	body, _ := json.Marshal(e.llm.Requests()[1].Body)
	for _, want := range []string{"run the long thing", "go on", "did not finish"} {
		if !strings.Contains(string(body), want) {
			t.Fatalf("resumed request lacks %q: %s", want, body)
		}
	}
	// The repair is in the file too, as zot reads it: the call answered by
	// a tool message before the next prompt.
	data, _ := os.ReadFile(infos[0].Path)
	f, err := sessiontest.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range f.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, " ") != "user assistant tool user assistant" || !f.Messages[2].Content[0].IsError {
		t.Fatalf("as zot reads the resumed file: %v\n%s", roles, data)
	}
}

func TestPrintReasoningShowsThinking(t *testing.T) {
	reply := llmtest.Reply{Thinking: "Weigh the options first.", Text: "The answer."}
	e := newEnv(t, reply, reply)
	out, errOut, code := e.runZot(e.args("-p", "think", "--reasoning", "high")...)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	if strings.TrimSpace(out) != "The answer." {
		t.Fatalf("stdout = %q (thinking belongs on stderr)", out)
	}
	if !strings.Contains(errOut, "thinking: Weigh the options first.\n") {
		t.Fatalf("stderr = %q", errOut)
	}
	if b := e.llm.Requests()[0].Body["thinking"]; b == nil {
		t.Fatalf("--reasoning high sent no thinking: %v", e.llm.Requests()[0].Body)
	}

	out, errOut, code = e.runZot(e.args("-p", "think", "--reasoning", "high", "--json")...)
	if code != 0 {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	var thought strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		json.Unmarshal([]byte(line), &m)
		if m["type"] == "thinking_delta" {
			thought.WriteString(m["text"].(string))
		}
		if m["type"] == "assistant_message" && !strings.Contains(line, `{"type":"thinking","text":"Weigh the options first."}`) {
			t.Fatalf("assistant_message lacks its thinking block: %s", line)
		}
	}
	if thought.String() != "Weigh the options first." {
		t.Fatalf("thinking_delta events = %q in %s", thought.String(), out)
	}
}

func TestPrintReasoningRejectedClearly(t *testing.T) {
	e := newEnv(t)
	_, errOut, code := e.runZot(e.args("-p", "x", "--reasoning", "max")...)
	if code == 0 || !strings.Contains(errOut, `unknown reasoning level "max" (want off, low, medium or high)`) {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
	_, errOut, code = e.runZot(e.args("-p", "x", "--provider", "openai", "--model", "gpt-4.1", "--reasoning", "low")...)
	if code == 0 || !strings.Contains(errOut, "gpt-4.1 does not reason") || !strings.Contains(errOut, "gpt-5") {
		t.Fatalf("exit %d, stderr: %s", code, errOut)
	}
}

// zot -p cannot ask: the agent's write into $ZOT_HOME (here, a global
// extension's manifest) is refused with a tool error the model sees, and
// the file is untouched.
func TestPrintRefusesWriteIntoExtensionDir(t *testing.T) {
	e := newEnv(t)
	manifest := filepath.Join(e.home, "extensions", "g", "extension.json")
	os.MkdirAll(filepath.Dir(manifest), 0o755)
	os.WriteFile(manifest, []byte(`{"name":"g","exec":"/nonexistent"}`), 0o644)
	e.llm.Append(
		llmtest.ToolReply("write", map[string]any{"path": manifest, "content": `{"name":"g","exec":"/nonexistent","enabled":false}`}),
		llmtest.TextReply("tried"))
	_, errOut, code := e.runZot(e.args("-p", "disable g")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if b, _ := os.ReadFile(manifest); strings.Contains(string(b), "enabled") {
		t.Fatal("the manifest was written")
	}
	reqs := e.llm.Requests()
	body, _ := json.Marshal(reqs[len(reqs)-1].Body)
	if !strings.Contains(string(body), "needs the user's approval") || !strings.Contains(string(body), "where zot's extensions, trust and settings live") || strings.Contains(string(body), "--add-dir") {
		t.Fatalf("the model was not told: %s", body)
	}
}

// zot -p interrupted by SIGINT or SIGTERM while a tool runs exits with the
// shell's status for the signal (130, 143), says "interrupted", and leaves
// no tool process behind.
func TestPrintInterrupted(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		t.Run(tc.sig.String(), func(t *testing.T) {
			e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": "sleep 300 & echo $! > child.pid; wait"}))
			cmd := e.command(e.args("--no-session", "-p", "run the long thing")...)
			var so, se bytes.Buffer
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			pidFile := filepath.Join(e.cwd, "child.pid")
			child := 0
			for i := 0; i < 1200 && child == 0; i++ {
				if b, err := os.ReadFile(pidFile); err == nil && len(b) > 0 && b[len(b)-1] == '\n' {
					child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
				} else {
					time.Sleep(50 * time.Millisecond)
				}
			}
			if child == 0 {
				cmd.Process.Kill()
				t.Fatal("the tool never started")
			}
			cmd.Process.Signal(tc.sig)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case <-done:
			case <-time.After(60 * time.Second):
				cmd.Process.Kill()
				t.Fatal("zot -p did not exit after the signal")
			}
			if code := cmd.ProcessState.ExitCode(); code != tc.code {
				t.Fatalf("exit code %d, want %d\nstderr: %s", code, tc.code, se.String())
			}
			if !strings.Contains(se.String(), "interrupted") {
				t.Fatalf("stderr does not say interrupted: %q", se.String())
			}
			proctest.WaitGone(t, child, "the tool's child after the interrupt")
		})
	}
}
