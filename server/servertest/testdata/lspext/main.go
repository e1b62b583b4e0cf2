// Command lspext is the extension of zot lsp's integration tests, on the
// Go SDK: slash commands for every command_response action, a panel, a
// tool, and a guard that refuses dangerous bash commands.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zot-editors/zot/extensions/sdk"
)

func main() {
	name := "lspext"
	if len(os.Args) > 1 {
		name = os.Args[1]
	}
	e := sdk.New(name, "1.0.0")
	cursor := 0
	items := []string{"alpha", "beta", "gamma"}
	render := func() []string {
		out := make([]string, len(items))
		for i, it := range items {
			mark := "  "
			if i == cursor {
				mark = "> "
			}
			out[i] = mark + it
		}
		return out
	}
	e.Command("hi", "ask the model to greet", func(args string) sdk.Response {
		return sdk.Prompt("Say hi to " + args)
	})
	e.Command("ins", "insert text into the input box", func(args string) sdk.Response { return sdk.Insert("inserted: " + args) })
	e.Command("disp", "show a note in the chat", func(args string) sdk.Response { return sdk.Display("displayed: " + args) })
	e.Command("warn", "send a warning notification", func(args string) sdk.Response {
		e.Notify("warn", "careful: "+args)
		return sdk.Noop()
	})
	e.Command("huge", "send texts over the host's caps", func(args string) sdk.Response {
		// issue 36: a 10 MB notify, a 100 KiB status, a widget of 200
		// lines of 2 KiB, a confirm with a 100 KiB message.
		e.Notify("info", hugeText("notify", 10<<20))
		e.SetStatus("big", hugeText("status", 100<<10))
		lines := make([]string, 200)
		for i := range lines {
			lines[i] = hugeText(fmt.Sprintf("line%d", i), 2<<10)
		}
		e.UI().SetWidget("big", lines)
		ok, err := e.UI().Confirm(context.Background(), hugeText("title", 4<<10), hugeText("message", 100<<10))
		return sdk.Display(fmt.Sprintf("confirmed: %v %v", ok, err))
	})
	e.Command("oops", "fail", func(args string) sdk.Response { return sdk.Error("it went wrong") })
	e.Command("slow", "take a while", func(args string) sdk.Response {
		time.Sleep(3 * time.Second)
		return sdk.Display("slow done")
	})
	e.Command("list", "open the list panel", func(args string) sdk.Response {
		return sdk.OpenPanel(sdk.PanelView{ID: "list", Title: "List", Lines: render(), Footer: "↑/↓ move · esc close"})
	})
	e.OnPanelKey(func(panelID, key, text string) {
		switch key {
		case "down":
			cursor = min(cursor+1, len(items)-1)
		case "up":
			cursor = max(cursor-1, 0)
		case "rune":
			items = append(items, text)
		}
		// No case for esc: like zot's todo example, it relies on zot
		// closing the panel on esc and ctrl+c (panel_close).
		e.RenderPanel(panelID, "List", render(), fmt.Sprintf("item %d", cursor+1))
	})
	e.OnPanelClose(func(panelID string) {
		e.Notify("info", "panel "+panelID+" closed by the user")
	})
	e.Tool("shout", "Upper-cases text.", json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		func(args json.RawMessage) sdk.ToolResult {
			var a struct{ Text string }
			json.Unmarshal(args, &a)
			return sdk.TextResult(strings.ToUpper(a.Text))
		})
	e.InterceptToolCall(func(tool string, args json.RawMessage) (bool, string) {
		if tool == "bash" && strings.Contains(string(args), "rm -rf") {
			return false, "lspext guard: refusing rm -rf"
		}
		return true, ""
	})
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// hugeText is n bytes: "<tag>-begin ", x's, " <tag>-end" (the tests build
// the same).
func hugeText(tag string, n int) string {
	head, tail := tag+"-begin ", " "+tag+"-end"
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}
