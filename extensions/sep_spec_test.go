package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/extensions/sep/schema"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/testenv"
)

// Every message the host sends in real SEP sessions — a tool with
// progress, kv, the bus, exec, tools/set_active, a command that posts
// to the session, completion, the gate's hook and dialog, events,
// shutdown — validates against SEP's own method schemas (read from
// $ZOT_SEP_SPEC, a checkout of SEP's spec/extension; skipped without).
func TestSEPSessionsValidateAgainstSEPSpec(t *testing.T) {
	dir := testenv.OptIn(t, "ZOT_SEP_SPEC", "a checkout of SEP's spec/extension directory (smooth-operator's repository)")
	spec, err := schema.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	trace := t.TempDir()
	t.Setenv(EnvSEPTrace, trace)
	e := newEnv(t)
	out := filepath.Join(e.home, "notes")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "alpha"), "alpha", out, map[string]string{"SEPEXT_HOOK": "gate", "SEPEXT_PROVIDER": "echo-llm"}, "")
	writeSEP(t, filepath.Join(GlobalRoot(e.home), "beta"), "beta", out, nil, "")
	ui := &askUI{caps: wire.UICapabilities{Confirm: true, Status: true}}
	ui.answer = func(context.Context, UIRequest) UIAnswer { return UIAnswer{Confirmed: false} }
	h := execHost(t, e, &approvals{}, func(o *Options) { o.UI = ui })
	for tool, args := range map[string]string{
		"alpha_say": `{"phrase":"hi"}`, "alpha_kv": `{"value":"blue"}`, "alpha_publish": `{}`,
		"alpha_exec": `{"command":"echo","args":["x"]}`, "alpha_narrow": `{}`,
	} {
		if r := callTool(t, h, tool, args); r.IsError {
			t.Fatalf("%s: %s", tool, resultText(r))
		}
	}
	callTool(t, h, "alpha_kv", `{}`)
	if _, err := h.RunCommand(context.Background(), "alpha-note", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := h.CompleteCommand(context.Background(), "alpha-note", "g"); err != nil {
		t.Fatal(err)
	}
	if d := h.BeforeTool(context.Background(), agent.ToolCallInfo{ID: "c1", Name: "bash", Args: json.RawMessage(`{"command":"rm -rf x"}`)}); !d.Block {
		t.Fatalf("the gate allowed: %+v", d)
	}
	h.Observe(agent.Lifecycle{Event: wire.EventTurnStart, Step: 1})
	req := provider.Request{Model: provider.Model{ID: "echo-llm/echo-1", Provider: "echo-llm"}, System: "be brief",
		Messages: []message.Message{{Role: message.RoleUser, Content: []message.Content{message.Text("hello")}}},
		Tools:    []provider.ToolSpec{{Name: "read", Description: "read a file", Schema: json.RawMessage(`{"type":"object"}`)}}}
	if resp, err := h.ProviderClient("echo-llm").Stream(context.Background(), req, func(provider.StreamEvent) {}); err != nil || message.TextOf(resp.Content) != "echo: hello" {
		t.Fatalf("provider: %+v, %v", resp, err)
	}
	eventually(t, "bus/event at beta", noted(out, "beta bus greeting"))
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	h.Close(ctx) // shutdown is part of the sessions

	all := map[string]int{}
	for _, name := range []string{"alpha", "beta"} {
		b, err := os.ReadFile(filepath.Join(trace, name+".ndjson"))
		if err != nil {
			t.Fatal(err)
		}
		sent, errs := spec.CheckTraceSpec(b)
		for _, err := range errs {
			t.Errorf("%s: %v", name, err)
		}
		for k, n := range sent {
			all[k] += n
		}
	}
	var kinds []string
	total := 0
	for k, n := range all {
		kinds = append(kinds, k)
		total += n
	}
	sort.Strings(kinds)
	for _, want := range []string{"initialize", "tool/execute", "command/execute", "command/complete", "hook", "event", "shutdown",
		"reply:kv/set", "reply:kv/get", "reply:exec/run", "reply:tools/set_active", "reply:ui/request", "provider/complete"} {
		if all[want] == 0 {
			t.Errorf("the sessions sent no %s (%v)", want, all)
		}
	}
	t.Logf("%d host messages of %d kinds validated against SEP's schemas: %s", total, len(kinds), strings.Join(kinds, ", "))
}
