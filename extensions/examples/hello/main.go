// Command hello is the smallest zot extension written with the Go SDK:
// three slash commands, one per kind of command response.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/zot-editors/zot/extensions/sdk"
)

func main() {
	e := sdk.New("hello", "1.0.0")

	// /hello [name]: submits a prompt; the agent runs a turn.
	e.Command("hello", "ask the agent to greet you", func(args string) sdk.Response {
		if args == "" {
			return sdk.Prompt("Greet me very briefly. Add one emoji.")
		}
		return sdk.Prompt(fmt.Sprintf("Greet %s very briefly. Add one emoji.", args))
	})

	// /hello-insert [text]: puts a greeting in the editor, not submitted.
	e.Command("hello-insert", "insert a greeting into the editor", func(args string) sdk.Response {
		return sdk.Insert(strings.TrimSpace("Hello, " + args + "!"))
	})

	// /hello-display: shows a note with what the host told us; no model call.
	e.Command("hello-display", "show a hello note with host info", func(string) sdk.Response {
		h := e.Hello()
		return sdk.Display(fmt.Sprintf("hello from the hello extension: zot %s, %s/%s, cwd %s",
			h.ZotVersion, h.Provider, h.Model, h.Cwd))
	})

	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}
