package servertest_test

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// BenchmarkCodeActionList lists zot's code actions in a 10,000-line open
// buffer through the real `zot lsp` (the round trip an editor waits for,
// pipes included): at the cursor with a diagnostic, and on a selection of
// the whole file (every line looked at for an instruction). The goal is
// ≤ 5 ms (README, "Any LSP editor"); ms/op is the mean, p99-ms the 99th
// percentile.
func BenchmarkCodeActionList(b *testing.B) {
	const lines = 10_000
	var src strings.Builder
	src.WriteString("package big\n\n")
	for i := 2; i < lines; i++ {
		switch {
		case i == lines/2:
			src.WriteString("\t// zot: make this loop iterate backwards\n")
		case i%10 == 0:
			fmt.Fprintf(&src, "func f%d(x int) int {\n", i)
		case i%10 == 9:
			src.WriteString("}\n")
		default:
			fmt.Fprintf(&src, "\tx += %d // a line of ordinary code, with a comment\n", i)
		}
	}
	text := src.String()
	diag := map[string]any{"range": lspRange(lines/2+1, 1, lines/2+1, 2), "severity": 1, "source": "vet", "message": "x declared and not used"}
	for _, c := range []struct {
		name string
		rng  map[string]any
		want string
	}{
		{"cursor", lspRange(lines/2, 4, lines/2, 4), "zot: run this instruction"},
		{"whole-file", lspRange(0, 0, lines, 0), "zot: run this instruction"},
	} {
		b.Run(c.name, func(b *testing.B) {
			llm := llmtest.New(llmtest.Script{})
			defer llm.Close()
			var env []string
			for _, kv := range os.Environ() {
				if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ZOT") {
					env = append(env, kv)
				}
			}
			env = append(env, "ZOT_HOME="+b.TempDir())
			ed := servertest.Start(b, servertest.Config{Bin: zotBin, Env: env, Root: b.TempDir(), Plain: true, NoProgress: true,
				Args: []string{"--api-key", "k", "--base-url", llm.URL(), "--no-session"}})
			ed.Initialize(nil)
			ed.Open("big.go", text)
			params := map[string]any{"textDocument": map[string]any{"uri": ed.URI("big.go")}, "range": c.rng,
				"context": map[string]any{"diagnostics": []any{diag}}}
			var acts []codeAction
			ed.MustCall("textDocument/codeAction", params, &acts) // warm up; and check the answer
			if len(acts) == 0 || acts[0].Title != c.want {
				b.Fatalf("actions: %q", titles(acts))
			}
			took := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				ed.MustCall("textDocument/codeAction", params, nil)
				took = append(took, time.Since(start))
			}
			b.StopTimer()
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			var sum time.Duration
			for _, d := range took {
				sum += d
			}
			b.ReportMetric(float64(sum.Microseconds())/float64(len(took))/1000, "ms/op")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "p99-ms")
			if n := modelPosts(llm); n != 0 {
				b.Fatalf("listing made %d model requests", n)
			}
		})
	}
}
