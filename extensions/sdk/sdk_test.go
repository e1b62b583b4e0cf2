package sdk

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/extensions/sdk/sdktest"
	"github.com/zot-editors/zot/extensions/wire"
)

// wait bounds every wait for the extension so a bug fails the test
// instead of hanging it; nothing is asserted about how long things take.
const wait = 30 * time.Second

// fakeHost drives an Extension in-process over a pair of pipes.
type fakeHost struct {
	*sdktest.Host
	e *Extension
}

func start(t *testing.T, e *Extension) *fakeHost {
	t.Helper()
	h := &fakeHost{Host: sdktest.Start(t, e), e: e}
	h.Wait = wait
	return h
}

var testAck = wire.Frame{
	Type: wire.TypeHelloAck, ProtocolVersion: 1, ZotVersion: "test",
	Provider: "anthropic", Model: "m1", Cwd: "/work", ExtensionDir: "/ext/x", DataDir: "/data/x",
}

// handshake answers hello and returns the frames up to and including ready.
func (h *fakeHost) handshake(t *testing.T) []wire.Frame {
	t.Helper()
	hello, frames := h.Handshake(testAck)
	if hello.Name != h.e.name {
		t.Fatalf("hello name %q", hello.Name)
	}
	return frames
}

func ping(e *Extension) {
	e.Command("ping", "", func(string) Response { return Display("pong") })
}

// pingPong proves the extension is still serving: the reply to a ping
// command must be the next frame.
func (h *fakeHost) pingPong(t *testing.T, id string) {
	t.Helper()
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: id, Name: "ping"})
	f := h.Expect(wire.TypeCommandResponse)
	if f.ID != id || f.Display != "pong" {
		t.Fatalf("ping reply %+v", f)
	}
}

func TestHandshakeOrder(t *testing.T) {
	e := New("hello", "1.2.3")
	e.Command("a", "first", func(string) Response { return Noop() })
	e.Tool("t", "a tool", json.RawMessage(`{"type":"object","properties":{"x":{"type":"string"}}}`),
		func(json.RawMessage) ToolResult { return TextResult("") })
	e.Command("b", "second", func(string) Response { return Noop() })
	e.ToolCtx("u", "schemaless", nil, func(context.Context, json.RawMessage) ToolResult { return TextResult("") })
	e.On(wire.EventTurnEnd, func(wire.Frame) {})
	e.On(wire.EventSessionStart, func(wire.Frame) {})
	e.On(wire.EventTurnEnd, func(wire.Frame) {})
	e.InterceptAssistantMessage(func(string) AssistantMessageDecision { return AssistantMessageDecision{} })
	e.InterceptToolCall(func(string, json.RawMessage) (bool, string) { return true, "" })
	e.InterceptTurnStart(func(int) TurnStartDecision { return TurnStartDecision{} })
	if err := e.Notify("info", "too early"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Notify before Run: %v", err)
	}
	h := start(t, e)

	hello := h.Expect(wire.TypeHello)
	if hello.Version != "1.2.3" || !slices.Contains(hello.Capabilities, "commands") ||
		!slices.Contains(hello.Capabilities, "tools") || !slices.Contains(hello.Capabilities, "panels") ||
		!slices.Contains(hello.Capabilities, wire.CapReady) { // the SDK always sends ready: never ready by silence
		t.Fatalf("hello %+v", hello)
	}
	if e.Hello() != (HostInfo{}) {
		t.Fatalf("Hello before hello_ack: %+v", e.Hello())
	}
	h.Send(testAck)

	var kinds []string
	var frames []wire.Frame
	for {
		f := h.Next()
		frames = append(frames, f)
		kinds = append(kinds, f.Type+":"+f.Name)
		if f.Type == wire.TypeReady {
			break
		}
	}
	want := []string{"register_command:a", "register_tool:t", "register_command:b", "register_tool:u", "subscribe:", "ready:"}
	if !slices.Equal(kinds, want) {
		t.Fatalf("frames %v, want %v", kinds, want)
	}
	if frames[0].Description != "first" || !json.Valid(frames[1].Schema) || string(frames[3].Schema) != `{"type":"object"}` {
		t.Fatalf("registrations %+v", frames[:4])
	}
	sub := frames[4]
	if !slices.Equal(sub.Events, []string{"turn_end", "session_start"}) ||
		!slices.Equal(sub.Intercept, []string{"tool_call", "turn_start", "assistant_message"}) {
		t.Fatalf("subscribe %+v", sub)
	}
	wantHost := HostInfo{ProtocolVersion: 1, ZotVersion: "test", Provider: "anthropic", Model: "m1",
		Cwd: "/work", ExtensionDir: "/ext/x", DataDir: "/data/x"}
	if e.Hello() != wantHost {
		t.Fatalf("Hello() = %+v", e.Hello())
	}
}

func TestNoSubscribeWithoutEvents(t *testing.T) {
	e := New("plain", "1")
	ping(e)
	h := start(t, e)
	got := h.handshake(t)
	if len(got) != 2 || got[0].Type != wire.TypeRegisterCommand {
		t.Fatalf("frames %+v", got)
	}
}

func TestCommands(t *testing.T) {
	e := New("cmds", "1")
	e.Command("hello", "", func(args string) Response {
		return Prompt("greet " + args + " in " + e.Hello().DataDir)
	})
	e.Command("ins", "", func(string) Response { return Insert("inserted") })
	e.Command("disp", "", func(string) Response { return Display("shown") })
	e.Command("panel", "", func(string) Response {
		return OpenPanel(PanelView{ID: "p1", Title: "T", Footer: "f"})
	})
	e.Command("noop", "", func(string) Response { return Noop() })
	e.Command("err", "", func(string) Response { return Error("nope") })
	e.Command("empty", "", func(string) Response { return Response{} })
	h := start(t, e)
	h.handshake(t)

	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "1", Name: "hello", Args: json.RawMessage(`"world"`)})
	if f := h.Expect(wire.TypeCommandResponse); f.ID != "1" || f.Action != "prompt" || f.Prompt != "greet world in /data/x" {
		t.Fatalf("prompt %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "2", Name: "ins"})
	if f := h.Expect(wire.TypeCommandResponse); f.ID != "2" || f.Action != "insert" || f.Insert != "inserted" {
		t.Fatalf("insert %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "3", Name: "disp"})
	if f := h.Expect(wire.TypeCommandResponse); f.Action != "display" || f.Display != "shown" {
		t.Fatalf("display %+v", f)
	}
	h.SendRaw(`{"type":"command_invoked","id":"4","name":"panel","args":""}` + "\n")
	line := h.NextLine()
	if !strings.Contains(string(line), `"open_panel":{"id":"p1","title":"T","lines":[],"footer":"f"}`) {
		t.Fatalf("open_panel frame %s", line)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "5", Name: "noop"})
	if f := h.Expect(wire.TypeCommandResponse); f.Action != "noop" || f.Error != "" {
		t.Fatalf("noop %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "6", Name: "err"})
	if f := h.Expect(wire.TypeCommandResponse); f.Action != "noop" || f.Error != "nope" {
		t.Fatalf("error %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "7", Name: "empty"})
	if f := h.Expect(wire.TypeCommandResponse); f.Action != "noop" {
		t.Fatalf("empty response %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "8", Name: "missing"})
	if f := h.Expect(wire.TypeCommandResponse); f.ID != "8" || !strings.Contains(f.Error, "/missing") {
		t.Fatalf("unknown command %+v", f)
	}
}

func TestTools(t *testing.T) {
	png := []byte{0x89, 'P', 'N', 'G', 0, 1, 2}
	e := New("tools", "1")
	e.Tool("echo", "", nil, func(args json.RawMessage) ToolResult {
		var in struct{ S string }
		if err := json.Unmarshal(args, &in); err != nil {
			return ErrorResult(err.Error())
		}
		return TextResult(fmt.Sprintf("%d:%s", len(in.S), in.S[:min(len(in.S), 5)]))
	})
	e.Tool("args", "", nil, func(args json.RawMessage) ToolResult { return TextResult(string(args)) })
	e.Tool("fail", "", nil, func(json.RawMessage) ToolResult { return ErrorResult("bad input") })
	e.Tool("img", "", nil, func(json.RawMessage) ToolResult { return ImageResult("image/png", png) })
	e.Tool("multi", "", nil, func(json.RawMessage) ToolResult {
		return ToolResult{Content: []wire.Block{TextBlock("a"), ImageBlock("image/gif", []byte("GIF"))}}
	})
	e.Tool("none", "", nil, func(json.RawMessage) ToolResult { return ToolResult{} })
	h := start(t, e)
	h.handshake(t)

	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t1", Name: "echo", Args: json.RawMessage(`{"S":"hello"}`)})
	if f := h.Expect(wire.TypeToolResult); f.ID != "t1" || f.IsError || len(f.Content) != 1 || f.Content[0].Text != "5:hello" {
		t.Fatalf("echo %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t2", Name: "args"})
	if f := h.Expect(wire.TypeToolResult); f.Content[0].Text != "{}" {
		t.Fatalf("absent args %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t3", Name: "fail", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeToolResult); !f.IsError || f.Content[0].Text != "bad input" {
		t.Fatalf("error result %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t4", Name: "img", Args: json.RawMessage(`{}`)})
	f := h.Expect(wire.TypeToolResult)
	if b := f.Content[0]; b.Type != "image" || b.MimeType != "image/png" || b.Data != base64.StdEncoding.EncodeToString(png) {
		t.Fatalf("image result %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t5", Name: "multi", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeToolResult); len(f.Content) != 2 || f.Content[1].Type != "image" {
		t.Fatalf("multi %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t6", Name: "none", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeToolResult); len(f.Content) != 1 || f.Content[0].Type != "text" {
		t.Fatalf("empty result %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t7", Name: "nosuch", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeToolResult); !f.IsError || !strings.Contains(f.Content[0].Text, "nosuch") {
		t.Fatalf("unknown tool %+v", f)
	}

	// A long line (4 MiB of args) is read whole.
	big := strings.Repeat("x", 4<<20)
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "big", Name: "echo", Args: json.RawMessage(`{"S":"` + big + `"}`)})
	if f := h.Expect(wire.TypeToolResult); f.ID != "big" || f.Content[0].Text != fmt.Sprintf("%d:xxxxx", len(big)) {
		t.Fatalf("big %+v", f)
	}
}

func TestPanics(t *testing.T) {
	e := New("panicky", "1")
	e.Command("boom", "", func(string) Response { panic("command exploded") })
	e.Tool("boom", "", nil, func(json.RawMessage) ToolResult { panic(errors.New("tool exploded")) })
	e.InterceptToolCallX(func(tool string, _ json.RawMessage) ToolCallDecision {
		if tool == "bash" {
			panic("guard exploded")
		}
		return ToolCallDecision{}
	})
	e.InterceptTurnStart(func(int) TurnStartDecision { panic("gate exploded") })
	e.InterceptAssistantMessage(func(string) AssistantMessageDecision { panic("filter exploded") })
	e.On(wire.EventTurnEnd, func(wire.Frame) { panic("observer exploded") })
	e.OnPanelKey(func(string, string, string) { panic("panel exploded") })
	ping(e)
	h := start(t, e)
	h.handshake(t)

	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "c", Name: "boom"})
	if f := h.Expect(wire.TypeCommandResponse); f.ID != "c" || f.Action != "noop" || !strings.Contains(f.Error, "command exploded") {
		t.Fatalf("command panic %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t", Name: "boom", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeToolResult); f.ID != "t" || !f.IsError || !strings.Contains(f.Content[0].Text, "tool exploded") {
		t.Fatalf("tool panic %+v", f)
	}
	for _, c := range []struct{ event, text string }{
		{wire.EventToolCall, "guard exploded"},
		{wire.EventTurnStart, "gate exploded"},
		{wire.EventAssistantMessage, "filter exploded"},
	} {
		h.Send(wire.Frame{Type: wire.TypeEventIntercept, ID: "i-" + c.event, Event: c.event, ToolName: "bash",
			ToolArgs: json.RawMessage(`{"command":"ls"}`), Step: 1, Text: "hi"})
		f := h.Expect(wire.TypeEventInterceptResponse)
		if f.ID != "i-"+c.event || !f.Block || !strings.Contains(f.Reason, c.text) || !strings.Contains(f.Reason, "panicky") {
			t.Fatalf("%s intercept panic %+v", c.event, f)
		}
	}
	// A guard that does not panic still allows.
	h.Send(wire.Frame{Type: wire.TypeEventIntercept, ID: "ok", Event: wire.EventToolCall, ToolName: "read", ToolArgs: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeEventInterceptResponse); f.Block || f.ModifiedArgs != nil {
		t.Fatalf("allow %+v", f)
	}
	// Panicking observers are logged, and the extension keeps serving.
	h.Send(wire.Frame{Type: wire.TypeEvent, Event: wire.EventTurnEnd, Stop: "end_turn"})
	h.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "p", Key: "up"})
	h.pingPong(t, "after")
	for _, text := range []string{"observer exploded", "panel exploded"} {
		deadline := time.Now().Add(wait)
		for !strings.Contains(h.Log.String(), text) {
			if time.Now().After(deadline) {
				t.Fatalf("log lacks %q:\n%s", text, h.Log)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func TestIntercepts(t *testing.T) {
	e := New("guard", "1")
	e.InterceptToolCall(func(tool string, args json.RawMessage) (bool, string) {
		if strings.Contains(string(args), "rm -rf") {
			return false, "no rm -rf"
		}
		return true, ""
	})
	e.InterceptTurnStart(func(step int) TurnStartDecision {
		return TurnStartDecision{Block: step > 3, Reason: "too many steps"}
	})
	e.InterceptAssistantMessage(func(text string) AssistantMessageDecision {
		if strings.Contains(text, "SECRET") {
			return AssistantMessageDecision{ReplaceText: strings.ReplaceAll(text, "SECRET", "[redacted]")}
		}
		return AssistantMessageDecision{Block: text == "hide me"}
	})
	h := start(t, e)
	h.handshake(t)

	intercept := func(f wire.Frame) wire.Frame {
		t.Helper()
		f.Type, f.ID = wire.TypeEventIntercept, f.Event+"-id"
		h.Send(f)
		r := h.Expect(wire.TypeEventInterceptResponse)
		if r.ID != f.ID {
			t.Fatalf("response id %q, want %q", r.ID, f.ID)
		}
		return r
	}
	if r := intercept(wire.Frame{Event: "tool_call", ToolName: "bash", ToolArgs: json.RawMessage(`{"command":"rm -rf /"}`)}); !r.Block || r.Reason != "no rm -rf" {
		t.Fatalf("block %+v", r)
	}
	if r := intercept(wire.Frame{Event: "tool_call", ToolName: "bash", ToolArgs: json.RawMessage(`{"command":"ls"}`)}); r.Block || r.Reason != "" || r.ModifiedArgs != nil {
		t.Fatalf("allow %+v", r)
	}
	if r := intercept(wire.Frame{Event: "turn_start", Step: 4}); !r.Block || r.Reason != "too many steps" {
		t.Fatalf("turn_start %+v", r)
	}
	if r := intercept(wire.Frame{Event: "turn_start", Step: 1}); r.Block {
		t.Fatalf("turn_start allow %+v", r)
	}
	if r := intercept(wire.Frame{Event: "assistant_message", Text: "key SECRET"}); r.Block || r.ReplaceText == nil || *r.ReplaceText != "key [redacted]" {
		t.Fatalf("replace %+v", r)
	}
	if r := intercept(wire.Frame{Event: "assistant_message", Text: "hide me"}); !r.Block || r.ReplaceText != nil {
		t.Fatalf("hide %+v", r)
	}
	if r := intercept(wire.Frame{Event: "assistant_message", Text: "fine"}); r.Block || r.ReplaceText != nil {
		t.Fatalf("pass %+v", r)
	}
	if r := intercept(wire.Frame{Event: "mystery"}); r.Block {
		t.Fatalf("unknown event %+v", r)
	}
}

// OnUserBash subscribes to intercept user_bash and answers it: block
// with a reason, the extension's own result, or nothing (zot runs it).
func TestOnUserBash(t *testing.T) {
	e := New("shell", "1")
	e.OnUserBash(func(command, cwd string, exclude bool) UserBashVerdict {
		switch {
		case strings.Contains(command, "rm -rf"):
			return UserBashVerdict{Block: true, Reason: "not from " + cwd}
		case exclude:
			return UserBashVerdict{Result: &wire.BashResult{Output: "remote: " + command, ExitCode: 1}}
		}
		return UserBashVerdict{}
	})
	h := start(t, e)
	frames := h.handshake(t)
	var sub wire.Frame
	for _, f := range frames {
		if f.Type == wire.TypeSubscribe {
			sub = f
		}
	}
	if !slices.Contains(sub.Intercept, wire.EventUserBash) {
		t.Fatalf("subscribe: %+v", sub)
	}
	ask := func(f wire.Frame) wire.Frame {
		t.Helper()
		f.Type, f.ID, f.Event = wire.TypeEventIntercept, "ub-"+f.Command, wire.EventUserBash
		h.Send(f)
		return h.Expect(wire.TypeEventInterceptResponse)
	}
	if r := ask(wire.Frame{Command: "rm -rf x", Cwd: "/w"}); !r.Block || r.Reason != "not from /w" {
		t.Fatalf("block: %+v", r)
	}
	if r := ask(wire.Frame{Command: "ls", ExcludeFromContext: true}); r.Block || r.BashResult == nil || r.BashResult.Output != "remote: ls" || r.BashResult.ExitCode != 1 {
		t.Fatalf("result: %+v", r)
	}
	if r := ask(wire.Frame{Command: "make"}); r.Block || r.BashResult != nil {
		t.Fatalf("run: %+v", r)
	}
}

func TestInterceptToolCallX(t *testing.T) {
	e := New("rewriter", "1")
	e.InterceptToolCall(func(string, json.RawMessage) (bool, string) { return false, "the simple form must lose" })
	e.InterceptToolCallX(func(tool string, args json.RawMessage) ToolCallDecision {
		if tool == "read" {
			return ToolCallDecision{Block: true, Reason: "no reads", ModifiedArgs: json.RawMessage(`{"x":1}`)}
		}
		return ToolCallDecision{ModifiedArgs: json.RawMessage(`{"command":"echo GUARDED"}`)}
	})
	h := start(t, e)
	got := h.handshake(t)
	if sub := got[0]; sub.Type != wire.TypeSubscribe || !slices.Equal(sub.Intercept, []string{"tool_call"}) || sub.Events != nil {
		t.Fatalf("subscribe %+v", sub)
	}
	h.Send(wire.Frame{Type: wire.TypeEventIntercept, ID: "1", Event: "tool_call", ToolName: "bash", ToolArgs: json.RawMessage(`{"command":"ls"}`)})
	if r := h.Expect(wire.TypeEventInterceptResponse); r.Block || string(r.ModifiedArgs) != `{"command":"echo GUARDED"}` {
		t.Fatalf("rewrite %+v", r)
	}
	h.Send(wire.Frame{Type: wire.TypeEventIntercept, ID: "2", Event: "tool_call", ToolName: "read", ToolArgs: json.RawMessage(`{}`)})
	if r := h.Expect(wire.TypeEventInterceptResponse); !r.Block || r.Reason != "no reads" || r.ModifiedArgs != nil {
		t.Fatalf("block drops modified args %+v", r)
	}
}

func TestToolCancel(t *testing.T) {
	started := make(chan struct{})
	sawCancel := make(chan error, 1)
	e := New("cancel", "1")
	e.ToolCtx("slow", "", nil, func(ctx context.Context, _ json.RawMessage) ToolResult {
		close(started)
		<-ctx.Done()
		sawCancel <- ctx.Err()
		return TextResult("too late")
	})
	e.Tool("fast", "", nil, func(json.RawMessage) ToolResult { return TextResult("quick") })
	h := start(t, e)
	h.handshake(t)

	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "s", Name: "slow", Args: json.RawMessage(`{}`)})
	select {
	case <-started:
	case <-time.After(wait):
		t.Fatal("slow tool not started")
	}
	h.Send(wire.Frame{Type: wire.TypeToolCancel, ID: "unknown"}) // ignored
	h.Send(wire.Frame{Type: wire.TypeToolCancel, ID: "s"})
	select {
	case err := <-sawCancel:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("ctx err %v", err)
		}
	case <-time.After(wait):
		t.Fatal("tool context not cancelled")
	}
	// The cancelled call's result is dropped: the next frame answers "fast".
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "f", Name: "fast", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypeToolResult); f.ID != "f" || f.Content[0].Text != "quick" {
		t.Fatalf("after cancel %+v", f)
	}
}

func TestToolContextCancelledWhenRunEnds(t *testing.T) {
	started := make(chan struct{})
	ended := make(chan struct{})
	e := New("cancel", "1")
	e.ToolCtx("slow", "", nil, func(ctx context.Context, _ json.RawMessage) ToolResult {
		close(started)
		<-ctx.Done()
		close(ended)
		return TextResult("")
	})
	h := start(t, e)
	h.handshake(t)
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "s", Name: "slow", Args: json.RawMessage(`{}`)})
	<-started
	h.Send(wire.Frame{Type: wire.TypeShutdown})
	h.Expect(wire.TypeShutdownAck)
	select {
	case <-ended:
	case <-time.After(wait):
		t.Fatal("tool context not cancelled by shutdown")
	}
	h.ExpectClosed()
}

func TestHandlersRunConcurrently(t *testing.T) {
	release := make(chan struct{})
	e := New("conc", "1")
	e.Command("slow", "", func(string) Response { <-release; return Display("slow") })
	e.InterceptToolCall(func(string, json.RawMessage) (bool, string) { <-release; return true, "" })
	ping(e)
	h := start(t, e)
	h.handshake(t)

	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "slow", Name: "slow"})
	h.Send(wire.Frame{Type: wire.TypeEventIntercept, ID: "i", Event: "tool_call", ToolName: "x", ToolArgs: json.RawMessage(`{}`)})
	h.pingPong(t, "quick") // answered while the other two wait
	close(release)
	got := map[string]string{}
	for range 2 {
		f := h.Next()
		got[f.ID] = f.Type
	}
	if got["slow"] != wire.TypeCommandResponse || got["i"] != wire.TypeEventInterceptResponse {
		t.Fatalf("late replies %v", got)
	}
}

func TestConcurrentWritesNeverInterleave(t *testing.T) {
	e := New("flood", "1")
	e.Tool("big", "", nil, func(args json.RawMessage) ToolResult {
		var in struct{ N int }
		_ = json.Unmarshal(args, &in)
		return TextResult(strings.Repeat(fmt.Sprint(in.N%10), 64<<10))
	})
	e.Command("notify", "", func(string) Response {
		for range 20 {
			_ = e.Notify(wire.LevelWarn, strings.Repeat("n", 32<<10))
		}
		return Noop()
	})
	h := start(t, e)
	h.handshake(t)

	const calls = 40
	go func() {
		for i := range calls {
			h.Send(wire.Frame{Type: wire.TypeToolCall, ID: fmt.Sprint(i), Name: "big", Args: json.RawMessage(fmt.Sprintf(`{"N":%d}`, i))})
		}
		h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "n", Name: "notify"})
	}()
	seen := map[string]bool{}
	notes := 0
	for len(seen) < calls+1 || notes < 20 {
		f := h.Next() // fails on any torn line
		switch f.Type {
		case wire.TypeToolResult:
			want := strings.Repeat(f.ID[len(f.ID)-1:], 64<<10)
			if f.Content[0].Text != want {
				t.Fatalf("result %s corrupted", f.ID)
			}
			seen[f.ID] = true
		case wire.TypeCommandResponse:
			seen[f.ID] = true
		case wire.TypeNotify:
			if f.Level != "warn" || len(f.Message) != 32<<10 {
				t.Fatalf("notify corrupted")
			}
			notes++
		default:
			t.Fatalf("unexpected %+v", f)
		}
	}
}

func TestEventsInOrder(t *testing.T) {
	var mu sync.Mutex
	var got []string
	done := make(chan struct{})
	e := New("events", "1")
	e.On(wire.EventTurnStart, func(f wire.Frame) {
		mu.Lock()
		got = append(got, fmt.Sprintf("a%d", f.Step))
		mu.Unlock()
	})
	e.On(wire.EventTurnStart, func(f wire.Frame) {
		mu.Lock()
		got = append(got, fmt.Sprintf("b%d", f.Step))
		mu.Unlock()
	})
	e.On(wire.EventToolCall, func(f wire.Frame) {
		if f.ToolName != "read" || string(f.ToolArgs) != `{"path":"x"}` {
			t.Errorf("tool_call event %+v", f)
		}
		close(done)
	})
	h := start(t, e)
	h.handshake(t)
	for i := 1; i <= 50; i++ {
		h.Send(wire.Frame{Type: wire.TypeEvent, Event: wire.EventTurnStart, Step: i})
	}
	h.Send(wire.Frame{Type: wire.TypeEvent, Event: wire.EventTurnEnd}) // not subscribed: ignored
	h.Send(wire.Frame{Type: wire.TypeEvent, Event: wire.EventToolCall, ToolName: "read", ToolArgs: json.RawMessage(`{"path":"x"}`)})
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatal("tool_call event not delivered")
	}
	mu.Lock()
	defer mu.Unlock()
	var want []string
	for i := 1; i <= 50; i++ {
		want = append(want, fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i))
	}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v", got)
	}
}

func TestPanels(t *testing.T) {
	e := New("panels", "1")
	e.Command("open", "", func(string) Response {
		return OpenPanel(PanelView{ID: "p", Title: "Panel", Lines: []string{"one"}, Footer: "esc close"})
	})
	e.Command("close", "", func(string) Response {
		_ = e.ClosePanel("p")
		return Noop()
	})
	var keys []string
	e.OnPanelKey(func(id, key, text string) {
		keys = append(keys, key+text)
		_ = e.RenderPanel(id, "Panel", slices.Clone(keys), "footer")
	})
	e.OnPanelClose(func(id string) { _ = e.Notify("", "closed "+id) })
	h := start(t, e)
	h.handshake(t)

	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "1", Name: "open"})
	f := h.Expect(wire.TypeCommandResponse)
	if f.Action != "open_panel" || f.OpenPanel == nil || f.OpenPanel.ID != "p" || !slices.Equal(f.OpenPanel.Lines, []string{"one"}) {
		t.Fatalf("open %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "p", Key: "down"})
	h.Send(wire.Frame{Type: wire.TypePanelKey, PanelID: "p", Key: "rune", Text: "x"})
	if f := h.Expect(wire.TypePanelRender); f.PanelID != "p" || !slices.Equal(f.Lines, []string{"down"}) || f.Footer != "footer" {
		t.Fatalf("render 1 %+v", f)
	}
	if f := h.Expect(wire.TypePanelRender); !slices.Equal(f.Lines, []string{"down", "runex"}) {
		t.Fatalf("render 2 %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypePanelClose, PanelID: "p"})
	if f := h.Expect(wire.TypeNotify); f.Level != "info" || f.Message != "closed p" {
		t.Fatalf("notify %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "2", Name: "close"})
	if f := h.Expect(wire.TypePanelClose); f.PanelID != "p" {
		t.Fatalf("panel_close %+v", f)
	}
	h.Expect(wire.TypeCommandResponse)
}

// A render racing the host's panel_close (a tool call right after it,
// handled before the close handler ran) is dropped; reopening renders again.
func TestNoRenderAfterHostClosedPanel(t *testing.T) {
	e := New("panels", "1")
	e.Command("open", "", func(string) Response { return OpenPanel(PanelView{ID: "p", Lines: []string{"one"}}) })
	e.Tool("touch", "", nil, func(json.RawMessage) ToolResult {
		_ = e.RenderPanel("p", "", []string{"touched"}, "")
		return TextResult("ok")
	})
	h := start(t, e)
	h.handshake(t)
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "1", Name: "open"})
	h.Expect(wire.TypeCommandResponse)
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t1", Name: "touch", Args: json.RawMessage(`{}`)})
	h.Expect(wire.TypePanelRender)
	h.Expect(wire.TypeToolResult)
	h.Send(wire.Frame{Type: wire.TypePanelClose, PanelID: "p"})
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t2", Name: "touch", Args: json.RawMessage(`{}`)})
	if f := h.Next(); f.Type != wire.TypeToolResult || f.ID != "t2" {
		t.Fatalf("after the host closed the panel: %+v", f)
	}
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "2", Name: "open"})
	h.Expect(wire.TypeCommandResponse)
	h.Send(wire.Frame{Type: wire.TypeToolCall, ID: "t3", Name: "touch", Args: json.RawMessage(`{}`)})
	if f := h.Expect(wire.TypePanelRender); f.Lines[0] != "touched" {
		t.Fatalf("reopened: %+v", f)
	}
}

func TestGarbageAndUnknownFramesIgnored(t *testing.T) {
	e := New("robust", "1")
	ping(e)
	h := start(t, e)
	h.Expect(wire.TypeHello)
	h.SendRaw(`{"type":"command_invoked","id":"early","name":"ping"}` + "\n") // before hello_ack: ignored
	h.Send(testAck)
	h.Expect(wire.TypeRegisterCommand)
	h.Expect(wire.TypeReady)
	h.SendRaw("not json\n\n[1,2]\n{\"no\":\"type\"}\n{\"type\":\"mystery\",\"id\":\"x\"}\r\n")
	h.Send(testAck) // a repeat is harmless
	h.pingPong(t, "after-garbage")
	if !strings.Contains(h.Log.String(), `unknown frame type "mystery"`) {
		t.Fatalf("log %s", h.Log)
	}
}

func TestOverlongLineDropped(t *testing.T) {
	e := New("long", "1")
	e.maxLine = 1 << 10
	e.Tool("len", "", nil, func(args json.RawMessage) ToolResult { return TextResult(fmt.Sprint(len(args))) })
	h := start(t, e)
	h.handshake(t)
	long := `{"type":"tool_call","id":"long","name":"len","args":{"s":"` + strings.Repeat("y", 200<<10) + `"}}` + "\n"
	h.SendRaw(long)
	exact := `{"type":"tool_call","id":"fits","name":"len","args":{"s":"`
	exact += strings.Repeat("z", 1<<10-len(exact)-3) + `"}}` + "\n"
	h.SendRaw(exact)
	if f := h.Expect(wire.TypeToolResult); f.ID != "fits" {
		t.Fatalf("got %+v", f)
	}
	if !strings.Contains(h.Log.String(), "longer than 1024") {
		t.Fatalf("log %s", h.Log)
	}
}

func TestShutdown(t *testing.T) {
	e := New("bye", "1")
	ping(e)
	h := start(t, e)
	h.handshake(t)
	h.Send(wire.Frame{Type: wire.TypeShutdown})
	h.Expect(wire.TypeShutdownAck)
	if err := h.Result(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	h.ExpectClosed()
	if err := e.Notify("info", "after"); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Notify after Run: %v", err)
	}
	if err := e.Serve(strings.NewReader(""), io.Discard); err == nil {
		t.Fatal("second Run accepted")
	}
}

func TestShutdownBeforeHelloAck(t *testing.T) {
	e := New("bye", "1")
	h := start(t, e)
	h.Expect(wire.TypeHello)
	h.Send(wire.Frame{Type: wire.TypeShutdown})
	h.Expect(wire.TypeShutdownAck)
	if err := h.Result(); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

func TestEOFEndsRun(t *testing.T) {
	for _, afterAck := range []bool{false, true} {
		e := New("eof", "1")
		h := start(t, e)
		if afterAck {
			h.handshake(t)
		} else {
			h.Expect(wire.TypeHello)
		}
		h.CloseInput()
		if err := h.Result(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		h.ExpectClosed()
	}
}

func TestLateRegistration(t *testing.T) {
	e := New("late", "1")
	e.Command("add", "", func(string) Response {
		e.Command("added", "registered at run time", func(string) Response { return Display("new") })
		return Noop()
	})
	h := start(t, e)
	h.handshake(t)
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "1", Name: "add"})
	if f := h.Expect(wire.TypeRegisterCommand); f.Name != "added" {
		t.Fatalf("late registration %+v", f)
	}
	h.Expect(wire.TypeCommandResponse)
	h.Send(wire.Frame{Type: wire.TypeCommandInvoked, ID: "2", Name: "added"})
	if f := h.Expect(wire.TypeCommandResponse); f.Display != "new" {
		t.Fatalf("late command %+v", f)
	}
}

func TestReadLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("a\r\n"+strings.Repeat("b", 100)+"\nccc\n"+strings.Repeat("d", 11)+"\nlast"), 16)
	var got []string
	for {
		line, err := readLine(r, 10)
		if errors.Is(err, errLineTooLong) {
			got = append(got, "<long>")
			continue
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		got = append(got, string(line))
	}
	if want := []string{"a", "<long>", "ccc", "<long>", "last"}; !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}
