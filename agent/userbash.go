package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
)

// UserBashRun is a shell command the user typed and how it went: the
// user_bash event's fields (pi's BashResult, plus who blocked or
// answered it).
type UserBashRun struct {
	Command            string
	ExcludeFromContext bool
	tools.UserRunResult
	// Blocked: an extension's user_bash hook refused it (Reason); it
	// did not run.
	Blocked bool
	Reason  string
	// Extension names the extension that blocked it or ran it in zot's
	// place ("" when zot ran it).
	Extension string
	// MessageIndex is the conversation message it was added as (-1:
	// not added: `!!`, blocked, or cancelled).
	MessageIndex int
}

func (b *UserBashRun) wire(m map[string]any, done bool) {
	m["command"] = b.Command
	m["exclude_from_context"] = b.ExcludeFromContext
	if !done {
		return
	}
	if b.Blocked {
		m["blocked"], m["reason"] = true, b.Reason
	} else {
		m["output"], m["exit_code"], m["cancelled"], m["truncated"] = b.Output, b.ExitCode, b.Cancelled, b.Truncated
		if b.Note != "" {
			m["note"] = b.Note
		}
	}
	if b.Extension != "" {
		m["extension"] = b.Extension
	}
	if b.MessageIndex >= 0 {
		m["message_index"] = b.MessageIndex
	}
}

// UserBash runs a shell command the user typed (pi's `!cmd`; `!!cmd`
// with excludeFromContext) as a run of its own: one at a time with
// prompts (ErrBusy meanwhile), stopped by Cancel (the command's process
// group is killed, as the bash tool's). The extensions' user_bash hook
// sees it first and may block it or answer it themselves; no approval is
// asked (the user typed it). Unless excluded, blocked or cancelled, the
// command and its output join the conversation as a user message, so the
// model sees them on the next prompt. Events: user_bash_start,
// user_bash_output (as it prints), user_bash, done.
func (r *Runtime) UserBash(ctx context.Context, command string, excludeFromContext bool) (<-chan Event, error) {
	if strings.TrimSpace(command) == "" {
		return nil, errors.New("bash needs a command, e.g. ls -la")
	}
	var runner tools.UserRunner
	for _, t := range r.builtins {
		if u, ok := t.(tools.UserRunner); ok && t.Name() == "bash" {
			runner = u
		}
	}
	if runner == nil {
		return nil, errors.New("the bash tool is not enabled here (--tools / --no-tools), and the user's commands run through it")
	}
	return r.start(ctx, func(ctx context.Context, emit func(Event)) {
		if r.cfg.AwaitExtensions != nil {
			r.cfg.AwaitExtensions(ctx) // a guard still starting is heard
		}
		run := &UserBashRun{Command: command, ExcludeFromContext: excludeFromContext, MessageIndex: -1}
		emit(Event{Type: EventUserBashStart, UserBash: run})
		var d UserBashDecision
		if uh, ok := r.cfg.Hooks.(UserBashHooks); ok {
			d = uh.BeforeUserBash(ctx, UserBashInfo{Command: command, CWD: r.cfg.CWD, ExcludeFromContext: excludeFromContext})
		}
		run.Extension = d.Extension
		switch {
		case d.Block:
			run.Blocked, run.Reason = true, d.Reason
			if run.Reason == "" {
				run.Reason = "blocked by an extension"
			}
		case d.Result != nil:
			run.UserRunResult = *d.Result
		default:
			res, err := runner.RunUser(ctx, command, func(text string) {
				emit(Event{Type: EventUserBashOutput, Text: text})
			})
			if err != nil {
				emit(Event{Type: EventError, Message: err.Error()})
				return
			}
			run.UserRunResult = res
		}
		// As a tool result: zot's key never reaches the conversation.
		run.Output, run.Note = r.redact.String(run.Output), r.redact.String(run.Note)
		if !run.Blocked && !run.Cancelled && !excludeFromContext {
			m := message.Message{Role: message.RoleUser, Content: []message.Content{message.Text(r.redact.String(userBashText(run)))}, Time: now()}
			run.MessageIndex = r.appendMessage(m)
		}
		emit(Event{Type: EventUserBash, UserBash: run})
	})
}

// userBashText is how a user's command reaches the model (pi's
// bashExecutionToText): the command, its output, and how it ended.
func userBashText(b *UserBashRun) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Ran `%s`\n", b.Command)
	if b.Output != "" {
		fmt.Fprintf(&sb, "```\n%s\n```", b.Output)
	} else {
		sb.WriteString("(no output)")
	}
	if b.ExitCode != 0 {
		fmt.Fprintf(&sb, "\n\nCommand exited with code %d", b.ExitCode)
	}
	if b.Note != "" {
		sb.WriteString("\n\n" + b.Note)
	}
	return sb.String()
}
