//go:build unix

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/internal/syncbuf"
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

// The extension contract, front by front: one scenario (a prompt that
// calls an extension tool and a guarded bash, auto-compacts, ends with a
// redacted answer, switches the model and exits) run in every front, and
// one table of what the extension must see (every event and hook the host
// offers) and what its answers must change. The fronts and the rows each
// come from one place; a front without a cell, or a row the host offers
// without an entry here, fails.

// contractFront is one front as the matrix drives it.
type contractFront struct {
	name  string
	kind  string   // lsp, rpc, print, acp
	flags []string // after the subcommand
	mode  string   // permission mode: zot lsp's initializationOptions, zot acp's --mode
	// asks: the front asks the user before the extension's tool runs (the
	// test answers "Allow once"); refuses: it cannot ask and refuses every
	// tool call (zot -p --no-yolo without a terminal).
	asks, refuses bool
	// sessionStart is the reason session_start carries.
	sessionStart string
	// selectsModel: the front has a command that switches the model.
	selectsModel bool
	// tree: the front runs an extension's command after the prompt, which
	// forks and navigates the session tree with the extension actions
	// (zot -p takes no command after its prompt; zot rpc keeps no session
	// file unless resumed, docs/rpc.md, so it has no tree; zot acp offers
	// no actions).
	tree bool
	// userBash: the front has the user's own shell command (zot rpc's
	// bash, zot lsp's zot/userBash: the editors' `!cmd`), which the
	// scenario runs after the prompt: one the guard blocks, one it
	// answers itself, one that runs (`!!`).
	userBash bool
}

// contractFronts is every front, each with and without --no-yolo and with
// a permission mode that asks where it has one.
var contractFronts = []contractFront{
	{name: "zot lsp (auto)", kind: "lsp", mode: "auto", sessionStart: "startup", selectsModel: true, tree: true, userBash: true},
	{name: "zot lsp (ask)", kind: "lsp", mode: "ask", sessionStart: "startup", selectsModel: true, tree: true, userBash: true},
	{name: "zot lsp --no-yolo", kind: "lsp", mode: "ask", flags: []string{"--no-yolo"}, asks: true, sessionStart: "startup", selectsModel: true, tree: true, userBash: true},
	{name: "zot rpc", kind: "rpc", sessionStart: "startup", selectsModel: true, userBash: true},
	{name: "zot rpc --no-yolo", kind: "rpc", flags: []string{"--no-yolo"}, asks: true, sessionStart: "startup", selectsModel: true, userBash: true},
	{name: "zot -p", kind: "print", sessionStart: "startup"},
	{name: "zot -p --no-yolo", kind: "print", flags: []string{"--no-yolo"}, refuses: true, sessionStart: "startup"},
	{name: "zot acp (auto)", kind: "acp", mode: "auto", sessionStart: "new", selectsModel: true},
	{name: "zot acp (ask)", kind: "acp", mode: "ask", sessionStart: "new", selectsModel: true},
	{name: "zot acp --no-yolo", kind: "acp", mode: "ask", flags: []string{"--no-yolo"}, asks: true, sessionStart: "new", selectsModel: true},
}

// contractRun is what one front's run left: the frames the extension
// received in order, the model's requests, the questions the user was
// asked.
type contractRun struct {
	frames   []map[string]any
	requests []string
	asked    []string
	userBash []string // what the user saw of each user command (userBashSeen)
}

func (r contractRun) of(typ, event string) []map[string]any {
	var out []map[string]any
	for _, f := range r.frames {
		if f["type"] == typ && f["event"] == event {
			out = append(out, f)
		}
	}
	return out
}

func (r contractRun) events(name string) []map[string]any { return r.of("event", name) }
func (r contractRun) hooks(name string) []map[string]any  { return r.of("event_intercept", name) }

// each maps the frames to one string each, joined.
func each(fs []map[string]any, f func(map[string]any) string) string {
	var out []string
	for _, m := range fs {
		out = append(out, f(m))
	}
	return strings.Join(out, ",")
}

func field(k string) func(map[string]any) string {
	return func(m map[string]any) string { return fmt.Sprint(m[k]) }
}

// toolCell names a tool call as a frame shows it: name, args, extension.
func toolCell(m map[string]any) string {
	ext := ""
	if d, ok := m["details"].(map[string]any); ok {
		ext, _ = d["extension"].(string)
	}
	return fmt.Sprintf("%s%s@%s", m["tool_name"], toJSON(m["tool_args"]), ext)
}

// requestHas says, per model request, whether it contains s.
func (r contractRun) requestHas(s string) string {
	var out []string
	for _, q := range r.requests {
		out = append(out, fmt.Sprint(strings.Contains(q, s)))
	}
	return strings.Join(out, ",")
}

// contractRow is one event or hook of docs/extensions.md: what the front
// gave the extension, and what the extension's answer changed.
type contractRow struct {
	name string
	hook bool // an intercept (else an observed event)
	got  func(contractRun) string
	want func(contractFront) string
}

func same(s string) func(contractFront) string { return func(contractFront) string { return s } }

var contractRows = []contractRow{
	// The user's own command: its guard sees command, exclusion and cwd;
	// its block and its own result are what the user sees.
	{name: "user_bash", hook: true, got: func(r contractRun) string {
		got := each(r.hooks("user_bash"), func(m map[string]any) string {
			return fmt.Sprintf("%v/%v/%v", m["command"], m["exclude_from_context"] == true, m["cwd"] != nil && m["cwd"] != "")
		})
		if len(r.userBash) == 0 {
			return got
		}
		return got + "; " + strings.Join(r.userBash, "|")
	}, want: userBashWant},
	// Events.
	{name: "session_start", got: func(r contractRun) string { return each(r.events("session_start"), field("reason")) },
		want: func(f contractFront) string {
			if f.tree {
				// the fork, the navigation back to the first session, then a
				// new session (zot/session/new: the second, the first refused)
				return f.sessionStart + ",fork,tree,new"
			}
			return f.sessionStart
		}},
	// The session tree (the extension's /hookext-tree): a fork from the
	// first prompt into a new session, and a navigation back.
	{name: "session_fork", got: func(r contractRun) string {
		return each(r.events("session_fork"), func(m map[string]any) string {
			return fmt.Sprintf("at %v, a new session %v, files named %v", m["message_index"],
				m["session_id"] != nil && m["session_id"] != m["previous_session_id"], m["session_file"] != nil && m["previous_session_file"] != nil)
		})
	}, want: treeWant("at 0, a new session true, files named true")},
	{name: "session_tree", got: func(r contractRun) string {
		from, to := r.forked()
		return each(r.events("session_tree"), func(m map[string]any) string {
			leaf, _ := m["new_leaf_id"].(string)
			return fmt.Sprintf("back to the first session %v from the fork %v, its leaf %v, the fork's leaf %v", m["session_id"] == from,
				m["previous_session_id"] == to, strings.HasPrefix(leaf, fmt.Sprint(from)+":"), m["old_leaf_id"])
		})
	}, want: treeWant("back to the first session true from the fork true, its leaf true, the fork's leaf <nil>")},
	{name: "agent_start", got: func(r contractRun) string { return fmt.Sprint(len(r.events("agent_start"))) }, want: same("1")},
	{name: "turn_start", got: func(r contractRun) string { return each(r.events("turn_start"), field("step")) }, want: same("1,2,3")},
	{name: "tool_call", got: func(r contractRun) string { return each(r.events("tool_call"), toolCell) },
		want: same(`probe{"text":"x"}@hookext,bash{"command":"echo BLOCKME"}@`)},
	{name: "turn_end", got: func(r contractRun) string { return each(r.events("turn_end"), field("stop")) },
		want: same("tool_use,tool_use,end_turn")},
	{name: "assistant_message", got: func(r contractRun) string {
		return each(r.events("assistant_message"), func(m map[string]any) string { s, _ := m["text"].(string); return s })
	}, want: same(",,[hookext redacted]")},
	{name: "agent_end", got: func(r contractRun) string { return each(r.events("agent_end"), field("stop")) }, want: same("end_turn")},
	// Automatic compaction (the context window is nearly full after each
	// tool call).
	{name: "compact_start", got: func(r contractRun) string { return fmt.Sprint(len(r.events("compact_start"))) }, want: same("2")},
	{name: "compact_end", got: func(r contractRun) string { return fmt.Sprint(len(r.events("compact_end"))) }, want: same("2")},
	{name: "model_select", got: func(r contractRun) string {
		return each(r.events("model_select"), func(m map[string]any) string { return fmt.Sprintf("%s from %s", m["model"], m["previous_model"]) })
	}, want: func(f contractFront) string {
		if !f.selectsModel {
			return "" // zot -p takes no command after its prompt
		}
		return "tiny2 from tiny"
	}},
	// Once, before the host shuts the extension down.
	{name: "session_shutdown", got: func(r contractRun) string {
		n, before := 0, false
		for _, f := range r.frames {
			if f["type"] == "event" && f["event"] == "session_shutdown" {
				n++
				before = true
			}
			if f["type"] == "shutdown" {
				return fmt.Sprintf("%d then shutdown (%v)", n, before)
			}
		}
		return fmt.Sprintf("%d, no shutdown", n)
	}, want: same("1 then shutdown (true)")},

	// Hooks, and the effect of the extension's answer.
	{name: "input", hook: true, got: func(r contractRun) string {
		return each(r.hooks("input"), field("text")) + "; the model got GO: " + r.requestHas("GO") + "; the original: " + r.requestHas("hookext:upper")
	}, want: same("hookext:upper go; the model got GO: true,true,true; the original: false,false,false")},
	{name: "before_agent_start", hook: true, got: func(r contractRun) string {
		return fmt.Sprint(len(r.hooks("before_agent_start"))) + "; message: " + r.requestHas("HOOKEXT-CONTEXT") + "; system: " + r.requestHas("HOOKEXT-SYSTEM")
	}, want: same("1; message: true,true,true; system: true,true,true")},
	{name: "context", hook: true, got: func(r contractRun) string {
		return fmt.Sprint(len(r.hooks("context"))) + "; rewritten: " + r.requestHas("+context-hook")
	}, want: same("3; rewritten: true,true,true")},
	{name: "turn_start", hook: true, got: func(r contractRun) string { return each(r.hooks("turn_start"), field("step")) }, want: same("1,2,3")},
	{name: "tool_call", hook: true, got: func(r contractRun) string {
		asked := "not asked"
		for _, q := range r.asked {
			if strings.Contains(q, "BLOCKME") {
				return "the user was asked about the blocked call: " + q
			}
			if strings.Contains(q, "probe") && strings.Contains(q, "x+guard") {
				asked = "asked about probe x+guard"
			}
		}
		return each(r.hooks("tool_call"), toolCell) + "; " + asked + "; probe ran rewritten: " + r.requestHas("probe:x+guard") +
			"; bash blocked: " + r.requestHas("hookext blocked it")
	}, want: func(f contractFront) string {
		asked, ran := "not asked", "false,true,true"
		if f.asks {
			asked = "asked about probe x+guard"
		}
		if f.refuses {
			ran = "false,false,false"
		}
		return `probe{"text":"x"}@hookext,bash{"command":"echo BLOCKME"}@; ` + asked + "; probe ran rewritten: " + ran + "; bash blocked: false,false,true"
	}},
	{name: "tool_result", hook: true, got: func(r contractRun) string {
		return each(r.hooks("tool_result"), toolCell) + "; rewritten: " + r.requestHas(" +result-hook")
	}, want: func(f contractFront) string {
		// The args the tool ran with; a refused call did not run.
		args := `{"text":"x+guard"}`
		if f.refuses {
			args = `{"text":"x"}`
		}
		return `probe` + args + `@hookext,bash{"command":"echo BLOCKME"}@; rewritten: false,true,true`
	}},
	{name: "assistant_message", hook: true, got: func(r contractRun) string { return each(r.hooks("assistant_message"), field("text")) },
		want: same("the SECRET is out")},
	// The first fork is refused; the second is made.
	{name: "session_before_fork", hook: true, got: func(r contractRun) string {
		return each(r.hooks("session_before_fork"), func(m map[string]any) string {
			entry, _ := m["entry_id"].(string)
			return fmt.Sprintf("%v %v", m["message_index"], strings.HasSuffix(entry, ":0") && m["session_id"] != nil)
		}) + fmt.Sprintf("; forks made: %d", len(r.events("session_fork")))
	}, want: func(f contractFront) string {
		if f.tree {
			return "0 true,0 true; forks made: 1"
		}
		return "; forks made: 0"
	}},
	// The first new session is refused (zot/session/new fails); the
	// second is made.
	{name: "session_before_switch", hook: true, got: func(r contractRun) string {
		made := 0 // session_start "new" after the first session_start
		if starts := r.events("session_start"); len(starts) > 1 {
			for _, m := range starts[1:] {
				if m["reason"] == "new" {
					made++
				}
			}
		}
		return each(r.hooks("session_before_switch"), field("reason")) + fmt.Sprintf("; new sessions: %d", made)
	}, want: func(f contractFront) string {
		if f.tree {
			return "new,new; new sessions: 1"
		}
		return "; new sessions: 0"
	}},
	// The navigation labelled "refuse" is refused; the next is made.
	{name: "session_before_tree", hook: true, got: func(r contractRun) string {
		from, _ := r.forked()
		return each(r.hooks("session_before_tree"), func(m map[string]any) string {
			p, _ := m["preparation"].(map[string]any)
			return fmt.Sprintf("label %v to the first session %v, from %v, %v to leave", p["label"], p["target_id"] == from, p["old_leaf_id"], len(p["entries_to_summarize"].([]any)))
		}) + fmt.Sprintf("; navigations: %d", len(r.events("session_tree")))
	}, want: func(f contractFront) string {
		if f.tree {
			return "label refuse to the first session true, from <nil>, 0 to leave,label <nil> to the first session true, from <nil>, 0 to leave; navigations: 1"
		}
		return "; navigations: 0"
	}},
}

// contractUserBash are the user's commands the scenario runs where a
// front has them, and userBashSeen what each became (the front's
// user_bash event: output, or blocked and the reason).
var contractUserBash = []struct {
	command string
	exclude bool
}{{"echo BLOCKME", false}, {"hookext:remote uptime", false}, {"echo user-ran", true}}

// userBashWant is the user_bash row's cell for the fronts that have a
// user's own command: the intercepts the guard got, then what the user
// saw.
func userBashWant(f contractFront) string {
	if !f.userBash {
		return ""
	}
	return "echo BLOCKME/false/true,hookext:remote uptime/false/true,echo user-ran/true/true" +
		"; blocked: hookext blocked your command|hookext ran uptime (hookext)|user-ran"
}

// userBashSeen is what the user was shown of a user_bash event.
func userBashSeen(ub map[string]any) string {
	if ub["blocked"] == true {
		return fmt.Sprint("blocked: ", ub["reason"])
	}
	if ext, _ := ub["extension"].(string); ext != "" {
		return fmt.Sprintf("%v (%s)", ub["output"], ext)
	}
	return fmt.Sprint(ub["output"])
}

// treeWant is a row's cell for the fronts that drive the session tree.
func treeWant(s string) func(contractFront) string {
	return func(f contractFront) string {
		if f.tree {
			return s
		}
		return ""
	}
}

// forked is the session the fork left and the one it made.
func (r contractRun) forked() (from, to any) {
	for _, m := range r.events("session_fork") {
		return m["previous_session_id"], m["session_id"]
	}
	return nil, nil
}

// contractTreeDisplay is what /hookext-tree shows: each action's answer.
const contractTreeDisplay = "fork: cancelled=true error=<nil>\nfork: cancelled=<nil> error=<nil>\n" +
	"navigate: cancelled=true error=<nil> back=false\nnavigate: cancelled=<nil> error=<nil> back=true"

// TestExtensionContractInEveryFront is the conformance matrix: every row
// × every front.
func TestExtensionContractInEveryFront(t *testing.T) {
	// Every event and hook the host offers has a row.
	for _, name := range extensions.InterceptableEvents() {
		if !slices.ContainsFunc(contractRows, func(r contractRow) bool { return r.hook && r.name == name }) {
			t.Errorf("the host offers the hook %q; the matrix has no row for it", name)
		}
	}
	for _, name := range extensions.ObservableEvents() {
		if !slices.ContainsFunc(contractRows, func(r contractRow) bool { return r.name == name }) {
			t.Errorf("the host offers the event %q; the matrix has no row for it", name)
		}
	}
	hookext := testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/hookext")
	for _, f := range contractFronts {
		t.Run(f.name, func(t *testing.T) {
			run := driveContract(t, f, hookext)
			for _, row := range contractRows {
				kind := "event"
				if row.hook {
					kind = "hook"
				}
				if got, want := row.got(run), row.want(f); got != want {
					t.Errorf("%s %s:\n got %s\nwant %s", kind, row.name, got, want)
				}
			}
			if t.Failed() {
				t.Logf("frames the extension received: %s", toJSON(run.frames))
			}
		})
	}
}

// contractReplies is the scenario's model: the extension's tool, then a
// bash its guard blocks, each leaving the context window nearly full (so
// the next call compacts first), then an answer it redacts.
func contractReplies() []llmtest.Reply {
	full := &llmtest.Usage{Input: 900, Output: 10}
	probe := llmtest.ToolReply("probe", map[string]any{"text": "x"})
	probe.Usage = full
	bash := llmtest.ToolReply("bash", map[string]any{"command": "echo BLOCKME"})
	bash.Usage = full
	return []llmtest.Reply{probe, bash, {Text: "the SECRET is out", Usage: &llmtest.Usage{Input: 100, Output: 10}}}
}

const contractPrompt = "hookext:upper go"

// driveContract runs the scenario in one front and returns what it left.
func driveContract(t *testing.T, f contractFront, hookext string) contractRun {
	e := newEnv(t, contractReplies()...)
	os.WriteFile(filepath.Join(e.home, "models.json"), []byte(`[
		{"id":"tiny","provider":"anthropic","context_window":1000,"max_output":100},
		{"id":"tiny2","provider":"anthropic","context_window":1000,"max_output":100}]`), 0o644)
	rec := filepath.Join(t.TempDir(), "rec")
	e.installGlobalExt("hookext", map[string]any{"exec": hookext, "args": []string{"-record", rec}})
	flags := append([]string{"--model", "tiny"}, f.flags...)
	var asked, userBash []string
	switch f.kind {
	case "rpc":
		asked, userBash = e.contractRPC(t, rec, flags)
	case "print":
		out, errOut, code := e.runZot(e.args(append(flags, "-p", contractPrompt)...)...)
		if code != 0 {
			t.Fatalf("zot -p: exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
		}
	case "lsp":
		asked, userBash = e.contractLSP(t, rec, f, flags)
	case "acp":
		asked = e.contractACP(t, rec, f, flags)
	default:
		t.Fatalf("front %q: no driver", f.kind)
	}
	run := contractRun{frames: recordedFrames(t, rec), asked: asked, userBash: userBash}
	for _, r := range e.llm.Requests() {
		run.requests = append(run.requests, string(r.Raw))
	}
	return run
}

// recordedFrames reads the extension's record up to its last newline.
func recordedFrames(t *testing.T, path string) []map[string]any {
	b, _ := os.ReadFile(path)
	b = b[:strings.LastIndexByte(string(b), '\n')+1]
	var out []map[string]any
	for _, l := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("recorded frame: %v: %s", err, l)
		}
		out = append(out, m)
	}
	return out
}

// waitSessionStart waits until the extension has its session_start: it
// is registered (its hooks run) from then on.
func waitSessionStart(t *testing.T, rec string, stderr func() string) {
	t.Helper()
	waitFrame(t, rec, "session_start", stderr)
}

// waitFrame waits until the extension has received an event named name,
// or a frame of that type.
func waitFrame(t *testing.T, rec, name string, stderr func() string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, f := range recordedFrames(t, rec) {
			if f["type"] == name || f["type"] == "event" && f["event"] == name {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension never got %s\nstderr: %s", name, stderr())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (e *env) contractRPC(t *testing.T, rec string, flags []string) (asked, userBash []string) {
	p := e.startRPC(nil, flags...)
	waitSessionStart(t, rec, p.errb.String)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": contractPrompt})
	var attributed []string
	for {
		frames := p.until(func(m map[string]any) bool { return m["type"] == "done" || m["type"] == "ext_ui_request" })
		for _, f := range frames {
			if f["type"] == "tool_call" || f["type"] == "tool_result" {
				attributed = append(attributed, fmt.Sprintf("%s:%s", f["type"], toJSON(f["details"])))
			}
		}
		last := frames[len(frames)-1]
		if last["type"] == "done" {
			break
		}
		asked = append(asked, toJSON(last))
		p.send(map[string]any{"id": "ui", "type": "ui_response", "ui_id": last["id"], "value": "Allow once"})
	}
	// The RPC events name the extension of an extension's tool (seed
	// 000's tool result attribution), and nothing for zot's own.
	if got, want := strings.Join(attributed, " "), `tool_call:{"extension":"hookext"} tool_result:{"extension":"hookext"} tool_call:null tool_result:null`; got != want {
		t.Errorf("tool events' details over zot rpc:\n got %s\nwant %s", got, want)
	}
	for i, c := range contractUserBash {
		p.send(map[string]any{"id": fmt.Sprint("ub", i), "type": "bash", "command": c.command, "exclude_from_context": c.exclude})
		if ub := find(p.until(isType("done")), "user_bash"); ub != nil {
			userBash = append(userBash, userBashSeen(ub))
		}
	}
	p.send(map[string]any{"id": "m", "type": "set_model", "model": "tiny2"})
	if r := p.response("m"); r["success"] != true {
		t.Fatalf("set_model: %v", r)
	}
	p.in.Close() // stdin EOF: zot rpc exits
	if _, err := p.rest(60 * time.Second); err != nil {
		t.Fatalf("zot rpc: %v\nstderr: %s", err, p.errb.String())
	}
	return asked, userBash
}

func (e *env) contractLSP(t *testing.T, rec string, f contractFront, flags []string) (asked, userBash []string) {
	ed := servertest.Start(t, servertest.Config{Bin: zotBin, Args: append([]string{"--api-key", "test-key", "--base-url", e.llm.URL()}, flags...),
		Env: e.environ(), Root: e.cwd, InitOptions: map[string]any{"permissionMode": f.mode}})
	var mu sync.Mutex
	ed.Choose = func(message string, actions []string) string {
		mu.Lock()
		asked = append(asked, message)
		mu.Unlock()
		return "Allow once"
	}
	ed.Initialize(nil)
	waitSessionStart(t, rec, ed.Stderr)
	run := ed.Prompt(contractPrompt)
	ed.WaitDone(run.RunID)
	var cmd struct{ Display string }
	ed.MustCall("zot/command", map[string]any{"name": "hookext-tree"}, &cmd)
	if cmd.Display != contractTreeDisplay {
		t.Errorf("/hookext-tree showed %q\nwant %q", cmd.Display, contractTreeDisplay)
	}
	for _, c := range contractUserBash {
		var r servertest.RunStarted
		ed.MustCall("zot/userBash", map[string]any{"command": c.command, "excludeFromContext": c.exclude}, &r)
		for _, ev := range ed.WaitDone(r.RunID) {
			if ev.Type() == "user_bash" {
				userBash = append(userBash, userBashSeen(ev))
			}
		}
	}
	// session_before_switch: hookext refuses the first new session.
	if err := ed.Call("zot/session/new", nil, nil); err == nil || !strings.Contains(err.Message, "hookext refused the first switch") {
		t.Errorf("the first zot/session/new: %v; want hookext's refusal", err)
	}
	ed.MustCall("zot/session/new", nil, nil)
	ed.MustCall("zot/setModel", map[string]any{"model": "tiny2"}, nil)
	if code := ed.Shutdown(); code != 0 {
		t.Fatalf("zot lsp exited %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(asked), userBash
}

// contractClient is the smallest ACP client: it answers permission
// requests "allow once" and records them.
type contractClient struct {
	mu    sync.Mutex
	asked []string
}

func (c *contractClient) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.asked = append(c.asked, toJSON(p.ToolCall))
	c.mu.Unlock()
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: "allow_once"}}}, nil
}

func (c *contractClient) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }

func (c *contractClient) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, fmt.Errorf("no fs capability")
}

func (c *contractClient) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, fmt.Errorf("no fs capability")
}

func (c *contractClient) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, fmt.Errorf("no terminal capability")
}

func (c *contractClient) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, fmt.Errorf("no terminal capability")
}

func (c *contractClient) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, fmt.Errorf("no terminal capability")
}

func (c *contractClient) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, fmt.Errorf("no terminal capability")
}

func (c *contractClient) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, fmt.Errorf("no terminal capability")
}

// acpProc is a running zot acp with the contract client connected.
type acpProc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stderr *syncbuf.Buffer
	done   chan struct{}
	client *contractClient
	conn   *sdk.ClientSideConnection
}

func (e *env) startACP(t *testing.T, flags []string) *acpProc {
	cmd := e.command(append([]string{"acp", "--api-key", "test-key", "--base-url", e.llm.URL()}, flags...)...)
	p := &acpProc{cmd: cmd, stderr: &syncbuf.Buffer{}, done: make(chan struct{}), client: &contractClient{}}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
	})
	p.conn = sdk.NewClientSideConnection(p.client, p.stdin, stdout)
	p.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := p.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber}); err != nil {
		t.Fatalf("initialize: %v\nstderr: %s", err, p.stderr.String())
	}
	return p
}

// exit closes zot acp's input and waits for it to exit.
func (p *acpProc) exit(t *testing.T) {
	p.stdin.Close()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		t.Fatalf("zot acp did not exit at the end of its input\nstderr: %s", p.stderr.String())
	}
}

func (e *env) contractACP(t *testing.T, rec string, f contractFront, flags []string) []string {
	p := e.startACP(t, append([]string{"--mode", f.mode}, flags...))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr: %s", err, p.stderr.String())
	}
	waitSessionStart(t, rec, p.stderr.String)
	if _, err := p.conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock(contractPrompt)}}); err != nil {
		t.Fatalf("session/prompt: %v\nstderr: %s", err, p.stderr.String())
	}
	if _, err := p.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: "tiny2"}); err != nil {
		t.Fatalf("session/set_model: %v", err)
	}
	p.exit(t) // the end of input: the last session's host goes
	p.client.mu.Lock()
	defer p.client.mu.Unlock()
	return slices.Clone(p.client.asked)
}

// session_shutdown reaches the extension on every way out of every front,
// before the host shuts it down: the editor's shutdown and exit, the end
// of input, SIGTERM, the ACP client closing its (last) session.
func TestSessionShutdownOnEveryExitPath(t *testing.T) {
	hookext := testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/hookext")
	cases := []struct {
		name string
		exit func(t *testing.T, e *env, rec string)
	}{
		{"zot lsp: shutdown and exit", func(t *testing.T, e *env, rec string) {
			ed := e.startContractLSP(t, rec)
			ed.Shutdown()
		}},
		{"zot lsp: end of input", func(t *testing.T, e *env, rec string) {
			ed := e.startContractLSP(t, rec)
			ed.CloseStdin()
			ed.WaitExit()
		}},
		{"zot lsp: SIGTERM", func(t *testing.T, e *env, rec string) {
			ed := e.startContractLSP(t, rec)
			syscall.Kill(ed.PID(), syscall.SIGTERM)
			ed.WaitExit()
		}},
		{"zot rpc: end of input", func(t *testing.T, e *env, rec string) {
			p := e.startRPC(nil)
			waitSessionStart(t, rec, p.errb.String)
			p.in.Close()
			p.rest(60 * time.Second)
		}},
		{"zot rpc: SIGTERM", func(t *testing.T, e *env, rec string) {
			p := e.startRPC(nil)
			waitSessionStart(t, rec, p.errb.String)
			p.cmd.Process.Signal(syscall.SIGTERM)
			p.rest(60 * time.Second)
		}},
		{"zot -p: the answer printed", func(t *testing.T, e *env, rec string) {
			if _, errOut, code := e.runZot(e.args("-p", "hi")...); code != 0 {
				t.Fatalf("zot -p: exit %d: %s", code, errOut)
			}
		}},
		{"zot acp: the client closes the last session", func(t *testing.T, e *env, rec string) {
			p, s := e.startContractACP(t, rec)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			if _, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s}); err != nil {
				t.Fatalf("session/close: %v", err)
			}
			// The last session of the workspace: its host is gone once
			// the extension has its shutdown; the record is whole then.
			waitFrame(t, rec, "shutdown", p.stderr.String)
			p.exit(t)
		}},
		{"zot acp: end of input", func(t *testing.T, e *env, rec string) {
			p, _ := e.startContractACP(t, rec)
			p.exit(t)
		}},
		{"zot acp: SIGTERM", func(t *testing.T, e *env, rec string) {
			p, _ := e.startContractACP(t, rec)
			p.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-p.done:
			case <-time.After(60 * time.Second):
				t.Fatalf("zot acp did not exit on SIGTERM\nstderr: %s", p.stderr.String())
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, llmtest.TextReply("hello"))
			rec := filepath.Join(t.TempDir(), "rec")
			e.installGlobalExt("hookext", map[string]any{"exec": hookext, "args": []string{"-record", rec}})
			c.exit(t, e, rec)
			run := contractRun{frames: recordedFrames(t, rec)}
			row := contractRows[slices.IndexFunc(contractRows, func(r contractRow) bool { return r.name == "session_shutdown" })]
			if got, want := row.got(run), row.want(contractFront{}); got != want {
				t.Fatalf("session_shutdown: got %s, want %s\nframes: %s", got, want, toJSON(run.frames))
			}
		})
	}
}

func (e *env) startContractLSP(t *testing.T, rec string) *servertest.Editor {
	ed := servertest.Start(t, servertest.Config{Bin: zotBin, Args: []string{"--api-key", "test-key", "--base-url", e.llm.URL()},
		Env: e.environ(), Root: e.cwd})
	ed.Initialize(nil)
	waitSessionStart(t, rec, ed.Stderr)
	return ed
}

func (e *env) startContractACP(t *testing.T, rec string) (*acpProc, sdk.SessionId) {
	p := e.startACP(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v\nstderr: %s", err, p.stderr.String())
	}
	waitSessionStart(t, rec, p.stderr.String)
	return p, s.SessionId
}

// zot acp's session_start says how the session came to be, when the
// client opens it (not at its first prompt): new, load, resume; a loaded
// or resumed session restores the model it was written with, and the
// extensions running then hear model_select (one that starts later finds
// the model in hello_ack).
func TestACPSessionStartReasonsAndRestoredModel(t *testing.T) {
	hookext := testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/hookext")
	e := newEnv(t, llmtest.TextReply("saved"))
	os.WriteFile(filepath.Join(e.home, "models.json"), []byte(`[{"id":"tiny2","provider":"anthropic","context_window":1000,"max_output":100}]`), 0o644)
	// A saved session written with tiny2.
	if _, errOut, code := e.runZot(e.args("--no-ext", "--model", "tiny2", "-p", "hi")...); code != 0 {
		t.Fatalf("zot -p: exit %d: %s", code, errOut)
	}
	rec := filepath.Join(t.TempDir(), "rec")
	e.installGlobalExt("hookext", map[string]any{"exec": hookext, "args": []string{"-record", rec}})
	p := e.startACP(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	list, err := p.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: &e.cwd})
	if err != nil || len(list.Sessions) != 1 {
		t.Fatalf("session/list: %v %v", list, err)
	}
	id := list.Sessions[0].SessionId
	starts := func(n int) []map[string]any {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := contractRun{frames: recordedFrames(t, rec)}.events("session_start")
			if len(got) >= n {
				return got
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d session_start events, want %d\nstderr: %s", len(got), n, p.stderr.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	closeSession := func(s sdk.SessionId) {
		if _, err := p.conn.CloseSession(ctx, sdk.CloseSessionRequest{SessionId: s}); err != nil {
			t.Fatalf("session/close: %v", err)
		}
	}
	// A session of the workspace stays open: its extensions run while
	// the saved one is loaded and resumed.
	s, err := p.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	starts(1)
	if _, err := p.conn.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: id, Cwd: e.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	starts(2)
	closeSession(id)
	if _, err := p.conn.ResumeSession(ctx, sdk.ResumeSessionRequest{SessionId: id, Cwd: e.cwd, McpServers: []sdk.McpServer{}}); err != nil {
		t.Fatalf("session/resume: %v", err)
	}
	starts(3)
	closeSession(id)
	closeSession(s.SessionId)
	p.exit(t)
	run := contractRun{frames: recordedFrames(t, rec)}
	var got []string
	for _, f := range run.frames {
		if f["type"] != "event" {
			continue
		}
		switch f["event"] {
		case "session_start":
			got = append(got, "session_start "+fmt.Sprint(f["reason"]))
		case "model_select":
			got = append(got, "model_select "+fmt.Sprint(f["model"]))
		}
	}
	if want := "session_start new,session_start load,model_select tiny2,session_start resume,model_select tiny2"; strings.Join(got, ",") != want {
		t.Fatalf("got  %s\nwant %s", strings.Join(got, ","), want)
	}
	if n := len(e.llm.Requests()); n != 1 {
		t.Fatalf("%d model requests: session_start must not wait for a prompt", n)
	}
}
