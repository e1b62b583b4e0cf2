package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/tools"
)

// BenchmarkToolRoundTrip: host → tool_call → extension → tool_result →
// host, schema validation included.
func BenchmarkToolRoundTrip(b *testing.B) {
	e := newEnv(b)
	e.global("bench", "-tools", "echo")
	h := e.start(nil)
	tool := toolNamed(h, "echo")
	call := tools.Call{ID: "b", Args: json.RawMessage(`{"text":"ping"}`), Progress: func(string) {}}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := tool.Run(ctx, call); r.IsError {
			b.Fatal(resultText(r))
		}
	}
}

// BenchmarkStartup10: Start with 10 extensions (spawned in parallel)
// until every one is ready.
func BenchmarkStartup10(b *testing.B) {
	e := newEnv(b)
	for i := 0; i < 10; i++ {
		e.global(fmt.Sprintf("ext%02d", i), "-tools", fmt.Sprintf("t%02d", i), "-cmds", fmt.Sprintf("c%02d", i))
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h := NewHost(e.opts())
		if err := h.Start(ctx); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if n := len(h.Tools()); n != 10 {
			b.Fatalf("%d tools ready", n)
		}
		h.Close(ctx)
		b.StartTimer()
	}
}

// BenchmarkReloadLatency: save (rewrite extension.json) → the new
// version's tool answers; debounce (100 ms) included.
func BenchmarkReloadLatency(b *testing.B) {
	e := newEnv(b)
	dir := e.global("hot", "-tools", "echo", "-prefix", "v0")
	e.global("other", "-tools", "other")
	h := e.start(func(o *Options) { o.Watch = true })
	ctx := context.Background()
	call := tools.Call{ID: "b", Args: json.RawMessage(`{"text":"x"}`), Progress: func(string) {}}
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		want := fmt.Sprintf("v%d: x", i)
		writeExt(b, dir, "hot", nil, "-tools", "echo", "-prefix", fmt.Sprintf("v%d", i))
		deadline := time.Now().Add(wait)
		for {
			if t := toolNamed(h, "echo"); t != nil {
				if r := t.Run(ctx, call); resultText(r) == want {
					break
				}
			}
			if time.Now().After(deadline) {
				b.Fatalf("reload %d never became callable; status %+v", i, statusOf(h, "hot"))
			}
			time.Sleep(time.Millisecond)
		}
	}
	b.StopTimer()
}
