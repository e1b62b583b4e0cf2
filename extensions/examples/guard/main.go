// Command guard is a zot guardrail extension written with the Go SDK. It
// intercepts every tool call and refuses bash commands that contain
// "rm -rf" (in any flag spelling) or run sudo; everything else passes
// through unchanged.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/zot-editors/zot/extensions/sdk"
)

func main() {
	e := sdk.New("guard", "1.0.0")
	e.InterceptToolCall(func(tool string, args json.RawMessage) (bool, string) {
		if tool != "bash" {
			return true, ""
		}
		var in struct {
			Command string `json:"command"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return true, "" // not ours to judge; the host validates args
		}
		if pattern, bad := danger(in.Command); bad {
			e.Logf("blocked %q (pattern %q)", in.Command, pattern)
			return false, fmt.Sprintf("guard: refused: matches danger pattern %q", pattern)
		}
		return true, ""
	})
	if err := e.Run(); err != nil {
		e.Logf("run: %v", err)
		os.Exit(1)
	}
}
