package extensions

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/internal/testenv"
)

// BenchmarkPiToolRoundTrip: a pi extension's tool (TypeBox parameters,
// run by the real pi runtime in its Node process) called through the
// host: validate → tool_call → the runtime → execute → tool_result. The
// tool measures its own execute (process.hrtime) and returns it; what is
// left of the round trip is the host's and the runtime's time over the
// extension's own (target: ≤ 1 ms).
func BenchmarkPiToolRoundTrip(b *testing.B) {
	testenv.NeedCommand(b, "node", "pi extensions")
	_, file, _, _ := runtime.Caller(0)
	rt := filepath.Join(filepath.Dir(file), "pi", "runtime")
	if _, err := os.Stat(filepath.Join(rt, "node_modules", "jiti")); err != nil {
		testenv.Skip(b, "the pi runtime's node_modules are not installed (make pi-runtime)")
	}
	b.Setenv(EnvPiRuntime, rt)
	mod := filepath.Join(b.TempDir(), "echo.ts")
	os.WriteFile(mod, []byte(`import { Type } from "@sinclair/typebox";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";

export default function (pi: ExtensionAPI) {
	pi.registerTool({
		name: "pi_echo",
		label: "Echo",
		description: "Echoes its text",
		parameters: Type.Object({ text: Type.String() }),
		async execute(_id, params: { text: string }) {
			const t0 = process.hrtime.bigint();
			const text = "echo: " + params.text;
			const own = process.hrtime.bigint() - t0;
			return { content: [{ type: "text", text: text + " own=" + own }], details: {} };
		},
	});
}
`), 0o644)
	e := newEnv(b)
	o := e.opts()
	o.ExtPaths = []string{mod}
	h := NewHost(o)
	h.SetActions(fakeActions{}) // a front's: the runtime reads the session before a call
	sctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := h.Start(sctx); err != nil {
		b.Fatal(err)
	}
	defer h.Close(context.Background())
	// What a front's runtime sends first: pi's extensions run nothing
	// before their session_start.
	h.Observe(agent.Lifecycle{Event: "session_start", Reason: "startup"})
	tool := toolNamed(h, "pi_echo")
	if tool == nil {
		b.Fatalf("no pi_echo tool: %+v", h.Status())
	}
	call := tools.Call{ID: "b", Args: json.RawMessage(`{"text":"ping"}`), Progress: func(string) {}}
	run := func() (time.Duration, time.Duration) {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		start := time.Now()
		r := tool.Run(ctx, call)
		total := time.Since(start)
		text := resultText(r)
		i := strings.LastIndex(text, " own=")
		if r.IsError || i < 0 {
			b.Fatalf("pi_echo: %q", text)
		}
		own, err := strconv.ParseInt(text[i+len(" own="):], 10, 64)
		if err != nil {
			b.Fatalf("pi_echo: %q", text)
		}
		return total, time.Duration(own)
	}
	for i := 0; i < 20; i++ {
		run() // warm up (JIT, the first calls' allocations)
	}
	var over []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		total, own := run()
		over = append(over, total-own)
	}
	b.StopTimer()
	var sum time.Duration
	for _, d := range over {
		sum += d
	}
	b.ReportMetric(float64(sum.Microseconds())/float64(len(over)), "µs-host/round-trip")
}
