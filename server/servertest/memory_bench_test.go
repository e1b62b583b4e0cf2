package servertest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
	"github.com/zot-editors/zot/server/servertest"
)

const mb = 1 << 20

// memEditor starts zot lsp for a memory benchmark.
func memEditor(b *testing.B, llm *llmtest.Server) *servertest.Editor {
	if runtime.GOOS != "linux" {
		testenv.Skip(b, "reads /proc/PID/status")
	}
	home, root := b.TempDir(), b.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ZOT") {
			env = append(env, kv)
		}
	}
	env = append(env, "ZOT_HOME="+home)
	var stderr io.Writer
	if p := os.Getenv("ZOT_MEMPROFILE"); p != "" {
		// Profiling the benchmark: zot writes its heap profile there
		// (the last process started wins) and its stderr shows, so a
		// GODEBUG=gctrace=1 from the environment can be read.
		env = append(env, "ZOT_MEMPROFILE="+p)
		stderr = os.Stderr
	}
	ed := servertest.Start(b, servertest.Config{Bin: zotBin, Env: env, Root: root, NoProgress: true, Stderr: stderr,
		Args: []string{"--api-key", "k", "--base-url", llm.URL(), "--no-session"}})
	// Keep only the ends of runs: the benchmarks measure zot, not the
	// fake editor's record.
	ed.SetNotifyHook(func(method string, params []byte) bool {
		return method == "zot/event" && len(params) < 200 && strings.Contains(string(params), `"type":"done"`)
	})
	ed.Initialize(nil)
	return ed
}

func memory(b *testing.B, ed *servertest.Editor) (rss, peak int64) {
	rss, peak, err := ed.Memory()
	if err != nil {
		b.Fatal(err)
	}
	return rss, peak
}

// BenchmarkChangeBurstMemory sends 100k didChange notifications (typing
// 100 KB, a keystroke each) to the real zot lsp in one burst and reports its resident memory: peak-MB is
// the peak above idle during the burst (target ≤ 100), after-MB what is
// still held above idle once every change was handled.
func BenchmarkChangeBurstMemory(b *testing.B) {
	const n = 100_000
	llm := llmtest.New(llmtest.Script{})
	defer llm.Close()
	ed := memEditor(b, llm)
	ed.Open("burst.txt", "")
	uri := ed.URI("burst.txt")
	var sb strings.Builder
	for i := 1; i <= n; i++ {
		body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "textDocument/didChange", "params": map[string]any{
			"textDocument":   map[string]any{"uri": uri, "version": i + 1},
			"contentChanges": []map[string]any{{"range": rangeAt(i/80, i%80), "text": typed(i)}},
		}})
		fmt.Fprintf(&sb, "Content-Length: %d\r\n\r\n%s", len(body), body)
	}
	burst := []byte(sb.String())
	var peakSum, afterSum float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ed.SetText("burst.txt", "")
		ed.MustCall("zot/ping", nil, nil)
		idle, _ := memory(b, ed)
		if err := ed.ResetPeak(); err != nil {
			b.Fatal(err)
		}
		ed.WriteRaw(burst)
		ed.MustCall("zot/ping", nil, nil) // answered after every change
		after, peak := memory(b, ed)
		peakSum += float64(peak-idle) / mb
		afterSum += float64(after-idle) / mb
	}
	b.StopTimer()
	b.ReportMetric(peakSum/float64(b.N), "peak-MB")
	b.ReportMetric(afterSum/float64(b.N), "after-MB")
	if peakSum/float64(b.N) > 100 {
		b.Errorf("peak %.0f MB above idle during a burst of %d changes; the budget is 100 MB", peakSum/float64(b.N), n)
	}
	ed.Shutdown()
}

// typed is the i-th keystroke of a burst: 80 characters a line.
func typed(i int) string {
	if i%80 == 79 {
		return "\n"
	}
	return "x"
}

// BenchmarkPromptMemory sends one zot/prompt of 4 MiB and one of
// agent.MaxPromptBytes (the largest accepted), each as the first prompt of
// a fresh zot lsp (a process that ran a large prompt before keeps its
// heap, which would hide the cost of the next), and reports zot's peak
// resident memory above idle as a multiple of the prompt's size (target
// ≤ 3). With ZOT_MEMPROFILE set, zot writes a heap profile there and its
// stderr shows (GODEBUG=gctrace=1 for the collector's view).
func BenchmarkPromptMemory(b *testing.B) {
	for _, size := range []int{4 * mb, agent.MaxPromptBytes} {
		b.Run(fmt.Sprintf("%dMiB", size/mb), func(b *testing.B) {
			llm := llmtest.New(llmtest.Script{Loop: true, Replies: []llmtest.Reply{llmtest.TextReply("ok")}})
			defer llm.Close()
			text := strings.Repeat("a prompt line\n", size/14)
			var ratioSum, worst float64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				ed := memEditor(b, llm)
				ed.MustCall("zot/ping", nil, nil)
				idle, _ := memory(b, ed)
				if err := ed.ResetPeak(); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				run := ed.Prompt(text)
				ed.WaitDone(run.RunID)
				b.StopTimer()
				_, peak := memory(b, ed)
				ratio := float64(peak-idle) / float64(len(text))
				ratioSum += ratio
				worst = max(worst, ratio)
				ed.Shutdown()
			}
			ratio := ratioSum / float64(b.N)
			b.ReportMetric(ratio, "peak/prompt")
			b.ReportMetric(worst, "worst-peak/prompt")
			if worst > 3 {
				// docs/decisions.md, "Large prompts": the text (sharing
				// the frame) and the request body are the two copies left.
				b.Errorf("over budget: peak %.1f× the prompt's size above idle (mean %.1f×); the budget is 3×", worst, ratio)
			}
		})
	}
}
