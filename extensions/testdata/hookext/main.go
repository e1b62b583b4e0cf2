// Command hookext is the conformance matrix's extension (cmd/zot's
// TestExtensionContractInEveryFront): it subscribes to every event,
// intercepts every hook, records every frame the host sends it, and
// answers each hook with a visible effect. It speaks the protocol by hand
// (no SDK), as zot's own extensions do, and negotiates the additions
// ("hooks").
//
//	tool "probe": answers "probe:" + args.text
//	tool_call intercept: probe's args.text gets "+guard"; a bash command
//	  containing BLOCKME is blocked ("hookext blocked it")
//	turn_start intercept: allowed
//	assistant_message intercept: text containing SECRET becomes
//	  "[hookext redacted]"
//	tool_result intercept: probe's result gets " +result-hook"
//	before_agent_start intercept: message "HOOKEXT-CONTEXT", system
//	  "HOOKEXT-SYSTEM"
//	context intercept: the first user message's first text gets
//	  " +context-hook" (for that model call)
//	input intercept: "hookext:upper X" becomes X upper-cased
//	session_before_fork intercept: the first fork is refused ("hookext
//	  refused the first fork"), later ones allowed
//	session_before_tree intercept: a navigation labelled "refuse" is
//	  refused
//	user_bash intercept: a command containing BLOCKME is blocked
//	  ("hookext blocked your command"); "hookext:remote X" is answered
//	  with the result "hookext ran X"
//	session_before_switch intercept: the first new session or resume is
//	  refused ("hookext refused the first switch"), later ones allowed
//	command /hookext-tree: forks at the first message of the session
//	  (refused, then again: allowed), then navigates back to the session's
//	  leaf (labelled "refuse": refused, then again: allowed); displays the
//	  action results. "/hookext-tree prompt" instead navigates to the
//	  session's first message (a prompt: a new branch before it);
//	  "/hookext-tree new" starts a new session (new_session; twice, as the
//	  first is refused)
//	-record FILE: every frame received, one JSON line each
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
)

type frame map[string]any

var (
	outMu sync.Mutex
	out   = bufio.NewWriter(os.Stdout)
	rec   *os.File

	// Actions waiting for their action_result, by id.
	waitMu  sync.Mutex
	waiting = map[string]chan frame{}
	seq     atomic.Int64
	forks   atomic.Int64 // session_before_fork intercepts seen
	// session_before_switch intercepts seen
	switches atomic.Int64
)

// act sends an action and waits for its action_result.
func act(f frame) frame {
	id := fmt.Sprintf("hookext-a%d", seq.Add(1))
	f["id"] = id
	ch := make(chan frame, 1)
	waitMu.Lock()
	waiting[id] = ch
	waitMu.Unlock()
	emit(f)
	return <-ch
}

// tree is /hookext-tree: fork and navigate, each refused once; with args
// "prompt", a navigation to the first prompt.
func tree(id, args string) {
	t := act(frame{"type": "get_tree"})
	tr, _ := t["tree"].(map[string]any)
	sid, _ := tr["session_id"].(string)
	if args == "new" { // the first is refused (session_before_switch)
		var out []string
		for range 2 {
			r := act(frame{"type": "new_session"})
			out = append(out, fmt.Sprintf("new_session: cancelled=%v error=%v", r["cancelled"], r["error"]))
		}
		emit(frame{"type": "command_response", "id": id, "action": "display", "display": strings.Join(out, "\n")})
		return
	}
	if args == "prompt" {
		r := act(frame{"type": "navigate_tree", "target_id": sid + ":0"})
		emit(frame{"type": "command_response", "id": id, "action": "display", "display": fmt.Sprintf("navigate: cancelled=%v error=%v editor_text=%v", r["cancelled"], r["error"], r["editor_text"])})
		return
	}
	var out []string
	for range 2 {
		r := act(frame{"type": "fork", "entry_id": sid + ":0"})
		out = append(out, fmt.Sprintf("fork: cancelled=%v error=%v", r["cancelled"], r["error"]))
	}
	for _, label := range []string{"refuse", ""} {
		r := act(frame{"type": "navigate_tree", "target_id": sid, "label": label})
		out = append(out, fmt.Sprintf("navigate: cancelled=%v error=%v back=%v", r["cancelled"], r["error"], r["session_id"] == sid))
	}
	emit(frame{"type": "command_response", "id": id, "action": "display", "display": strings.Join(out, "\n")})
}

func emit(f frame) {
	b, _ := json.Marshal(f)
	outMu.Lock()
	defer outMu.Unlock()
	out.Write(append(b, '\n'))
	out.Flush()
}

func main() {
	record := flag.String("record", "", "append every frame received to this file")
	flag.Parse()
	if *record != "" {
		var err error
		if rec, err = os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	emit(frame{"type": "hello", "name": "hookext", "version": "1.0.0", "capabilities": []string{"tools", "ready", "hooks"}})
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	registered := false
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if rec != nil {
				// One write per whole line (a reader parses whole lines).
				if line[len(line)-1] != '\n' {
					line = append(line, '\n')
				}
				rec.Write(line)
			}
			var f frame
			if json.Unmarshal(line, &f) == nil {
				if f["type"] == "hello_ack" && !registered {
					registered = true
					register()
				}
				if handle(f) {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func register() {
	emit(frame{"type": "register_command", "name": "hookext-tree", "description": "forks and navigates the session tree"})
	emit(frame{"type": "register_tool", "name": "probe", "description": "echoes its text",
		"schema": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}}})
	emit(frame{"type": "subscribe",
		"events": []string{"session_start", "turn_start", "tool_call", "turn_end", "assistant_message",
			"agent_start", "agent_end", "session_shutdown", "model_select", "compact_start", "compact_end", "session_fork", "session_tree"},
		"intercept": []string{"tool_call", "turn_start", "assistant_message", "tool_result", "before_agent_start", "context", "input",
			"session_before_fork", "session_before_tree", "user_bash", "session_before_switch"}})
	emit(frame{"type": "ready"})
}

// handle answers one frame; true ends the process (shutdown).
func handle(f frame) bool {
	id, _ := f["id"].(string)
	switch f["type"] {
	case "shutdown":
		emit(frame{"type": "shutdown_ack"})
		return true
	case "action_result":
		waitMu.Lock()
		ch := waiting[id]
		delete(waiting, id)
		waitMu.Unlock()
		if ch != nil {
			ch <- f
		}
	case "command_invoked":
		if f["name"] == "hookext-tree" {
			args, _ := f["args"].(string)
			go tree(id, strings.TrimSpace(args))
		}
	case "tool_call":
		var a struct {
			Text string `json:"text"`
		}
		b, _ := json.Marshal(f["args"])
		json.Unmarshal(b, &a)
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": "probe:" + a.Text}}})
	case "event_intercept":
		r := frame{"type": "event_intercept_response", "id": id}
		switch f["event"] {
		case "tool_call":
			args, _ := f["tool_args"].(map[string]any)
			switch f["tool_name"] {
			case "probe":
				text, _ := args["text"].(string)
				r["modified_args"] = map[string]any{"text": text + "+guard"}
			case "bash":
				if cmd, _ := args["command"].(string); strings.Contains(cmd, "BLOCKME") {
					r["block"], r["reason"] = true, "hookext blocked it"
				}
			}
		case "assistant_message":
			if text, _ := f["text"].(string); strings.Contains(text, "SECRET") {
				r["replace_text"] = "[hookext redacted]"
			}
		case "tool_result":
			if f["tool_name"] == "probe" {
				content, _ := f["content"].([]any)
				var text string
				for _, c := range content {
					if m, ok := c.(map[string]any); ok {
						s, _ := m["text"].(string)
						text += s
					}
				}
				r["content"] = []frame{{"type": "text", "text": text + " +result-hook"}}
			}
		case "before_agent_start":
			r["messages"], r["system_prompt"] = []string{"HOOKEXT-CONTEXT"}, "HOOKEXT-SYSTEM"
		case "context":
			if msgs, ok := f["messages"].([]any); ok && markFirstUserText(msgs) {
				r["messages"] = msgs
			}
		case "session_before_fork":
			if forks.Add(1) == 1 {
				r["cancel"], r["reason"] = true, "hookext refused the first fork"
			}
		case "session_before_switch":
			if switches.Add(1) == 1 {
				r["cancel"], r["reason"] = true, "hookext refused the first switch"
			}
		case "session_before_tree":
			if prep, _ := f["preparation"].(map[string]any); prep["label"] == "refuse" {
				r["cancel"], r["reason"] = true, "hookext refused it"
			}
		case "user_bash":
			switch cmd, _ := f["command"].(string); {
			case strings.Contains(cmd, "BLOCKME"):
				r["block"], r["reason"] = true, "hookext blocked your command"
			case strings.HasPrefix(cmd, "hookext:remote "):
				r["result"] = map[string]any{"output": "hookext ran " + strings.TrimPrefix(cmd, "hookext:remote "), "exit_code": 0}
			}
		case "input":
			if text, _ := f["text"].(string); strings.HasPrefix(text, "hookext:upper ") {
				r["replace_text"] = strings.ToUpper(strings.TrimPrefix(text, "hookext:upper "))
			}
		}
		emit(r)
	}
	return false
}

// markFirstUserText appends " +context-hook" to the first text block of
// the first user message; false if there is none.
func markFirstUserText(msgs []any) bool {
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] != "user" {
			continue
		}
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			if blk, _ := b.(map[string]any); blk["type"] == "text" {
				s, _ := blk["text"].(string)
				blk["text"] = s + " +context-hook"
				return true
			}
		}
	}
	return false
}
