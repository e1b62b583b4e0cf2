package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions/examples/examplestest"
)

// benchScript is the reference workload: per prompt, 2 model calls, 1 read
// tool and 120 text deltas.
func benchScript() llmtest.Script {
	return llmtest.Script{Loop: true, Replies: []llmtest.Reply{
		llmtest.ToolReply("read", map[string]any{"path": "README.md"}),
		{RepeatText: &llmtest.Repeat{Text: "word ", Count: 120}},
	}}
}

func benchEnv(b *testing.B) *env {
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(), llm: llmtest.New(benchScript())}
	b.Cleanup(e.llm.Close)
	e.write("README.md", strings.Repeat("a line of the readme\n", 40))
	return e
}

// BenchmarkRPCPrompt reports the wall time of one prompt through a running
// `zot rpc` (the scripted model answers instantly, so this is zot's own
// per-prompt overhead plus loopback HTTP).
func BenchmarkRPCPrompt(b *testing.B) {
	e := benchEnv(b)
	p := e.startRPC(nil)
	p.send(map[string]any{"id": "h", "type": "hello"})
	p.until(isResponse("h"))
	prompt := []byte(`{"id":"1","type":"prompt","message":"read the readme"}` + "\n" + `{"id":"c","type":"clear"}` + "\n")
	run := func(i int) {
		p.in.Write(prompt[:bytes.IndexByte(prompt, '\n')+1])
		if n := p.untilLine(`"type":"done"`, `"type":"text_delta"`); n != 120 {
			b.Fatalf("text_delta = %d, want 120", n)
		}
		// Keep the transcript from growing across iterations.
		p.in.Write(prompt[bytes.IndexByte(prompt, '\n')+1:])
		p.untilLine(`"command":"clear"`, "")
	}
	run(-1) // warm up
	cpu0 := cpuTime(p.cmd.Process.Pid)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(i)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/prompt")
	// zot's own CPU time per prompt: robust to a busy machine, unlike wall time.
	b.ReportMetric(float64((cpuTime(p.cmd.Process.Pid)-cpu0).Microseconds())/float64(b.N)/1000, "zot-cpu-ms/prompt")
}

// BenchmarkRPCPromptExtensionTool is zot's reference workload with an
// extension tool (zot measured 4.4 ms median with its weather example): per
// prompt, 2 model calls, the Go SDK todo extension's tool, a short answer.
func BenchmarkRPCPromptExtensionTool(b *testing.B) {
	todo := examplestest.Build(b, "todo")
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(), llm: llmtest.New(llmtest.Script{Loop: true, Replies: []llmtest.Reply{
		llmtest.ToolReply("todo", map[string]any{"action": "list"}),
		llmtest.TextReply("nothing to do"),
	}})}
	b.Cleanup(e.llm.Close)
	p := e.startRPC(nil, "--ext", todo)
	p.send(map[string]any{"id": "h", "type": "hello"})
	p.until(isResponse("h"))
	run := func() {
		p.in.Write([]byte(`{"id":"1","type":"prompt","message":"my todos?"}` + "\n"))
		frames := p.until(isType("done"))
		if tr := find(frames, "tool_result"); tr == nil || tr["is_error"] != false {
			b.Fatalf("tool_result: %v (%v)", tr, types(frames))
		}
		p.in.Write([]byte(`{"id":"c","type":"clear"}` + "\n"))
		p.untilLine(`"command":"clear"`, "")
	}
	run() // warm up (and wait for the extension to be ready)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "ms/prompt")
}

// BenchmarkRPCSpawnToFirstAnswer times process start to the first text
// delta of the first prompt, and reports idle RSS after the handshake.
func BenchmarkRPCSpawnToFirstAnswer(b *testing.B) {
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(),
		llm: llmtest.New(llmtest.Script{Loop: true, Replies: []llmtest.Reply{llmtest.TextReply("hi there")}})}
	b.Cleanup(e.llm.Close)
	var rssKB int
	var total time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		p := e.startRPC(nil)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "hello"})
		p.until(isType("text_delta"))
		total += time.Since(start)
		p.until(isType("done"))
		rssKB = max(rssKB, rss(p.cmd.Process.Pid))
		p.in.Close()
		p.cmd.Wait()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/first-answer")
	b.ReportMetric(float64(rssKB)/1024, "MB-RSS")
}

// BenchmarkRPCIdleRSS reports the resident memory of an idle `zot rpc`
// after the hello handshake.
func BenchmarkRPCIdleRSS(b *testing.B) {
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(), llm: llmtest.New(llmtest.Script{})}
	b.Cleanup(e.llm.Close)
	var worst int
	for i := 0; i < b.N; i++ {
		p := e.startRPC(nil)
		p.send(map[string]any{"id": "h", "type": "hello"})
		p.until(isResponse("h"))
		worst = max(worst, rss(p.cmd.Process.Pid))
		p.in.Close()
		p.cmd.Wait()
	}
	b.ReportMetric(float64(worst)/1024, "MB-RSS")
}

// cpuTime reads a process's user+system CPU time from /proc.
func cpuTime(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.Atoi(f[11])
	st, _ := strconv.Atoi(f[12])
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// rss reads a process's resident set size in KiB from /proc.
func rss(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			n, _ := strconv.Atoi(strings.Fields(line)[1])
			return n
		}
	}
	return 0
}
