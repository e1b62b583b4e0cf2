package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/wire"
)

// hookChain is the runtime's hooks: the extension host (nil: none) under
// --no-yolo's question, when asked for. The guards see a call first, then
// the user is asked; every other hook reaches the host through the chain.
func (c *common) hookChain(host agent.Hooks) agent.Hooks {
	var layers []agent.HookLayer
	if c.approve != nil {
		layers = append(layers, agent.ApprovalLayer(c.approve))
	}
	return agent.ChainHooks(agent.StaticHooks(host), layers...)
}

// refuseApprover refuses every tool call, telling the model why (a front
// that cannot ask).
func refuseApprover(why string) agent.Approver {
	return func(_ context.Context, call agent.ToolCallInfo) agent.ToolDecision {
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf(
			"refused: zot runs with --no-yolo (ask the user before every tool call) and %s, so this %s call did not run. Tell the user what you would run and why; they can allow it by running zot without --no-yolo or in a terminal.", why, call.Name)}
	}
}

// terminalApprover asks on the terminal before every tool call: the tool
// and its whole arguments on stderr, the answer read from stdin. Without a
// terminal on stdin every call is refused.
func terminalApprover(stdin io.Reader, stderr io.Writer) agent.Approver {
	f, ok := stdin.(*os.File)
	if !ok || !isTerminal(f.Fd()) {
		return refuseApprover("zot -p has no terminal to ask on (stdin is not a terminal)")
	}
	var (
		mu     sync.Mutex
		lines  chan string
		always = map[string]bool{}
	)
	return func(ctx context.Context, call agent.ToolCallInfo) agent.ToolDecision {
		mu.Lock()
		defer mu.Unlock()
		if always[call.Name] {
			return agent.ToolDecision{}
		}
		if lines == nil {
			// One reader for the run: a read cannot be cancelled, so an
			// abandoned question must not leave a second reader behind.
			lines = make(chan string)
			go func() {
				r := bufio.NewReader(f)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						close(lines)
						return
					}
					lines <- line
				}
			}()
		}
		args := string(call.Args)
		if args == "" {
			args = "{}"
		}
		fmt.Fprintf(stderr, "\nzot wants to run %s %s\nallow? [y]es / [n]o / [a]lways allow %s for this run: ", call.Name, args, call.Name)
		var answer string
		select {
		case line, ok := <-lines:
			if !ok {
				return agent.ToolDecision{Block: true, Reason: "the user gave no answer (the terminal closed); the call did not run."}
			}
			answer = strings.ToLower(strings.TrimSpace(line))
		case <-ctx.Done():
			fmt.Fprintln(stderr)
			return agent.ToolDecision{Block: true, Reason: "the run was aborted while waiting for the user's approval; the call did not run."}
		}
		switch answer {
		case "y", "yes":
			return agent.ToolDecision{}
		case "a", "always":
			always[call.Name] = true
			return agent.ToolDecision{}
		}
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user denied this %s call (answered %q); it did not run. Ask the user how to proceed.", call.Name, answer)}
	}
}

// Choices of the --no-yolo question over a front's dialogs.
const (
	approveOnce   = "Allow once"
	approveAlways = "Allow %s for this session"
	approveDeny   = "Deny"
)

// dialogApprover asks before every tool call through the mode's dialogs
// (zot rpc: an ext_ui_request event with extension "zot", answered by a
// ui_response command): a select naming the tool and its whole arguments,
// with Allow once / Allow <tool> for this session / Deny. Anything but an
// allow, a dismissed dialog included, refuses the call.
func dialogApprover(front *lateFront) agent.Approver {
	var mu sync.Mutex
	always := map[string]bool{}
	return func(ctx context.Context, call agent.ToolCallInfo) agent.ToolDecision {
		mu.Lock()
		ok := always[call.Name]
		mu.Unlock()
		if ok {
			return agent.ToolDecision{}
		}
		asker, _ := front.current(ctx)
		if asker == nil {
			return refuseApprover("this mode cannot ask")(ctx, call)
		}
		args := string(call.Args)
		var v any
		if json.Unmarshal(call.Args, &v) == nil {
			if b, err := json.MarshalIndent(v, "", "  "); err == nil {
				args = string(b)
			}
		}
		alwaysChoice := fmt.Sprintf(approveAlways, call.Name)
		ans := asker.Ask(ctx, "zot", extensions.UIRequest{
			Kind:    wire.UISelect,
			Title:   "Run " + call.Name + "?",
			Message: fmt.Sprintf("zot wants to run the %s tool (--no-yolo asks before every tool call) with:\n%s", call.Name, args),
			Options: []string{approveDeny, approveOnce, alwaysChoice}, // Deny first: the safe default
		})
		switch {
		case !ans.Cancelled && ans.Value == approveOnce:
			return agent.ToolDecision{}
		case !ans.Cancelled && ans.Value == alwaysChoice:
			mu.Lock()
			always[call.Name] = true
			mu.Unlock()
			return agent.ToolDecision{}
		case ctx.Err() != nil:
			return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the run was aborted while the user was asked about this %s call; it did not run.", call.Name)}
		}
		return agent.ToolDecision{Block: true, Reason: fmt.Sprintf("the user denied this %s call (zot runs with --no-yolo); it did not run. Ask the user how to proceed.", call.Name)}
	}
}
