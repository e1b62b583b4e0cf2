package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
)

// `echo '{"id":"1","type":"prompt","message":"hi"}' | zot rpc` prints the
// whole run through done, and a second piped prompt (queued) runs too,
// before zot exits.
func TestRPCPipedPromptsRunThroughDone(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("first answer"), llmtest.TextReply("second answer"))
	cmd := e.command(append([]string{"rpc"}, e.args()...)...)
	cmd.Stdin = strings.NewReader(`{"id":"1","type":"prompt","message":"hi"}` + "\n" + `{"id":"2","type":"prompt","message":"again"}` + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("zot rpc: %v\n%s", err, out)
	}
	var ts []string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("not JSON: %q", sc.Text())
		}
		ts = append(ts, m["type"].(string))
	}
	got := strings.Join(ts, " ")
	if strings.Count(got, "done") != 2 || !strings.HasSuffix(got, "done") ||
		!strings.Contains(string(out), "first answer") || !strings.Contains(string(out), "second answer") {
		t.Fatalf("piped run: %s\n%s", got, out)
	}
}

// An abort sent before EOF still aborts the running prompt; then zot exits.
func TestRPCAbortBeforeEOFStillAborts(t *testing.T) {
	e := newEnv(t, llmtest.Reply{RepeatText: &llmtest.Repeat{Text: "x", Count: 100000}, DelayMS: 5})
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "1", "type": "prompt", "message": "talk forever"})
	p.until(isType("text_delta"))
	p.send(map[string]any{"id": "2", "type": "abort"})
	p.in.Close()
	frames := p.until(isType("done"))
	if end := find(frames, "turn_end"); end == nil || end["stop"] != "aborted" {
		t.Fatalf("want turn_end aborted, got %v", types(frames))
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("zot rpc did not exit after the aborted run and EOF")
	}
}
