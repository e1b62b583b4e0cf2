// Command fakeext is the host tests' purpose-built extension: flags pick
// what it registers and how it misbehaves. It speaks the protocol by hand
// (no SDK) so every fault can be injected.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"
	"time"
)

type frame map[string]any

var (
	name         = flag.String("name", "fake", "hello name")
	toolsF       = flag.String("tools", "", "tools to register: echo,env,slow,crash,image,hang,late,buspub,kv,vexec (and grep, ls, find, read, answering as echo)")
	cmdsF        = flag.String("cmds", "", "commands to register: hi,panel,crash,err,insert,display,noop,flood,slow")
	eventsF      = flag.String("events", "", "events to subscribe to")
	interceptF   = flag.String("intercept", "", "events to intercept")
	block        = flag.String("block", "", "block tool_call whose args contain this")
	suffix       = flag.String("suffix", "", "append this to args.command in tool_call intercepts")
	replace      = flag.String("replace", "", "replace_text for assistant_message intercepts (old=new)")
	blockTurn    = flag.Bool("block-turn", false, "block turn_start")
	hangIcpt     = flag.Bool("hang-intercept", false, "never answer intercepts")
	cancelTree   = flag.Bool("cancel-tree", false, "cancel session_before_fork and session_before_tree")
	crashIcpt    = flag.Bool("crash-intercept", false, "exit while an intercept is pending")
	noHello      = flag.Bool("nohello", false, "never say hello")
	noReady      = flag.Bool("noready", false, "never send ready")
	crashStart   = flag.Bool("crash-start", false, "exit 2 right after ready")
	garbage      = flag.Int("garbage", 0, "write this many garbage lines after ready")
	huge         = flag.Int("huge", 0, "write one line of this many bytes after ready")
	closeStdout  = flag.Bool("close-stdout", false, "close stdout after ready and keep running")
	ignoreShut   = flag.Bool("ignore-shutdown", false, "ignore shutdown and SIGTERM")
	prefix       = flag.String("prefix", "echo", "echo tool output prefix")
	record       = flag.String("record", "", "append every received line to this file")
	startDelay   = flag.Duration("start-delay", 0, "sleep before hello")
	ackNoExit    = flag.Bool("ack-no-exit", false, "ack shutdown but keep running")
	readyDelay   = flag.Duration("ready-delay", 0, "sleep between registrations and ready")
	regDelay     = flag.Duration("register-delay", 0, "sleep between hello and the first registration")
	capsF        = flag.String("caps", "", "capabilities to declare in hello besides commands,tools,panels")
	lateDelay    = flag.Duration("late-delay", 0, "sleep before registering the late tool")
	notifyOnCall = flag.Bool("notify-on-call", false, "send a notify before each tool_result")
	notifyLevel  = flag.String("notify-level", "info", "the level of -notify-on-call's notify")
	noRead       = flag.Bool("no-read", false, "stop reading stdin after ready")
	crashAfter   = flag.Duration("crash-after", 200*time.Millisecond, "with -crash-start: delay before exiting")
)

// gate: a named pipe read to EOF before hello, so a test holds the
// extension in "starting" exactly as long as it wants (no sleeps).
var gate = flag.String("gate", "", "read this file (a fifo) to EOF before hello")

// readyGate: a named pipe read to EOF after the registrations and before
// ready, so a test holds the extension registered but still starting.
var readyGate = flag.String("ready-gate", "", "read this file (a fifo) to EOF before ready")

var helloJSON = flag.String("hello-json", "", "send this line as the hello frame")

var floodHold = flag.String("flood-hold", "", "flood: answer the command only once this file exists")

var readAfter = flag.String("read-after", "", "after ready, read stdin only once this file exists")

var toolSchema = flag.String("schema", `{"type":"object","properties":{"text":{"type":"string"},"n":{"type":"integer"}},"required":["text"]}`, "the schema of the registered tools")

var (
	outMu sync.Mutex
	out   = bufio.NewWriter(os.Stdout)
)

func emit(f frame) {
	b, _ := json.Marshal(f)
	outMu.Lock()
	out.Write(b)
	out.WriteByte('\n')
	out.Flush()
	outMu.Unlock()
}

// ask sends a frame with an id and waits for the host's answer
// (action_result, pong).
var (
	asks   = map[string]chan map[string]json.RawMessage{}
	askMu  sync.Mutex
	askSeq int
	noPong = flag.Bool("no-pong", false, "never answer the host's ping (-caps ping)")
	provF  = flag.String("provider", "", "register this model provider (model m1; -caps providers): it answers \"v1: <last user text>\" in two deltas, fails on \"fail\"")
)

func ask(f frame) map[string]json.RawMessage {
	askMu.Lock()
	askSeq++
	id := fmt.Sprintf("ask-%d", askSeq)
	ch := make(chan map[string]json.RawMessage, 1)
	asks[id] = ch
	askMu.Unlock()
	f["id"] = id
	emit(f)
	return <-ch
}

func raw(s string) {
	outMu.Lock()
	out.WriteString(s)
	out.Flush()
	outMu.Unlock()
}

func list(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

var (
	panelMu sync.Mutex
	cursor  int
	rec     *os.File
	recMu   sync.Mutex
	cancels = map[string]chan struct{}{}
	cancMu  sync.Mutex
)

func main() {
	flag.Parse()
	if *ignoreShut {
		signal.Ignore(syscall.SIGTERM)
	}
	if *record != "" {
		var err error
		rec, err = os.OpenFile(*record, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	fmt.Fprintf(os.Stderr, "fakeext %s starting\n", *name)
	if *noHello {
		time.Sleep(time.Hour)
	}
	time.Sleep(*startDelay)
	if *gate != "" {
		if b, err := os.ReadFile(*gate); err != nil {
			fmt.Fprintf(os.Stderr, "gate: %v\n", err)
		} else {
			fmt.Fprintf(os.Stderr, "gate opened (%d bytes)\n", len(b))
		}
	}
	if *helloJSON != "" {
		raw(*helloJSON + "\n")
	} else {
		emit(frame{"type": "hello", "name": *name, "version": "0.1.0", "capabilities": append([]string{"commands", "tools", "panels"}, list(*capsF)...)})
	}
	time.Sleep(*regDelay)
	for _, t := range list(*toolsF) {
		if t == "late" {
			continue
		}
		emit(frame{"type": "register_tool", "name": t, "description": "fake " + t,
			"schema": json.RawMessage(*toolSchema)})
	}
	for _, c := range list(*cmdsF) {
		emit(frame{"type": "register_command", "name": c, "description": "fake /" + c})
	}
	if *provF != "" {
		emit(frame{"type": "register_provider", "name": *provF, "models": []frame{{"id": "m1", "context_window": 1000}}})
	}
	if *eventsF != "" || *interceptF != "" {
		emit(frame{"type": "subscribe", "events": list(*eventsF), "intercept": list(*interceptF)})
	}
	time.Sleep(*readyDelay)
	if *readyGate != "" {
		fmt.Fprintf(os.Stderr, "registered; waiting at the ready gate\n")
		if _, err := os.ReadFile(*readyGate); err != nil {
			fmt.Fprintf(os.Stderr, "ready gate: %v\n", err)
		}
	}
	if !*noReady {
		emit(frame{"type": "ready"})
	}
	if *crashStart {
		time.Sleep(*crashAfter)
		os.Exit(2)
	}
	if *noRead {
		time.Sleep(time.Hour)
	}
	for *readAfter != "" { // not reading until the file exists
		if _, err := os.Stat(*readAfter); err == nil {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < *garbage; i++ {
		switch i % 4 {
		case 0:
			raw("this is not json\n")
		case 1:
			raw("{\"type\":\"no_such_frame\",\"id\":\"x\"}\n")
		case 2:
			raw("[1,2,3]\n")
		case 3:
			raw("{\"type\":\"tool_result\",\"id\":\"never-sent\"}\n")
		}
	}
	if *huge > 0 {
		raw("{\"type\":\"notify\",\"message\":\"" + strings.Repeat("x", *huge) + "\"}\n")
		emit(frame{"type": "notify", "level": "info", "message": "after huge"})
	}
	if *closeStdout {
		os.Stdout.Close()
		time.Sleep(time.Hour)
	}
	for _, t := range list(*toolsF) {
		if t == "late" {
			time.Sleep(*lateDelay)
			emit(frame{"type": "register_tool", "name": "late", "description": "registered after ready"})
		}
	}
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			if rec != nil {
				recMu.Lock()
				rec.Write(line)
				recMu.Unlock()
			}
			var f map[string]json.RawMessage
			if json.Unmarshal(line, &f) == nil {
				go handle(f)
			}
		}
		if err != nil {
			if *ignoreShut {
				time.Sleep(time.Hour)
			}
			return
		}
	}
}

func str(f map[string]json.RawMessage, k string) string {
	var s string
	json.Unmarshal(f[k], &s)
	return s
}

func handle(f map[string]json.RawMessage) {
	id := str(f, "id")
	switch str(f, "type") {
	case "hello_ack":
		fmt.Fprintf(os.Stderr, "hello_ack %s\n", f["data_dir"])
	case "action_result", "pong":
		askMu.Lock()
		ch := asks[id]
		delete(asks, id)
		askMu.Unlock()
		if ch != nil {
			ch <- f
		}
	case "ping":
		if !*noPong {
			emit(frame{"type": "pong", "id": id})
		}
	case "provider_complete": // -provider: answer the last user text
		var msgs []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		}
		json.Unmarshal(f["messages"], &msgs)
		last := ""
		for _, m := range msgs {
			for _, c := range m.Content {
				if m.Role == "user" && c.Type == "text" {
					last = c.Text
				}
			}
		}
		if strings.Contains(last, "fail") {
			emit(frame{"type": "provider_result", "id": id, "error": "the model is down"})
			return
		}
		text := "v1: " + last
		emit(frame{"type": "provider_delta", "id": id, "delta": frame{"type": "Delta", "content": text[:4]}})
		emit(frame{"type": "provider_delta", "id": id, "delta": frame{"type": "Delta", "content": text[4:]}})
		emit(frame{"type": "provider_result", "id": id, "text": text, "stop": "stop", "usage": frame{"prompt_tokens": 7, "completion_tokens": 2}})
	case "command_complete": // -caps complete: the words starting with text
		var out []frame
		for _, w := range []string{"alpha", "beta", "bravo"} {
			if strings.HasPrefix(w, str(f, "text")) {
				out = append(out, frame{"value": w, "description": "word " + w})
			}
		}
		emit(frame{"type": "completions", "id": id, "completions": out})
	case "tool_call":
		toolCall(id, str(f, "name"), f["args"])
	case "tool_cancel":
		cancMu.Lock()
		if c, ok := cancels[id]; ok {
			close(c)
			delete(cancels, id)
		}
		cancMu.Unlock()
	case "command_invoked":
		command(id, str(f, "name"), str(f, "args"))
	case "event_intercept":
		intercept(id, f)
	case "panel_key":
		panelKey(str(f, "panel_id"), str(f, "key"), str(f, "text"))
	case "panel_close":
		fmt.Fprintf(os.Stderr, "panel closed by host\n")
	case "shutdown":
		if *ignoreShut {
			return
		}
		emit(frame{"type": "shutdown_ack"})
		if *ackNoExit {
			time.Sleep(time.Hour)
		}
		os.Exit(0)
	}
}

func toolCall(id, name string, args json.RawMessage) {
	var a struct {
		Text string `json:"text"`
		N    int    `json:"n"`
	}
	json.Unmarshal(args, &a)
	if *notifyOnCall {
		emit(frame{"type": "notify", "level": *notifyLevel, "message": "calling " + name})
	}
	switch name {
	case "echo", "late", "grep", "ls", "find", "read": // grep…read: an extension claiming a built-in name
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": *prefix + ": " + a.Text}}})
	case "env", "envb": // the value of the variable named by text, or <unset>
		v, ok := os.LookupEnv(a.Text)
		if !ok {
			v = "<unset>"
		}
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": v}}})
	case "image":
		emit(frame{"type": "tool_result", "id": id, "content": []frame{
			{"type": "text", "text": "an image"},
			{"type": "image", "mime_type": "image/png", "data": "iVBORw0KGgo="},
		}})
	case "crash":
		os.Exit(3)
	case "buspub": // publish text as the topic on the bus (-caps bus)
		emit(frame{"type": "bus_publish", "key": a.Text, "data": frame{"from": flag.Lookup("name").Value.String()}})
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": "published"}}})
	case "kv": // -caps kv: store text under "k" (when given), then read it back
		if a.Text != "" {
			if r := ask(frame{"type": "kv_set", "key": "k", "value": a.Text}); str(r, "error") != "" {
				emit(frame{"type": "tool_result", "id": id, "is_error": true, "content": []frame{{"type": "text", "text": str(r, "error")}}})
				return
			}
		}
		r := ask(frame{"type": "kv_get", "key": "k"})
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": "kv: " + string(r["value"]) + str(r, "error")}}})
	case "vexec": // -caps exec: run text through the host's exec
		r := ask(frame{"type": "exec", "command": a.Text})
		text := fmt.Sprintf("exit %s out %s err %s error %q", r["exit_code"], r["stdout"], r["stderr"], str(r, "error"))
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": text}}})
	case "vping": // -caps ping: ping the host
		r := ask(frame{"type": "ping"})
		emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": "pong " + str(r, "type")}}})
	case "hang":
		// never answers, ignores tool_cancel
	case "slow":
		c := make(chan struct{})
		cancMu.Lock()
		cancels[id] = c
		cancMu.Unlock()
		select {
		case <-c:
			fmt.Fprintf(os.Stderr, "cancelled %s\n", id)
		case <-time.After(time.Duration(a.N) * time.Millisecond):
			emit(frame{"type": "tool_result", "id": id, "content": []frame{{"type": "text", "text": "slow done: " + a.Text}}})
		}
	default:
		emit(frame{"type": "tool_result", "id": id, "is_error": true, "content": []frame{{"type": "text", "text": "unknown tool " + name}}})
	}
}

func command(id, name, args string) {
	switch name {
	case "hi":
		emit(frame{"type": "command_response", "id": id, "action": "prompt", "prompt": "say hi to " + args})
	case "insert":
		emit(frame{"type": "command_response", "id": id, "action": "insert", "insert": "inserted " + args})
	case "display":
		emit(frame{"type": "command_response", "id": id, "action": "display", "display": "shown " + args})
	case "noop":
		emit(frame{"type": "command_response", "id": id, "action": "noop"})
	case "err":
		emit(frame{"type": "command_response", "id": id, "action": "noop", "error": "it went wrong"})
	case "crash":
		os.Exit(4)
	case "slow":
		time.Sleep(time.Hour)
	case "flood":
		n := 10000
		fmt.Sscan(args, &n)
		for i := 0; i < n; i++ {
			emit(frame{"type": "notify", "level": "info", "message": fmt.Sprintf("flood %d", i)})
			emit(frame{"type": "panel_render", "panel_id": "p1", "lines": []string{fmt.Sprintf("flood %d", i)}})
		}
		for *floodHold != "" {
			if _, err := os.Stat(*floodHold); err == nil {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		emit(frame{"type": "command_response", "id": id, "action": "display", "display": "flooded"})
	case "panel":
		panelMu.Lock()
		cursor = 0
		panelMu.Unlock()
		emit(frame{"type": "command_response", "id": id, "action": "open_panel",
			"open_panel": frame{"id": "p1", "title": "Fake", "lines": []string{"item 0"}, "footer": "↑/↓"}})
	}
}

func panelKey(panel, key, text string) {
	panelMu.Lock()
	defer panelMu.Unlock()
	switch key {
	case "down":
		cursor++
	case "up":
		cursor--
	case "esc":
		emit(frame{"type": "panel_close", "panel_id": panel})
		return
	case "rune":
		emit(frame{"type": "panel_render", "panel_id": panel, "title": "Fake", "lines": []string{"typed " + text}})
		return
	}
	emit(frame{"type": "panel_render", "panel_id": panel, "title": "Fake", "lines": []string{fmt.Sprintf("item %d", cursor)}})
}

func intercept(id string, f map[string]json.RawMessage) {
	if *hangIcpt {
		return
	}
	if *crashIcpt {
		os.Exit(5)
	}
	switch str(f, "event") {
	case "tool_call":
		args := f["tool_args"]
		if *block != "" && strings.Contains(string(args), *block) {
			emit(frame{"type": "event_intercept_response", "id": id, "block": true, "reason": *name + " refused: " + *block})
			return
		}
		if *suffix != "" {
			var m map[string]any
			json.Unmarshal(args, &m)
			if m == nil {
				m = map[string]any{}
			}
			c, _ := m["command"].(string)
			m["command"] = c + *suffix
			emit(frame{"type": "event_intercept_response", "id": id, "modified_args": m})
			return
		}
	case "session_before_fork", "session_before_tree":
		if *cancelTree {
			emit(frame{"type": "event_intercept_response", "id": id, "cancel": true, "reason": *name + " refused the " + str(f, "event")})
			return
		}
	case "session_before_switch":
		if *block != "" && strings.Contains(str(f, "session_file"), *block) {
			emit(frame{"type": "event_intercept_response", "id": id, "cancel": true, "reason": *name + " refused: " + *block})
			return
		}
	case "turn_start":
		if *blockTurn {
			emit(frame{"type": "event_intercept_response", "id": id, "block": true, "reason": "outside business hours"})
			return
		}
	case "assistant_message":
		if *replace != "" {
			kv := strings.SplitN(*replace, "=", 2)
			t := strings.ReplaceAll(str(f, "text"), kv[0], kv[1])
			emit(frame{"type": "event_intercept_response", "id": id, "replace_text": t})
			return
		}
	}
	emit(frame{"type": "event_intercept_response", "id": id})
}
