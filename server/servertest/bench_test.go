package servertest_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// BenchmarkDeltas streams 100k text deltas from the scripted model through
// the real `zot lsp` to the fake editor. deltas/s is end to end (model
// SSE → provider client → runtime → zot/event framing → editor);
// first-delta-ms is the latency from sending zot/prompt to the first
// text_delta at the editor; done-ms the whole run.
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
	env = append(env, "ZOT_HOME="+home)
	ed := servertest.Start(b, servertest.Config{Bin: zotBin, Env: env, Root: root, NoProgress: true,
		Args: []string{"--api-key", "k", "--base-url", llm.URL(), "--no-session"}})

	var mu sync.Mutex
	var deltas int
	var first, done time.Time
	doneCh := make(chan struct{}, 1)
	ed.SetNotifyHook(func(method string, params []byte) bool {
		if method != "zot/event" {
			return true
		}
		switch {
		case bytes.Contains(params, []byte(`"type":"text_delta"`)):
			mu.Lock()
			if deltas == 0 {
				first = time.Now()
			}
			deltas++
			mu.Unlock()
		case bytes.Contains(params, []byte(`"type":"error"`)):
			b.Logf("error event: %s", params)
		case bytes.Contains(params, []byte(`"type":"done"`)):
			mu.Lock()
			done = time.Now()
			mu.Unlock()
			doneCh <- struct{}{}
		}
		return false
	})
	ed.Initialize(nil)

	var total, firstSum, doneSum time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh transcript each time: 100k tokens per run would trigger
		// auto-compaction by the third.
		ed.MustCall("zot/clear", nil, nil)
		llm.Append(llmtest.Reply{RepeatText: &llmtest.Repeat{Text: "tok ", Count: n}})
		mu.Lock()
		deltas = 0
		mu.Unlock()
		start := time.Now()
		ed.Prompt(fmt.Sprintf("stream %d", i))
		select {
		case <-doneCh:
		case <-time.After(servertest.WaitTimeout):
			b.Fatalf("no done within %v", servertest.WaitTimeout)
		}
		mu.Lock()
		if deltas != n {
			mu.Unlock()
			b.Fatalf("got %d deltas, want %d", deltas, n)
		}
		total += done.Sub(start)
		firstSum += first.Sub(start)
		doneSum += done.Sub(start)
		mu.Unlock()
	}
	b.StopTimer()
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "deltas/s")
	b.ReportMetric(float64(firstSum.Milliseconds())/float64(b.N), "first-delta-ms")
	b.ReportMetric(float64(doneSum.Milliseconds())/float64(b.N), "done-ms")
	ed.Shutdown()
}

// BenchmarkOneLineEdit times a one-line edit of a 10k-line open buffer
// through the real server (edit tool → diff → workspace/applyEdit → the
// editor applies it) and reports the applyEdit payload size, which must
// follow the change, not the file.
func BenchmarkOneLineEdit(b *testing.B) {
	llm := llmtest.New(llmtest.Script{})
	defer llm.Close()
	home, root := b.TempDir(), b.TempDir()
	var sb strings.Builder
	for i := 0; i < 10000; i++ {
		fmt.Fprintf(&sb, "\tfmt.Println(\"line %d of a reasonably long Go file\") // 🙂\n", i)
	}
	text := sb.String()
	os.WriteFile(filepath.Join(root, "big.go"), []byte(text), 0o644)
	ed := servertest.Start(b, servertest.Config{Bin: zotBin, Env: append(os.Environ(), "ZOT_HOME="+home), Root: root, NoProgress: true,
		Args: []string{"--api-key", "k", "--base-url", llm.URL(), "--no-session"}})
	ed.Initialize(nil)
	ed.Open("big.go", text)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		old := fmt.Sprintf("line %d of", 5000+i%100)
		if i >= 100 {
			old = fmt.Sprintf("line %d (%d) of", 5000+i%100, i-100)
		}
		llm.Append(llmtest.ToolReply("edit", map[string]any{"path": "big.go", "edits": []map[string]string{{"oldText": old,
			"newText": fmt.Sprintf("line %d (%d) of", 5000+i%100, i)}}}), llmtest.TextReply("ok"))
		evs := ed.WaitDone(ed.Prompt("edit").RunID)
		if tr := servertest.Find(evs, "tool_result"); tr["is_error"] != false {
			b.Fatalf("edit failed: %v", tr)
		}
	}
	b.StopTimer()
	reqs := ed.Requests("workspace/applyEdit")
	b.ReportMetric(float64(len(reqs[len(reqs)-1].Params)), "payload-bytes")
	b.ReportMetric(float64(len(text)), "file-bytes")
	ed.Shutdown()
}
