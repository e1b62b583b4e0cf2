package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/extensions/wire"
)

// approvals is a front's --no-yolo question: it records every call it
// is asked about and answers allow unless the command contains deny.
type approvals struct {
	mu    sync.Mutex
	asked []agent.ToolCallInfo
	deny  string
}

func (a *approvals) ask(_ context.Context, call agent.ToolCallInfo) agent.ToolDecision {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, call)
	if a.deny != "" && strings.Contains(string(call.Args), a.deny) {
		return agent.ToolDecision{Block: true, Reason: "the user denied it"}
	}
	return agent.ToolDecision{}
}

func (a *approvals) commands() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, c := range a.asked {
		var x struct {
			Command string `json:"command"`
		}
		_ = json.Unmarshal(c.Args, &x)
		out = append(out, c.Name+": "+x.Command)
	}
	return out
}

// execHost starts a host under a real runtime whose hooks are the host
// under a --no-yolo approval layer, with the runtime's actions installed
// before the start (as the fronts do): exec then runs as the model's
// bash would.
func execHost(t *testing.T, e *env, ap *approvals, mods ...func(*Options)) *Host {
	t.Helper()
	o := e.opts()
	for _, m := range mods {
		m(&o)
	}
	h := NewHost(o)
	rt, err := agent.New(agent.Config{
		Provider: "anthropic", APIKey: "k", BaseURL: "http://127.0.0.1:1",
		CWD: e.cwd, Home: e.home, Hooks: agent.ChainHooks(agent.StaticHooks(h), agent.ApprovalLayer(ap.ask)), ExtraTools: h.Tools,
	})
	if err != nil {
		t.Fatal(err)
	}
	h.SetActions(RuntimeActions(rt, nil, nil))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		h.Close(ctx)
		rt.Close()
	})
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Start(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// exec/run (SEP) and exec (zot's wire) run through the model's bash
// rules: a guard sees the command first and its block holds (the user
// is not asked), the front's approval is asked with the whole command as
// it will run (args quoted, cwd as a cd), a denial is -32000 Blocked, and
// the result keeps stdout, stderr and the exit code apart.
func TestExecRunsThroughGuardsAndApproval(t *testing.T) {
	recordSEP(t, "reply:exec/run")
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "ex"), "ex", out, nil, "")
	e.global("guard", "-intercept", "tool_call", "-block", "rm -rf")
	e.global("vone", "-tools", "vexec", "-caps", "exec")
	ap := &approvals{deny: "forbidden"}
	h := execHost(t, e, ap)

	got := resultText(callTool(t, h, "ex_exec", `{"command":"printf","args":["%s|%s","a b","it's"]}`))
	if got != `exit 0 out "a b|it's" err ""` {
		t.Fatalf("exec/run: %q", got)
	}
	if c := ap.commands(); len(c) != 1 || c[0] != `bash: printf '%s|%s' 'a b' 'it'\''s'` {
		t.Fatalf("the user was asked about %q, want the whole quoted command", c)
	}
	if err := os.Mkdir(filepath.Join(e.cwd, "sub dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	got = resultText(callTool(t, h, "ex_exec", `{"command":"pwd","cwd":"sub dir"}`))
	if !strings.HasPrefix(got, "exit 0 out ") || !strings.HasSuffix(got, `/sub dir\n" err ""`) {
		t.Fatalf("exec/run with a cwd: %q", got)
	}
	if c := ap.commands(); c[len(c)-1] != `bash: cd 'sub dir' && pwd` {
		t.Fatalf("asked about %q", c[len(c)-1])
	}
	if got := resultText(callTool(t, h, "ex_exec", `{"command":"echo oops >&2; echo fine; exit 3"}`)); got != `exit 3 out "fine\n" err "oops\n"` {
		t.Fatalf("exec/run of a failing command: %q", got)
	}
	n := len(ap.commands())
	if got := resultText(callTool(t, h, "ex_exec", `{"command":"rm -rf somewhere"}`)); !strings.HasPrefix(got, "refused -32000: blocked: ") {
		t.Fatalf("the guard's block: %q", got)
	}
	if len(ap.commands()) != n {
		t.Fatalf("the user was asked about a command the guard blocked: %q", ap.commands())
	}
	if got := resultText(callTool(t, h, "ex_exec", `{"command":"echo forbidden"}`)); got != "refused -32000: blocked: the user denied it" {
		t.Fatalf("the user's denial: %q", got)
	}
	// zot's wire: the same path.
	if got := resultText(callTool(t, h, "vexec", `{"text":"echo v1; echo e1 >&2"}`)); got != `exit 0 out "v1\n" err "e1\n" error ""` {
		t.Fatalf("exec on zot's wire: %q", got)
	}
	if got := resultText(callTool(t, h, "vexec", `{"text":"rm -rf x"}`)); !strings.Contains(got, `error "blocked: `) {
		t.Fatalf("a guard's block on zot's wire: %q", got)
	}
}

// exec/run from an event's context is refused with -32003 at once.
func TestSEPExecFromEventTierRefused(t *testing.T) {
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "ev"), "ev", out, map[string]string{"SEPEXT_EVENTEXEC": "1"}, "")
	h := execHost(t, e, &approvals{})
	h.Observe(agent.Lifecycle{Event: wire.EventTurnStart, Step: 1})
	eventually(t, "the refusal", noted(out, "ev xv "))
	if !noted(out, "ev xv -32003")() {
		t.Fatalf("notes %q, want xv -32003", notes(out))
	}
}

// Command argument completion reaches the command's extension on either
// wire; a command of an extension that did not negotiate it has none.
func TestCommandCompletionBothWires(t *testing.T) {
	recordSEP(t, "command/complete")
	e := newEnv(t)
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "col"), "col", filepath.Join(e.home, "notes"), nil, "")
	e.global("vone", "-cmds", "hi", "-caps", "complete")
	e.global("plain", "-cmds", "display")
	h := e.start(nil)
	ctx := context.Background()
	got, err := h.CompleteCommand(ctx, "/col-note", "gr")
	if err != nil || !slices.Equal(got, []wire.Completion{{Value: "green", Description: "the colour green"}, {Value: "grey", Description: "the colour grey"}}) {
		t.Fatalf("SEP completion: %+v, %v", got, err)
	}
	got, err = h.CompleteCommand(ctx, "hi", "b")
	if err != nil || len(got) != 2 || got[0].Value != "beta" || got[1].Value != "bravo" {
		t.Fatalf("v1 completion: %+v, %v", got, err)
	}
	if got, err := h.CompleteCommand(ctx, "display", ""); err != nil || len(got) != 0 {
		t.Fatalf("an extension without completion: %+v, %v", got, err)
	}
	if _, err := h.CompleteCommand(ctx, "nosuch", ""); err == nil {
		t.Fatal("an unknown command completed")
	}
}

// A zot extension that negotiated kv keeps its values across a restart;
// hello_ack lists the features this host serves.
func TestV1KVSurvivesRestart(t *testing.T) {
	e := newEnv(t)
	rec := filepath.Join(e.home, "rec")
	e.global("vkv", "-tools", "kv,crash", "-caps", "kv,ui", "-record", rec)
	h := e.start(nil)
	if got := resultText(callTool(t, h, "kv", `{"text":"blue"}`)); got != `kv: "blue"` {
		t.Fatalf("set: %q", got)
	}
	pid := statusOf(h, "vkv").PID
	callTool(t, h, "crash", `{"text":"x"}`)
	eventually(t, "a restart", func() bool { st := statusOf(h, "vkv"); return st.State == StateReady && st.PID != pid })
	if got := resultText(callTool(t, h, "kv", `{"text":""}`)); got != `kv: "blue"` {
		t.Fatalf("after the restart: %q", got)
	}
	var ack *wire.Frame
	for _, f := range recorded(t, rec) {
		if f.Type == wire.TypeHelloAck {
			ack = &f
			break
		}
	}
	if ack == nil || ack.HostCapabilities == nil || !slices.Equal(ack.HostCapabilities.Features, []string{"bus", "complete", "kv", "ping", "providers"}) {
		t.Fatalf("hello_ack %+v", ack)
	}
}

// A zot extension that negotiated ping and stops answering the host's
// pings is restarted; its own ping is answered.
func TestV1MissedPingsRestart(t *testing.T) {
	t.Setenv(EnvSEPPing, "50ms")
	e := newEnv(t)
	e.global("deaf", "-tools", "vping", "-caps", "ping", "-no-pong")
	h := e.start(nil)
	pid := statusOf(h, "deaf").PID
	if got := resultText(callTool(t, h, "vping", `{"text":"x"}`)); got != "pong pong" {
		t.Fatalf("the host's answer to a ping: %q", got)
	}
	eventually(t, "a restart after missed pings", func() bool { st := statusOf(h, "deaf"); return st.PID != 0 && st.PID != pid })
	if !strings.Contains(e.logOf("deaf"), "no answer to two pings") {
		t.Fatalf("log:\n%s", e.logOf("deaf"))
	}
}

// A zot extension that negotiated providers registers one: its model is
// listed as provider/model and a model call streams its deltas and ends
// with its answer and usage; its error is the call's error.
func TestV1ProviderStreams(t *testing.T) {
	e := newEnv(t)
	e.global("vprov", "-caps", "providers", "-provider", "tiny")
	e.global("noprov", "-provider", "nope") // did not negotiate: refused
	h := e.start(nil)
	models := h.ProviderModels()
	if len(models) != 1 || models[0].ID != "tiny/m1" || models[0].Provider != "tiny" || models[0].ContextWindow != 1000 {
		t.Fatalf("models %+v", models)
	}
	if h.ProviderClient("nope") != nil {
		t.Fatal("a provider of an extension that did not negotiate providers was registered")
	}
	c := h.ProviderClient("tiny")
	var deltas []string
	req := provider.Request{Model: models[0], Messages: []message.Message{{Role: message.RoleUser, Content: []message.Content{message.Text("hello")}}}}
	resp, err := c.Stream(context.Background(), req, func(ev provider.StreamEvent) {
		if ev.TextDelta != "" {
			deltas = append(deltas, ev.TextDelta)
		}
	})
	if err != nil || strings.Join(deltas, "|") != "v1: |hello" || message.TextOf(resp.Content) != "v1: hello" ||
		resp.Stop != provider.StopEndTurn || resp.Usage.Input != 7 || resp.Usage.Output != 2 {
		t.Fatalf("stream: %q, %+v, %v", deltas, resp, err)
	}
	req.Messages[0].Content[0].Text = "fail now"
	if _, err := c.Stream(context.Background(), req, func(provider.StreamEvent) {}); err == nil || !strings.Contains(err.Error(), "the model is down") {
		t.Fatalf("the provider's error: %v", err)
	}
}
