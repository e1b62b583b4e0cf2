// Command plan-mode adds /plan: while it is on, the model gets only the
// read-only tools (read, ls, grep, find), the status shows "plan", and
// every run starts with instructions to investigate and write a plan
// instead of changing anything. /plan again restores the tools. The mode
// is kept in the session (append_entry), so a resumed session comes back
// in the mode it was left in.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/zot-editors/zot/extensions/sdk"
	"github.com/zot-editors/zot/extensions/wire"
)

// ReadOnlyTools are the tools plan mode keeps.
var ReadOnlyTools = []string{"read", "ls", "grep", "find"}

// Instructions is appended to the system prompt while planning.
const Instructions = `Plan mode is on: the user wants a plan, not changes. Investigate with the read-only tools you have (read, ls, grep, find), then answer with a numbered plan: the files to change, what to change in each, and how to check the result. Do not try to modify files or run commands.`

const entryKind = "mode"

func main() {
	e := sdk.New("plan-mode", "1.0.0")
	m := &mode{e: e}
	e.Command("plan", "toggle plan mode: read-only tools and a plan instead of changes", func(string) sdk.Response {
		on, err := m.toggle(context.Background())
		if err != nil {
			return sdk.Error("plan mode: " + err.Error())
		}
		if on {
			return sdk.Display("Plan mode on: read-only tools; /plan again to leave it.")
		}
		return sdk.Display("Plan mode off: every tool is back.")
	})
	e.OnBeforeAgentStart(func(prompt, system string) sdk.AgentStart {
		if !m.isOn() {
			return sdk.AgentStart{}
		}
		return sdk.AgentStart{SystemPrompt: Instructions}
	})
	// A new session starts without plan mode; a resumed one in the mode
	// it was left in.
	e.On(wire.EventSessionStart, func(wire.Frame) { m.restore(context.Background()) })
	if err := e.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "plan-mode:", err)
		os.Exit(1)
	}
}

type mode struct {
	e *sdk.Extension
	// op serialises toggle and restore: a session_start's restore that
	// read the entries before a /plan must not switch the mode back after it.
	op sync.Mutex
	mu sync.Mutex
	on bool
}

func (m *mode) isOn() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.on
}

func (m *mode) toggle(ctx context.Context) (bool, error) {
	m.op.Lock()
	defer m.op.Unlock()
	m.mu.Lock()
	on := !m.on
	m.mu.Unlock()
	if err := m.apply(ctx, on); err != nil {
		return !on, err
	}
	if err := m.e.AppendEntry(ctx, entryKind, on); err != nil {
		m.e.Logf("remembering the mode: %v", err)
	}
	return on, nil
}

// apply switches the tools and the status.
func (m *mode) apply(ctx context.Context, on bool) error {
	var tools []string // nil: every tool
	if on {
		tools = ReadOnlyTools
	}
	if err := m.e.SetActiveTools(ctx, tools); err != nil {
		return err
	}
	m.mu.Lock()
	m.on = on
	m.mu.Unlock()
	text := ""
	if on {
		text = "plan"
	}
	if m.e.Hello().Capabilities != nil && m.e.Hello().Capabilities.UI.Status {
		m.e.UI().SetStatus("mode", text)
	}
	return nil
}

func (m *mode) restore(ctx context.Context) {
	m.op.Lock()
	defer m.op.Unlock()
	entries, err := m.e.Entries(ctx, entryKind)
	if err != nil {
		m.e.Logf("reading the mode: %v", err)
		return
	}
	on := false
	if n := len(entries); n > 0 {
		json.Unmarshal(entries[n-1].Data, &on)
	}
	if on != m.isOn() {
		if err := m.apply(ctx, on); err != nil {
			m.e.Logf("restoring plan mode: %v", err)
		}
	}
}
