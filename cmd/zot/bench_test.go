package main

import (
	"bytes"
	"cmp"
	"fmt"
	"os"
	"slices"
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
	// The usage is fixed so that the conversation stays in context: by
	// default the scripted model reports a token per 4 request bytes, which
	// passes 85% of the 200k window near prompt 310 of a 400-prompt
	// session, and every later prompt would first try a compaction (the
	// issue's workload keeps all 1,600 messages in context).
	read := llmtest.ToolReply("read", map[string]any{"path": "README.md"})
	read.Usage = &llmtest.Usage{Input: 2000, Output: 30}
	return llmtest.Script{Loop: true, Replies: []llmtest.Reply{
		read,
		{RepeatText: &llmtest.Repeat{Text: "word ", Count: 120}, Usage: &llmtest.Usage{Input: 2000, Output: 150}},
	}}
}

func benchEnv(b *testing.B) *env {
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(), llm: llmtest.New(benchScript())}
	b.Cleanup(e.llm.Close)
	e.llm.DropBodies() // what zot sends is checked by the tests; here it is only weight
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

// cpuTime reads a process's CPU time (user+system) from /proc: the sum of
// its threads' on-CPU nanoseconds (task/*/schedstat), or, where schedstat
// is missing, the clock ticks of stat (10 ms steps: a start-up's few
// milliseconds read as 0 or 10). zot's threads live as long as it does, so
// the threads listed are all that ran.
func cpuTime(pid int) time.Duration {
	if tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid)); err == nil {
		var sum time.Duration
		n := 0
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
			if err != nil {
				continue
			}
			if f := strings.Fields(string(b)); len(f) > 0 {
				if ns, err := strconv.ParseInt(f[0], 10, 64); err == nil {
					sum += time.Duration(ns)
					n++
				}
			}
		}
		if n > 0 {
			return sum
		}
	}
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

// BenchmarkRPCSessionCPU measures zot's host CPU per prompt at process
// level, as the user pays it (GC and scheduler included): one `zot rpc`
// runs n prompts of the reference workload without clearing, so the
// conversation grows to 4n messages, and its rusage at exit, minus that of
// a one-prompt session, is divided by n-1. It reports the figure for a
// 20-prompt and a 400-prompt session (goal: 400 ≤ 1.2 × 20) and the RSS
// of the idle process after the 400th prompt.
//
// A machine's speed drifts by tens of percent over a minute (other
// processes, frequency scaling), and a process's start-up varies by a few
// milliseconds, which is much of 19 prompts' CPU. So the sessions run in
// rounds, a one-, a 20- and a 400-prompt session each, interleaved so a
// drift weighs on both figures alike; the start-up is the median of every
// round's one-prompt session, a round's 20-prompt figure the median of
// three sessions (19 prompts' CPU is a few times a start-up's variance),
// and each figure the median over the rounds (the ratio too: the median
// of the rounds' ratios).
// ZOT_CPUPROFILE=FILE profiles the last 400-prompt process.
func BenchmarkRPCSessionCPU(b *testing.B) {
	const rounds = 9
	var per20, per400, ratio []float64
	var rss400 int
	for b.Loop() {
		var c1, c20, c400 [rounds]time.Duration
		for r := range rounds {
			c1[r], _ = rpcSession(b, 1, false)
			var short [3]time.Duration
			for i := range short {
				short[i], _ = rpcSession(b, 20, false)
			}
			c20[r] = median(short[:])
			var kb int
			c400[r], kb = rpcSession(b, 400, r == rounds-1)
			rss400 = max(rss400, kb)
		}
		start := float64(median(c1[:]))
		for r := range rounds {
			p20 := (float64(c20[r]) - start) / 19 / 1e6
			p400 := (float64(c400[r]) - start) / 399 / 1e6
			per20, per400, ratio = append(per20, p20), append(per400, p400), append(ratio, p400/p20)
		}
	}
	b.ReportMetric(median(per20), "cpu-ms/prompt@20")
	b.ReportMetric(median(per400), "cpu-ms/prompt@400")
	b.ReportMetric(median(ratio), "x-400-vs-20")
	b.ReportMetric(float64(rss400)/1024, "MB-RSS@400")
	b.ReportMetric(0, "ns/op")
}

// median is the middle of xs (the upper one of an even count).
func median[T cmp.Ordered](xs []T) T {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// rpcSession runs one `zot rpc` (session saved, as by default) through n
// prompts of benchScript and returns its CPU time at exit and its RSS
// after the last prompt.
func rpcSession(b *testing.B, n int, profile bool) (time.Duration, int) {
	e := benchEnv(b)
	var env []string
	if !profile {
		env = []string{"ZOT_CPUPROFILE="}
	}
	p := e.startRPC(env)
	p.send(map[string]any{"id": "h", "type": "hello"})
	p.until(isResponse("h"))
	prompt := []byte(`{"id":"1","type":"prompt","message":"read the readme"}` + "\n")
	for range n {
		p.in.Write(prompt)
		if got := p.untilLine(`"type":"done"`, `"type":"text_delta"`); got != 120 {
			b.Fatalf("text_delta = %d, want 120", got)
		}
	}
	rssKB := rss(p.cmd.Process.Pid)
	p.in.Close()
	if err := p.cmd.Wait(); err != nil {
		b.Fatalf("zot rpc: %v\n%s", err, p.errb.String())
	}
	return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime(), rssKB
}
