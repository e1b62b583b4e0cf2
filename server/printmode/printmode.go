// Package printmode is `zot -p`: one prompt, the answer streamed to stdout,
// tool activity to stderr; with JSON, every event as one JSON line.
package printmode

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/zot-editors/zot/agent"
)

// ErrRun reports that the run ended in an error (already printed).
var ErrRun = errors.New("the run ended with an error")

// ErrInterrupted reports that ctx ended the run (a signal); the run was
// aborted and its tool processes killed.
var ErrInterrupted = errors.New("interrupted")

// Run sends one prompt and prints its result.
func Run(ctx context.Context, rt *agent.Runtime, prompt string, asJSON bool, stdout, stderr io.Writer) error {
	ch, err := rt.Prompt(ctx, prompt, nil)
	if err != nil {
		return err
	}
	out := bufio.NewWriterSize(stdout, 32*1024)
	defer out.Flush()
	failed := false
	names := map[string]string{}
	lastNewline := true
	// Thinking streams to stderr after a "thinking: " label; thinkingOpen:
	// it is being written, thinkingNL: what was written ends a line.
	thinkingOpen, thinkingNL := false, false
	endThinking := func() {
		if thinkingOpen && !thinkingNL {
			fmt.Fprintln(stderr)
		}
		thinkingOpen = false
	}
	for ev := range ch {
		if asJSON {
			wire := ev
			wire.Stop = agent.ZotStop(ev.Stop) // as zot's --json writes turn_end
			b, _ := json.Marshal(wire)
			out.Write(append(b, '\n'))
			if len(ch) == 0 {
				out.Flush()
			}
			if ev.Type == agent.EventError || ev.Type == agent.EventTurnEnd && ev.Stop == "error" {
				failed = true
			}
			continue
		}
		if ev.Type != agent.EventThinkingDelta {
			endThinking()
		}
		switch ev.Type {
		case agent.EventThinkingDelta:
			if !thinkingOpen {
				out.Flush()
				fmt.Fprint(stderr, "thinking: ")
				thinkingOpen = true
			}
			fmt.Fprint(stderr, ev.Text)
			thinkingNL = strings.HasSuffix(ev.Text, "\n")
		case agent.EventTextDelta:
			out.WriteString(ev.Delta)
			lastNewline = strings.HasSuffix(ev.Delta, "\n")
			if len(ch) == 0 {
				out.Flush()
			}
		case agent.EventTurnEnd:
			if !lastNewline {
				out.WriteString("\n")
				lastNewline = true
			}
			out.Flush()
			switch ev.Stop {
			case "aborted":
				if ctx.Err() == nil { // an interruption is reported by the caller
					fmt.Fprintln(stderr, "aborted")
				}
			case "error":
				failed = true
			}
		case agent.EventToolCall:
			out.Flush()
			names[ev.ID] = ev.Name
			fmt.Fprintf(stderr, "→ %s %s\n", ev.Name, summarize(ev.Args))
		case agent.EventToolResult:
			mark := "✓"
			if ev.IsError {
				mark = "✗"
			}
			fmt.Fprintf(stderr, "%s %s %s\n", mark, names[ev.ID], firstLine(ev))
		case agent.EventError:
			out.Flush()
			fmt.Fprintln(stderr, "error: "+ev.Message)
			failed = true
		}
	}
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if failed {
		return ErrRun
	}
	return nil
}

func summarize(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range []string{"command", "path", "pattern"} {
		if v, ok := m[k].(string); ok {
			return clip(v, 100)
		}
	}
	return clip(string(args), 100)
}

func firstLine(ev agent.Event) string {
	for _, c := range ev.Content {
		if c.Type == "text" {
			s := strings.TrimSpace(c.Text)
			if i := strings.IndexByte(s, '\n'); i >= 0 {
				s = s[:i] + " …"
			}
			return clip(s, 120)
		}
	}
	return ""
}

func clip(s string, n int) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
