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
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

// A SEP extension (extension.toml) under zot lsp: its tool answers and
// its tool/update progress reaches the editor's tool card; its gate asks
// through zot/ui/request (confirm) and the answer blocks or allows.
func TestSEPExtensionUnderLSP(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("gate_say", map[string]any{"phrase": "hi"}),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.TextReply("ok"))
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(e.root, "build"), 0o755)
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	dir := filepath.Join(t.TempDir(), "gate")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"gate\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"gate\"\nSEPEXT_OUT = %q\nSEPEXT_HOOK = \"gate\"\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	cfg := e.config("--ext", dir)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	var asked []map[string]any
	ed.UI = func(p map[string]any) map[string]any {
		asked = append(asked, p)
		return map[string]any{"value": !strings.Contains(jsonString(p), "keep")}
	}
	ed.Initialize(nil)
	waitExt(ed, "gate", "loaded")
	evs := ed.WaitDone(ed.Prompt("go").RunID)
	var results []servertest.Event
	var progress []string
	for _, ev := range evs {
		switch ev.Type() {
		case "tool_result":
			results = append(results, ev)
		case "tool_progress":
			progress = append(progress, ev.Str("text"))
		}
	}
	if len(results) != 3 || servertest.ResultText(results[0]) != "said: hi" {
		t.Fatalf("results: %v", results)
	}
	if len(progress) == 0 || progress[0] != "halfway (50%)" { // bash streams its own later
		t.Fatalf("progress on the tool card: %q", progress)
	}
	if results[1]["is_error"] != true || !strings.Contains(servertest.ResultText(results[1]), "the user said no") {
		t.Fatalf("refused: %v", results[1])
	}
	if results[2]["is_error"] != false || !strings.Contains(servertest.ResultText(results[2]), "removed") {
		t.Fatalf("allowed: %v", results[2])
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Fatal("the refused command ran")
	}
	if len(asked) != 2 || asked[0]["extension"] != "gate" || asked[0]["kind"] != "confirm" {
		t.Fatalf("zot/ui/request params: %v", asked)
	}
}

// zot/command/complete: an SEP extension's command completes its
// argument through command/complete; /mode completes the modes; a
// command that does not exist is InvalidParams.
func TestSEPCommandCompleteUnderLSP(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "col")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"col\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"col\"\nSEPEXT_OUT = %q\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	waitExt(ed, "col", "loaded")
	type result struct {
		Completions []struct {
			Value       string `json:"value"`
			Description string `json:"description"`
		} `json:"completions"`
	}
	var r result
	ed.MustCall("zot/command/complete", map[string]any{"name": "/col-note", "args": "gr"}, &r)
	if fmt.Sprint(r.Completions) != "[{green the colour green} {grey the colour grey}]" {
		t.Fatalf("completions: %+v", r.Completions)
	}
	r = result{}
	ed.MustCall("zot/command/complete", map[string]any{"name": "mode", "args": "r"}, &r)
	if fmt.Sprint(r.Completions) != "[{readonly }]" {
		t.Fatalf("/mode completions: %+v", r.Completions)
	}
	if err := ed.Call("zot/command/complete", map[string]any{"name": "nosuch", "args": ""}, &r); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "names no command") {
		t.Fatalf("an unknown command: %+v", err)
	}
}

// The TypeScript SEP extensions (extensions/testdata/sep-ts: hello,
// permission-gate, plan-mode, todo, and the plain-JS echo) under zot lsp
// with the scripted model, as a user runs them (--ext DIR): hello's
// progress reaches the tool card, echo's tool, command and completion
// answer, the gate asks through zot/ui/request and blocks, /plan on
// narrows the model's tools and blocks a write, todo draws its widget
// (zot/ui/widget) and asks before clearing.
func TestTypeScriptSEPExtensionsUnderLSP(t *testing.T) {
	testenv.NeedCommand(t, "node", "the TypeScript SEP extensions")
	dir, _ := filepath.Abs(filepath.Join("..", "..", "extensions", "testdata", "sep-ts"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "tsx")); err != nil {
		testenv.Skip(t, "the TypeScript runner is not installed: run make sep-ts-deps")
	}
	e := newEnv(t,
		llmtest.ToolReply("greet", map[string]any{"name": "Ada"}), llmtest.TextReply("greeted"),
		llmtest.ToolReply("say", map[string]any{"phrase": "ping"}), llmtest.TextReply("said"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf keep"}), llmtest.TextReply("refused"),
		llmtest.ToolReply("write", map[string]any{"path": "plan.txt", "content": "x"}), llmtest.TextReply("planned"),
		llmtest.ToolReply("todo_add", map[string]any{"text": "milk"}), llmtest.TextReply("added"),
		llmtest.ToolReply("todo_clear", map[string]any{}), llmtest.TextReply("cleared"),
	)
	os.MkdirAll(filepath.Join(e.root, "keep"), 0o755)
	var args []string
	names := []string{"hello", "echo", "permission-gate", "plan-mode", "todo"}
	for _, n := range names {
		args = append(args, "--ext", filepath.Join(dir, n))
	}
	cfg := e.config(args...)
	cfg.ZotUI = true
	ed := servertest.Start(t, cfg)
	var mu sync.Mutex
	var asked []map[string]any
	ed.UI = func(p map[string]any) map[string]any {
		mu.Lock()
		asked = append(asked, p)
		mu.Unlock()
		// No to the gate, yes to todo's clear.
		return map[string]any{"value": p["extension"] == "todo"}
	}
	ed.Initialize(nil)
	for _, n := range names {
		waitExt(ed, n, "loaded")
	}
	run := func(text string) []servertest.Event {
		t.Helper()
		return ed.WaitDone(ed.Prompt(text).RunID)
	}
	result := func(evs []servertest.Event) servertest.Event {
		t.Helper()
		for _, ev := range evs {
			if ev.Type() == "tool_result" {
				return ev
			}
		}
		t.Fatalf("no tool_result in the run")
		return nil
	}

	evs := run("greet Ada")
	if r := servertest.ResultText(result(evs)); r != "Hello, Ada!" {
		t.Fatalf("hello: %q", r)
	}
	progress := ""
	for _, ev := range evs {
		if ev.Type() == "tool_progress" {
			progress = ev.Str("text")
		}
	}
	if progress != "greeting Ada (50%)" {
		t.Fatalf("hello's progress on the tool card: %q", progress)
	}
	if r := servertest.ResultText(result(run("say ping"))); r != "ping" {
		t.Fatalf("echo: %q", r)
	}
	var cmd map[string]any
	ed.MustCall("zot/command", map[string]any{"name": "echo-cmd", "args": "hi"}, &cmd)
	if cmd["display"] != "ran echo-cmd hi" {
		t.Fatalf("echo-cmd: %v", cmd)
	}
	var comp map[string]any
	ed.MustCall("zot/command/complete", map[string]any{"name": "plan", "args": "o"}, &comp)
	if jsonString(comp) != `{"completions":[{"value":"on"},{"value":"off"}]}` {
		t.Fatalf("/plan completion: %v", comp)
	}

	if r := result(run("clean")); r["is_error"] != true || !strings.Contains(servertest.ResultText(r), "the user refused a dangerous command") {
		t.Fatalf("the gate: %v", r)
	}
	if _, err := os.Stat(filepath.Join(e.root, "keep")); err != nil {
		t.Fatal("the refused command ran")
	}

	ed.MustCall("zot/command", map[string]any{"name": "plan", "args": "on"}, &cmd)
	before := len(e.llm.Requests())
	if r := servertest.ResultText(result(run("write the plan"))); !strings.Contains(r, "plan mode is on") {
		t.Fatalf("a write in plan mode: %q", r)
	}
	var offered []string
	for _, x := range e.llm.Requests()[before].Body["tools"].([]any) {
		offered = append(offered, x.(map[string]any)["name"].(string))
	}
	if strings.Join(offered, ",") != "read,ls,grep,find" {
		t.Fatalf("tools offered in plan mode: %v", offered)
	}
	ed.MustCall("zot/command", map[string]any{"name": "plan", "args": "off"}, &cmd)

	if r := servertest.ResultText(result(run("add milk"))); r != "Added: milk (1 total)" {
		t.Fatalf("todo_add: %q", r)
	}
	ed.WaitNote("zot/ui/widget", func(p json.RawMessage) bool { return strings.Contains(string(p), "milk") })
	if r := servertest.ResultText(result(run("clear"))); r != "Cleared 1 todos." {
		t.Fatalf("todo_clear: %q", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0]["extension"] != "permission-gate" || asked[0]["kind"] != "confirm" || asked[1]["extension"] != "todo" {
		t.Fatalf("zot/ui/request: %v", asked)
	}
}

// A SEP extension's provider under zot lsp: its model is in zot/models
// (the editors' model pickers), zot/setModel selects it, and a prompt
// streams through it onto the editor's events like a built-in model's.
func TestSEPProviderUnderLSP(t *testing.T) {
	e := newEnv(t)
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "llm")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"llm\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"llm\"\nSEPEXT_OUT = %q\nSEPEXT_PROVIDER = \"echo-llm\"\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	ed := servertest.Start(t, e.config("--ext", dir))
	ed.Initialize(nil)
	waitExt(ed, "llm", "loaded")
	var models struct {
		Models []struct {
			ID       string `json:"id"`
			Provider string `json:"provider"`
		} `json:"models"`
	}
	ed.MustCall("zot/models", nil, &models)
	found := false
	for _, m := range models.Models {
		found = found || (m.ID == "echo-llm/echo-1" && m.Provider == "echo-llm")
	}
	if !found {
		t.Fatalf("zot/models: %+v", models.Models)
	}
	ed.MustCall("zot/setModel", map[string]any{"model": "echo-llm/echo-1"}, nil)
	evs := ed.WaitDone(ed.Prompt("hello there").RunID)
	var deltas []string
	for _, ev := range evs {
		if ev.Type() == "text_delta" {
			deltas = append(deltas, ev.Str("delta"))
		}
	}
	if strings.Join(deltas, "|") != "echo: he|llo there" {
		t.Fatalf("text deltas %q", deltas)
	}
	if n := len(e.llm.Requests()); n != 0 {
		t.Fatalf("zot's own provider was called %d times", n)
	}
}

// A SEP extension's exec/run under zot lsp in ask mode: the user is asked
// with the bash approval, the whole command as it will run, and a denial
// reaches the extension as -32000; an allow runs it.
func TestSEPExecAsksInAskMode(t *testing.T) {
	call := llmtest.ToolReply("ex_exec", map[string]any{"command": "printf", "args": []string{"%s", "a b"}})
	e := newEnv(t, call, llmtest.TextReply("denied"), call, llmtest.TextReply("ran"))
	bin := filepath.Join(t.TempDir(), "sepext")
	if err := servertest.Build("./extensions/testdata/sepext", bin, false); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "ex")
	os.MkdirAll(dir, 0o755)
	toml := fmt.Sprintf("name = \"ex\"\nversion = \"0.1.0\"\n\n[run]\ncommand = %q\n\n[run.env]\nSEPEXT_NAME = \"ex\"\nSEPEXT_OUT = %q\n", bin, filepath.Join(dir, "notes"))
	os.WriteFile(filepath.Join(dir, "extension.toml"), []byte(toml), 0o644)
	cfg := e.config("--ext", dir)
	cfg.InitOptions = map[string]any{"permissionMode": "ask"}
	ed := servertest.Start(t, cfg)
	var mu sync.Mutex
	var asked []string
	answer := "Deny"
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg)
		return answer
	}
	ed.Initialize(nil)
	waitExt(ed, "ex", "loaded")
	result := func() string {
		t.Helper()
		for _, ev := range ed.WaitDone(ed.Prompt("run it").RunID) {
			if ev.Type() == "tool_result" {
				return servertest.ResultText(ev)
			}
		}
		t.Fatal("no tool_result")
		return ""
	}
	if r := result(); !strings.HasPrefix(r, "refused -32000: blocked: ") {
		t.Fatalf("denied: %q", r)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "zot wants to run a command:\n\nprintf '%s' 'a b'" {
		t.Fatalf("asked %q", asked)
	}
	answer = "Allow once"
	mu.Unlock()
	if r := result(); r != `exit 0 out "a b" err ""` {
		t.Fatalf("allowed: %q", r)
	}
}
