// Command capext is a test extension for the additions to protocol v1
// (capabilities): built with the Go SDK, it exercises every added frame.
//
//	tool "slow": streams two tool_update lines, then answers "slow done"
//	tool "ask_then_crash": sends ui_request, then exits 3 without waiting
//	tool "flood": sends 2000 set_status "n" and then "final"
//	tool "bad_tools": set_active_tools with an unknown name; returns the error
//	command /plan: set_status plan "plan", set_active_tools [read]
//	tool_result hook: appends " [linted]" to write results
//	before_agent_start hook: adds "CAPEXT-CONTEXT", system "CAPEXT-SYSTEM"
//	-record FILE: every host frame's JSON line is appended to FILE
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"

	"github.com/zot-editors/zot/extensions/sdk"
	"github.com/zot-editors/zot/extensions/wire"
)

func main() {
	record := flag.String("record", "", "append the hello_ack here")
	flag.Parse()
	e := sdk.New("capext", "1.0.0")
	e.ToolCtx("slow", "streams progress", nil, func(ctx context.Context, _ json.RawMessage) sdk.ToolResult {
		e.Update(ctx, "step 1\n")
		e.Update(ctx, "step 2\n")
		return sdk.TextResult("slow done")
	})
	e.Tool("ask_then_crash", "asks, then dies", nil, func(json.RawMessage) sdk.ToolResult {
		// A cancelled ctx: the ui_request is written, the call returns at
		// once, and the extension dies with the dialog open.
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		e.UI().Confirm(ctx, "Really?", "the extension dies before you answer")
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
	e.On(wire.EventSessionStart, func(f wire.Frame) {
		if *record != "" {
			h := e.Hello()
			b, _ := json.Marshal(map[string]any{"host": h.Capabilities, "model": h.Model, "session_start": f.Reason})
			if fh, err := os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
				fh.Write(append(b, '\n'))
				fh.Close()
			}
		}
	})
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "capext:", err)
		os.Exit(1)
	}
}
