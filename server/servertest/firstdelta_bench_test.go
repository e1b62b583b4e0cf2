package servertest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

// BenchmarkFirstDelta times zot's own share of Enter → first token: from
// sending zot/prompt to the model request arriving at the scripted model
// (prompt-to-request-ms: the prompt path, request building, the system
// prompt), and from the first byte of the model's stream to the first
// text_delta at the editor (byte-to-delta-ms). The model's own latency
// (request arrival → first byte written) is model-ms; first-delta-ms is
// the whole, and overhead-ms = first-delta-ms − model-ms, zot's share
// (issue 37: ≤ 2 ms). The workspace has an AGENTS.md and a skill, as a
// user's does. Medians over b.N prompts after three warm-ups.
//
// ZOT_BENCH_MODEL_MS=N gives the model N ms of latency before its first
// byte (counted in model-ms, not zot's): a real model's. The checkpoint
// zot records beside the model request then ends before the answer
// comes; with no latency (the default) its git runs while the answer
// streams, on the same cores.
func BenchmarkFirstDelta(b *testing.B) {
	var modelDelay time.Duration
	if v := os.Getenv("ZOT_BENCH_MODEL_MS"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms < 0 {
			b.Fatalf("ZOT_BENCH_MODEL_MS=%q: give a whole number of milliseconds", v)
		}
		modelDelay = time.Duration(ms) * time.Millisecond
	}
	llm := llmtest.New(llmtest.Script{Replies: []llmtest.Reply{{Deltas: []string{"Hi", " there."}}}, Loop: true})
	defer llm.Close()
	var mu sync.Mutex
	var reqAt, byteAt time.Time
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasSuffix(r.URL.Path, "/messages") {
			llm.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		reqAt = time.Now()
		mu.Unlock()
		if modelDelay > 0 {
			time.Sleep(modelDelay) // the model's latency, not a wait for an event
		}
		llm.ServeHTTP(&firstWrite{ResponseWriter: w, at: func() {
			mu.Lock()
			byteAt = time.Now()
			mu.Unlock()
		}}, r)
	}))
	defer front.Close()

	home, root := b.TempDir(), b.TempDir()
	if err := os.WriteFile(root+"/AGENTS.md", []byte("# Rules\n\nBe brief.\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	skill := root + "/.zot/skills/hello"
	if err := os.MkdirAll(skill, 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(skill+"/SKILL.md", []byte("---\nname: hello\ndescription: says hello\n---\nSay hello.\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "ANTHROPIC_") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "ZOT") {
			env = append(env, kv)
		}
	}
	env = append(env, "ZOT_HOME="+home)
	if p := os.Getenv("ZOT_BENCH_CPUPROFILE"); p != "" {
		env = append(env, "ZOT_CPUPROFILE="+p)
	}
	ed := servertest.Start(b, servertest.Config{Bin: zotBin, Env: env, Root: root, NoProgress: true,
		Args: append([]string{"--api-key", "k", "--base-url", front.URL}, benchExtArgs(b)...)})

	var first time.Time
	gotFirst := make(chan struct{}, 1)
	done := make(chan struct{}, 1)
	ed.SetNotifyHook(func(method string, params []byte) bool {
		if method != "zot/event" {
			return true
		}
		switch {
		case bytes.Contains(params, []byte(`"type":"text_delta"`)):
			mu.Lock()
			if first.IsZero() {
				first = time.Now()
				gotFirst <- struct{}{}
			}
			mu.Unlock()
		case bytes.Contains(params, []byte(`"type":"done"`)):
			done <- struct{}{}
		}
		return false
	})
	ed.Initialize(nil)

	wait := func(ch chan struct{}, what string) {
		select {
		case <-ch:
		case <-time.After(servertest.WaitTimeout):
			b.Fatalf("no %s within %v", what, servertest.WaitTimeout)
		}
	}
	var toReq, model, toDelta, whole []time.Duration
	const warm = 3
	b.ResetTimer()
	for i := 0; i < b.N+warm; i++ {
		if i%20 == 0 {
			ed.MustCall("zot/clear", nil, nil)
		}
		mu.Lock()
		first = time.Time{}
		mu.Unlock()
		start := time.Now()
		ed.Go("zot/prompt", map[string]any{"text": fmt.Sprintf("say hi %d", i)})
		wait(gotFirst, "first text_delta")
		wait(done, "done")
		if i < warm {
			continue
		}
		mu.Lock()
		toReq = append(toReq, reqAt.Sub(start))
		model = append(model, byteAt.Sub(reqAt))
		toDelta = append(toDelta, first.Sub(byteAt))
		whole = append(whole, first.Sub(start))
		mu.Unlock()
	}
	b.StopTimer()
	med := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2]) / 1e6
	}
	b.ReportMetric(med(toReq), "prompt-to-request-ms")
	b.ReportMetric(med(model), "model-ms")
	b.ReportMetric(med(toDelta), "byte-to-delta-ms")
	b.ReportMetric(med(whole), "first-delta-ms")
	b.ReportMetric(med(whole)-med(model), "overhead-ms")
	ed.Shutdown()
}

// firstWrite calls at once, on the first Write: the model's first byte.
type firstWrite struct {
	http.ResponseWriter
	at   func()
	seen bool
}

func (f *firstWrite) Write(p []byte) (int, error) {
	if !f.seen {
		f.seen = true
		f.at()
	}
	return f.ResponseWriter.Write(p)
}

func (f *firstWrite) Flush() {
	if fl, ok := f.ResponseWriter.(http.Flusher); ok {
		fl.Flush()
	}
}

var _ io.Writer = (*firstWrite)(nil)

// benchExtArgs: ZOT_BENCH_EXT=DIR loads that extension (the editors' e2e
// runs load the todo example); ZOT_BENCH_ZOT_ARGS (a JSON array, as
// bench-editors takes it, e.g. '["--no-checkpoints"]') adds zot's own.
func benchExtArgs(b *testing.B) []string {
	var args []string
	if d := os.Getenv("ZOT_BENCH_EXT"); d != "" {
		args = append(args, "--ext", d)
	}
	if v := os.Getenv("ZOT_BENCH_ZOT_ARGS"); v != "" {
		var more []string
		if err := json.Unmarshal([]byte(v), &more); err != nil {
			b.Fatalf("ZOT_BENCH_ZOT_ARGS=%q: give a JSON array of strings (%v)", v, err)
		}
		args = append(args, more...)
	}
	return args
}
