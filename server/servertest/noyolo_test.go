package servertest_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// zot lsp --no-yolo asks before every tool call, in auto mode too, with the
// tool and its whole arguments; "Always allow" covers that tool only.
func TestNoYoloAsksBeforeEveryTool(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "a.txt"}),
		llmtest.ToolReply("ls", map[string]any{"path": "."}),
		llmtest.ToolReply("ls", map[string]any{"path": "."}),
		llmtest.ToolReply("bash", map[string]any{"command": "echo hi"}),
		llmtest.TextReply("ok"))
	ed := e.start(func(c *servertest.Config) { c.Args = append(c.Args, "--no-yolo") })
	ed.WriteFile("a.txt", "secret\n")
	var mu sync.Mutex
	var asked []string
	answers := []string{"Deny", "Always allow for this session", "Deny"}
	ed.Choose = func(msg string, actions []string) string {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, msg+" | "+strings.Join(actions, "/"))
		a := answers[0]
		answers = answers[1:]
		return a
	}
	evs := ed.WaitDone(ed.Prompt("look around").RunID)
	mu.Lock()
	defer mu.Unlock()
	// read (denied), ls (always), ls again (not asked), bash (denied).
	if len(asked) != 3 || !strings.Contains(asked[0], `zot wants to run a tool:`) || !strings.Contains(asked[0], `read {"path":"a.txt"}`) ||
		!strings.Contains(asked[1], "ls ") || !strings.Contains(asked[2], "echo hi") {
		t.Fatalf("asked:\n%s", strings.Join(asked, "\n"))
	}
	var results []servertest.Event
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			results = append(results, ev)
		}
	}
	if len(results) != 4 || results[0]["is_error"] != true || !strings.Contains(servertest.ResultText(results[0]), "denied this read call") ||
		strings.Contains(servertest.ResultText(results[0]), "secret") ||
		results[1]["is_error"] != false || results[2]["is_error"] != false || results[3]["is_error"] != true {
		t.Fatalf("results: %v", results)
	}
}
