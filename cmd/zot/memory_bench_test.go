package main

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// BenchmarkRPCPromptMemory sends one prompt of agent.MaxPromptBytes (the
// largest accepted) as the first command of a fresh `zot rpc` (session
// file on) and reports its peak resident memory above idle as a multiple
// of the prompt's size (target ≤ 3, docs/decisions.md "Large prompts").
// ZOT_MEMPROFILE=FILE makes zot write a heap profile there.
func BenchmarkRPCPromptMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		testenv.Skip(b, "reads /proc/PID/status")
	}
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(),
		llm: llmtest.New(llmtest.Script{Loop: true, Replies: []llmtest.Reply{llmtest.TextReply("ok")}})}
	b.Cleanup(e.llm.Close)
	text := strings.Repeat("a prompt line\n", agent.MaxPromptBytes/14)
	line, _ := json.Marshal(map[string]any{"id": "p", "type": "prompt", "message": text})
	line = append(line, '\n')
	var extraEnv []string
	if p := os.Getenv("ZOT_MEMPROFILE"); p != "" {
		extraEnv = append(extraEnv, "ZOT_MEMPROFILE="+p)
	}
	var sum, worst float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		p := e.startRPC(extraEnv)
		p.send(map[string]any{"id": "h", "type": "hello"})
		p.until(isResponse("h"))
		pid := p.cmd.Process.Pid
		idle := statusKB(pid, "VmRSS:")
		if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
			b.Fatal(err) // resets VmHWM to the current RSS
		}
		b.StartTimer()
		p.in.Write(line)
		p.untilLine(`"type":"done"`, "")
		b.StopTimer()
		ratio := float64(statusKB(pid, "VmHWM:")-idle) * 1024 / float64(len(text))
		sum += ratio
		worst = max(worst, ratio)
		p.in.Close()
		p.cmd.Wait()
	}
	b.ReportMetric(sum/float64(b.N), "peak/prompt")
	b.ReportMetric(worst, "worst-peak/prompt")
	if worst > 3 {
		b.Errorf("over budget: peak %.1f× the prompt's size above idle; the budget is 3×", worst)
	}
}

// statusKB reads one "Name: N kB" field of /proc/PID/status.
func statusKB(pid int, field string) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field) {
			n, _ := strconv.Atoi(strings.Fields(l)[1])
			return n
		}
	}
	return 0
}
