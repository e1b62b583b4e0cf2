package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/testenv"
)

// piRuntime is the source tree's pi runtime (extensions/pi/runtime),
// as $ZOT_PI_RUNTIME for a zot under test, with a long start wait; it skips (testenv) without
// node or without the runtime's node_modules (make pi-runtime).
func piRuntime(t testing.TB) []string {
	t.Helper()
	testenv.NeedCommand(t, "node", "pi extensions")
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "extensions", "pi", "runtime")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "sucrase")); err != nil {
		testenv.Skip(t, "the pi runtime's node_modules are not installed (make pi-runtime)")
	}
	// A prompt or a user's command waits for the pi extensions to start
	// (not the 2 s a user's does): these tests are about what the
	// extensions do, and a loaded machine's Node start can take longer.
	return []string{extensions.EnvPiRuntime + "=" + dir, extensions.EnvStartWait + "=5m"}
}

// piTestdata is a pi extension of extensions/testdata/piext.
func piTestdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "extensions", "testdata", "piext", name)
}

// A pi extension (a .ts module, unmodified pi API) under zot rpc: its tool
// answers with its result and its onUpdate progress reaches the tool
// card; its tool_call handler blocks a command, which then never runs.
func TestRPCPiToolAndGuard(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("shout", map[string]any{"phrase": "hi"}),
		llmtest.TextReply("shouted"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
		llmtest.TextReply("refused"),
	)
	e.dumpExtLogs()
	e.write("build/x", "x")
	p := e.startRPC(rt, "-e", piTestdata("gate.ts"))

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "shout hi"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), "HI!") {
		t.Fatalf("tool_result: %v (%v)\nstderr: %s", tr, types(frames), p.errb.String())
	}
	var progress []string
	for _, f := range frames {
		if f["type"] == "tool_progress" {
			progress = append(progress, fmt.Sprint(f["text"]))
		}
	}
	if !strings.Contains(strings.Join(progress, "|"), "warming up") {
		t.Fatalf("onUpdate did not reach the tool card: %q", progress)
	}

	p.send(map[string]any{"id": "2", "type": "prompt", "message": "clean"})
	frames = p.until(isType("done"))
	tr = find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "gate: rm -rf is not allowed here") {
		t.Fatalf("blocked call: %v\nstderr: %s", tr, p.errb.String())
	}
	if e.read("build/x") != "x" {
		t.Fatal("the blocked command ran")
	}
}

// Without Node 20+ a pi extension cannot start: one clear message names
// it and what to install, and zot answers the prompt without it — with no
// node on PATH, and with a node that is too old.
func TestPrintPiWithoutNode(t *testing.T) {
	rt := piRuntime(t)
	for _, tc := range []struct{ name, node string }{
		{"no node", ""},
		{"node 18", "#!/bin/sh\necho v18.19.0\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.node != "" && runtime.GOOS == "windows" {
				testenv.Skip(t, "the old node is a shell script")
			}
			e := newEnv(t, llmtest.TextReply("answered without it"))
			bin := t.TempDir() // a PATH with git (zot's checkpoints) and maybe an old node
			if g, err := exec.LookPath("git"); err == nil {
				if err := os.Symlink(g, filepath.Join(bin, "git")); err != nil {
					t.Fatal(err)
				}
			}
			if tc.node != "" {
				if err := os.WriteFile(filepath.Join(bin, "node"), []byte(tc.node), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := e.command(e.args("-p", "hi", "-e", piTestdata("gate.ts"))...)
			cmd.Env = append(cmd.Env, rt...)
			for i, kv := range cmd.Env {
				if strings.HasPrefix(kv, "PATH=") {
					cmd.Env[i] = "PATH=" + bin
				}
			}
			var so, se strings.Builder
			cmd.Stdout, cmd.Stderr = &so, &se
			if err := cmd.Run(); err != nil {
				t.Fatalf("zot -p failed: %v\nstderr: %s", err, se.String())
			}
			if !strings.Contains(so.String(), "answered without it") {
				t.Fatalf("stdout: %q\nstderr: %s", so.String(), se.String())
			}
			var msgs []string
			for _, l := range strings.Split(se.String(), "\n") {
				if strings.Contains(l, "Node.js 20") {
					msgs = append(msgs, l)
				}
			}
			if len(msgs) != 1 || !strings.Contains(msgs[0], "extension gate") || !strings.Contains(msgs[0], "install Node.js 20+") {
				t.Fatalf("want one message naming the extension and what to install, got %q\nstderr: %s", msgs, se.String())
			}
			if tc.node != "" && !strings.Contains(msgs[0], "v18.19.0") {
				t.Fatalf("the message should name the old version: %q", msgs[0])
			}
		})
	}
}

// A pi package (package.json with a "pi" key) with two extensions and its
// own node_modules, and a directory with index.ts, load as pi loads them:
// both of the package's extensions run in one process, the package's own
// dependency resolves from its node_modules, and the directory's tool
// answers.
func TestRPCPiPackageAndDirectory(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("pack_a", map[string]any{}),
		llmtest.TextReply("a"),
		llmtest.ToolReply("pack_b", map[string]any{}),
		llmtest.TextReply("b"),
		llmtest.ToolReply("dir_tool", map[string]any{}),
		llmtest.TextReply("dir"),
	)
	e.dumpExtLogs()
	root := t.TempDir()
	files := map[string]string{
		"pack/package.json": `{"name":"@acme/pi-pack","pi":{"extensions":["./a.ts","./b"]}}`,
		"pack/a.ts":         "import { decorate } from \"decorator\";\nexport default function (pi: any) {\n  pi.registerTool({ name: \"pack_a\", label: \"A\", description: \"a\", parameters: { type: \"object\", properties: {} }, async execute() { return { content: [{ type: \"text\", text: decorate(\"from a\") }] }; } });\n}\n",
		"pack/b/index.ts":   "export default function (pi: any) {\n  pi.registerTool({ name: \"pack_b\", label: \"B\", description: \"b\", parameters: { type: \"object\", properties: {} }, async execute() { return { content: [{ type: \"text\", text: `from b, pid ${process.pid}` }] }; } });\n}\n",
		"pack/node_modules/decorator/package.json": `{"name":"decorator","main":"index.js"}`,
		"pack/node_modules/decorator/index.js":     "exports.decorate = (s) => `<<${s}, pid ${process.pid}>>`;\n",
		"dirext/index.ts":                          "export default function (pi: any) {\n  pi.registerTool({ name: \"dir_tool\", label: \"D\", description: \"d\", parameters: { type: \"object\", properties: {} }, async execute() { return { content: [{ type: \"text\", text: \"from a directory\" }] }; } });\n}\n",
	}
	for name, body := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := e.startRPC(rt, "-e", filepath.Join(root, "pack"), "-e", filepath.Join(root, "dirext"))
	pid := regexp.MustCompile(`pid (\d+)`)
	result := func(id, prompt, want string) string {
		t.Helper()
		p.send(map[string]any{"id": id, "type": "prompt", "message": prompt})
		tr := find(p.until(isType("done")), "tool_result")
		if tr == nil || !strings.Contains(toJSON(tr), want) {
			t.Fatalf("%s: %v\nstderr: %s", prompt, tr, p.errb.String())
		}
		return toJSON(tr)
	}
	a := result("1", "a", "from a, pid ")
	b := result("2", "b", "from b, pid ")
	if pa, pb := pid.FindStringSubmatch(a), pid.FindStringSubmatch(b); pa == nil || pb == nil || pa[1] != pb[1] {
		t.Fatalf("the package's two extensions should share one process: %s / %s", a, b)
	}
	result("3", "dir", "from a directory")
	if l := e.waitLog("pi-pack", "started pi-pack"); !strings.Contains(l, "a.ts") || !strings.Contains(l, "index.ts") {
		t.Fatalf("pi-pack's log: %s", l)
	}
}

// piOut is the file extensions/testdata/piext/members.ts appends what it
// sees to ($PIEXT_OUT).
type piOut string

// wait returns the first line whose "what" is what and whose JSON holds
// every string of has, waiting for it (bounded: a hang, not a timing
// check).
func (o piOut) wait(t *testing.T, what string, has ...string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(string(o))
	lines:
		for _, l := range strings.Split(string(b), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) != nil || m["what"] != what {
				continue
			}
			for _, h := range has {
				if !strings.Contains(l, h) {
					continue lines
				}
			}
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("members never noted %s %q; it noted:\n%s", what, has, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// command runs an extension command over zot rpc and returns the frames up
// to its response.
func (p *rpcProc) command(id, name, args string) []map[string]any {
	p.t.Helper()
	p.send(map[string]any{"id": id, "type": "command", "name": name, "args": args})
	return p.until(func(m map[string]any) bool { return m["type"] == "response" && m["id"] == id })
}

// notified waits for the extension's next ext_notify starting with prefix.
func (p *rpcProc) notified(prefix string) string {
	p.t.Helper()
	fs := p.until(func(m map[string]any) bool {
		return m["type"] == "ext_notify" && strings.HasPrefix(fmt.Sprint(m["message"]), prefix)
	})
	return fmt.Sprint(fs[len(fs)-1]["message"])
}

// commandNotify runs an extension command and returns the ext_notify
// starting with prefix it causes (before or after the command's response).
func (p *rpcProc) commandNotify(id, name, args, prefix string) string {
	p.t.Helper()
	p.send(map[string]any{"id": id, "type": "command", "name": name, "args": args})
	var msg string
	var answered bool
	p.until(func(m map[string]any) bool {
		answered = answered || m["type"] == "response" && m["id"] == id
		if s := fmt.Sprint(m["message"]); m["type"] == "ext_notify" && strings.HasPrefix(s, prefix) {
			msg = s
		}
		return answered && msg != ""
	})
	return msg
}

// Every ExtensionAPI / ExtensionContext member of a pi extension
// (extensions/testdata/piext/members.ts) over real zot rpc: pi's events
// with their payloads, the input / before_agent_start / context /
// tool_result hooks and their results, TypeBox and zod parameters,
// renderResult, AbortSignal on abort, every dialog (answered in the
// client, texts as the extension wrote them) and its dismissal by an
// AbortSignal, status / widgets / title / working message, flags,
// session entries and name, tools, sendMessage with a message renderer,
// sendUserMessage, exec (through the bash tool's guards: another pi
// extension's dialog stops it), the events bus between two pi extensions,
// a shortcut, and terminal-only members that must not throw.
func TestRPCPiMembers(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("m_add", map[string]any{"a": 2, "b": 3}),
		llmtest.TextReply("done adding"),
		llmtest.ToolReply("m_wait", map[string]any{"mode": "forever"}),
		llmtest.TextReply("got the note"),
		llmtest.TextReply("got the user message"),
	)
	e.dumpExtLogs()
	out := piOut(filepath.Join(t.TempDir(), "members.ndjson"))
	e.write("build/x", "x")
	p := e.startRPC(append(rt, "PIEXT_OUT="+string(out)),
		"-e", piTestdata("members.ts"), "--extension", piTestdata("echo-bus.ts"), "-e", piExample("permission-gate.ts"),
		"--flag", "greeting=hey", "--flag", "loud")
	out.wait(t, "session_start")

	// Hooks and events of a prompt with a tool call.
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "shh add two and three"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), "sum=5") {
		t.Fatalf("m_add: %v\nstderr: %s", tr, p.errb.String())
	}
	if !strings.Contains(toJSON(frames), "rendered: 2 + 3") {
		t.Fatalf("renderResult's text is not on the tool card: %v", types(frames))
	}
	out.wait(t, "input", `"text":"shh add two and three"`)
	out.wait(t, "before_agent_start", `"prompt":"add two and three"`, `"hasSystemPrompt":true`)
	out.wait(t, "context")
	out.wait(t, "agent_start")
	out.wait(t, "turn_start", `"turnIndex":0`)
	out.wait(t, "tool_execution_start", `"toolName":"m_add"`, `"a":2`)
	out.wait(t, "tool_result", `"toolName":"m_add"`, "sum=5")
	out.wait(t, "tool_execution_end", `"toolName":"m_add"`, `"isError":false`)
	out.wait(t, "message_end", `"text":"done adding"`)
	out.wait(t, "turn_end")
	out.wait(t, "agent_end")
	reqs := e.llm.Requests()
	first := toJSON(reqs[0].Body)
	for _, want := range []string{"add two and three", "MEMBERS-CONTEXT", "MEMBERS-SYSTEM"} {
		if !strings.Contains(first, want) {
			t.Fatalf("the model's request lacks %q (input transform, before_agent_start message and system prompt): %s", want, first)
		}
	}
	if strings.Contains(first, "shh add") {
		t.Fatal("the input hook's transform did not replace the prompt")
	}

	// A tool's AbortSignal fires when the client aborts.
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "wait"})
	started := out.wait(t, "m_wait started")
	p.send(map[string]any{"id": "3", "type": "abort"})
	out.wait(t, "m_wait aborted", fmt.Sprint(started["id"]))
	p.until(isType("done"))

	// Every dialog, answered by the client.
	p.send(map[string]any{"id": "4", "type": "command", "name": "m-ui"})
	answers := map[string]any{"confirm": true, "select": "beta", "input": "typed", "editor": "edited"}
	for _, kind := range []string{"confirm", "select", "input", "editor"} {
		fs := p.until(isType("ext_ui_request"))
		req := fs[len(fs)-1]
		title := map[string]string{"confirm": "M confirm", "select": "M select", "input": "M input", "editor": "M editor"}[kind]
		if req["extension"] != "members" || req["title"] != title {
			t.Fatalf("%s dialog: %v", kind, req)
		}
		switch kind {
		case "confirm":
			if req["kind"] != "confirm" || req["message"] != "Proceed with members?" {
				t.Fatalf("confirm: %v", req)
			}
		case "select":
			if toJSON(req["options"]) != `["alpha","beta"]` {
				t.Fatalf("select: %v", req)
			}
		case "input":
			if req["kind"] != "input" || req["placeholder"] != "type here" {
				t.Fatalf("input: %v", req)
			}
		case "editor":
			if req["kind"] != "input" || req["default"] != "prefilled" {
				t.Fatalf("editor: %v", req)
			}
		}
		p.send(map[string]any{"type": "ui_response", "ui_id": req["id"], "value": answers[kind]})
	}
	if got := p.notified("ui:"); got != "ui: confirm=true select=beta input=typed editor=edited hasUI=true" {
		t.Fatalf("dialog answers: %q", got)
	}

	// A dialog the extension withdraws (AbortSignal): the client is told
	// to close it, and the extension's select resolves undefined.
	p.send(map[string]any{"id": "5", "type": "command", "name": "m-ask"})
	fs := p.until(isType("ext_ui_request"))
	askID := fs[len(fs)-1]["id"]
	p.send(map[string]any{"id": "6", "type": "command", "name": "m-dismiss"})
	var closed bool
	var dismissed string
	p.until(func(m map[string]any) bool {
		closed = closed || m["type"] == "ext_ui_closed" && m["id"] == askID
		if m["type"] == "ext_notify" && strings.HasPrefix(fmt.Sprint(m["message"]), "dismissed:") {
			dismissed = fmt.Sprint(m["message"])
		}
		return closed && dismissed != ""
	})
	if dismissed != "dismissed: true" {
		t.Fatalf("withdrawn dialog: %q", dismissed)
	}

	// Status, widgets (lines and a component), title, working message;
	// terminal-only members accepted.
	p.send(map[string]any{"id": "7", "type": "command", "name": "m-views"})
	fs = p.until(func(m map[string]any) bool {
		return m["type"] == "ext_notify" && strings.HasPrefix(fmt.Sprint(m["message"]), "views:")
	})
	all := toJSON(fs)
	for _, want := range []string{`"key":"m","text":"members ok"`, `"lines":["line one","line two"]`, `"lines":["from a component"]`, `"key":"title","text":"M title"`, `"key":"working","text":"M working"`, "views: editor=draft theme=false fg=x"} {
		if !strings.Contains(all, want) {
			t.Fatalf("views lack %s:\n%s", want, all)
		}
	}
	if log := e.waitLog("members", "ui.setFooter"); strings.Count(log, "ui.setFooter") != 1 {
		t.Fatalf("setFooter should be logged once:\n%s", log)
	}

	// Flags: --flag name=value, --flag name (a boolean), a default.
	if got := p.commandNotify("8", "m-flags", "", "flags:"); got != "flags: greeting=hey loud=true unknown=undefined" {
		t.Fatalf("flags: %q", got)
	}

	// Session: entries, name, model, tools, the transcript as pi's branch.
	got := p.commandNotify("9", "m-session", "", "session:")
	for _, want := range []string{"name=members session", "idle=true", "pending=false", "active=true", "all=true", "branch=user,assistant,toolResult,assistant,user,assistant"} {
		if !strings.Contains(got, want) {
			t.Fatalf("session: %q lacks %q", got, want)
		}
	}
	p.command("10", "m-only", "read,m_add")
	if got := p.commandNotify("11", "m-session", "", "session:"); !strings.Contains(got, "active=true") {
		t.Fatalf("after setActiveTools: %q", got)
	}

	// sendMessage with triggerTurn while idle starts a run, shown through
	// its message renderer; sendUserMessage too.
	p.command("12", "m-send", "")
	fs = p.until(isType("done"))
	if !strings.Contains(toJSON(fs), "[m-note] noted") {
		t.Fatalf("sendMessage: %v", fs)
	}
	p.command("13", "m-send", "user")
	fs = p.until(isType("done"))
	if !strings.Contains(toJSON(fs), "from members") || !strings.Contains(toJSON(fs), "got the user message") {
		t.Fatalf("sendUserMessage: %v", fs)
	}

	// exec, the bus between two pi extensions, a shortcut as a command.
	if got := p.commandNotify("14", "m-exec", "", "exec:"); got != "exec: stdout=out stderr=err code=3" {
		t.Fatalf("exec: %q", got)
	}
	// exec goes through the bash tool's guards: permission-gate asks, the
	// user says No, and rm never runs.
	p.send(map[string]any{"id": "14b", "type": "command", "name": "m-exec-rm"})
	if req := p.answerUI("No"); req["extension"] != "permission-gate" || !strings.Contains(fmt.Sprint(req["title"]), "rm -rf build") {
		t.Fatalf("the guard's dialog for exec: %v", req)
	}
	if got := p.notified("exec-rm:"); got != "exec-rm: code=1 stderr=blocked: Blocked by user" {
		t.Fatalf("exec of a guarded command: %q", got)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the guarded exec ran")
	}
	p.command("15", "m-bus", "")
	out.wait(t, "pong", `"echoed":"members"`)
	p.commandNotify("16", "shortcut:ctrl-shift-m", "", "shortcut ran")

	// The end of the session reaches the extension.
	p.in.Close()
	for range p.lines {
	}
	out.wait(t, "session_shutdown")
}

// piExample is one of our re-writes of pi's examples
// (extensions/testdata/piext/examples).
func piExample(name string) string { return piTestdata(filepath.Join("examples", name)) }

// answerUI waits for the next dialog and answers it with value; it returns
// the request.
func (p *rpcProc) answerUI(value any) map[string]any {
	p.t.Helper()
	fs := p.until(isType("ext_ui_request"))
	req := fs[len(fs)-1]
	p.send(map[string]any{"type": "ui_response", "ui_id": req["id"], "value": value})
	return req
}

// pi's permission-gate, protected-paths and hello examples (our
// re-writes) under zot rpc: the gate's dialog carries its text and the
// user's No blocks the command (it never runs), Yes lets it run; a write
// to .env is blocked with the extension's reason and warning; the hello
// tool answers.
func TestRPCPiExamplesGate(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
		llmtest.TextReply("refused"),
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build && echo removed"}),
		llmtest.TextReply("removed"),
		llmtest.ToolReply("write", map[string]any{"path": ".env", "content": "KEY=1"}),
		llmtest.TextReply("not written"),
		llmtest.ToolReply("hello", map[string]any{"name": "zot"}),
		llmtest.TextReply("greeted"),
	)
	e.dumpExtLogs()
	e.write("build/x", "x")
	p := e.startRPC(rt, "-e", piExample("permission-gate.ts"), "-e", piExample("protected-paths.ts"), "-e", piExample("hello.ts"))

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "clean"})
	req := p.answerUI("No")
	if req["extension"] != "permission-gate" || req["kind"] != "select" || req["title"] != "⚠️ Dangerous command:\n\n  rm -rf build\n\nAllow?" || toJSON(req["options"]) != `["Yes","No"]` {
		t.Fatalf("the gate's dialog: %v", req)
	}
	tr := find(p.until(isType("done")), "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "Blocked by user") {
		t.Fatalf("refused: %v", tr)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the refused command ran")
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "clean now"})
	p.answerUI("Yes")
	tr = find(p.until(isType("done")), "tool_result")
	if tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr), "removed") {
		t.Fatalf("allowed: %v", tr)
	}

	p.send(map[string]any{"id": "3", "type": "prompt", "message": "write the env"})
	frames := p.until(isType("done"))
	tr = find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), `Path \".env\" is protected`) {
		t.Fatalf("protected path: %v", tr)
	}
	if n := find(frames, "ext_notify"); n == nil || n["level"] != "warn" || n["message"] != "Blocked write to protected path: .env" {
		t.Fatalf("protected-paths' warning: %v", n)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, ".env")); err == nil {
		t.Fatal(".env was written")
	}

	p.send(map[string]any{"id": "4", "type": "prompt", "message": "greet"})
	tr = find(p.until(isType("done")), "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), "Hello, zot!") {
		t.Fatalf("hello: %v", tr)
	}
}

// The same gate under zot -p: no UI (ctx.hasUI false), so the dangerous
// command is blocked outright with the extension's reason, and never runs.
func TestPrintPiPermissionGate(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "rm -rf build"}),
		llmtest.TextReply("could not"),
	)
	e.dumpExtLogs()
	e.write("build/x", "x")
	cmd := e.command(e.args("-p", "clean", "--json", "-e", piExample("permission-gate.ts"))...)
	cmd.Env = append(cmd.Env, rt...)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot -p: %v", err)
	}
	if !strings.Contains(string(b), "Dangerous command blocked (no UI for confirmation)") {
		t.Fatalf("zot -p output lacks the gate's reason:\n%s", b)
	}
	if e.read("build/x") != "x" {
		t.Fatal("the blocked command ran")
	}
}

// pi's todo example (our re-write): its state lives in its tool results'
// details, and comes back after a resume (zot -p, then zot rpc -c), as
// under pi; its /todos command shows it.
func TestRPCPiTodoSurvivesResume(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("todo", map[string]any{"action": "add", "text": "milk"}),
		llmtest.TextReply("added"),
		llmtest.ToolReply("todo", map[string]any{"action": "add", "text": "eggs"}),
		llmtest.TextReply("added again"),
	)
	e.dumpExtLogs()
	// zot -p saves the session; zot rpc -c resumes it.
	cmd := e.command(e.args("-p", "add milk", "--json", "-e", piExample("todo.ts"))...)
	cmd.Env = append(cmd.Env, rt...)
	if b, err := cmd.Output(); err != nil || !strings.Contains(string(b), "Added todo #1: milk") {
		t.Fatalf("todo add under zot -p: %v\n%s", err, b)
	}

	q := e.startRPC(rt, "-c", "-e", piExample("todo.ts"))
	if got := q.commandNotify("1", "todos", "", "["); got != "[ ] #1: milk" {
		t.Fatalf("/todos after resume: %q\nstderr: %s", got, q.errb.String())
	}
	q.send(map[string]any{"id": "2", "type": "prompt", "message": "add eggs"})
	tr := find(q.until(isType("done")), "tool_result")
	if tr == nil || !strings.Contains(toJSON(tr), "Added todo #2: eggs") {
		t.Fatalf("the resumed list did not go on at #2: %v", tr)
	}
}

// modelTools is the tool names a recorded model request offered.
func modelTools(body map[string]any) []string {
	var out []string
	ts, _ := body["tools"].([]any)
	for _, x := range ts {
		if m, ok := x.(map[string]any); ok {
			out = append(out, fmt.Sprint(m["name"]))
		}
	}
	return out
}

// pi's plan-mode, tools, preset and commands examples (our re-writes):
// --flag plan starts in plan mode (read-only tools offered to the model,
// the status), a writing bash command is blocked with the extension's
// reason, the model's "Plan:" becomes a widget, /plan turns it off;
// /tools disables a tool and the choice survives a resume; --flag
// preset=NAME applies a preset from .pi/presets.json (tools and
// instructions reach the model); /commands lists the commands.
func TestRPCPiExamplesModes(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "touch made"}),
		llmtest.TextReply("Here is my\nPlan:\n1. read the code\n2. change it"),
		llmtest.TextReply("free again"),
	)
	e.dumpExtLogs()
	p := e.startRPC(rt, "--flag", "plan", "-e", piExample("plan-mode.ts"), "-e", piExample("commands.ts"))
	p.until(func(m map[string]any) bool {
		return m["type"] == "ext_status" && m["key"] == "plan-mode" && m["text"] == "⏸ plan"
	})
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "plan it"})
	var widget map[string]any
	var done bool
	frames := p.until(func(m map[string]any) bool {
		if m["type"] == "ext_widget" && m["key"] == "plan-todos" && m["lines"] != nil {
			widget = m
		}
		done = done || m["type"] == "done"
		return done && widget != nil
	})
	if toJSON(widget["lines"]) != `["☐ 1. read the code","☐ 2. change it"]` {
		t.Fatalf("plan widget: %v", widget)
	}
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true || !strings.Contains(toJSON(tr), "Plan mode: command blocked (not allowlisted)") {
		t.Fatalf("plan mode let a writing command through: %v", tr)
	}
	if _, err := os.Stat(filepath.Join(e.cwd, "made")); err == nil {
		t.Fatal("the blocked command ran")
	}
	offered := modelTools(e.llm.Requests()[0].Body)
	if slices.Contains(offered, "write") || slices.Contains(offered, "edit") || !slices.Contains(offered, "read") {
		t.Fatalf("plan mode offered %v", offered)
	}
	if got := p.commandNotify("2", "plan", "", "Plan mode"); got != "Plan mode disabled. Full access restored." {
		t.Fatalf("/plan: %q", got)
	}
	if got := p.commandNotify("3", "commands", "", "/"); !strings.Contains(got, "/plan - Toggle plan mode") || !strings.Contains(got, "/commands") {
		t.Fatalf("/commands: %q", got)
	}
	p.send(map[string]any{"id": "4", "type": "prompt", "message": "go"})
	p.until(isType("done"))
	if offered := modelTools(e.llm.Requests()[2].Body); !slices.Contains(offered, "write") {
		t.Fatalf("after /plan the model is offered %v", offered)
	}
}

// pi's tools and preset examples: /tools bash disables bash (the model is
// no longer offered it) and the choice comes back after a resume; a preset
// named by --flag preset=NAME sets the tools and adds its instructions to
// the system prompt.
func TestRPCPiExamplesToolsPreset(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t, llmtest.TextReply("zero"), llmtest.TextReply("one"), llmtest.TextReply("two"), llmtest.TextReply("three"))
	e.dumpExtLogs()
	if _, errOut, code := e.runZot(e.args("-p", "start")...); code != 0 {
		t.Fatalf("zot -p: %s", errOut)
	}
	p := e.startRPC(rt, "-c", "-e", piExample("tools.ts"))
	if got := p.commandNotify("1", "tools", "bash", "bash"); got != "bash disabled" {
		t.Fatalf("/tools bash: %q\nstderr: %s", got, p.errb.String())
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "hi"})
	p.until(isType("done"))
	if offered := modelTools(e.llm.Requests()[1].Body); slices.Contains(offered, "bash") || !slices.Contains(offered, "read") {
		t.Fatalf("after /tools bash the model is offered %v", offered)
	}
	p.in.Close()
	for range p.lines {
	}
	q := e.startRPC(rt, "-c", "-e", piExample("tools.ts"))
	q.send(map[string]any{"id": "1", "type": "prompt", "message": "again"})
	q.until(isType("done"))
	if offered := modelTools(e.llm.Requests()[2].Body); slices.Contains(offered, "bash") || !slices.Contains(offered, "read") {
		t.Fatalf("after a resume the model is offered %v", offered)
	}
	q.in.Close()
	for range q.lines {
	}

	e.write(".pi/presets.json", `{"ro":{"tools":["read","grep"],"instructions":"PRESET-INSTRUCTIONS"}}`)
	r := e.startRPC(rt, "--no-session", "--flag", "preset=ro", "-e", piExample("preset.ts"))
	r.until(func(m map[string]any) bool { return m["type"] == "ext_status" && m["text"] == "preset:ro" })
	r.send(map[string]any{"id": "1", "type": "prompt", "message": "look"})
	r.until(isType("done"))
	req := e.llm.Requests()[3].Body
	if offered := modelTools(req); toJSON(offered) != `["read","grep"]` {
		t.Fatalf("preset ro offers %v", offered)
	}
	if !strings.Contains(toJSON(req["system"]), "PRESET-INSTRUCTIONS") {
		t.Fatalf("the preset's instructions are not in the system prompt: %v", req["system"])
	}
}

// dumpExtLogs prints the extensions' logs when the test fails.
func (e *env) dumpExtLogs() {
	e.t.Cleanup(func() {
		if !e.t.Failed() {
			return
		}
		fs, _ := filepath.Glob(filepath.Join(e.home, "logs", "ext-*.log"))
		for _, f := range fs {
			b, _ := os.ReadFile(f)
			e.t.Logf("%s:\n%s", filepath.Base(f), b)
		}
	})
}

// A pi extension in the workspace's .pi/extensions is a project
// extension: it runs only once trusted (zot ext trust), and its trust
// covers the files it imports, so changing an imported helper while zot
// runs stops it as untrusted (asked again). One in pi's global directory
// (~/.pi/agent/extensions) needs no trust, and saving it reloads it: the
// next call gets the new code.
func TestRPCPiDiscoveryTrustReload(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("word", map[string]any{}),
		llmtest.TextReply("one"),
		llmtest.ToolReply("glob_word", map[string]any{}),
		llmtest.TextReply("two"),
		llmtest.ToolReply("glob_word", map[string]any{}),
		llmtest.TextReply("three"),
	)
	e.dumpExtLogs()
	piHome := t.TempDir()
	env := append(rt, extensions.EnvPiHome+"="+piHome)
	tool := func(name, body string) string {
		return fmt.Sprintf(`import { Type } from "@sinclair/typebox";
%s
export default function (pi: any) {
	pi.registerTool({ name: %q, label: %q, description: "a word", parameters: Type.Object({}),
		async execute() { return { content: [{ type: "text", text: word }] }; } });
}
`, body, name, name)
	}
	e.write(".pi/extensions/hot.ts", tool("word", `import { word } from "./lib/word";`))
	e.write(".pi/extensions/lib/word.ts", `export const word = "project-v1";`)
	globalExt := filepath.Join(piHome, ".pi", "agent", "extensions", "glob.ts")
	if err := os.MkdirAll(filepath.Dir(globalExt), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(globalExt, []byte(tool("glob_word", `const word = "global-v1";`)), 0o644); err != nil {
		t.Fatal(err)
	}
	ext := func(args ...string) string {
		cmd := e.command(append([]string{"ext"}, args...)...)
		cmd.Env = append(cmd.Env, env...)
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("zot ext %v: %v\n%s", args, err, b)
		}
		return string(b)
	}
	if l := ext("list"); !regexp.MustCompile(`hot +pi +project +untrusted`).MatchString(l) || !regexp.MustCompile(`glob +pi +global +enabled`).MatchString(l) {
		t.Fatalf("zot ext list:\n%s", l)
	}
	ext("trust", "hot")

	p := e.startRPC(env)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "word"})
	if tr := find(p.until(isType("done")), "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "project-v1") {
		t.Fatalf("the trusted project extension: %v\nstderr: %s", tr, p.errb.String())
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "global word"})
	if tr := find(p.until(isType("done")), "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "global-v1") {
		t.Fatalf("the global extension: %v", tr)
	}

	// Saving the global one reloads it.
	if err := os.WriteFile(globalExt, []byte(tool("glob_word", `const word = "global-v2";`)), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(filepath.Join(e.home, "logs", "ext-glob.log"))
		if strings.Count(string(b), "started glob (pid") >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("saving glob.ts did not restart it:\n%s", b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p.send(map[string]any{"id": "3", "type": "prompt", "message": "global word again"})
	if tr := find(p.until(isType("done")), "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "global-v2") {
		t.Fatalf("after the save: %v", tr)
	}

	// Changing the project extension's imported helper asks again.
	e.write(".pi/extensions/lib/word.ts", `export const word = "project-v2";`)
	deadline = time.Now().Add(30 * time.Second)
	for !strings.Contains(p.errb.String(), "extension hot: untrusted") {
		if time.Now().After(deadline) {
			t.Fatalf("changing an imported file did not ask again; stderr:\n%s", p.errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Under zot -p: a flag (--flag preset=NAME) works, the preset's tools and
// instructions reach the model; the todo example's state comes back in a
// -c -p (its tool lists the todo the first run added).
func TestPrintPiFlagsAndResume(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.TextReply("looked"),
		llmtest.ToolReply("todo", map[string]any{"action": "add", "text": "milk"}),
		llmtest.TextReply("added"),
		llmtest.ToolReply("todo", map[string]any{"action": "list"}),
		llmtest.TextReply("listed"),
	)
	e.dumpExtLogs()
	e.write(".pi/presets.json", `{"ro":{"tools":["read","grep"],"instructions":"PRESET-INSTRUCTIONS"}}`)
	run := func(args ...string) string {
		t.Helper()
		cmd := e.command(e.args(args...)...)
		cmd.Env = append(cmd.Env, rt...)
		var so, se strings.Builder
		cmd.Stdout, cmd.Stderr = &so, &se
		if err := cmd.Run(); err != nil {
			t.Fatalf("zot %v: %v\nstderr: %s", args, err, se.String())
		}
		return so.String()
	}
	run("-p", "look", "--no-session", "--flag", "preset=ro", "-e", piExample("preset.ts"))
	req := e.llm.Requests()[0].Body
	if offered := modelTools(req); toJSON(offered) != `["read","grep"]` || !strings.Contains(toJSON(req["system"]), "PRESET-INSTRUCTIONS") {
		t.Fatalf("zot -p --flag preset=ro: tools %v, system %v", offered, req["system"])
	}
	run("-p", "add milk", "-e", piExample("todo.ts"))
	if out := run("-c", "-p", "list", "--json", "-e", piExample("todo.ts")); !strings.Contains(out, "[ ] #1: milk") {
		t.Fatalf("the todo list after -c:\n%s", out)
	}
}

// A pi extension that does not load (a syntax error) is reported once to
// the user — the error as an ext_notify, the failure on stderr — and zot
// runs on without it.
func TestRPCPiLoadError(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t, llmtest.TextReply("still here"))
	bad := filepath.Join(t.TempDir(), "broken.ts")
	if err := os.WriteFile(bad, []byte("export default function (pi) { pi.registerTool(\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.startRPC(rt, "-e", bad)
	fs := p.until(func(m map[string]any) bool { return m["type"] == "ext_notify" && m["extension"] == "broken" })
	if n := fs[len(fs)-1]; n["level"] != "error" || !strings.HasPrefix(fmt.Sprint(n["message"]), "cannot load "+bad) {
		t.Fatalf("load error: %v", n)
	}
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	fs = p.until(isType("done"))
	if !strings.Contains(toJSON(fs), "still here") {
		t.Fatalf("the prompt after a load error: %v", types(fs))
	}
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(p.errb.String(), "extension broken: failed") {
		if time.Now().After(deadline) {
			t.Fatalf("stderr: %s", p.errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// pi's chat-input members and ui.editor under zot rpc: setEditorText and
// pasteToEditor are ext_set_editor_text events (the whole text; a paste
// also names the piece), getEditorText answers what zot rpc knows of the
// input box (the last set, or what the client reported with editor_text),
// and ui.editor is an ext_ui_request of kind editor with prefill for a
// client whose hello announced it (ui_kinds), a prefilled input for one
// that did not.
func TestRPCPiEditorText(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("input_probe", map[string]any{}),
		llmtest.TextReply("probed"),
	)
	e.dumpExtLogs()
	p := e.startRPC(rt, "-e", piTestdata("input.ts"))
	p.send(map[string]any{"id": "h", "type": "hello", "ui_kinds": []string{"editor"}})
	p.until(func(m map[string]any) bool { return m["type"] == "response" && m["id"] == "h" })

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "probe"})
	frames := p.until(isType("done"))
	var sets []string
	for _, f := range frames {
		if f["type"] == "ext_set_editor_text" {
			sets = append(sets, toJSON(f))
		}
	}
	want := []string{
		`{"extension":"input","text":"from the tool","type":"ext_set_editor_text"}`,
		`{"extension":"input","pasted":"!","text":"from the tool!","type":"ext_set_editor_text"}`,
	}
	if !slices.Equal(sets, want) {
		t.Fatalf("ext_set_editor_text events:\n%s\nwant\n%s", strings.Join(sets, "\n"), strings.Join(want, "\n"))
	}
	if tr := find(frames, "tool_result"); tr == nil || !strings.Contains(toJSON(tr), "input=from the tool!") {
		t.Fatalf("input_probe: %v", tr)
	}

	// The client reports its input box; the next command reads it.
	p.send(map[string]any{"id": "2", "type": "editor_text", "text": "typed by the user"})
	if got := p.commandNotify("3", "input-read", "", "read:"); got != "read: typed by the user" {
		t.Fatalf("getEditorText after editor_text: %q", got)
	}
	p.send(map[string]any{"id": "4", "type": "editor_text"})
	if fs := p.until(func(m map[string]any) bool { return m["type"] == "response" && m["id"] == "4" }); !strings.Contains(toJSON(fs[len(fs)-1]), `editor_text needs \"text\"`) {
		t.Fatalf("editor_text without text: %v", fs[len(fs)-1])
	}

	p.send(map[string]any{"id": "5", "type": "command", "name": "input-edit"})
	req := p.answerUI("a\nb\nc")
	if req["kind"] != "editor" || req["prefill"] != "a\nb" || req["default"] != nil || req["title"] != "Notes" {
		t.Fatalf("the editor dialog: %v", req)
	}
	if got := p.notified("edited:"); got != `edited: "a\nb\nc"` {
		t.Fatalf("ui.editor's answer: %q", got)
	}

	// A client that did not announce the editor kind: a prefilled input.
	old := e.startRPC(rt, "-e", piTestdata("input.ts"))
	old.send(map[string]any{"id": "1", "type": "command", "name": "input-edit"})
	req = old.answerUI("one line")
	if req["kind"] != "input" || req["default"] != "a\nb" || req["prefill"] != nil {
		t.Fatalf("the editor dialog for an older client: %v", req)
	}
	if got := old.notified("edited:"); got != `edited: "one line"` {
		t.Fatalf("ui.editor's answer as input: %q", got)
	}
}

// zot -p has no chat input: setEditorText is ignored (logged once in the
// extension's log, however often it is called) and getEditorText answers
// what the extension set.
func TestPrintPiEditorTextIgnored(t *testing.T) {
	rt := piRuntime(t)
	e := newEnv(t,
		llmtest.ToolReply("input_probe", map[string]any{}),
		llmtest.ToolReply("input_probe", map[string]any{}),
		llmtest.TextReply("probed"),
	)
	e.dumpExtLogs()
	cmd := e.command(e.args("-p", "probe", "--json", "-e", piTestdata("input.ts"))...)
	cmd.Env = append(cmd.Env, rt...)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot -p: %v", err)
	}
	if strings.Count(string(b), "input=from the tool!") != 2 {
		t.Fatalf("zot -p output lacks the two probes' results:\n%s", b)
	}
	const ignored = "set_editor_text: this front has no chat input; ignored"
	if log := e.waitLog("input", ignored); strings.Count(log, ignored) != 1 {
		t.Fatalf("the ignored set should be logged once:\n%s", log)
	}
}
