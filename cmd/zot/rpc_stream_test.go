package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

// A tool call's arguments stream as tool_use_args pieces, in order, that
// concatenate to the raw argument JSON the model sent; the complete call
// follows as tool_call, after turn_end.
func TestRPCToolUseArgsStreamInPieces(t *testing.T) {
	content := strings.Repeat("line of the new file\n", 20)
	e := newEnv(t,
		llmtest.ToolReply("write", map[string]any{"path": "new.txt", "content": content}),
		llmtest.TextReply("written"),
	)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "write it"})
	frames := p.until(isType("done"))
	var id, args string
	pieces := 0
	seen := map[string]int{}
	for i, f := range frames {
		seen[f["type"].(string)+"#"+toJSON(f["id"])] = i
		switch f["type"] {
		case "tool_use_start":
			id = f["id"].(string)
			if f["name"] != "write" {
				t.Fatalf("tool_use_start: %v", f)
			}
		case "tool_use_args":
			if f["id"] != id {
				t.Fatalf("tool_use_args of another call: %v (start was %s)", f, id)
			}
			args += f["delta"].(string)
			pieces++
		}
	}
	if pieces < 2 {
		t.Fatalf("the arguments came in %d piece(s); want them as they stream", pieces)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(args), &got); err != nil || got["content"] != content || got["path"] != "new.txt" {
		t.Fatalf("the pieces do not make the arguments: %q (%v)", args, err)
	}
	q := toJSON(id)
	if !(seen["tool_use_start#"+q] < seen["tool_use_end#"+q] && seen["tool_use_end#"+q] < seen["tool_call#"+q]) {
		t.Fatalf("order of start, end, call: %v", types(frames))
	}
	if e.read("new.txt") != content {
		t.Fatal("the call did not run")
	}
}

// A model that cannot be reached (nothing listens on the loopback port):
// turn_start, turn_end (stop error), error, done, as zot sends them, with
// an error naming what could not be reached.
func TestRPCUnreachableModel(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	e := newEnv(t)
	p := e.startRPC(nil, "--base-url", dead)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	frames := p.until(isType("done"))
	if got, want := strings.Join(types(frames), " "), "response user_message turn_start turn_end error done"; got != want {
		t.Fatalf("frames:\n got %s\nwant %s", got, want)
	}
	te, er := find(frames, "turn_end"), find(frames, "error")
	msg, _ := er["message"].(string)
	if te["stop"] != "error" || te["error"] != msg || !strings.Contains(msg, "cannot reach "+dead) || !strings.Contains(msg, "connection refused") {
		t.Fatalf("turn_end %v, error %v", te, er)
	}
}

// An extension's notify reaches the RPC client as an ext_notify event,
// its level kept (success is one: docs/rpc.md). Notifications reach the
// front through the extension's UI queue, beside the run (a slow front
// never stalls the extension), so it may come after the run's done: read
// until both are in (a loaded fresh CI machine saw it after done).
func TestRPCExtNotifyEvent(t *testing.T) {
	e := newEnv(t, llmtest.ToolReply("echo", map[string]any{"text": "x"}), llmtest.TextReply("ok"))
	e.installGlobalExt("noisy", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "noisy", "-tools", "echo", "-notify-on-call", "-notify-level", "success"}})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	var done, notified bool
	frames := p.until(func(f map[string]any) bool {
		done = done || f["type"] == "done"
		notified = notified || f["type"] == "ext_notify"
		return done && notified
	})
	n := find(frames, "ext_notify")
	if n == nil || n["extension"] != "noisy" || n["level"] != "success" || n["message"] != "calling echo" {
		t.Fatalf("ext_notify: %v (frames %v)", n, types(frames))
	}
}

// The command RPC command runs built-in and extension slash commands and
// returns their command_response; a prompt action starts a run.
func TestRPCCommand(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("Hi, Ann!"))
	e.installGlobalExt("cmds", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "cmds", "-cmds", "hi,display,insert,err"}})
	p := e.startRPC(nil)

	p.send(map[string]any{"id": "d", "type": "command", "name": "display", "args": "this"})
	r := p.response("d")
	if d, _ := r["data"].(map[string]any); r["success"] != true || d["action"] != "display" || d["display"] != "shown this" || d["extension"] != "cmds" {
		t.Fatalf("display: %v", r)
	}
	p.send(map[string]any{"id": "i", "type": "command", "name": "/insert", "args": "that"})
	r = p.response("i")
	if d, _ := r["data"].(map[string]any); d["action"] != "insert" || d["insert"] != "inserted that" {
		t.Fatalf("insert: %v", r)
	}
	p.send(map[string]any{"id": "e", "type": "command", "name": "err"})
	r = p.response("e")
	if d, _ := r["data"].(map[string]any); r["success"] != true || d["action"] != "noop" || d["error"] != "it went wrong" {
		t.Fatalf("err: %v", r)
	}
	p.send(map[string]any{"id": "h", "type": "command", "name": "help"})
	r = p.response("h")
	help, _ := r["data"].(map[string]any)["display"].(string)
	for _, want := range []string{"/clear", "/model", "/hi — fake /hi (cmds)"} {
		if !strings.Contains(help, want) {
			t.Fatalf("help lacks %q: %q", want, help)
		}
	}
	p.send(map[string]any{"id": "x", "type": "command", "name": "nope"})
	if r := p.response("x"); r["success"] != false || !strings.Contains(r["error"].(string), `unknown command "nope"`) {
		t.Fatalf("unknown: %v", r)
	}

	p.send(map[string]any{"id": "p", "type": "command", "name": "hi", "args": "Ann"})
	frames := p.until(isType("done"))
	r = frames[0]
	if d, _ := r["data"].(map[string]any); r["id"] != "p" || d["action"] != "prompt" || d["prompt"] != "say hi to Ann" || d["started"] != true {
		t.Fatalf("prompt action: %v", r)
	}
	if um := find(frames, "user_message"); !strings.Contains(toJSON(um), "say hi to Ann") {
		t.Fatalf("the run did not send the command's prompt: %v", um)
	}
	if am := find(frames, "assistant_message"); !strings.Contains(toJSON(am), "Hi, Ann!") {
		t.Fatalf("answer: %v", am)
	}

	p.send(map[string]any{"id": "c", "type": "command", "name": "clear"})
	if r := p.response("c"); r["success"] != true || r["data"].(map[string]any)["display"] != "Cleared the conversation." {
		t.Fatalf("clear: %v", r)
	}
	p.send(map[string]any{"id": "s", "type": "get_state"})
	if n := p.response("s")["data"].(map[string]any)["message_count"]; n != float64(0) {
		t.Fatalf("message_count after /clear = %v", n)
	}
}

// Several tool calls in one answer, as zot sends them: every tool_call,
// then turn_end {"stop":"tool_use"}, then each call's tool_result in the
// calls' order; the last turn_end says "end" (zot's word, not end_turn),
// and a reply cut at the output limit says "length".
func TestRPCSeveralToolCallsInZotsOrder(t *testing.T) {
	e := newEnv(t,
		llmtest.Reply{Text: "Reading both.", ToolCalls: []llmtest.ToolCall{
			{ID: "toolu_a", Name: "read", Args: json.RawMessage(`{"path":"a.txt"}`)},
			{ID: "toolu_b", Name: "read", Args: json.RawMessage(`{"path":"b.txt"}`)},
			{ID: "toolu_c", Name: "ls", Args: json.RawMessage(`{}`)},
		}},
		llmtest.TextReply("Both read."),
		llmtest.Reply{Text: "cut sho", Stop: "length"},
	)
	e.write("a.txt", "alpha\n")
	e.write("b.txt", "beta\n")
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "read a and b"})
	frames := p.until(isType("done"))
	var got []string
	for _, f := range frames {
		switch f["type"] {
		case "tool_call", "tool_result":
			got = append(got, f["type"].(string)+":"+f["id"].(string))
		case "turn_end", "turn_start", "assistant_message", "done":
			s := f["type"].(string)
			if st, ok := f["stop"].(string); ok {
				s += ":" + st
			}
			got = append(got, s)
		}
	}
	want := "turn_start assistant_message " +
		"tool_call:toolu_a tool_call:toolu_b tool_call:toolu_c turn_end:tool_use " +
		"tool_result:toolu_a tool_result:toolu_b tool_result:toolu_c " +
		"turn_start assistant_message turn_end:end done"
	if strings.Join(got, " ") != want {
		t.Fatalf("order:\n got %s\nwant %s", strings.Join(got, " "), want)
	}
	for _, f := range frames {
		if f["type"] == "tool_result" && f["id"] == "toolu_b" && !strings.Contains(toJSON(f["content"]), "beta") {
			t.Fatalf("b's result: %v", f)
		}
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "more"})
	if te := find(p.until(isType("done")), "turn_end"); te["stop"] != "length" {
		t.Fatalf("a reply at the output limit: %v", te)
	}
}

// zot -p --json writes turn_end's stop as zot does ("end").
func TestPrintJSONStopIsZots(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("hi"))
	out, errOut, code := e.runZot(e.args("-p", "hi", "--json")...)
	if code != 0 || !strings.Contains(out, `{"type":"turn_end","stop":"end"}`) {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
