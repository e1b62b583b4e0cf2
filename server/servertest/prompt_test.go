package servertest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

func TestPromptStreamsEvents(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "a.txt"}),
		llmtest.Reply{Deltas: []string{"It ", "says ", "hi."}})
	ed := e.start(nil)
	ed.WriteFile("a.txt", "hi\n")
	run := ed.Prompt("what does a.txt say?")
	if run.Queued {
		t.Fatalf("first prompt queued: %+v", run)
	}
	evs := ed.WaitDone(run.RunID)
	// zot's RPC stream: the tool call streams (tool_use_*) before it is
	// complete, tool_call names it, and turn_end closes the model call
	// before its tool runs.
	want := "user_message turn_start assistant_start tool_use_start tool_use_args tool_use_end usage assistant_message tool_call turn_end tool_result " +
		"turn_start assistant_start text_delta text_delta text_delta usage assistant_message turn_end done"
	if got := servertest.Types(evs); got != want {
		t.Fatalf("events:\n got %s\nwant %s", got, want)
	}
	tus, tua := servertest.Find(evs, "tool_use_start"), servertest.Find(evs, "tool_use_args")
	if id := servertest.Find(evs, "tool_call")["id"]; tus["id"] != id || tus["name"] != "read" || tua["id"] != id || tua["delta"] != `{"path":"a.txt"}` || servertest.Find(evs, "tool_use_end")["id"] != id {
		t.Fatalf("tool_use events: %v %v", tus, tua)
	}
	for _, ev := range evs {
		if ev.Str("runId") != run.RunID {
			t.Fatalf("event without the runId: %v", ev)
		}
	}
	if tr := servertest.Find(evs, "tool_result"); !strings.Contains(servertest.ResultText(tr), "hi") || tr["is_error"] != false {
		t.Fatalf("tool_result: %v", tr)
	}
	var st map[string]any
	ed.MustCall("zot/state", nil, &st)
	if st["message_count"].(float64) != 4 || st["busy"] != false || st["queued"].(float64) != 0 {
		t.Fatalf("zot/state: %v", st)
	}
	var msgs struct {
		Messages []map[string]any `json:"messages"`
	}
	ed.MustCall("zot/messages", nil, &msgs)
	if len(msgs.Messages) != 4 || msgs.Messages[0]["role"] != "user" {
		t.Fatalf("zot/messages: %v", msgs)
	}
	ed.MustCall("zot/clear", nil, nil)
	ed.MustCall("zot/state", nil, &st)
	if st["message_count"].(float64) != 0 {
		t.Fatalf("after zot/clear: %v", st)
	}
}

func TestPromptWithEditorContext(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.Open("main.go", "package main\n\nfunc main() {}\n")
	var run servertest.RunStarted
	ed.MustCall("zot/prompt", map[string]any{"text": "explain this", "context": map[string]any{
		"uri": ed.URI("main.go"), "range": map[string]any{"start": map[string]int{"line": 2, "character": 0}, "end": map[string]int{"line": 2, "character": 14}},
	}}, &run)
	ed.WaitDone(run.RunID)
	body := jsonString(e.llm.Requests()[0].Body)
	if !strings.Contains(body, "main.go, lines 3–3 selected") || !strings.Contains(body, "func main() {}") {
		t.Fatalf("the model did not get the editor context: %s", body)
	}
}

// A whole-line selection ends at the start of the next line (LSP ends are
// exclusive): lines 1–2 selected, not 1–3.
func TestPromptContextExclusiveEndLine(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	ed := e.start(nil)
	ed.Open("main.go", "package main\n\nfunc main() {}\n")
	var run servertest.RunStarted
	ed.MustCall("zot/prompt", map[string]any{"text": "explain this", "context": map[string]any{
		"uri": ed.URI("main.go"), "range": map[string]any{"start": map[string]int{"line": 0, "character": 0}, "end": map[string]int{"line": 2, "character": 0}},
	}}, &run)
	ed.WaitDone(run.RunID)
	body := jsonString(e.llm.Requests()[0].Body)
	if !strings.Contains(body, "main.go, lines 1–2 selected") || !strings.Contains(body, "package main") || strings.Contains(body, "func main") {
		t.Fatalf("the selection's lines are wrong: %s", body)
	}
}

func TestSecondPromptIsQueued(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Text: "first answer", Gate: "first"},
		llmtest.TextReply("second answer"))
	ed := e.start(nil)
	first := ed.Prompt("one")
	// The first run's model request is held: the run is certainly busy.
	<-e.llm.Arrived("first")
	second := ed.Prompt("two")
	if !second.Queued || second.Ahead != 1 || second.RunID == first.RunID {
		t.Fatalf("second prompt while busy: %+v", second)
	}
	e.llm.Release("first")
	ed.WaitDone(second.RunID)
	// Runs do not interleave: all of the first, then all of the second.
	var order []string
	for _, ev := range ed.Events("") {
		if n := len(order); n == 0 || order[n-1] != ev.Str("runId") {
			order = append(order, ev.Str("runId"))
		}
	}
	if strings.Join(order, ",") != first.RunID+","+second.RunID {
		t.Fatalf("runs interleaved: %v", order)
	}
}

func TestAbort(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Hang: true}, llmtest.Reply{Hang: true}, llmtest.TextReply("never"))
	ed := e.start(nil)
	run := ed.Prompt("hang")
	queued := ed.Prompt("also hang")
	ed.WaitEvent(run.RunID, "assistant_start")
	var res struct {
		Aborted *string  `json:"aborted"`
		Dropped []string `json:"dropped"`
	}
	ed.MustCall("zot/abort", map[string]any{"clearQueue": true}, &res)
	if res.Aborted == nil || *res.Aborted != run.RunID || len(res.Dropped) != 1 || res.Dropped[0] != queued.RunID {
		t.Fatalf("zot/abort: %+v", res)
	}
	evs := ed.WaitDone(run.RunID)
	if te := servertest.Find(evs, "turn_end"); te["stop"] != "aborted" {
		t.Fatalf("turn_end after abort: %v (events %s)", te, servertest.Types(evs))
	}
	if got := servertest.Types(ed.WaitDone(queued.RunID)); got != "error done" {
		t.Fatalf("dropped run: %s", got)
	}
	// Nothing running: abort says so.
	ed.MustCall("zot/abort", nil, &res)
	if res.Aborted != nil {
		t.Fatalf("abort with nothing running: %+v", res)
	}
}

func TestCompactAndModels(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("hello"), llmtest.TextReply("SUMMARY: said hello"))
	ed := e.start(nil)
	ed.WaitDone(ed.Prompt("hi").RunID)
	var run servertest.RunStarted
	ed.MustCall("zot/compact", nil, &run)
	evs := ed.WaitDone(run.RunID)
	if cd := servertest.Find(evs, "compact_done"); cd == nil || !strings.Contains(cd.Str("summary"), "said hello") {
		t.Fatalf("compaction events: %s", servertest.Types(evs))
	}
	var models struct {
		Models []struct {
			ID string `json:"id"`
		} `json:"models"`
		Current string `json:"current"`
	}
	ed.MustCall("zot/models", nil, &models)
	if len(models.Models) == 0 || models.Current == "" {
		t.Fatalf("zot/models: %+v", models)
	}
	var set map[string]string
	ed.MustCall("zot/setModel", map[string]any{"model": "claude-haiku-4-5"}, &set)
	if set["model"] != "claude-haiku-4-5" {
		t.Fatalf("zot/setModel: %v", set)
	}
	if err := ed.Call("zot/setModel", map[string]any{}, nil); err == nil || err.Code != -32602 || !strings.Contains(err.Message, `"model"`) {
		t.Fatalf("zot/setModel without a model: %v", err)
	}
}

func TestSessions(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("hello"), llmtest.TextReply("again"))
	cfg := e.config()
	cfg.Args = []string{"--api-key", "k", "--base-url", e.llm.URL()} // sessions on
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	ed.WaitDone(ed.Prompt("first session").RunID)
	var first map[string]any
	ed.MustCall("zot/state", nil, &first)
	var nw struct {
		SessionID    string `json:"sessionId"`
		MessageCount int    `json:"messageCount"`
	}
	ed.MustCall("zot/session/new", nil, &nw)
	if nw.SessionID == "" || nw.SessionID == first["session_id"] || nw.MessageCount != 0 {
		t.Fatalf("zot/session/new: %+v (was %v)", nw, first["session_id"])
	}
	var list struct {
		Sessions []struct {
			ID       string `json:"id"`
			Messages int    `json:"messages"`
		} `json:"sessions"`
	}
	ed.MustCall("zot/sessions", nil, &list)
	if len(list.Sessions) < 1 {
		t.Fatalf("zot/sessions: %+v", list)
	}
	var res struct {
		SessionID    string `json:"sessionId"`
		MessageCount int    `json:"messageCount"`
	}
	ed.MustCall("zot/session/resume", map[string]any{"id": first["session_id"]}, &res)
	if res.SessionID != first["session_id"] || res.MessageCount != 2 {
		t.Fatalf("zot/session/resume: %+v", res)
	}
	if err := ed.Call("zot/session/resume", map[string]any{"id": ""}, nil); err == nil || !strings.Contains(err.Message, `"id"`) {
		t.Fatalf("resume without id: %v", err)
	}
}

func TestRunShowsWorkDoneProgress(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("bash", map[string]any{"command": "true"}), llmtest.TextReply("done"))
	ed := e.start(askMode(true))
	// Reports collapse to the latest phase; while the approval dialog is
	// up, the latest is "running bash".
	ed.Choose = func(msg string, actions []string) string {
		ed.WaitNote("$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), "running bash") })
		return "Allow once"
	}
	run := ed.Prompt("run it")
	ed.WaitDone(run.RunID)
	ed.Wait("progress end", func() bool {
		for _, m := range ed.Notes("$/progress") {
			if strings.Contains(string(m.Params), `"kind":"end"`) {
				return true
			}
		}
		return false
	})
	if n := len(ed.Requests("window/workDoneProgress/create")); n != 1 {
		t.Fatalf("%d progress create requests", n)
	}
	var kinds, msgs []string
	for _, m := range ed.Notes("$/progress") {
		var p struct {
			Token string `json:"token"`
			Value struct {
				Kind    string `json:"kind"`
				Title   string `json:"title"`
				Message string `json:"message"`
			} `json:"value"`
		}
		json.Unmarshal(m.Params, &p)
		kinds = append(kinds, p.Value.Kind)
		msgs = append(msgs, p.Value.Message)
		if p.Value.Kind == "begin" && (p.Value.Title != "zot" || p.Value.Message != "run it") {
			t.Fatalf("progress begin: %s", m.Params)
		}
	}
	if kinds[0] != "begin" || kinds[len(kinds)-1] != "end" || msgs[len(msgs)-1] != "done" {
		t.Fatalf("progress: %v %v", kinds, msgs)
	}
}

func TestProgressCancelAbortsTheRun(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Hang: true})
	ed := e.start(nil)
	run := ed.Prompt("hang")
	ed.WaitEvent(run.RunID, "assistant_start")
	begin := ed.WaitNote("$/progress", func(p json.RawMessage) bool { return strings.Contains(string(p), `"begin"`) })
	var p struct {
		Token string `json:"token"`
	}
	json.Unmarshal(begin.Params, &p)
	ed.Notify("window/workDoneProgress/cancel", map[string]any{"token": p.Token})
	if te := servertest.Find(ed.WaitDone(run.RunID), "turn_end"); te["stop"] != "aborted" {
		t.Fatalf("turn_end: %v", te)
	}
}

// With several tool calls in one answer (their tool_calls all come before
// any runs, zot's order), the progress names the call that runs: while
// the first call's approval is asked, "running bash", not the last call
// announced.
func TestProgressNamesTheRunningCallOfSeveral(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "bash", Args: json.RawMessage(`{"command":"true"}`)},
			{Name: "ls", Args: json.RawMessage(`{}`)},
		}},
		llmtest.TextReply("done"))
	ed := e.start(askMode(true))
	latest := func() string {
		msg := ""
		for _, m := range ed.Notes("$/progress") {
			var p struct {
				Value struct {
					Kind, Message string
				} `json:"value"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Value.Kind == "report" {
				msg = p.Value.Message
			}
		}
		return msg
	}
	asked := false
	ed.Choose = func(msg string, actions []string) string {
		asked = true
		// Both tool_calls are out before the question (zot's order).
		ed.Wait(`the progress "running bash" while bash is asked about`, func() bool { return latest() == "running bash" })
		return "Allow once"
	}
	run := ed.Prompt("run both")
	evs := ed.WaitDone(run.RunID)
	if !asked || servertest.Types(evs) == "" {
		t.Fatalf("bash was not asked about: %s", servertest.Types(evs))
	}
	if i, j := strings.Index(servertest.Types(evs), "tool_call tool_call turn_end"), strings.Index(servertest.Types(evs), "tool_result tool_result"); i < 0 || j < i {
		t.Fatalf("events: %s", servertest.Types(evs))
	}
}
