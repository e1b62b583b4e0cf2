package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/extensions"
)

// piBenchModules writes n pi extensions as pi's users write them: each a
// .ts module registering a TypeBox tool (pi_tool_N) and a tool_call
// handler. It returns the -e arguments.
func piBenchModules(b *testing.B, n int) []string {
	dir := b.TempDir()
	var args []string
	for i := 1; i <= n; i++ {
		p := filepath.Join(dir, fmt.Sprintf("bench%02d.ts", i))
		src := fmt.Sprintf(`import { Type } from "@sinclair/typebox";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "pi_tool_%d",
		label: "Bench %d",
		description: "Echoes its text",
		parameters: Type.Object({ text: Type.String() }),
		async execute(_id, params: { text: string }) {
			return { content: [{ type: "text", text: "echo %d: " + params.text }], details: {} };
		},
	});
	pi.on("tool_call", async (event) => (event.toolName === "never_called_%d" ? { block: true, reason: "no" } : undefined));
}
`, i, i, i, i)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		args = append(args, "-e", p)
	}
	return args
}

// treeRSS is the resident memory (KiB) of pid and every process under it
// (zot and the extension processes it started), from /proc: total, pid's
// own, and the extensions' — every process in the tree that is not zot's
// binary (zot's supervisor, supervise_linux.go, is zot: it runs for any
// child zot starts, the bash tool's too).
func treeRSS(pid int) (total, own, ext int) {
	children := map[int][]int{}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
		if pp, err := strconv.Atoi(f[1]); err == nil {
			children[pp] = append(children[pp], p)
		}
	}
	own = rss(pid)
	zotExe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	var walk func(int)
	walk = func(p int) {
		r := rss(p)
		total += r
		if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", p)); exe != zotExe {
			ext += r
		}
		for _, c := range children[p] {
			walk(c)
		}
	}
	walk(pid)
	return total, own, ext
}

// BenchmarkRPCPiExtensions20 is the pi target at process level:
// `zot rpc -e` 20 pi extensions (TypeBox tools and tool_call handlers),
// from spawn to the first prompt done — every extension loaded (the
// model is offered all 20 tools) and one of their tools called — and the
// resident memory of zot and every process it started, together, after
// it (targets: ≤ 300 ms, ≤ 60 MB for the extensions: MB-RSS-extensions,
// the processes that are not zot). The default: one Node process hosts
// the 20 extensions, each its own extension to zot, started from the
// runtime's startup snapshot (built in the background by the first
// session, which is not counted).
func BenchmarkRPCPiExtensions20(b *testing.B) {
	benchPiExtensions(b, nil, piBenchModules(b, 20))
}

// BenchmarkRPCPiExtensions20ProcessEach is the same with a Node process
// per extension ($ZOT_PI_PROCESS=each), what the shared process replaced.
func BenchmarkRPCPiExtensions20ProcessEach(b *testing.B) {
	benchPiExtensions(b, []string{extensions.EnvPiProcess + "=each"}, piBenchModules(b, 20))
}

// BenchmarkRPCPiExtensions20OneProcess is the same 20 modules as one pi
// package ("pi".extensions lists them): one extension to zot, so one
// connection and one registration. Against BenchmarkRPCPiExtensions20 it
// measures what keeping each pi extension its own extension costs in the
// shared process (docs/decisions.md).
func BenchmarkRPCPiExtensions20OneProcess(b *testing.B) {
	args := piBenchModules(b, 20)
	dir := filepath.Dir(args[1])
	var entries []string
	for i := 1; i < len(args); i += 2 {
		entries = append(entries, `"./`+filepath.Base(args[i])+`"`)
	}
	pkg := `{"name":"pi-bench","version":"1.0.0","pi":{"extensions":[` + strings.Join(entries, ",") + `]}}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(pkg), 0o644); err != nil {
		b.Fatal(err)
	}
	benchPiExtensions(b, nil, []string{"-e", dir})
}

func benchPiExtensions(b *testing.B, extraEnv, mods []string) {
	const n = 20
	// The first prompt waits for every extension (not the default 2 s
	// bound): the time measured is the time until all 20 serve it.
	rt := append(append(piRuntime(b), "ZOT_EXT_START_WAIT=60s"), extraEnv...)
	var total, cpu time.Duration
	var worstRSS, worstOwn, worstExt int
	// Session -1 is not counted: it fills the loader's transform cache
	// (~/.cache/zot/pi-sucrase) and builds the runtime's startup snapshot
	// (~/.cache/zot/pi-snapshot), as any session after the modules were
	// written has them.
	for i := -1; i < b.N; i++ {
		e := &env{t: b, home: b.TempDir(), cwd: b.TempDir(), llm: llmtest.New(llmtest.Script{Replies: []llmtest.Reply{
			llmtest.ToolReply(fmt.Sprintf("pi_tool_%d", n), map[string]any{"text": "hi"}),
			llmtest.TextReply("done"),
		}})}
		start := time.Now()
		p := e.startRPC(rt, mods...)
		p.send(map[string]any{"id": "1", "type": "prompt", "message": "echo hi"})
		frames := p.until(isType("done"))
		took := time.Since(start)
		if tr := find(frames, "tool_result"); tr == nil || tr["is_error"] != false || !strings.Contains(toJSON(tr), fmt.Sprintf("echo %d: hi", n)) {
			b.Fatalf("tool_result: %v (%v)\nstderr: %s", tr, types(frames), p.errb.String())
		}
		reqs := e.llm.Requests()
		if len(reqs) == 0 {
			b.Fatal("no model request")
		}
		offered := 0
		tools, _ := reqs[0].Body["tools"].([]any)
		for _, t := range tools {
			if m, ok := t.(map[string]any); ok && strings.HasPrefix(fmt.Sprint(m["name"]), "pi_tool_") {
				offered++
			}
		}
		if offered != n {
			b.Fatalf("the first model call was offered %d pi tools, want %d (not every extension had loaded)", offered, n)
		}
		tot, own, ext := treeRSS(p.cmd.Process.Pid)
		p.in.Close()
		p.cmd.Wait()
		e.llm.Close()
		if i < 0 {
			if !slices.Contains(rt, extensions.EnvPiSnapshot+"=off") {
				waitPiSnapshot(b, filepath.Join(e.home, "logs", "pi-runtime.log"))
			}
			continue
		}
		total += took
		worstRSS, worstOwn, worstExt = max(worstRSS, tot), max(worstOwn, own), max(worstExt, ext)
		// zot's CPU and its reaped children's (the Node processes): on a
		// loaded machine the wall time above is mostly waiting for a core.
		cpu += p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N)/1000, "ms/spawn-to-first-prompt-done")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N)/1000, "cpu-ms/session")
	b.ReportMetric(float64(worstRSS)/1024, "MB-RSS-total")
	b.ReportMetric(float64(worstOwn)/1024, "MB-RSS-zot")
	b.ReportMetric(float64(worstExt)/1024, "MB-RSS-extensions")
}

// waitPiSnapshot waits until the session that logged to log has the pi
// runtime's startup snapshot in place: built by it, or there before (its
// runtime started from one).
func waitPiSnapshot(b *testing.B, log string) {
	deadline := time.Now().Add(60 * time.Second)
	for {
		text, _ := os.ReadFile(log)
		switch {
		case strings.Contains(string(text), "--snapshot-blob"), strings.Contains(string(text), "built the pi runtime's startup snapshot"):
			return
		case strings.Contains(string(text), "cannot build the pi runtime's startup snapshot"):
			b.Logf("no startup snapshot: %s", text)
			return
		case time.Now().After(deadline):
			b.Fatalf("the pi runtime's startup snapshot was not built within 60 s; its log:\n%s", text)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
