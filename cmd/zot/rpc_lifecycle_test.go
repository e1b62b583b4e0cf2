package main

import (
	"encoding/json"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/internal/testenv"
)

// rest reads the frames left until zot closes its stdout (it exited), then
// waits for the process; it fails the test if either takes longer than a
// generous bound (a hang, not a slowness check).
func (p *rpcProc) rest(bound time.Duration) ([]map[string]any, error) {
	p.t.Helper()
	var got []map[string]any
	deadline := time.After(bound)
	for open := true; open; {
		select {
		case line, ok := <-p.lines:
			if !ok {
				open = false
				break
			}
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				m = map[string]any{"type": "__not_json__", "line": string(line)}
			}
			got = append(got, m)
		case <-deadline:
			p.t.Fatalf("zot rpc did not exit (stdout still open); frames so far: %v\nstderr: %s", types(got), p.errb.String())
		}
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		return got, err
	case <-deadline:
		p.t.Fatalf("zot rpc closed stdout but did not exit\nstderr: %s", p.errb.String())
		return nil, nil
	}
}

func needSignals(t *testing.T) {
	t.Helper()
	if runtime.GOOS == "windows" {
		testenv.Skip(t, "no SIGTERM on Windows")
	}
}

// SIGTERM stops zot rpc at once although stdin stays open (docs/rpc.md:
// "To stop at once, … send SIGTERM"): the running prompt is aborted (its
// turn_end and done are still written), the queued one is dropped, and
// the process exits with status 0.
func TestRPCSIGTERMStopsWithStdinOpen(t *testing.T) {
	needSignals(t)
	e := newEnv(t, llmtest.Reply{Text: "never streamed", Gate: "held"}, llmtest.TextReply("the queued one"))
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "one"})
	select {
	case <-e.llm.Arrived("held"):
	case <-time.After(60 * time.Second):
		t.Fatalf("the model request never arrived\nstderr: %s", p.errb.String())
	}
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "two"})
	if r := p.response("2"); r["success"] != true || r["data"].(map[string]any)["queued"] != true {
		t.Fatalf("second prompt: %v", r)
	}
	// stdin stays open: only the signal may end the process.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	frames, err := p.rest(30 * time.Second)
	if err != nil {
		t.Fatalf("exit after SIGTERM: %v (want status 0)\nstderr: %s", err, p.errb.String())
	}
	got := strings.Join(types(frames), " ")
	if end := find(frames, "turn_end"); end == nil || end["stop"] != "aborted" || strings.Count(got, "done") != 1 || !strings.HasSuffix(got, "done") {
		t.Fatalf("want the running prompt to end aborted and the queued one dropped; frames: %s", got)
	}
	if n := len(e.llm.Requests()); n != 1 {
		t.Fatalf("the model got %d requests; the queued prompt must not run after SIGTERM", n)
	}
}

// SIGTERM while a bash tool runs: zot exits and the tool's shell and the
// child it started are gone.
func TestRPCSIGTERMKillsTheRunningTool(t *testing.T) {
	needSignals(t)
	_, p, child, shell := runningBash(t, "after the tool")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := p.rest(30 * time.Second); err != nil {
		t.Fatalf("exit after SIGTERM: %v\nstderr: %s", err, p.errb.String())
	}
	proctest.WaitGone(t, child, "the command's child after SIGTERM")
	proctest.WaitGone(t, shell, "the command's shell after SIGTERM")
}

// An abort in the same write as the prompt (the reader reaches it before
// the run has started) still aborts that prompt: it ends with turn_end
// aborted and done, and the model's answer is never streamed.
func TestRPCAbortRightAfterPromptAborts(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "the answer of the aborted prompt", Gate: "first"}, llmtest.TextReply("the next answer"))
	p := e.startRPC(nil)
	if _, err := p.in.Write([]byte(`{"id":"1","type":"prompt","message":"hi"}` + "\n" + `{"id":"a","type":"abort"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	frames := p.until(isResponse("a"))
	// The abort has acted (its response is written after it did): let the
	// model answer if it was asked; an aborted run no longer listens.
	e.llm.Release("first")
	if find(frames, "done") == nil {
		frames = append(frames, p.until(isType("done"))...)
	}
	if r := frames[0]; r["id"] != "1" || r["success"] != true {
		t.Fatalf("prompt response: %v", r)
	}
	var last map[string]any
	for _, f := range frames {
		if f["type"] == "turn_end" {
			last = f
		}
		if f["type"] == "text_delta" || f["type"] == "assistant_message" {
			t.Fatalf("the aborted prompt streamed its answer: %v", types(frames))
		}
	}
	if last == nil || last["stop"] != "aborted" {
		t.Fatalf("want turn_end aborted before done, got %v", types(frames))
	}
	// zot is usable afterwards: the next prompt runs to its answer.
	p.send(map[string]any{"id": "2", "type": "prompt", "message": "again"})
	next := p.until(isType("done"))
	if am := find(next, "assistant_message"); am == nil || find(next, "error") != nil {
		t.Fatalf("prompt after the abort: %v", types(next))
	}
}

// clear (and /clear) right behind an accepted prompt fails as busy, as it
// does while the prompt runs, instead of clearing before the prompt starts,
// and get_state says busy; after done it clears.
func TestRPCClearRightAfterPromptIsBusy(t *testing.T) {
	e := newEnv(t, llmtest.Reply{Text: "answer", Gate: "first"})
	p := e.startRPC(nil)
	if _, err := p.in.Write([]byte(`{"id":"1","type":"prompt","message":"hi"}` + "\n" +
		`{"id":"c","type":"clear"}` + "\n" + `{"id":"cc","type":"command","name":"clear"}` + "\n" +
		`{"id":"b","type":"get_state"}` + "\n")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"c", "cc"} {
		if r := p.response(id); r["success"] != false || !strings.Contains(r["error"].(string), "busy") {
			t.Fatalf("%s while a prompt is accepted: %v", id, r)
		}
	}
	if st := p.response("b")["data"].(map[string]any); st["busy"] != true {
		t.Fatalf("get_state while a prompt is accepted: busy %v, but clear says busy", st["busy"])
	}
	e.llm.Release("first")
	p.until(isType("done"))
	p.send(map[string]any{"id": "c2", "type": "clear"})
	if r := p.response("c2"); r["success"] != true {
		t.Fatalf("clear after done: %v", r)
	}
	p.send(map[string]any{"id": "s", "type": "get_state"})
	if st := p.response("s")["data"].(map[string]any); st["message_count"] != float64(0) || st["busy"] != false {
		t.Fatalf("get_state after clear: %v; want no messages and not busy", st)
	}
}
