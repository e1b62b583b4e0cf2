package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
)

// Terminal bash tuning.
const (
	// terminalOutputLimit is what the client keeps of a command's output
	// (it drops the beginning past it), about the built-in bash's 50 KB.
	terminalOutputLimit = 50_000
	maxBashTimeout      = 24 * time.Hour
	// terminalCleanup bounds kill and release after a run ends.
	terminalCleanup = 5 * time.Second
)

// terminalBash is the bash tool when the client offers terminals: the
// command runs in a terminal of the editor (terminal/create), shown live
// in the tool call, and is killed through terminal/kill when the run is
// cancelled or times out. Name, description and schema are the built-in
// bash's, so the model sees one tool whichever runs it.
type terminalBash struct {
	tools.Tool // the built-in bash: name, description, schema
	ss         *session
}

// withTerminalBash takes bash out of the built-ins (cfg.Tools) and serves
// it as an extra tool that runs through the client's terminals.
func (ss *session) withTerminalBash(cfg agent.Config) agent.Config {
	if cfg.NoTools {
		return cfg
	}
	var builtin tools.Tool
	var keep []string
	allowed := map[string]bool{}
	for _, n := range cfg.Tools {
		allowed[strings.TrimSpace(n)] = true
	}
	known := map[string]bool{}
	for _, t := range tools.Builtins(ss.ws) {
		known[t.Name()] = true
		if len(allowed) > 0 && !allowed[t.Name()] {
			continue
		}
		if t.Name() == "bash" {
			builtin = t
		} else {
			keep = append(keep, t.Name())
		}
	}
	for n := range allowed {
		if !known[n] && n != "" {
			keep = append(keep, n) // unknown: agent.New says so
		}
	}
	if builtin == nil || len(keep) == 0 {
		return cfg // no bash, or no way to say "no other built-ins"
	}
	cfg.Tools = keep
	ss.bash = &terminalBash{Tool: builtin, ss: ss}
	return cfg
}

type bashArgs struct {
	Command string          `json:"command"`
	Timeout json.RawMessage `json:"timeout"`
}

func (t *terminalBash) Run(ctx context.Context, call tools.Call) tools.Result {
	var a bashArgs
	if err := json.Unmarshal(call.Args, &a); err != nil {
		return tools.ErrorResult(fmt.Sprintf("bash: the arguments do not match the schema: %v. Send {\"command\": \"…\", \"timeout\": seconds}.", err))
	}
	if strings.TrimSpace(a.Command) == "" {
		return tools.ErrorResult(`bash needs a command, e.g. {"command": "go test ./..."}.`)
	}
	timeout := tools.DefaultBashTimeout
	if len(a.Timeout) > 0 && string(a.Timeout) != "null" {
		var secs float64
		if err := json.Unmarshal(a.Timeout, &secs); err != nil {
			var s string
			if json.Unmarshal(a.Timeout, &s) != nil || func() bool { _, e := fmt.Sscan(s, &secs); return e != nil }() {
				return tools.ErrorResult("timeout must be a number of seconds.")
			}
		}
		if secs <= 0 {
			return tools.ErrorResult("timeout must be a positive number of seconds.")
		}
		timeout = min(time.Duration(secs*float64(time.Second)), maxBashTimeout)
	}
	ss := t.ss
	shell := "sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p
	}
	root := ss.ws.Root()
	created, err := ss.srv.conn.CreateTerminal(ctx, sdk.CreateTerminalRequest{
		SessionId: sdk.SessionId(ss.id), Command: shell, Args: []string{"-c", a.Command}, Cwd: &root,
		Env:             []sdk.EnvVariable{{Name: "PAGER", Value: "cat"}, {Name: "GIT_PAGER", Value: "cat"}, {Name: "GIT_TERMINAL_PROMPT", Value: "0"}},
		OutputByteLimit: sdk.Ptr(terminalOutputLimit),
	})
	if err != nil {
		if ctx.Err() != nil {
			return tools.ErrorResult("The command was cancelled before it started.")
		}
		return tools.ErrorResult("The editor could not start the command in a terminal: " + clientError(err))
	}
	term := created.TerminalId
	ss.setTerminal(call.ID, term)
	// The user watches the command live in the tool call.
	ss.update(sdk.UpdateToolCall(sdk.ToolCallId(call.ID), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolTerminalRef(term)})))
	cleanup, cancelCleanup := context.WithTimeout(context.WithoutCancel(ctx), terminalCleanup)
	defer cancelCleanup()
	defer func() {
		if _, err := ss.srv.conn.ReleaseTerminal(cleanup, sdk.ReleaseTerminalRequest{SessionId: sdk.SessionId(ss.id), TerminalId: term}); err != nil {
			ss.srv.logf("terminal/release %s: %v", term, err)
		}
	}()

	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	exit, waitErr := ss.srv.conn.WaitForTerminalExit(runCtx, sdk.WaitForTerminalExitRequest{SessionId: sdk.SessionId(ss.id), TerminalId: term})
	killed := ""
	if waitErr != nil {
		switch {
		case ctx.Err() != nil:
			killed = "The command was cancelled; it was killed."
		case runCtx.Err() != nil:
			killed = fmt.Sprintf("The command timed out after %g s and was killed. If it needs longer, raise timeout.", timeout.Seconds())
		default:
			killed = "The editor stopped reporting on the command (" + clientError(waitErr) + "); it was killed."
		}
		if _, err := ss.srv.conn.KillTerminal(cleanup, sdk.KillTerminalRequest{SessionId: sdk.SessionId(ss.id), TerminalId: term}); err != nil {
			ss.srv.logf("terminal/kill %s: %v", term, err)
		}
	}
	out, err := ss.srv.conn.TerminalOutput(cleanup, sdk.TerminalOutputRequest{SessionId: sdk.SessionId(ss.id), TerminalId: term})
	if err != nil {
		ss.srv.logf("terminal/output %s: %v", term, err)
	}
	text := strings.TrimRight(out.Output, "\n")
	var note string
	if out.Truncated {
		note = fmt.Sprintf("[output truncated: the first part was dropped; the last %d bytes are shown]", terminalOutputLimit)
	}
	join := func(status string) string {
		parts := []string{}
		if text != "" {
			parts = append(parts, text)
		} else if status != "" {
			parts = append(parts, "(no output)")
		}
		if note != "" {
			parts = append(parts, note)
		}
		if status != "" {
			parts = append(parts, status)
		}
		return strings.Join(parts, "\n\n")
	}
	if killed != "" {
		return tools.ErrorResult(join(killed))
	}
	if exit.Signal != nil && *exit.Signal != "" {
		return tools.ErrorResult(join("The command was killed by signal " + *exit.Signal + "."))
	}
	if exit.ExitCode != nil && *exit.ExitCode != 0 {
		return tools.ErrorResult(join(fmt.Sprintf("The command failed with exit code %d.", *exit.ExitCode)))
	}
	if text == "" && note == "" {
		return tools.TextResult("(no output)")
	}
	return tools.TextResult(join(""))
}
