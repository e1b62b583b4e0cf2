package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/zot-editors/zot/extensions"
)

// BenchmarkEarlyReady counts early-ready declarations: an extension that
// sends ready (the benchmark's Go SDK extension, which declares "ready" in
// hello) but was declared ready before it (by silence or the hello
// budget), or whose tool was missing when the host's start returned. It
// runs `zot ext list --probe --json` (the real host starting every
// extension and waiting for each to be ready) over N=100 global
// extensions until ZOT_EARLY_READY_STARTS extension starts are done
// (200 in `make bench`), with every core kept busy by a spinning shell,
// and fails on any early one. The count, 2,000 starts, takes
// minutes:
//
//	make early-ready
//
// Numbers: docs/decisions.md.
func BenchmarkEarlyReady(b *testing.B) {
	t := b
	target, _ := strconv.Atoi(os.Getenv("ZOT_EARLY_READY_STARTS"))
	if target <= 0 {
		target = 200
	}
	const n = 100
	bin := buildBenchExt(t)
	e := &env{t: t, home: t.TempDir(), cwd: t.TempDir()}
	root := extensions.GlobalRoot(e.home)
	for i := range n {
		name := fmt.Sprintf("t%03d", i)
		dir := filepath.Join(root, name)
		os.MkdirAll(dir, 0o755)
		copyFile(t, bin, filepath.Join(dir, "benchext"))
		writeBenchManifest(t, dir, name, "v0")
	}
	busyCores(t)

	starts, early := 0, 0
	for launch := 0; starts < target; launch++ {
		os.RemoveAll(filepath.Join(e.home, "logs"))
		cmd := exec.Command(zotBin, "ext", "list", "--probe", "--json")
		cmd.Env = e.environ()
		cmd.Dir = e.cwd
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("launch %d: %v\n%s", launch, err, out)
		}
		var sts []extensions.Status
		if err := json.Unmarshal(out, &sts); err != nil || len(sts) != n {
			t.Fatalf("launch %d: %d statuses (%v)\n%s", launch, len(sts), err, out)
		}
		for _, s := range sts {
			starts++
			if s.State != extensions.StateReady {
				t.Fatalf("launch %d: %s is %s: %s", launch, s.Name, s.State, s.Reason)
			}
			if len(s.Tools) != 1 || strings.Contains(strings.Join(s.Diagnostics, "\n"), "no ready frame") {
				early++
				t.Logf("launch %d: %s declared ready early: tools %v, diagnostics %v", launch, s.Name, s.Tools, s.Diagnostics)
			}
		}
		t.Logf("launch %d: %d starts, %d early-ready so far (load %s)", launch, starts, early, loadAvg())
	}
	t.Logf("%d early-ready declarations in %d starts at N=%d with %d cores busy", early, starts, n, runtime.NumCPU())
	b.ReportMetric(float64(starts), "starts")
	b.ReportMetric(float64(early), "early-ready")
	if early > 0 {
		t.Errorf("%d early-ready declarations in %d starts", early, starts)
	}
}

// buildBenchExt builds testdata/benchext, the one-tool Go SDK extension.
func buildBenchExt(t testing.TB) string {
	bin := filepath.Join(t.TempDir(), "benchext")
	build := exec.Command("go", "build", "-o", bin, "./testdata/benchext")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		t.Fatal(err)
	}
	return bin
}

// busyCores keeps every core busy with a spinning shell until the test
// ends.
func busyCores(t testing.TB) {
	for range runtime.NumCPU() {
		spin := exec.Command("sh", "-c", "while :; do :; done")
		if err := spin.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			spin.Process.Kill()
			spin.Wait()
		})
	}
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}
