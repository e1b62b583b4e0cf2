// Command permission-gate asks the user before a bash command matching a
// pattern runs: "Allow once", "Always allow this command" (remembered in
// the session with append_entry, so it survives a resume) or "Deny" (the
// model is told the user refused). Without a UI (zot -p) such a command
// is refused: a gate that cannot ask fails closed.
//
// The pattern is PERMISSION_GATE_PATTERN (a Go regexp) or, by default,
// rm -rf, sudo and git push --force.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"sync"

	"github.com/zot-editors/zot/extensions/sdk"
	"github.com/zot-editors/zot/extensions/wire"
)

const defaultPattern = `\brm\s+-[a-zA-Z]*[rf][a-zA-Z]*\b|\bsudo\b|\bgit\s+push\s+.*--force`

// Choices shown to the user.
const (
	AllowOnce   = "Allow once"
	AllowAlways = "Always allow this command"
	Deny        = "Deny"
)

const entryKind = "always"

func main() {
	pat := os.Getenv("PERMISSION_GATE_PATTERN")
	if pat == "" {
		pat = defaultPattern
	}
	re, err := regexp.Compile(pat)
	if err != nil {
		fmt.Fprintf(os.Stderr, "permission-gate: PERMISSION_GATE_PATTERN: %v\n", err)
		os.Exit(2)
	}
	e := sdk.New("permission-gate", "1.0.0")
	g := &gate{e: e, re: re, always: map[string]bool{}}
	// A new or resumed session brings its own "always" answers.
	e.On(wire.EventSessionStart, func(wire.Frame) { g.load() })
	e.InterceptToolCallX(g.check)
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "permission-gate:", err)
		os.Exit(1)
	}
}

type gate struct {
	e  *sdk.Extension
	re *regexp.Regexp

	mu     sync.Mutex
	always map[string]bool
}

func (g *gate) load() {
	entries, err := g.e.Entries(context.Background(), entryKind)
	if err != nil {
		g.e.Logf("reading remembered commands: %v", err)
		return
	}
	always := map[string]bool{}
	for _, en := range entries {
		var cmd string
		if json.Unmarshal(en.Data, &cmd) == nil {
			always[cmd] = true
		}
	}
	g.mu.Lock()
	g.always = always
	g.mu.Unlock()
}

func (g *gate) check(tool string, args json.RawMessage) sdk.ToolCallDecision {
	if tool != "bash" {
		return sdk.ToolCallDecision{}
	}
	var a struct {
		Command string `json:"command"`
	}
	json.Unmarshal(args, &a)
	if !g.re.MatchString(a.Command) {
		return sdk.ToolCallDecision{}
	}
	g.mu.Lock()
	ok := g.always[a.Command]
	g.mu.Unlock()
	if ok {
		return sdk.ToolCallDecision{}
	}
	if !g.e.Hello().HasUI(wire.UISelect) {
		return sdk.ToolCallDecision{Block: true, Reason: fmt.Sprintf("permission-gate: %q needs the user's approval, and this session cannot ask (no UI)", a.Command)}
	}
	// The host pauses the intercept timeout while the user decides, and
	// closes the dialog if the run is aborted. Deny first: the default of
	// a security question keeps the user safe.
	choice, err := g.e.UI().Select(context.Background(), "Allow this command?\n\n"+a.Command, []string{Deny, AllowOnce, AllowAlways})
	switch {
	case err == nil && choice == AllowOnce:
		return sdk.ToolCallDecision{}
	case err == nil && choice == AllowAlways:
		g.mu.Lock()
		g.always[a.Command] = true
		g.mu.Unlock()
		if err := g.e.AppendEntry(context.Background(), entryKind, a.Command); err != nil {
			g.e.Logf("remembering %q: %v", a.Command, err)
		}
		return sdk.ToolCallDecision{}
	case err == nil:
		return sdk.ToolCallDecision{Block: true, Reason: "the user denied running: " + a.Command}
	default:
		g.e.Logf("no answer for %q: %v", a.Command, err)
		return sdk.ToolCallDecision{Block: true, Reason: "the user did not approve running: " + a.Command}
	}
}
