package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/server/rpc"
)

func TestRPCPromptStreamsEvents(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("read", map[string]any{"path": "a.txt"}),
		llmtest.Reply{Deltas: []string{"It ", "says ", "hi."}},
	)
	e.write("a.txt", "hi\n")
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "0", "type": "hello"})
	hello := p.response("0")
	data := hello["data"].(map[string]any)
	if hello["success"] != true || data["protocol_version"].(float64) != 1 || data["provider"] != "anthropic" {
		t.Fatalf("hello: %v", hello)
	}
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "what does a.txt say?"})
	frames := p.until(isType("done"))
	got := strings.Join(types(frames), " ")
	// As zot sends it: the tool call streams (tool_use_*), tool_call
	// names it, and turn_end closes the model call before its tool runs.
	want := "response user_message turn_start assistant_start tool_use_start tool_use_args tool_use_end usage assistant_message tool_call turn_end tool_result " +
		"turn_start assistant_start text_delta text_delta text_delta usage assistant_message turn_end done"
	if got != want {
		t.Fatalf("frames:\n got %s\nwant %s", got, want)
	}
	tus, tue := find(frames, "tool_use_start"), find(frames, "tool_use_end")
	if tus["name"] != "read" || tus["id"] == "" || tue["id"] != tus["id"] {
		t.Fatalf("tool_use_start %v, tool_use_end %v", tus, tue)
	}
	if r := frames[0]; r["id"] != "1" || r["command"] != "prompt" || r["data"].(map[string]any)["started"] != true {
		t.Fatalf("prompt response: %v", r)
	}
	tr := find(frames, "tool_result")
	if tr["is_error"] != false || !strings.Contains(toJSON(tr["content"]), "hi") {
		t.Fatalf("tool_result: %v", tr)
	}
	tc := find(frames, "tool_call")
	if tc["name"] != "read" || tc["args"].(map[string]any)["path"] != "a.txt" || tc["id"] != tus["id"] {
		t.Fatalf("tool_call: %v", tc)
	}
	if ta := find(frames, "tool_use_args"); ta["id"] != tus["id"] || ta["delta"] != `{"path":"a.txt"}` {
		t.Fatalf("tool_use_args: %v", ta)
	}
	u := find(frames, "usage")
	for _, k := range []string{"input", "output", "cache_read", "cache_write", "cost_usd", "cumulative"} {
		if _, ok := u[k]; !ok {
			t.Fatalf("usage lacks %s: %v", k, u)
		}
	}
	var ends []string
	for _, f := range frames {
		if f["type"] == "turn_end" {
			ends = append(ends, f["stop"].(string))
		}
	}
	if strings.Join(ends, ",") != "tool_use,end" {
		t.Fatalf("turn_end stops = %v", ends)
	}

	p.send(map[string]any{"id": 2, "type": "get_state"})
	st := p.until(isType("response"))[0]
	sd := st["data"].(map[string]any)
	if st["id"] != float64(2) || sd["message_count"].(float64) != 4 || sd["busy"] != false || sd["cwd"] != e.cwd {
		t.Fatalf("get_state: %v", st)
	}
	p.send(map[string]any{"id": "3", "type": "get_messages"})
	msgs := p.response("3")["data"].(map[string]any)["messages"].([]any)
	if len(msgs) != 4 {
		t.Fatalf("messages: %d", len(msgs))
	}
	js := toJSON(msgs)
	for _, want := range []string{`"type":"tool_call"`, `"type":"tool_result"`, `"call_id"`, `"role":"assistant"`} {
		if !strings.Contains(js, want) {
			t.Fatalf("messages lack %s: %s", want, js)
		}
	}
}

func TestRPCCommandsAndErrors(t *testing.T) {
	e := newEnv(t)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "p", "type": "ping"})
	if r := p.until(isResponse("p"))[0]; r["data"].(map[string]any)["pong"] != true {
		t.Fatalf("ping: %v", r)
	}
	p.send(map[string]any{"id": "m", "type": "get_models"})
	models := p.until(isResponse("m"))[0]["data"].(map[string]any)["models"].([]any)
	if len(models) == 0 {
		t.Fatal("no models")
	}
	first := models[0].(map[string]any)
	for _, k := range []string{"id", "provider", "context_window", "max_output"} {
		if _, ok := first[k]; !ok {
			t.Fatalf("model lacks %s: %v", k, first)
		}
	}
	p.send(map[string]any{"id": "s", "type": "set_model", "model": first["id"]})
	if r := p.until(isResponse("s"))[0]; r["success"] != true {
		t.Fatalf("set_model: %v", r)
	}
	// With --base-url an unknown model is accepted with default limits
	// (local servers name models freely); without a model it is an error.
	p.send(map[string]any{"id": "local", "type": "set_model", "model": "qwen2.5-coder:7b"})
	if r := p.until(isResponse("local"))[0]; r["success"] != true {
		t.Fatalf("set_model on a base URL: %v", r)
	}
	p.send(map[string]any{"id": "bad", "type": "set_model"})
	if r := p.until(isResponse("bad"))[0]; r["success"] != false || !strings.Contains(r["error"].(string), "get_models") {
		t.Fatalf("bad set_model: %v", r)
	}
	p.send(map[string]any{"id": "u", "type": "frobnicate"})
	if r := p.until(isResponse("u"))[0]; r["success"] != false || !strings.Contains(r["error"].(string), "unknown command") {
		t.Fatalf("unknown: %v", r)
	}
	p.in.Write([]byte("this is not json\n"))
	if r := p.until(isType("response"))[0]; r["success"] != false || !strings.Contains(r["error"].(string), "parse error") {
		t.Fatalf("garbage: %v", r)
	}
	p.send(map[string]any{"id": "e", "type": "prompt", "message": "  "})
	if r := p.until(isResponse("e"))[0]; r["success"] != false {
		t.Fatalf("empty prompt: %v", r)
	}
	p.send(map[string]any{"id": "c", "type": "clear"})
	if r := p.until(isResponse("c"))[0]; r["success"] != true {
		t.Fatalf("clear: %v", r)
	}
	// Still alive after all that.
	p.send(map[string]any{"id": "p2", "type": "ping"})
	p.until(isResponse("p2"))
}

func TestRPCTokenAuth(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	p := e.startRPC([]string{"ZOTCORE_RPC_TOKEN=s3cret"})
	p.send(map[string]any{"id": "0", "type": "hello", "token": "s3cret"})
	if r := p.response("0"); r["success"] != true {
		t.Fatalf("hello: %v", r)
	}
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	p.until(isType("done"))

	bad := e.startRPC([]string{"ZOTCORE_RPC_TOKEN=s3cret"})
	bad.send(map[string]any{"id": "0", "type": "ping"})
	if r := bad.response("0"); r["success"] != false {
		t.Fatalf("unauthenticated ping: %v", r)
	}
	if err := bad.cmd.Wait(); err == nil {
		t.Fatal("want a non-zero exit after failed auth")
	}
}

func TestRPCQueuesSecondPrompt(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Text: "first answer", Gate: "first"},
		llmtest.TextReply("second answer"),
	)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "one"})
	// The first run's model request is held: the run is certainly busy.
	<-e.llm.Arrived("first")
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "two"})
	frames := p.until(isResponse("2"))
	e.llm.Release("first")
	frames = append(frames, p.until(isType("done"))...)
	frames = append(frames, p.until(isType("done"))...)
	var r2 map[string]any
	dones := 0
	for _, f := range frames {
		if f["type"] == "response" && f["id"] == "2" {
			r2 = f
		}
		if f["type"] == "done" {
			dones++
		}
	}
	if r2 == nil || r2["data"].(map[string]any)["queued"] != true {
		t.Fatalf("second prompt not reported queued: %v", r2)
	}
	var text string
	for _, f := range frames {
		if f["type"] == "text_delta" {
			text += f["delta"].(string)
		}
	}
	if text != "first answersecond answer" {
		t.Fatalf("runs interleaved or lost: %q", text)
	}
}

func TestRPCAbortMidStream(t *testing.T) {
	e := newEnv(t, llmtest.Reply{RepeatText: &llmtest.Repeat{Text: "x", Count: 100000}, DelayMS: 5})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "talk forever"})
	p.until(isType("text_delta"))
	p.send(map[string]any{"id": "2", "type": "abort"})
	frames := p.until(isType("done"))
	end := find(frames, "turn_end")
	if end == nil || end["stop"] != "aborted" {
		t.Fatalf("want turn_end aborted, got %v", types(frames))
	}
	// The runtime is usable afterwards, with a valid transcript.
	p.send(map[string]any{"id": "3", "type": "get_state"})
	if r := p.response("3"); r["data"].(map[string]any)["busy"] != false {
		t.Fatalf("still busy after abort: %v", r)
	}
}

func TestRPCAbortMidBashKillsProcessGroup(t *testing.T) {
	_, p, child, shell := runningBash(t, "after abort")
	p.send(map[string]any{"id": "2", "type": "abort"})
	frames := p.until(isType("done"))
	tr := find(frames, "tool_result")
	if tr == nil || tr["is_error"] != true {
		t.Fatalf("want an error tool_result, got %v", types(frames))
	}
	var last map[string]any
	for _, f := range frames {
		if f["type"] == "turn_end" {
			last = f
		}
	}
	if last["stop"] != "aborted" {
		t.Fatalf("turn_end = %v", last)
	}
	proctest.WaitGone(t, child, "the command's child")
	proctest.WaitGone(t, shell, "the command's shell")
	// The transcript is valid: the next prompt goes through.
	p.send(map[string]any{"id": "3", "type": "prompt", "message": "still there?"})
	next := p.until(isType("done"))
	if find(next, "error") != nil {
		t.Fatalf("prompt after abort failed: %v", next)
	}
}

func TestRPCExitsOnStdinEOF(t *testing.T) {
	e := newEnv(t)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "ping"})
	p.until(isResponse("1"))
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("zot rpc did not exit on stdin EOF")
	}
}

func TestRPCCompactCountsItsUsage(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Text: "answer", Usage: &llmtest.Usage{Input: 100, Output: 10}},
		llmtest.Reply{Text: "the summary", Usage: &llmtest.Usage{Input: 200, Output: 20}},
	)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	p.until(isType("done"))
	p.send(map[string]any{"id": "2", "type": "compact"})
	frames := p.until(isType("done"))
	cd := find(frames, "compact_done")
	if cd == nil || cd["summary"] != "the summary" {
		t.Fatalf("compact: %v", types(frames))
	}
	p.send(map[string]any{"id": "3", "type": "get_state"})
	st := p.response("3")["data"].(map[string]any)
	u := st["usage"].(map[string]any)
	if u["input"].(float64) != 300 || u["output"].(float64) != 30 || st["message_count"].(float64) != 1 {
		t.Fatalf("state after compaction: %v", st)
	}
}

// runningBash starts zot rpc on a prompt whose bash tool starts a
// background child and waits; it returns once both pids are written, with
// the tool still running. The model answers after with answer.
func runningBash(t *testing.T, answer string) (e *env, p *rpcProc, child, shell int) {
	t.Helper()
	e = newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait"}),
		llmtest.TextReply(answer),
	)
	p = e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "run it"})
	p.until(isType("tool_call"))
	return e, p, waitPIDFile(t, filepath.Join(e.cwd, "child.pid")), waitPIDFile(t, filepath.Join(e.cwd, "shell.pid"))
}

func waitPIDFile(t *testing.T, path string) int {
	t.Helper()
	for i := 0; i < 600; i++ {
		if b, err := os.ReadFile(path); err == nil && strings.HasSuffix(string(b), "\n") {
			n, err := strconv.Atoi(strings.TrimSpace(string(b)))
			if err == nil {
				return n
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never appeared", path)
	return 0
}

func toJSON(v any) string {
	b, _ := jsonMarshal(v)
	return string(b)
}

func TestRPCSetReasoningAndThinkingEvents(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Thinking: "Let me think.", Text: "Done."})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "r", "type": "set_reasoning", "level": "low"})
	if r := p.until(isResponse("r"))[0]; r["success"] != true || r["data"].(map[string]any)["reasoning"] != "low" {
		t.Fatalf("set_reasoning: %v", r)
	}
	p.send(map[string]any{"id": "st", "type": "get_state"})
	if r := p.until(isResponse("st"))[0]; r["data"].(map[string]any)["reasoning"] != "low" {
		t.Fatalf("get_state: %v", r)
	}
	p.send(map[string]any{"id": "bad", "type": "set_reasoning", "level": "max"})
	if r := p.until(isResponse("bad"))[0]; r["success"] != false || !strings.Contains(r["error"].(string), "off, low, medium or high") {
		t.Fatalf("bad level: %v", r)
	}
	p.send(map[string]any{"id": "go", "type": "prompt", "message": "hi"})
	evs := p.until(isType("done"))
	th := find(evs, "thinking_delta")
	if th == nil || th["text"] != "Let" {
		t.Fatalf("thinking_delta: %v in %v", th, types(evs))
	}
	if got := e.llm.Requests()[0].Body["thinking"].(map[string]any)["budget_tokens"]; got != float64(4096) {
		t.Fatalf("budget = %v", got)
	}
	p.send(map[string]any{"id": "msgs", "type": "get_messages"})
	msgs := toJSON(p.until(isResponse("msgs"))[0]["data"])
	if !strings.Contains(msgs, `{"text":"Let me think.","type":"thinking"}`) || strings.Contains(msgs, "sig_llmtest") {
		t.Fatalf("get_messages: %s", msgs)
	}
}

// 1,100 prompts behind a running one: the queue takes MaxQueued, the rest
// are refused with "queue full", and ping, abort and the end of input are
// still read and answered.
func TestRPCQueueFullKeepsReading(t *testing.T) {
	const n = 1100
	e := newEnv(t, llmtest.Reply{Hang: true})
	p := e.startRPC(nil)
	var lines bytes.Buffer
	for i := 0; i < n; i++ {
		fmt.Fprintf(&lines, `{"id":"p%d","type":"prompt","message":"prompt %d"}`+"\n", i, i)
	}
	writeErr := make(chan error, 1)
	go func() { _, err := p.in.Write(lines.Bytes()); writeErr <- err }()

	started, queued, full := 0, 0, 0
	var fullMsg string
	atModel := false // the running one hangs in its model call
	p.until(func(m map[string]any) bool {
		if m["type"] == "assistant_start" {
			atModel = true
		}
		if m["type"] != "response" || m["command"] != "prompt" {
			return false
		}
		data, _ := m["data"].(map[string]any)
		switch {
		case m["success"] == true && data["queued"] == true:
			queued++
		case m["success"] == true:
			started++
		default:
			full++
			fullMsg, _ = m["error"].(string)
		}
		return started+queued+full == n
	})
	if err := <-writeErr; err != nil {
		t.Fatalf("writing the prompts: %v", err)
	}
	if started != 1 || queued != rpc.MaxQueued || full != n-1-rpc.MaxQueued {
		t.Fatalf("started %d, queued %d, refused %d; want 1, %d, %d", started, queued, full, rpc.MaxQueued, n-1-rpc.MaxQueued)
	}
	if want := fmt.Sprintf("queue full (%d waiting)", rpc.MaxQueued); !strings.Contains(fullMsg, want) {
		t.Fatalf("refusal %q does not say %q", fullMsg, want)
	}
	p.send(map[string]any{"id": "ping", "type": "ping"})
	r := p.until(isResponse("ping"))
	if r[len(r)-1]["success"] != true {
		t.Fatalf("ping: %v", r[len(r)-1])
	}
	// The run may reach its model call while the ping is answered (its
	// checkpoint comes first): those frames are read here.
	if find(r, "assistant_start") != nil {
		atModel = true
	}
	if !atModel {
		// The abort must find the first run in its model call (the only
		// reply), not before it: the next run would take the hang.
		p.until(isType("assistant_start"))
	}
	p.send(map[string]any{"id": "abort", "type": "abort"})
	p.until(isResponse("abort"))
	p.in.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("zot rpc did not exit on stdin EOF")
	}
}

// A command with a field of the wrong type is refused naming the field,
// and its id is echoed.
func TestRPCTypeErrorEchoesID(t *testing.T) {
	e := newEnv(t)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "x1", "type": "prompt", "message": 7})
	r := p.until(isResponse("x1"))
	last := r[len(r)-1]
	if last["success"] != false || last["command"] != "prompt" || !strings.Contains(last["error"].(string), `"message" must be a string, not number`) {
		t.Fatalf("response: %v", last)
	}
	p.send(map[string]any{"id": 42, "type": "set_model", "model": []int{1}})
	r = p.until(func(m map[string]any) bool { return m["type"] == "response" && m["id"] == float64(42) })
	if last := r[len(r)-1]; last["success"] != false || !strings.Contains(last["error"].(string), `"model" must be a string, not array`) {
		t.Fatalf("response: %v", last)
	}
}

// A prompt past agent.MaxPromptBytes is refused with the limit, id echoed.
func TestRPCPromptOverTheLimitIsRefused(t *testing.T) {
	e := newEnv(t)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "big", "type": "prompt", "message": strings.Repeat("x", agent.MaxPromptBytes+1)})
	r := p.until(isResponse("big"))
	if last := r[len(r)-1]; last["success"] != false || !strings.Contains(last["error"].(string), "the largest zot accepts is 16 MiB") {
		t.Fatalf("response: %v", last)
	}
}

// A large prompt line (unquoted in place in the line, its user_message
// written in escaped pieces) arrives whole: every escape JSON has,
// non-ASCII split across piece boundaries, in the user_message event and
// in the model's request.
func TestRPCLargePromptArrivesWhole(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("ok"))
	p := e.startRPC(nil)
	unit := "line \"q\" \\ / \t\r\b\f\x01\x1f <a&b> \u2028\u2029 é 漢 😀\n"
	text := strings.Repeat(unit, (5<<20)/len(unit)) // past bigLine: the collection after the line
	p.send(map[string]any{"id": "p", "type": "prompt", "message": text})
	evs := p.until(isType("done"))
	um := find(evs, "user_message")
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
