package servertest_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

// An editor that answers each bash approval three times (a duplicate
// answer, then one whose request is no longer pending) must not wedge zot:
// the extra answers are dropped and logged, requests are still answered,
// and zot exits when its input ends.
func TestRepeatedAnswersAreDropped(t *testing.T) {
	const calls = 4
	var replies []llmtest.Reply
	for i := 0; i < calls; i++ {
		replies = append(replies, llmtest.ToolReply("bash", map[string]any{"command": fmt.Sprintf("echo call-%d", i)}))
	}
	e := newEnv(t, append(replies, llmtest.TextReply("ok"))...)
	ed := e.start(askMode(true))
	ed.AnswerTimes = 3
	ed.Choose = func(string, []string) string { return "Allow once" }
	evs := ed.WaitDone(ed.Prompt("run them").RunID)
	n := 0
	for _, ev := range evs {
		if ev.Type() == "tool_result" {
			if ev["is_error"] != false || !strings.Contains(servertest.ResultText(ev), fmt.Sprintf("call-%d", n)) {
				t.Fatalf("tool result %d: %v", n, ev)
			}
			n++
		}
	}
	if n != calls {
		t.Fatalf("%d tool results, want %d: %s", n, calls, servertest.Types(evs))
	}
	var pong map[string]any
	ed.MustCall("zot/ping", nil, &pong) // the read loop still reads
	if pong["pong"] != true {
		t.Fatalf("zot/ping: %v", pong)
	}
	ed.Wait("the dropped answers logged", func() bool {
		return strings.Count(ed.Stderr(), "dropping an answer to id") >= calls
	})
	ed.CloseStdin()
	if code := ed.WaitExit(); code != 1 {
		t.Fatalf("exit code %d after the input ended without shutdown, want 1", code)
	}
}

// An editor that stops reading zot's output while a run floods it, then
// closes zot's input, must not keep zot alive: output gets a deadline at
// shutdown and the process exits.
func TestStuckEditorDoesNotKeepZotAlive(t *testing.T) {
	if runtime.GOOS != "linux" {
		testenv.Skip(t, "observes the pipe with FIONREAD")
	}
	e := newEnv(t, llmtest.Reply{RepeatText: &llmtest.Repeat{Text: "flood ", Count: 300_000}})
	// No progress: workDoneProgress/create would wait for an answer the
	// stopped editor never sends, and the run would not flood.
	ed := e.start(func(c *servertest.Config) { c.NoProgress = true })
	ed.SetNotifyHook(func(string, []byte) bool { return false }) // do not keep the flood
	ed.Prompt("flood the editor")
	ed.StopReading()
	// The flood has reached the pipe and nothing drains it: with 30 MB
	// still to come, zot's writes block (the pipe holds 64 KiB, zot's
	// queue 8 MiB), whenever exactly that happens.
	ed.Wait("the flood to reach the pipe", func() bool { return ed.UnreadOutput() >= 32<<10 })
	ed.CloseStdin()
	if code := ed.WaitExit(); code != 1 {
		t.Fatalf("exit code %d after the input ended without shutdown, want 1", code)
	}
}

// A burst of 30k didChange notifications is handled in order on a fixed
// set of goroutines: the peak goroutine count (sampled as each message
// arrives, zot/debug/stats) stays small, and the buffer ends as the edits
// say.
func TestChangeBurstUsesBoundedGoroutines(t *testing.T) {
	const n = 30_000
	// Read back: the last lines (their numbers show none was dropped), then
	// after the re-open.
	e := newEnv(t, llmtest.ToolReply("read", map[string]any{"path": "burst.txt", "offset": n - 2, "limit": 5}), llmtest.TextReply("ok"),
		llmtest.ToolReply("read", map[string]any{"path": "burst.txt"}), llmtest.TextReply("ok"))
	ed := e.start(func(c *servertest.Config) { c.Env = append(c.Env, "ZOT_DEBUG_STATS=1") })
	ed.Open("burst.txt", "")
	var before struct {
		Goroutines int `json:"goroutines"`
	}
	ed.MustCall("zot/debug/stats", nil, &before)

	uri := ed.URI("burst.txt")
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		// Edit i writes line i at the end: applied out of order or dropped,
		// the lines come out wrong.
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": i + 1},
			"contentChanges": []map[string]any{{"range": rangeAt(i-1, 0), "text": fmt.Sprintf("%d\n", i)}},
		}})
		fmt.Fprintf(&sb, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	ed.WriteRaw([]byte(sb.String()))

	var stats struct {
		Goroutines     int `json:"goroutines"`
		PeakGoroutines int `json:"peakGoroutines"`
		PeakQueued     int `json:"peakQueued"`
	}
	// zot/state is answered after every didChange before it.
	var st map[string]any
	ed.MustCall("zot/state", nil, &st)
	ed.MustCall("zot/debug/stats", nil, &stats)
	// The worker, a released request or two, the run loop, the host …:
	// a bound that does not grow with the burst.
	if limit := before.Goroutines + 40; stats.PeakGoroutines > limit {
		t.Fatalf("peak of %d goroutines during a burst of %d messages (idle %d, limit %d)", stats.PeakGoroutines, n, before.Goroutines, limit)
	}
	t.Logf("goroutines: idle %d, peak %d, after %d; peak queue %d", before.Goroutines, stats.PeakGoroutines, stats.Goroutines, stats.PeakQueued)
	evs := ed.WaitDone(ed.Prompt("read the end").RunID)
	got := servertest.ResultText(servertest.Find(evs, "tool_result"))
	for i := n - 2; i <= n; i++ {
		if !regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d\D+%d$`, i, i)).MatchString(got) {
			t.Fatalf("line %d is not %q after the burst: %s", i, fmt.Sprint(i), got)
		}
	}
	ed.Close("burst.txt") // didClose after the burst: the overlay is consistent
	ed.Open("burst.txt", "y")
	evs = ed.WaitDone(ed.Prompt("read it again").RunID)
	if got := servertest.ResultText(servertest.Find(evs, "tool_result")); !strings.Contains(got, "y") || strings.Contains(got, "30000") {
		t.Fatalf("after the re-open: %s", got)
	}
	if code := ed.Shutdown(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

func rangeAt(line, char int) map[string]any {
	p := map[string]any{"line": line, "character": char}
	return map[string]any{"start": p, "end": p}
}

// didOpen, didClose and didSave sent as requests with bad params are
// answered InvalidParams (not code 0); a second shutdown is
// InvalidRequest.
func TestSmallProtocolErrors(t *testing.T) {
	e := newEnv(t)
	ed := e.start(nil)
	for _, method := range []string{"textDocument/didOpen", "textDocument/didClose", "textDocument/didSave"} {
		m := ed.Await(ed.CallID(method, method, map[string]any{"textDocument": 7}), method)
		if m.Error == nil || m.Error.Code != -32602 || !strings.Contains(m.Error.Message, method) {
			t.Errorf("%s with bad params: %+v, want -32602 naming the method", method, m.Error)
		}
	}
	ed.MustCall("shutdown", nil, nil)
	if err := ed.Call("shutdown", nil, nil); err == nil || err.Code != -32600 || !strings.Contains(err.Message, "exit") {
		t.Fatalf("second shutdown: %v, want InvalidRequest saying to send exit", err)
	}
	ed.Notify("exit", nil)
	if code := ed.WaitExit(); code != 0 {
		t.Fatalf("exit code %d", code)
	}
}

// A prompt past agent.MaxPromptBytes is refused with InvalidParams saying
// the limit; the server goes on.
func TestPromptOverTheLimitIsRefused(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.start(nil)
	big := strings.Repeat("x", agent.MaxPromptBytes+1)
	err := ed.Call("zot/prompt", map[string]any{"text": big}, nil)
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, fmt.Sprintf("the largest zot accepts is %d MiB", agent.MaxPromptBytes>>20)) {
		t.Fatalf("oversized prompt: %v", err)
	}
	ed.WaitDone(ed.Prompt("small").RunID)
}

// A large prompt (unquoted in place in the frame, its user_message written
// in escaped pieces) arrives whole: every escape JSON has, non-ASCII
// split across piece boundaries, in the user_message event and in the
// model's request.
func TestLargePromptArrivesWhole(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.start(nil)
	unit := "line \"q\" \\ / \t\r\b\f\x01\x1f <a&b> \u2028\u2029 é 漢 😀\n"
	text := strings.Repeat(unit, (2<<20)/len(unit))
	evs := ed.WaitDone(ed.Prompt(text).RunID)
	um := servertest.Find(evs, "user_message")
	content, _ := um["content"].([]any)
	if len(content) != 1 || content[0].(map[string]any)["text"] != text {
		t.Fatalf("the user_message does not carry the prompt (%d blocks)", len(content))
	}
	reqs := e.llm.Requests()
	if len(reqs) == 0 {
		t.Fatal("no model request")
	}
	msgs, _ := reqs[0].Body["messages"].([]any)
	last, _ := msgs[len(msgs)-1].(map[string]any)
	blocks, _ := last["content"].([]any)
	if len(blocks) == 0 || blocks[0].(map[string]any)["text"] != text {
		t.Fatal("the model's request does not carry the prompt")
	}
}
