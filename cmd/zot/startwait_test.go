package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

// waitLog waits for $ZOT_HOME/logs/ext-<name>.log to contain marker and
// returns the log.
func (e *env) waitLog(name, marker string) string {
	e.t.Helper()
	path := filepath.Join(e.home, "logs", "ext-"+name+".log")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(path)
		if strings.Contains(string(b), marker) {
			return string(b)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s never logged %q:\n%s", name, marker, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var startedPID = regexp.MustCompile(`started \S+ \(pid (\d+)\)`)

// A crashed extension's tool call is answered at once, while another
// extension is still starting (it never says hello: a fifo holds it, and
// it is still alive and held when the answer arrives). A slow starter
// must not hold another extension's results.
func TestRPCCrashedToolAnsweredWhileAnotherStarts(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("crash", map[string]any{"text": "x"}),
		llmtest.TextReply("done."),
	)
	gate, _ := proctest.Gate(t) // never released: opened at the test's end
	e.installGlobalExt("crasher", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "crasher", "-tools", "crash"}})
	e.installGlobalExt("slow", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "slow", "-tools", "echo", "-gate", gate}})
	p := e.startRPC(nil)
	log := e.waitLog("slow", "fakeext slow starting") // its process runs, before hello
	m := startedPID.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no pid in the log:\n%s", log)
	}
	slowPID, _ := strconv.Atoi(m[1])

	p.send(map[string]any{"id": "1", "type": "prompt", "message": "crash it"})
	frames := p.untilWithin(30*time.Second, isType("tool_result"))
	tr := frames[len(frames)-1]
	if tr["is_error"] != true || !strings.Contains(toJSON(tr["content"]), `extension \"crasher\" crashed`) {
		t.Fatalf("tool_result: %v", tr)
	}
	// The slow one is still held before its hello (the gate is shut) and
	// was not killed for a missing hello.
	if !proctest.Alive(slowPID) {
		t.Fatalf("the slow extension (pid %d) is gone", slowPID)
	}
	if log := e.waitLog("slow", "fakeext slow starting"); strings.Contains(log, "gate opened") || strings.Contains(log, "no hello") {
		t.Fatalf("the slow extension got past its gate:\n%s", log)
	}
	p.until(isType("done"))
}

// nodeExt is a plain-Node extension in the manner of zot's own examples
// (no SDK): it reads the fifo argv[2] to EOF, says hello, registers the
// command argv[3] (answering "<name> answered"), and sends ready only
// when argv[4] is "ready" — zot's clock example never does.
const nodeExt = `'use strict';
const fs = require('fs');
const readline = require('readline');
const [gate, cmd, ready] = process.argv.slice(2);
const send = (f) => process.stdout.write(JSON.stringify(f) + '\n');
process.stderr.write('node ' + cmd + ' waiting at its gate\n');
fs.readFileSync(gate);
send({type: 'hello', name: cmd, version: '1.0.0', capabilities: ['commands']});
send({type: 'register_command', name: cmd, description: 'answers'});
if (ready === 'ready') send({type: 'ready'});
readline.createInterface({input: process.stdin}).on('line', (line) => {
  const f = JSON.parse(line);
  if (f.type === 'command_invoked') send({type: 'command_response', id: f.id, action: 'display', display: f.name + ' answered'});
  if (f.type === 'shutdown') { send({type: 'shutdown_ack'}); process.exit(0); }
}).on('close', () => process.exit(0));
`

// Two extensions started together — one like zot's clock (registers,
// never sends ready), one like zot's hello (/summon, sends ready) — each
// answers its command without waiting for the other to be ready: /summon
// answers while the clock is still held before its hello, and /now
// answers once the clock has registered, by zot's silence rule, not after
// the clock's hello budget.
func TestRPCCommandsDoNotWaitForOtherExtensions(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Skip(t, "no node")
	}
	e := newEnv(t)
	script := filepath.Join(t.TempDir(), "ext.js")
	if err := os.WriteFile(script, []byte(nodeExt), 0o644); err != nil {
		t.Fatal(err)
	}
	clockGate, releaseClock := proctest.Gate(t)
	helloGate, releaseHello := proctest.Gate(t)
	e.installGlobalExt("clock", map[string]any{"exec": node, "args": []string{script, clockGate, "now", "never"}})
	e.installGlobalExt("hello", map[string]any{"exec": node, "args": []string{script, helloGate, "summon", "ready"}})
	p := e.startRPC(nil)

	// /summon is asked while both are held; the ping after it proves the
	// command was taken up (the reader handles lines in order).
	p.send(map[string]any{"id": "summon", "type": "command", "name": "summon"})
	p.send(map[string]any{"id": "sync", "type": "ping"})
	p.until(isResponse("sync"))
	releaseHello()
	r := p.untilWithin(30*time.Second, isResponse("summon"))
	got := r[len(r)-1]
	if got["success"] != true || !strings.Contains(toJSON(got["data"]), "summon answered") {
		t.Fatalf("/summon: %v", got)
	}
	// The clock was held before its hello all along (its gate opens only
	// now): /summon did not wait for it. It registers /now and never
	// sends ready.
	releaseClock()
	p.send(map[string]any{"id": "now", "type": "command", "name": "now"})
	r = p.untilWithin(30*time.Second, isResponse("now"))
	got = r[len(r)-1]
	if got["success"] != true || !strings.Contains(toJSON(got["data"]), "now answered") {
		t.Fatalf("/now: %v", got)
	}
}

// The first prompt after start waits for an extension still starting: its
// first model request offers the tool that extension registers once its
// gate opens (the prompt was taken up before that).
func TestRPCFirstPromptCarriesStartingExtensionTools(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("done."))
	gate, release := proctest.Gate(t)
	e.installGlobalExt("quick", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "quick", "-tools", "quicktool", "-gate", gate}})
	// A bound far past what the test needs: a loaded machine must not
	// turn the wait into a left-out extension.
	p := e.startRPC([]string{"ZOT_EXT_START_WAIT=5m"})
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	p.send(map[string]any{"id": "sync", "type": "ping"})
	p.until(isResponse("sync"))
	release()
	frames := p.until(isType("done"))
	if n := find(frames, "ext_notify"); n != nil {
		t.Fatalf("a notice although the extension joined in time: %v", n)
	}
	if names := toolNames(t, e, 0); !slices.Contains(names, "quicktool") {
		t.Fatalf("the first model request offered %v, without the extension's tool", names)
	}
}

// Past the bound the prompt goes on without an extension still starting,
// and one notice names it (ext_notify, and a line on stderr); the next
// prompt neither waits for that start again nor repeats the notice.
func TestRPCPromptPastStartBoundNamesLeftOutExtension(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("first."), llmtest.TextReply("second."))
	gate, _ := proctest.Gate(t) // never released: stuck before its hello
	e.installGlobalExt("stuck", map[string]any{"exec": fakeExt(t), "args": []string{"-name", "stuck", "-tools", "stucktool", "-gate", gate}})
	p := e.startRPC([]string{"ZOT_EXT_START_WAIT=200ms"})
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "hi"})
	frames := p.until(isType("done"))
	n := find(frames, "ext_notify")
	if n == nil || n["extension"] != "zot" || n["level"] != "warn" || !strings.Contains(n["message"].(string), "extension stuck is still starting after 200ms") {
		t.Fatalf("notice: %v\nframes: %v", n, types(frames))
	}
	if i, j := slices.IndexFunc(frames, isType("ext_notify")), slices.IndexFunc(frames, isType("turn_start")); i > j {
		t.Fatalf("the notice came after the model call: %v", types(frames))
	}
	if !strings.Contains(p.errb.String(), "extension stuck is still starting") {
		t.Fatalf("stderr: %s", p.errb.String())
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
	frames = p.until(isType("done"))
	if n := find(frames, "ext_notify"); n != nil {
		t.Fatalf("the notice again: %v", n)
	}
	if names := toolNames(t, e, 0); slices.Contains(names, "stucktool") {
		t.Fatalf("offered a tool of an extension that never said hello: %v", names)
	}
}
