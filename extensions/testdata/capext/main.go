// Command capext is a test extension for the additions to protocol v1
// (capabilities): built with the Go SDK, it exercises every added frame.
//
//	tool "slow": streams two tool_update lines, then answers "slow done"
//	tool "ask_then_crash": sends ui_request, then exits 3 without waiting
//	  for the answer (with {"crash_when": NAME}, once the workspace has NAME)
//	tool "flood": sends 2000 set_status "n" and then "final"
//	tool "bad_tools": set_active_tools with an unknown name; returns the error
//	tool "bad_model": set_model with an unknown model; returns the error
//	tool "steer": send_message steer "STEERED"; answers "steered"
//	tool "big_entry": append_entry over 1 MiB; returns the error
//	tool "remember": append_entry "note" {"n":1}; answers the entries
//	tool "entries": answers get_entries "note"
//	tool "ask_timeout": input with default "dflt" and timeout_ms 100
//	tool "widget": set_widget w ["line 1","line 2"]
//	tool "session_ctl" {op, arg}: op compact (arg: instructions), switch
//	  (arg: the session), shutdown or reload; answers what the host said
//	command /plan: set_status plan "plan", set_active_tools [read]
//	tool_result hook: appends " [linted]" to write results
//	before_agent_start hook: adds "CAPEXT-CONTEXT", system "CAPEXT-SYSTEM"
//	input hook: "capext:handle" is handled ("handled by capext");
//	  "capext:upper X" becomes X upper-cased
//	context hook: a last message containing "capext:prune" is sent alone
//	-record FILE: hello_ack's offer and each session_start / model_select
//	-junk: no SDK; answers every added hook with junk
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/zot-editors/zot/extensions/sdk"
	"github.com/zot-editors/zot/extensions/wire"
)

func main() {
	record := flag.String("record", "", "append what the host said here")
	junk := flag.Bool("junk", false, "answer the added hooks with junk")
	flag.Parse()
	if *junk {
		runJunk()
		return
	}
	e := sdk.New("capext", "1.0.0")
	var recMu sync.Mutex
	rec := func(v map[string]any) {
		if *record == "" {
			return
		}
		recMu.Lock()
		defer recMu.Unlock()
		b, _ := json.Marshal(v)
		if fh, err := os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			fh.Write(append(b, '\n'))
			fh.Close()
		}
	}
	e.ToolCtx("slow", "streams progress", nil, func(ctx context.Context, _ json.RawMessage) sdk.ToolResult {
		e.Update(ctx, "step 1\n")
		e.Update(ctx, "step 2\n")
		return sdk.TextResult("slow done")
	})
	e.Tool("ask_then_crash", "asks, then dies", nil, func(args json.RawMessage) sdk.ToolResult {
		// A cancelled ctx: the ui_request is written, the call returns at
		// once, and the extension dies with the dialog open.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		e.UI().Confirm(ctx, "Really?", "the extension dies before you answer")
		// {"crash_when": NAME}: dies only once the workspace has the file
		// NAME, which a test creates after it saw the question open.
		var a struct {
			CrashWhen string `json:"crash_when"`
		}
		json.Unmarshal(args, &a)
		if a.CrashWhen != "" {
			trigger := filepath.Join(e.Hello().Cwd, a.CrashWhen)
			for end := time.Now().Add(2 * time.Minute); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
				if _, err := os.Stat(trigger); err == nil {
					break
				}
			}
		}
		os.Exit(3)
		return sdk.TextResult("unreachable")
	})
	e.Tool("flood", "floods set_status", nil, func(json.RawMessage) sdk.ToolResult {
		for i := 0; i < 2000; i++ {
			e.SetStatus("flood", strconv.Itoa(i))
		}
		e.SetStatus("flood", "final")
		return sdk.TextResult("flooded")
	})
	e.Tool("bad_tools", "sets an unknown tool", nil, func(json.RawMessage) sdk.ToolResult {
		err := e.SetActiveTools(context.Background(), []string{"read", "no_such_tool"})
		return sdk.TextResult(fmt.Sprintf("error: %v", err))
	})
	e.Tool("bad_model", "sets an unknown model", nil, func(json.RawMessage) sdk.ToolResult {
		err := e.SetModel(context.Background(), "no-such-model")
		return sdk.TextResult(fmt.Sprintf("error: %v", err))
	})
	e.Tool("steer", "steers the run", nil, func(json.RawMessage) sdk.ToolResult {
		if err := e.SendMessage(context.Background(), "STEERED", wire.DeliverSteer); err != nil {
			return sdk.ErrorResult(err.Error())
		}
		return sdk.TextResult("steered")
	})
	e.Tool("session_ctl", "the session's lifetime actions", nil, func(raw json.RawMessage) sdk.ToolResult {
		var a struct{ Op, Arg string }
		_ = json.Unmarshal(raw, &a)
		ctx := context.Background()
		var out string
		var err error
		switch a.Op {
		case "compact":
			out, err = e.Compact(ctx, a.Arg)
		case "switch":
			var cancelled bool
			cancelled, err = e.SwitchSession(ctx, a.Arg)
			out = fmt.Sprint("cancelled=", cancelled)
		case "shutdown":
			err = e.Shutdown(ctx)
		case "reload":
			err = e.Reload(ctx)
		}
		return sdk.TextResult(fmt.Sprintf("%s: %q err=%v", a.Op, out, err))
	})
	e.Tool("big_entry", "appends too much", nil, func(json.RawMessage) sdk.ToolResult {
		err := e.AppendEntry(context.Background(), "note", strings.Repeat("x", 1<<20+1))
		return sdk.TextResult(fmt.Sprintf("error: %v", err))
	})
	e.Tool("remember", "appends a note", nil, func(json.RawMessage) sdk.ToolResult {
		if err := e.AppendEntry(context.Background(), "note", map[string]int{"n": 1}); err != nil {
			return sdk.ErrorResult(err.Error())
		}
		return sdk.TextResult("remembered")
	})
	e.Tool("entries", "lists the notes", nil, func(json.RawMessage) sdk.ToolResult {
		es, err := e.Entries(context.Background(), "note")
		if err != nil {
			return sdk.ErrorResult(err.Error())
		}
		b, _ := json.Marshal(es)
		return sdk.TextResult("entries: " + string(b))
	})
	e.Tool("ask_timeout", "asks with a timeout and a default", nil, func(json.RawMessage) sdk.ToolResult {
		r, err := e.UI().Ask(context.Background(), wire.Frame{Kind: wire.UIInput, Title: "name?", Default: "dflt", TimeoutMS: 100})
		if err != nil {
			return sdk.ErrorResult(err.Error())
		}
		return sdk.TextResult("answer: " + string(r.Value))
	})
	e.Tool("editor_text", "sets and pastes into the chat input, then reads it", nil, func(json.RawMessage) sdk.ToolResult {
		if err := e.UI().SetEditorText("draft"); err != nil {
			return sdk.ErrorResult(err.Error())
		}
		if err := e.UI().PasteToEditor("!"); err != nil {
			return sdk.ErrorResult(err.Error())
		}
		t, err := e.UI().EditorText(context.Background())
		if err != nil {
			return sdk.ErrorResult(err.Error())
		}
		return sdk.TextResult("input: " + t)
	})
	e.Tool("editor", "asks for multi-line text", nil, func(json.RawMessage) sdk.ToolResult {
		t, err := e.UI().Editor(context.Background(), "Notes", "a\nb")
		if err != nil {
			return sdk.ErrorResult(err.Error())
		}
		return sdk.TextResult("edited: " + t)
	})
	e.Tool("widget", "shows a widget", nil, func(json.RawMessage) sdk.ToolResult {
		if err := e.UI().SetWidget("w", []string{"line 1", "line 2"}); err != nil {
			return sdk.ErrorResult(err.Error())
		}
		return sdk.TextResult("widget set")
	})
	e.Command("plan", "read-only tools", func(string) sdk.Response {
		if err := e.SetActiveTools(context.Background(), []string{"read"}); err != nil {
			return sdk.Error(err.Error())
		}
		e.SetStatus("mode", "plan")
		return sdk.Display("plan mode")
	})
	e.OnToolResult(func(tool string, _ json.RawMessage, r sdk.ToolResult) *sdk.ToolResult {
		if tool != "write" {
			return nil
		}
		r.Content = append(r.Content, sdk.TextBlock(" [linted]"))
		return &r
	})
	e.OnBeforeAgentStart(func(prompt, system string) sdk.AgentStart {
		return sdk.AgentStart{Messages: []string{"CAPEXT-CONTEXT"}, SystemPrompt: "CAPEXT-SYSTEM"}
	})
	e.OnInput(func(text string) sdk.InputDecision {
		switch {
		case strings.HasPrefix(text, "capext:handle"):
			return sdk.InputDecision{Handled: true, Display: "handled by capext"}
		case strings.HasPrefix(text, "capext:upper "):
			return sdk.InputDecision{Text: strings.ToUpper(strings.TrimPrefix(text, "capext:upper "))}
		}
		return sdk.InputDecision{}
	})
	e.OnContext(func(raw json.RawMessage) json.RawMessage {
		var msgs []json.RawMessage
		if json.Unmarshal(raw, &msgs) != nil || len(msgs) == 0 {
			return nil
		}
		last := msgs[len(msgs)-1]
		if !strings.Contains(string(last), "capext:prune") {
			return nil
		}
		b, _ := json.Marshal([]json.RawMessage{last})
		return b
	})
	e.On(wire.EventSessionStart, func(f wire.Frame) {
		h := e.Hello()
		rec(map[string]any{"host": h.Capabilities, "model": h.Model, "session_start": f.Reason})
	})
	e.On(wire.EventModelSelect, func(f wire.Frame) {
		rec(map[string]any{"model_select": f.Model, "previous_model": f.PreviousModel})
	})
	e.On(wire.EventAgentEnd, func(f wire.Frame) {
		rec(map[string]any{"agent_end": f.Stop, "usage": f.Usage})
	})
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "capext:", err)
		os.Exit(1)
	}
}

// runJunk speaks the protocol by hand and answers every added hook with
// something a host must survive: wrong types, invalid messages, lines
// that are not JSON.
func runJunk() {
	out := bufio.NewWriter(os.Stdout)
	send := func(s string) { out.WriteString(s + "\n"); out.Flush() }
	send(`{"type":"hello","name":"capext","version":"1.0.0","capabilities":["hooks"]}`)
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 64<<20)
	for in.Scan() {
		var f wire.Frame
		if json.Unmarshal(in.Bytes(), &f) != nil {
			continue
		}
		switch f.Type {
		case wire.TypeHelloAck:
			send(`{"type":"subscribe","intercept":["tool_result","before_agent_start","context","input"]}`)
			send(`{"type":"ready"}`)
		case wire.TypeEventIntercept:
			id, _ := json.Marshal(f.ID)
			switch f.Event {
			case wire.EventBeforeAgentStart:
				send(`{"type":"event_intercept_response","id":` + string(id) + `,"messages":42,"system_prompt":""}`)
			case wire.EventContext:
				send(`{"type":"event_intercept_response","id":` + string(id) + `,"messages":[{"role":"system","content":[]}]}`)
			case wire.EventInput:
				send(`{"type":"event_intercept_response","id":` + string(id) + `,"replace_text":5}`)
			case wire.EventToolResult:
				send(`}{ not json`)
			}
		case wire.TypeShutdown:
			send(`{"type":"shutdown_ack"}`)
			return
		}
	}
}
