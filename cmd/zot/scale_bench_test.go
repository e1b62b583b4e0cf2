package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
)

// BenchmarkExtensionHostScale: N copies of one small Go extension (built
// once, one tool each) installed as global extensions of `zot rpc`, the
// scripted model. Per N it reports, at process level:
//   - startup-ms: spawn → the first prompt done, its last model request
//     listing all N tools;
//   - host-cpu-ms: zot's CPU time (user+sys) until then;
//   - idle-rss-MiB and threads: after 500 ms idle;
//   - reload-ms: rewrite one extension's manifest → a prompt calling its
//     tool gets the new version's answer (debounce included).
//
// The N=100 run also reports the N=100/N=1 ratios, which carry across
// machines. project/N=100 is the same with trusted project extensions
// (trust hashes of the whole directories, from the cache). Numbers:
// docs/decisions.md.
func BenchmarkExtensionHostScale(b *testing.B) {
	bin := buildBenchExt(b)
	base := map[string]float64{}
	for _, n := range []int{1, 10, 100, -100} {
		project := n < 0 // trusted project extensions: trust hashes from the cache
		n := max(n, -n)
		name := fmt.Sprintf("N=%d", n)
		if project {
			name = fmt.Sprintf("project/N=%d", n)
		}
		b.Run(name, func(b *testing.B) {
			var sum scaleSample
			for i := 0; i < b.N; i++ {
				s := scaleRun(b, bin, n, project)
				sum.startup += s.startup
				sum.cpu += s.cpu
				sum.rss += s.rss
				sum.reload += s.reload
				sum.threads += s.threads
			}
			d := float64(b.N)
			metrics := map[string]float64{
				"startup-ms":   float64(sum.startup.Microseconds()) / 1000 / d,
				"host-cpu-ms":  float64(sum.cpu.Microseconds()) / 1000 / d,
				"idle-rss-MiB": float64(sum.rss) / 1024 / d,
				"reload-ms":    float64(sum.reload.Microseconds()) / 1000 / d,
				"threads":      float64(sum.threads) / d,
			}
			if project {
				delete(metrics, "reload-ms")
			}
			for k, v := range metrics {
				b.ReportMetric(v, k)
			}
			if n == 1 {
				base = metrics
			}
			if n == 100 && !project && len(base) > 0 {
				for _, k := range []string{"startup-ms", "host-cpu-ms", "idle-rss-MiB", "reload-ms"} {
					if base[k] > 0 {
						b.ReportMetric(metrics[k]/base[k], strings.TrimSuffix(strings.TrimSuffix(k, "-ms"), "-MiB")+"-x-N1")
					}
				}
			}
		})
	}
}

type scaleSample struct {
	startup, cpu, reload time.Duration
	rss, threads         int
}

// The timer runs through it: stopped for a whole iteration, the benchmark
// saw no time pass and raised b.N a hundredfold each round (10,000 runs,
// `make bench` without end). ns/op is one whole run; the metrics are
// measured inside it.
func scaleRun(b *testing.B, bin string, n int, project bool) scaleSample {
	// The scripted model calls tool t000 and answers, every prompt.
	e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(), llm: llmtest.New(llmtest.Script{Loop: true, Replies: []llmtest.Reply{
		llmtest.ToolReply("t000", map[string]any{}),
		llmtest.TextReply("ok"),
	}})}
	defer e.llm.Close()
	root := extensions.GlobalRoot(e.home)
	if project {
		root = extensions.ProjectRoot(e.cwd)
	}
	dirs := make([]string, n)
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		dirs[i] = filepath.Join(root, name)
		os.MkdirAll(dirs[i], 0o755)
		copyFile(b, bin, filepath.Join(dirs[i], "benchext"))
		writeBenchManifest(b, dirs[i], name, "v0")
	}
	if project {
		// Trusted earlier, unchanged since: past the cache's 2 s window
		// for fresh files, the start-up only stats them.
		time.Sleep(2100 * time.Millisecond)
		for _, c := range extensions.Discover(e.cwd, e.home, nil) {
			if err := extensions.TrustCandidate(e.home, e.cwd, c); err != nil {
				b.Fatal(err)
			}
		}
	}
	start := time.Now()
	p := e.startRPC(nil)
	pid := p.cmd.Process.Pid
	ask := func() string {
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "go"})
		frames := p.until(isType("done"))
		tr := find(frames, "tool_result")
		if tr == nil {
			b.Fatalf("no tool_result: %v %v\n%s", types(frames), find(frames, "error"), p.errb.String())
		}
		bs, _ := json.Marshal(tr["content"])
		return string(bs)
	}
	if got := ask(); !strings.Contains(got, "v0 t000") {
		b.Fatalf("first answer %s", got)
	}
	var s scaleSample
	s.startup = time.Since(start)
	s.cpu = cpuTime(pid)
	// Starting never blocks: the prompt's first model call is offered
	// the tools registered so far, but its tool call waits for every
	// extension still starting (one may be a guard), so the prompt's
	// last model call lists all N.
	reqs := e.llm.Requests()
	last := string(reqs[len(reqs)-1].Raw)
	for i := range n {
		if !strings.Contains(last, fmt.Sprintf(`"t%03d"`, i)) {
			b.Fatalf("tool t%03d missing from the first prompt's last model request; zot stderr:\n%s", i, p.errb.String())
		}
	}
	time.Sleep(500 * time.Millisecond)
	s.rss = rss(pid)
	s.threads = threads(pid)

	if project { // a changed project extension is untrusted until asked: no reload here
		p.in.Close()
		p.cmd.Wait()
		return s
	}
	// Hot reload of one extension.
	t0 := time.Now()
	writeBenchManifest(b, dirs[0], "t000", "v1")
	for !strings.Contains(ask(), "v1 t000") {
		if time.Since(t0) > 30*time.Second {
			b.Fatal("reload never took effect")
		}
	}
	s.reload = time.Since(t0)
	p.in.Close()
	p.cmd.Wait()
	return s
}

var copyMu sync.Mutex

func copyFile(b testing.TB, src, dst string) {
	copyMu.Lock()
	defer copyMu.Unlock()
	data, err := os.ReadFile(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o755); err != nil {
		b.Fatal(err)
	}
}

func writeBenchManifest(b testing.TB, dir, name, prefix string) {
	m, _ := json.Marshal(map[string]any{"name": name, "version": "1.0.0", "exec": "./benchext", "args": []string{name, prefix}, "language": "go"})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		b.Fatal(err)
	}
}

// threads reads a process's thread count from /proc.
func threads(pid int) int {
	bs, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(bs), "\n") {
		if strings.HasPrefix(line, "Threads:") {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "Threads:")))
			return n
		}
	}
	return 0
}
