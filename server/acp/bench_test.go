//go:build unix

package acp_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
)

// BenchmarkDeltas streams 100k text deltas from the scripted model through
// the real `zot acp` to a client reading its stdout (the script of the lsp
// benchmark, servertest's BenchmarkDeltas). deltas/s is end to end (model
// SSE → provider client → runtime → session/update lines, one
// agent_message_chunk per delta); first-delta-ms is the latency from
// session/prompt to the first chunk; done-ms the whole turn.
func BenchmarkDeltas(b *testing.B) {
	const n = 100_000
	llm := llmtest.New(llmtest.Script{})
	defer llm.Close()
	home, root := b.TempDir(), b.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ZOT") {
			env = append(env, kv)
		}
	}
	cmd := exec.Command(zotBin, "acp", "--api-key", "k", "--base-url", llm.URL(), "--no-session", "--no-ext")
	cmd.Env = append(env, "ZOT_HOME="+home)
	cmd.Dir = root
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	r := bufio.NewReaderSize(stdout, 1<<20)
	send := func(s string) { stdin.Write([]byte(s + "\n")) }
	var first time.Time
	// until reads lines until one holds want and returns it; count is how
	// many lines before it held chunk.
	until := func(want, chunk string) (line []byte, count int) {
		for {
			l, err := r.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				rest, _ := r.ReadBytes('\n')
				l = append(append([]byte(nil), l...), rest...)
			} else if err != nil {
				b.Fatalf("read: %v", err)
			}
			if chunk != "" && bytes.Contains(l, []byte(chunk)) {
				if count == 0 {
					first = time.Now()
				}
				count++
			}
			if bytes.Contains(l, []byte(want)) {
				return l, count
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
	until(`"id":0`, "")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, root))
	line, _ := until(`"id":1`, "")
	var res struct {
		Result struct {
			SessionID string `json:"sessionId"`
		} `json:"result"`
	}
	if json.Unmarshal(line, &res) != nil || res.Result.SessionID == "" {
		b.Fatalf("session/new: %s", line)
	}
	sid := res.Result.SessionID
	var total, firstSum time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh transcript each time (/clear): 100k tokens per run would
		// trigger auto-compaction by the third.
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"c%d","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"/clear"}]}}`, i, sid))
		until(fmt.Sprintf(`"id":"c%d"`, i), "")
		llm.Append(llmtest.Reply{RepeatText: &llmtest.Repeat{Text: "tok ", Count: n}})
		start := time.Now()
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":"p%d","method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"stream %d"}]}}`, i, sid, i))
		l, got := until(fmt.Sprintf(`"id":"p%d"`, i), `"sessionUpdate":"agent_message_chunk"`)
		if got != n || !bytes.Contains(l, []byte(`"end_turn"`)) {
			b.Fatalf("got %d chunks and %s, want %d and end_turn", got, l, n)
		}
		total += time.Since(start)
		firstSum += first.Sub(start)
	}
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "deltas/s")
	b.ReportMetric(float64(firstSum.Milliseconds())/float64(b.N), "first-delta-ms")
	b.ReportMetric(float64(total.Milliseconds())/float64(b.N), "done-ms")
}
