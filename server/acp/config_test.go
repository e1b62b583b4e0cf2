//go:build unix

package acp_test

import (
	"context"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
)

// configOption finds the select option id among opts.
func configOption(opts []sdk.SessionConfigOption, id string) *sdk.SessionConfigOptionSelect {
	for _, o := range opts {
		if o.Select != nil && string(o.Select.Id) == id {
			return o.Select
		}
	}
	return nil
}

// session/fork continues a copy of a session under a new id: the
// conversation so far comes along, and the two go on independently.
func TestForkSession(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("one"), llmtest.TextReply("two"), llmtest.TextReply("three"))
	p := e.start()
	c, init := e.connect(p, sdk.ClientCapabilities{})
	if init.AgentCapabilities.SessionCapabilities.Fork == nil {
		t.Fatalf("sessionCapabilities.fork not offered: %s", jsonOf(init.AgentCapabilities))
	}
	s := c.newSession(e.root)
	c.mustPrompt(s.SessionId, "FIRST-QUESTION")
	c.setMode(s.SessionId, "auto")
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	f, err := c.conn.UnstableForkSession(ctx, sdk.UnstableForkSessionRequest{SessionId: s.SessionId, Cwd: e.root})
	if err != nil {
		t.Fatalf("session/fork: %v", err)
	}
	if f.SessionId == "" || f.SessionId == s.SessionId {
		t.Fatalf("fork id %q (original %q)", f.SessionId, s.SessionId)
	}
	if f.Modes == nil || f.Modes.CurrentModeId != "auto" || f.Models == nil || len(f.ConfigOptions) == 0 {
		t.Errorf("fork answer %s; want the original's mode, the models and the config options", jsonOf(f))
	}
	c.mustPrompt(f.SessionId, "IN-FORK")
	c.mustPrompt(s.SessionId, "IN-ORIGINAL")
	reqs := e.llm.Requests()
	if fork := string(reqs[1].Raw); !strings.Contains(fork, "FIRST-QUESTION") || !strings.Contains(fork, "IN-FORK") {
		t.Errorf("the fork's model call lacks the copied history: %s", fork)
	}
	if orig := string(reqs[2].Raw); strings.Contains(orig, "IN-FORK") || !strings.Contains(orig, "FIRST-QUESTION") {
		t.Errorf("the original's model call: %s", orig)
	}
	list, err := c.conn.ListSessions(ctx, sdk.ListSessionsRequest{Cwd: sdk.Ptr(e.root)})
	if err != nil {
		t.Fatal(err)
	}
	if got := jsonOf(list); !strings.Contains(got, string(f.SessionId)) || !strings.Contains(got, string(s.SessionId)) {
		t.Errorf("session/list lacks the fork or the original: %s", got)
	}
	if _, err := c.conn.UnstableForkSession(ctx, sdk.UnstableForkSessionRequest{SessionId: "nope", Cwd: e.root}); err == nil || !strings.Contains(err.Error(), "sessionId") {
		t.Errorf("forking an unknown session: %v", err)
	}
}

// session/set_config_option sets the mode and the model, answers with
// every option's value, and a change made otherwise (set_mode) is sent
// as config_option_update.
func TestConfigOptions(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("one"))
	p := e.start()
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	mode, model := configOption(s.ConfigOptions, "mode"), configOption(s.ConfigOptions, "model")
	if mode == nil || model == nil || mode.CurrentValue != "ask" || model.CurrentValue == "" {
		t.Fatalf("session/new configOptions %s; want mode (ask) and model", jsonOf(s.ConfigOptions))
	}
	var other sdk.SessionConfigValueId
	for _, o := range *model.Options.Ungrouped {
		if o.Value != model.CurrentValue {
			other = o.Value
			break
		}
	}
	if other == "" {
		t.Fatalf("one model only: %s", jsonOf(model))
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	set := func(id, value string) (sdk.SetSessionConfigOptionResponse, error) {
		return c.conn.SetSessionConfigOption(ctx, sdk.SetSessionConfigOptionRequest{ValueId: &sdk.SetSessionConfigOptionValueId{
			SessionId: s.SessionId, ConfigId: sdk.SessionConfigId(id), Value: sdk.SessionConfigValueId(value)}})
	}
	r, err := set("mode", "readonly")
	if err != nil {
		t.Fatalf("set_config_option mode: %v", err)
	}
	if got := configOption(r.ConfigOptions, "mode"); got == nil || got.CurrentValue != "readonly" {
		t.Errorf("answer after setting the mode: %s", jsonOf(r.ConfigOptions))
	}
	c.waitUpdate("current_mode_update", func(u sdk.SessionUpdate) bool {
		return u.CurrentModeUpdate != nil && u.CurrentModeUpdate.CurrentModeId == "readonly"
	})
	if r, err = set("model", string(other)); err != nil {
		t.Fatalf("set_config_option model: %v", err)
	}
	if got := configOption(r.ConfigOptions, "model"); got == nil || got.CurrentValue != other {
		t.Errorf("answer after setting the model: %s", jsonOf(r.ConfigOptions))
	}
	c.mustPrompt(s.SessionId, "hi")
	if got := e.llm.Requests()[0].Body["model"]; got != string(other) {
		t.Errorf("the model call used %v; want %s", got, other)
	}
	c.setMode(s.SessionId, "auto")
	c.waitUpdate("config_option_update after set_mode", func(u sdk.SessionUpdate) bool {
		if u.ConfigOptionUpdate == nil {
			return false
		}
		m := configOption(u.ConfigOptionUpdate.ConfigOptions, "mode")
		return m != nil && m.CurrentValue == "auto"
	})
	for _, bad := range [][3]string{{"nope", "x", "configId"}, {"mode", "bogus", "value"}, {"model", "no-such-model", "value"}} {
		if _, err := set(bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), bad[2]) {
			t.Errorf("set_config_option %s=%s: %v; want an error naming %s", bad[0], bad[1], err, bad[2])
		}
	}
}
