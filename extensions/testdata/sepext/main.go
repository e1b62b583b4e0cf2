// Command sepext is a dependency-free SEP extension for the host's tests:
// JSON-RPC 2.0, one message per line on stdio, as SEP's echo example,
// with the behaviours the tests need. It appends what it observes to the
// file $SEPEXT_OUT, one line each ("started <pid>", "bus …", "cv <code>",
// "flags {…}": initialize's flags when there are any).
//
// Environment: SEPEXT_NAME (its name), SEPEXT_HOOK ("gate": a tool_call
// whose arguments mention "rm -rf" asks the user; "hang": never answers;
// "crash": exits), SEPEXT_NOPING=1 (never answers ping),
// SEPEXT_USERBASH ("gate": hooks user_bash, blocks a command with
// "rm -rf", answers one starting "remote " itself; "hang": hooks it and
// never answers), SEPEXT_EVENTMUTATE=1 (on turn_start, tries session/send_message from
// the event's context), SEPEXT_EVENTEXEC=1 (on turn_start, tries exec/run
// from the event's context: "xv <code>"), SEPEXT_PROVIDER=NAME (registers
// the model provider NAME with the model echo-1: it streams "echo: " and
// the last user text, fails on "fail", calls NAME_say on "tool").
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
)

type msg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

var (
	outMu   sync.Mutex
	pendMu  sync.Mutex
	pending = map[string]chan msg{}
	nextID  int
	name    = os.Getenv("SEPEXT_NAME")
)

func send(m any) {
	b, _ := json.Marshal(m)
	outMu.Lock()
	os.Stdout.Write(append(b, '\n'))
	outMu.Unlock()
}

func reply(id json.RawMessage, result any) {
	send(map[string]any{"jsonrpc": "2.0", "id": id, "result": result})
}

func note(format string, args ...any) {
	f, err := os.OpenFile(os.Getenv("SEPEXT_OUT"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	fmt.Fprintf(f, name+" "+format+"\n", args...)
	f.Close()
}

// request asks the host and waits for its answer.
func request(method string, params any) msg {
	pendMu.Lock()
	nextID++
	id := fmt.Sprintf(`"x%d"`, nextID)
	ch := make(chan msg, 1)
	pending[id] = ch
	pendMu.Unlock()
	send(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method, "params": params})
	return <-ch
}

func main() {
	note("started %d", os.Getpid())
	fmt.Fprintln(os.Stderr, "sepext started") // goes to the extension's log
	r := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if len(strings.TrimSpace(string(line))) > 0 {
			var m msg
			if json.Unmarshal(line, &m) == nil {
				if m.Method == "" {
					pendMu.Lock()
					ch := pending[string(m.ID)]
					delete(pending, string(m.ID))
					pendMu.Unlock()
					if ch != nil {
						ch <- m
					}
				} else {
					go handle(m)
				}
			}
		}
		if err != nil {
			return
		}
	}
}

type context struct {
	Token string `json:"token"`
	Tier  string `json:"tier"`
}

var cancelled sync.Map // tool/execute ids cancelled

func handle(m msg) {
	var p struct {
		Hook      string          `json:"hook"`
		Event     string          `json:"event"`
		Tool      string          `json:"tool"`
		CallID    string          `json:"call_id"`
		Command   string          `json:"command"`
		Arguments json.RawMessage `json:"arguments"`
		Input     json.RawMessage `json:"input"`
		Context   context         `json:"context"`
		Topic     string          `json:"topic"`
		Payload   json.RawMessage `json:"payload"`
		From      string          `json:"from"`
		ID        json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(m.Params, &p)
	switch m.Method {
	case "initialize":
		var ip struct {
			Flags map[string]any `json:"flags"`
		}
		_ = json.Unmarshal(m.Params, &ip)
		if fl, _ := json.Marshal(ip.Flags); len(ip.Flags) > 0 {
			note("flags %s", fl)
		}
		send(map[string]any{"jsonrpc": "2.0", "method": "log", "params": map[string]any{"level": "info", "message": "sepext says hello", "fields": map[string]any{"pid": os.Getpid()}}})
		var providers []any
		if pv := os.Getenv("SEPEXT_PROVIDER"); pv != "" {
			providers = append(providers, map[string]any{"name": pv, "models": []any{map[string]any{"id": "echo-1", "display_name": "Echo 1"}}})
		}
		reply(m.ID, map[string]any{
			"protocol_version": 1,
			"extension":        map[string]any{"name": name, "version": "0.1.0"},
			"registrations": map[string]any{
				"tools": []any{
					map[string]any{"name": name + "_say", "description": "Echo a phrase back, reporting progress.",
						"parameters": map[string]any{"type": "object", "properties": map[string]any{"phrase": map[string]any{"type": "string"}}, "required": []string{"phrase"}}},
					map[string]any{"name": name + "_kv", "description": "Remember a value (set) or recall it (no value).",
						"parameters": map[string]any{"type": "object", "properties": map[string]any{"value": map[string]any{"type": "string"}}}},
					map[string]any{"name": name + "_crash", "description": "Exit at once.", "parameters": map[string]any{"type": "object"}},
					map[string]any{"name": name + "_publish", "description": "Publish on the bus.", "parameters": map[string]any{"type": "object"}},
					map[string]any{"name": name + "_narrow", "description": "Narrow the active tools to read, nonexistent and its own say.", "parameters": map[string]any{"type": "object"}},
					map[string]any{"name": name + "_exec", "description": "Run a command through the host (exec/run).",
						"parameters": map[string]any{"type": "object", "properties": map[string]any{
							"command": map[string]any{"type": "string"}, "args": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}, "cwd": map[string]any{"type": "string"}}}},
				},
				"commands":      []any{map[string]any{"name": name + "-note", "description": "Post a message to the session."}},
				"subscriptions": []string{"turn_start", "bus/event"},
				"hooks":         hooks(),
				"providers":     providers,
			},
		})
	case "ping":
		if os.Getenv("SEPEXT_NOPING") != "1" {
			reply(m.ID, map[string]any{})
		}
	case "shutdown":
		reply(m.ID, map[string]any{})
		time.Sleep(20 * time.Millisecond)
		os.Exit(0)
	case "$/cancel":
		cancelled.Store(string(p.ID), true)
	case "event":
		if p.Event == "bus/event" { // another extension's bus/publish
			var b struct {
				From    string          `json:"from"`
				Topic   string          `json:"topic"`
				Payload json.RawMessage `json:"payload"`
			}
			_ = json.Unmarshal(p.Payload, &b)
			note("bus %s from %s %s", b.Topic, b.From, b.Payload)
		}
		if p.Event == "turn_start" && os.Getenv("SEPEXT_EVENTEXEC") == "1" {
			r := request("exec/run", map[string]any{"context": p.Context, "command": "echo", "args": []string{"from an event"}})
			if r.Error != nil {
				note("xv %d", r.Error.Code)
			} else {
				note("xv none")
			}
		}
		if p.Event == "turn_start" && os.Getenv("SEPEXT_EVENTMUTATE") == "1" {
			r := request("session/send_message", map[string]any{"context": p.Context, "text": "from an event"})
			if r.Error != nil {
				note("cv %d", r.Error.Code)
			} else {
				note("cv none")
			}
		}
	case "hook":
		hook(m, p.Hook, p.Input)
	case "tool/execute":
		var a struct {
			Phrase  string   `json:"phrase"`
			Value   string   `json:"value"`
			Command string   `json:"command"`
			Args    []string `json:"args"`
			Cwd     string   `json:"cwd"`
		}
		_ = json.Unmarshal(p.Arguments, &a)
		switch strings.TrimPrefix(p.Tool, name+"_") {
		case "say":
			send(map[string]any{"jsonrpc": "2.0", "method": "tool/update", "params": map[string]any{"call_id": p.CallID, "message": "halfway", "progress": 0.5}})
			reply(m.ID, map[string]any{"content": "said: " + a.Phrase})
		case "kv":
			if a.Value != "" {
				if r := request("kv/set", map[string]any{"key": "v", "value": a.Value}); r.Error != nil {
					reply(m.ID, map[string]any{"content": r.Error.Message, "is_error": true})
					return
				}
				reply(m.ID, map[string]any{"content": "stored"})
				return
			}
			r := request("kv/get", map[string]any{"key": "v"})
			var v struct {
				Value any `json:"value"`
			}
			_ = json.Unmarshal(r.Result, &v)
			reply(m.ID, map[string]any{"content": fmt.Sprintf("recalled: %v", v.Value)})
		case "crash":
			os.Exit(3)
		case "narrow":
			r := request("tools/set_active", map[string]any{"tools": []string{"read", "nonexistent", name + "_say"}})
			if r.Error != nil {
				reply(m.ID, map[string]any{"content": fmt.Sprintf("refused %d: %s", r.Error.Code, r.Error.Message), "is_error": true})
				return
			}
			reply(m.ID, map[string]any{"content": "active: " + string(r.Result)})
		case "exec":
			params := map[string]any{"context": p.Context, "command": a.Command}
			if a.Args != nil {
				params["args"] = a.Args
			}
			if a.Cwd != "" {
				params["cwd"] = a.Cwd
			}
			r := request("exec/run", params)
			if r.Error != nil {
				reply(m.ID, map[string]any{"content": fmt.Sprintf("refused %d: %s", r.Error.Code, r.Error.Message), "is_error": true})
				return
			}
			var x struct {
				Stdout   string `json:"stdout"`
				Stderr   string `json:"stderr"`
				ExitCode int    `json:"exit_code"`
			}
			_ = json.Unmarshal(r.Result, &x)
			reply(m.ID, map[string]any{"content": fmt.Sprintf("exit %d out %q err %q", x.ExitCode, x.Stdout, x.Stderr)})
		case "publish":
			send(map[string]any{"jsonrpc": "2.0", "method": "bus/publish", "params": map[string]any{"topic": "greeting", "payload": map[string]any{"from": name}}})
			reply(m.ID, map[string]any{"content": "published"})
		default:
			reply(m.ID, map[string]any{"content": "unknown tool " + p.Tool, "is_error": true})
		}
	case "provider/complete":
		complete(m)
	case "command/complete":
		// The colours that start with what is typed.
		var c struct {
			Partial string `json:"partial"`
		}
		_ = json.Unmarshal(m.Params, &c)
		out := []any{}
		for _, v := range []string{"red", "green", "blue", "grey"} {
			if strings.HasPrefix(v, c.Partial) {
				out = append(out, map[string]any{"value": v, "description": "the colour " + v})
			}
		}
		reply(m.ID, map[string]any{"completions": out})
	case "command/execute":
		r := request("session/send_message", map[string]any{"context": p.Context, "text": "note from " + name})
		if r.Error != nil {
			reply(m.ID, map[string]any{"content": fmt.Sprintf("refused %d", r.Error.Code)})
			return
		}
		reply(m.ID, map[string]any{"content": "noted"})
	default:
		if len(m.ID) > 0 {
			send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found: " + m.Method}})
		}
	}
}

// hooks are the hooks it declares: tool_call, and user_bash when
// SEPEXT_USERBASH says how to answer it.
func hooks() []string {
	if os.Getenv("SEPEXT_USERBASH") != "" {
		return []string{"tool_call", "user_bash"}
	}
	return []string{"tool_call"}
}

// userBash answers the user_bash hook as SEPEXT_USERBASH says.
func userBash(m msg, input json.RawMessage) {
	var in struct {
		Command            string `json:"command"`
		Cwd                string `json:"cwd"`
		ExcludeFromContext bool   `json:"exclude_from_context"`
	}
	_ = json.Unmarshal(input, &in)
	note("user_bash %q exclude=%v cwd=%v", in.Command, in.ExcludeFromContext, in.Cwd != "")
	switch {
	case os.Getenv("SEPEXT_USERBASH") == "hang":
		return
	case strings.Contains(in.Command, "rm -rf"):
		reply(m.ID, map[string]any{"action": "block", "reason": name + " keeps rm -rf out of your shell"})
	case strings.HasPrefix(in.Command, "remote "):
		reply(m.ID, map[string]any{"action": "modify", "patch": map[string]any{
			"result": map[string]any{"output": "ran elsewhere: " + strings.TrimPrefix(in.Command, "remote "), "exit_code": 0}}})
	default:
		reply(m.ID, map[string]any{"action": "continue"})
	}
}

func hook(m msg, hook string, input json.RawMessage) {
	if hook == "user_bash" {
		userBash(m, input)
		return
	}
	if hook != "tool_call" {
		reply(m.ID, map[string]any{"action": "continue"})
		return
	}
	switch os.Getenv("SEPEXT_HOOK") {
	case "hang":
		note("hook hangs")
		return
	case "crash":
		os.Exit(4)
	case "gate":
		if !strings.Contains(string(input), "rm -rf") {
			reply(m.ID, map[string]any{"action": "continue"})
			return
		}
		r := request("ui/request", map[string]any{"kind": "confirm", "prompt": "Allow " + string(input) + "?"})
		var res struct {
			Confirmed bool `json:"confirmed"`
		}
		_ = json.Unmarshal(r.Result, &res)
		if res.Confirmed {
			reply(m.ID, map[string]any{"action": "continue"})
			return
		}
		reply(m.ID, map[string]any{"action": "block", "reason": "the user said no to rm -rf"})
		return
	}
	reply(m.ID, map[string]any{"action": "continue"})
}

// complete answers provider/complete: "echo: " and the last user text,
// streamed in two provider/delta pieces, with usage; an error on "fail";
// a tool call of NAME_say on "tool" (and "done" once its result is back).
func complete(m msg) {
	var p struct {
		RequestID string `json:"request_id"`
		Model     string `json:"model"`
		Messages  []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(m.Params, &p)
	last, afterTool := "", false // the last user text; whether a tool result came last
	for _, msg := range p.Messages {
		afterTool = false
		for _, c := range msg.Content {
			if msg.Role == "user" && c.Type == "text" {
				last = c.Text
			}
			afterTool = c.Type == "tool_result"
		}
	}
	delta := func(ev map[string]any) {
		send(map[string]any{"jsonrpc": "2.0", "method": "provider/delta", "params": map[string]any{"request_id": p.RequestID, "event": ev}})
	}
	usage := map[string]any{"prompt_tokens": 12, "completion_tokens": 3, "cached_tokens": 2}
	switch {
	case strings.Contains(last, "fail"):
		send(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32603, "message": "upstream is down"}})
	case strings.Contains(last, "tool") && !afterTool:
		id := "call-" + p.RequestID
		delta(map[string]any{"type": "ToolCallStart", "index": 0, "id": id, "name": name + "_say"})
		delta(map[string]any{"type": "ToolCallArgumentsDelta", "index": 0, "arguments_chunk": `{"phrase":"x"}`})
		reply(m.ID, map[string]any{"content": "", "finish_reason": "tool_calls", "usage": usage,
			"tool_calls": []any{map[string]any{"id": id, "name": name + "_say", "arguments": map[string]any{"phrase": "x"}}}})
	default:
		text := "echo: " + last
		if afterTool {
			text = "done"
		}
		delta(map[string]any{"type": "Delta", "content": text[:len(text)/2]})
		delta(map[string]any{"type": "Delta", "content": text[len(text)/2:]})
		reply(m.ID, map[string]any{"content": text, "finish_reason": "stop", "usage": usage})
	}
}
