// Command benchext is the extension of the extension-host scale
// benchmark: one tool, named by its first argument, answering with the
// prefix given as its second argument (a reload changes it).
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/zot-editors/zot/extensions/sdk"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: benchext TOOL PREFIX")
		os.Exit(2)
	}
	tool, prefix := os.Args[1], os.Args[2]
	e := sdk.New(tool, "1.0.0")
	e.Tool(tool, "Answers with a fixed prefix.", json.RawMessage(`{"type":"object","properties":{}}`),
		func(args json.RawMessage) sdk.ToolResult { return sdk.TextResult(prefix + " " + tool) })
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
