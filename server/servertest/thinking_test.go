package servertest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

func TestThinkingOverLSP(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Thinking: "Consider the file.", Text: "It is fine."},
		llmtest.TextReply("no thinking now"))
	ed := e.start(func(c *servertest.Config) { c.InitOptions = map[string]any{"reasoning": "medium"} })
	var st map[string]any
	ed.MustCall("zot/state", nil, &st)
	if st["reasoning"] != "medium" {
		t.Fatalf("initializationOptions.reasoning not applied: %v", st)
	}
	evs := ed.WaitDone(ed.Prompt("check").RunID)
	var thought strings.Builder
	for _, ev := range evs {
		if ev.Str("type") == "thinking_delta" {
			thought.WriteString(ev.Str("text"))
		}
	}
	if thought.String() != "Consider the file." {
		t.Fatalf("thinking_delta events: %q in %s", thought.String(), servertest.Types(evs))
	}
	if got := e.llm.Requests()[0].Body["thinking"].(map[string]any)["budget_tokens"]; got != float64(10000) {
		t.Fatalf("budget = %v", got)
	}
	var msgs struct {
		Messages []struct {
			Content []map[string]any `json:"content"`
		} `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	if b, _ := json.Marshal(msgs.Messages[1].Content[0]); string(b) != `{"text":"Consider the file.","type":"thinking"}` {
		t.Fatalf("zot/messages thinking block: %s", b)
	}

	var set map[string]string
	ed.MustCall("zot/setReasoning", map[string]any{"reasoning": "off"}, &set)
	if set["reasoning"] != "off" {
		t.Fatalf("zot/setReasoning: %v", set)
	}
	ed.WaitDone(ed.Prompt("again").RunID)
	if b := e.llm.Requests()[1].Body["thinking"]; b != nil {
		t.Fatalf("reasoning off still sent thinking: %v", b)
	}
	var cmd struct{ Action, Display string }
	ed.MustCall("zot/command", map[string]any{"name": "reasoning", "args": "low"}, &cmd)
	if cmd.Action != "display" || !strings.Contains(cmd.Display, "Reasoning: low") {
		t.Fatalf("/reasoning low: %+v", cmd)
	}
	ed.MustCall("zot/state", nil, &st)
	if st["reasoning"] != "low" {
		t.Fatalf("after /reasoning low: %v", st["reasoning"])
	}
	if err := ed.Call("zot/setReasoning", map[string]any{"reasoning": "max"}, nil); err == nil || err.Code != -32602 ||
		!strings.Contains(err.Message, "off, low, medium or high") {
		t.Fatalf("bad level: %v", err)
	}
}
