package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/tools"
	"github.com/zot-editors/zot/extensions"
	"github.com/zot-editors/zot/extensions/mcp"
	"github.com/zot-editors/zot/internal/mcptest"
	"github.com/zot-editors/zot/internal/proctest"
)

// wait is generous: the machine running the tests may be very busy.
const wait = 90 * time.Second

type env struct {
	t         *testing.T
	home, cwd string
	h         *mcp.Host
}

func configs(t *testing.T, cwd, doc string) []mcp.ServerConfig {
	t.Helper()
	cs, err := mcp.Parse([]byte(doc), "test.json", mcp.ScopeUser, cwd, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func start(t *testing.T, doc string, tweak ...func(*mcp.Options)) *env {
	t.Helper()
	e := &env{t: t, home: t.TempDir(), cwd: t.TempDir()}
	o := mcp.Options{Cwd: e.cwd, Home: e.home, Servers: configs(t, e.cwd, doc), StartTimeout: wait,
		RestartBackoff: []time.Duration{50 * time.Millisecond}}
	for _, f := range tweak {
		f(&o)
	}
	e.h = mcp.NewHost(o)
	e.h.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := e.h.Close(ctx); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return e
}

// state waits until server name is in state want and returns its status.
func (e *env) state(name, want string) mcp.Status {
	e.t.Helper()
	deadline := time.Now().Add(wait)
	var last mcp.Status
	for time.Now().Before(deadline) {
		for _, st := range e.h.Status() {
			if st.Name == name {
				last = st
				if st.State == want {
					return st
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatalf("server %s: state %q, want %q (last error %q)", name, last.State, want, last.LastError)
	return last
}

func (e *env) tool(name string) tools.Tool {
	e.t.Helper()
	var have []string
	for _, tl := range e.h.Tools() {
		if tl.Name() == name {
			return tl
		}
		have = append(have, tl.Name())
	}
	e.t.Fatalf("no tool %s; have %v", name, have)
	return nil
}

func run(t *testing.T, tl tools.Tool, args string) (tools.Result, []string) {
	t.Helper()
	var mu sync.Mutex
	var progress []string
	res := tl.Run(context.Background(), tools.Call{ID: "c1", Args: json.RawMessage(args), Progress: func(s string) {
		mu.Lock()
		progress = append(progress, s)
		mu.Unlock()
	}})
	return res, progress
}

func everything(t *testing.T) string {
	return fmt.Sprintf(`{"mcpServers": {"everything": {"command": %q, "args": ["stdio"]}}}`, mcptest.Bin(t, "mcp-server-everything"))
}

func TestEverythingOverStdio(t *testing.T) {
	e := start(t, everything(t))
	st := e.state("everything", mcp.StateReady)
	if st.PID == 0 || st.Transport != "stdio" || len(st.Tools) < 5 {
		t.Fatalf("status %+v", st)
	}
	echo := e.tool("mcp__everything__echo")
	if !strings.Contains(string(echo.Schema()), `"message"`) || echo.Description() == "" {
		t.Fatalf("echo schema %s, description %q", echo.Schema(), echo.Description())
	}
	if ro, ok := echo.(interface{ ReadOnly() bool }); !ok || !ro.ReadOnly() {
		t.Fatal("echo is readOnlyHint: true")
	}
	if ro := e.tool("mcp__everything__toggle-simulated-logging").(interface{ ReadOnly() bool }); ro.ReadOnly() {
		t.Fatal("toggle-simulated-logging is not read-only")
	}

	// Logging notifications (deprecated in MCP; zot reads stderr) do
	// not disturb the session.
	res, _ := run(t, e.tool("mcp__everything__toggle-simulated-logging"), `{}`)
	if res.IsError || !strings.Contains(message.TextOf(res.Content), "logging") {
		t.Fatalf("toggle-simulated-logging: %+v", res)
	}
	res, _ = run(t, echo, `{"message":"hi there"}`)
	if res.IsError || !strings.Contains(message.TextOf(res.Content), "hi there") {
		t.Fatalf("echo: %+v", res)
	}
	// The workspace is the client's one root.
	res, _ = run(t, e.tool("mcp__everything__get-roots-list"), `{}`)
	if txt := message.TextOf(res.Content); res.IsError || !strings.Contains(txt, "file://"+filepath.ToSlash(e.cwd)) {
		t.Fatalf("get-roots-list: %+v", res)
	}
	res, _ = run(t, e.tool("mcp__everything__get-sum"), `{"a": 2, "b": 40}`)
	if res.IsError || !strings.Contains(message.TextOf(res.Content), "42") {
		t.Fatalf("get-sum: %+v", res)
	}
	res, _ = run(t, e.tool("mcp__everything__get-tiny-image"), `{}`)
	var img *message.Content
	for i := range res.Content {
		if res.Content[i].Type == message.TypeImage {
			img = &res.Content[i]
		}
	}
	if res.IsError || img == nil || img.MimeType != "image/png" || len(img.Data) < 20 {
		t.Fatalf("get-tiny-image: %+v", res)
	}
	res, _ = run(t, e.tool("mcp__everything__get-structured-content"), `{"location": "Chicago"}`)
	if txt := message.TextOf(res.Content); res.IsError || !strings.Contains(txt, "temperature") {
		t.Fatalf("get-structured-content: %+v", res)
	}
	res, _ = run(t, e.tool("mcp__everything__get-sum"), `{"a": "not a number"}`)
	if !res.IsError {
		t.Fatalf("get-sum with a bad argument must be an error: %+v", res)
	}
	res, progress := run(t, e.tool("mcp__everything__trigger-long-running-operation"), `{"duration": 1, "steps": 3}`)
	if res.IsError || !strings.Contains(message.TextOf(res.Content), "completed") {
		t.Fatalf("long-running: %+v", res)
	}
	// The last notification may lose the race with the result.
	if p := strings.Join(progress, ","); !strings.HasPrefix(p, "1/3,2/3") {
		t.Fatalf("progress %q", progress)
	}
}

func TestEverythingOverStreamableHTTP(t *testing.T) {
	url := mcptest.EverythingHTTP(t)
	e := start(t, fmt.Sprintf(`{"mcpServers": {"remote": {"type": "http", "url": %q, "headers": {"X-Test": "1"}}}}`, url))
	st := e.state("remote", mcp.StateReady)
	if st.Transport != "http" || st.PID != 0 {
		t.Fatalf("status %+v", st)
	}
	res, progress := run(t, e.tool("mcp__remote__trigger-long-running-operation"), `{"duration": 1, "steps": 3}`)
	// The last notification may lose the race with the result.
	if res.IsError || len(progress) < 2 || progress[0] != "1/3" {
		t.Fatalf("long-running over http: %+v, progress %q", res, progress)
	}
	res, _ = run(t, e.tool("mcp__remote__echo"), `{"message":"over http"}`)
	if res.IsError || !strings.Contains(message.TextOf(res.Content), "over http") {
		t.Fatalf("echo: %+v", res)
	}
}

// The legacy HTTP+SSE transport (GET /sse, then POSTs to the endpoint it
// names), as old servers still speak it.
func TestEverythingOverLegacySSE(t *testing.T) {
	url := mcptest.EverythingSSE(t)
	e := start(t, fmt.Sprintf(`{"mcpServers": {"old": {"type": "sse", "url": %q}}}`, url))
	st := e.state("old", mcp.StateReady)
	if st.Transport != "sse" || st.PID != 0 || len(st.Tools) == 0 {
		t.Fatalf("status %+v", st)
	}
	res, _ := run(t, e.tool("mcp__old__echo"), `{"message":"over sse"}`)
	if res.IsError || !strings.Contains(message.TextOf(res.Content), "over sse") {
		t.Fatalf("echo: %+v", res)
	}
	res, progress := run(t, e.tool("mcp__old__trigger-long-running-operation"), `{"duration": 1, "steps": 3}`)
	// The last notification may lose the race with the result.
	if res.IsError || len(progress) < 2 || progress[0] != "1/3" {
		t.Fatalf("long-running over sse: %+v, progress %q", res, progress)
	}
}

func TestAbortEndsTheCallAtOnceAndCancelsOnTheServer(t *testing.T) {
	marker := filepath.Join(t.TempDir(), "cancelled")
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q, "env": {"FAKEMCP_CANCELLED": %q}}}}`, mcptest.Fake(t), marker))
	e.state("f", mcp.StateReady)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tools.Result, 1)
	go func() {
		done <- e.tool("mcp__f__slow").Run(ctx, tools.Call{ID: "x", Args: json.RawMessage(`{}`), Progress: func(string) {}})
	}()
	// Cancel once the call is on the server: before, there is nothing
	// there to cancel.
	awaitMarker(t, marker, "started", "the call never reached the server")
	cancel()
	res := <-done
	if !res.IsError || !strings.Contains(message.TextOf(res.Content), "cancelled") {
		t.Fatalf("aborted call: %+v", res)
	}
	awaitMarker(t, marker, "cancelled", "the server never saw notifications/cancelled")
}

// awaitMarker waits until the fake server wrote want to path.
func awaitMarker(t *testing.T, path, want, failure string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		if b, _ := os.ReadFile(path); string(b) == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal(failure)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCallTimeout(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q, "timeout": 0.3}}}`, mcptest.Fake(t)))
	e.state("f", mcp.StateReady)
	res, _ := run(t, e.tool("mcp__f__slow"), `{}`)
	if txt := message.TextOf(res.Content); !res.IsError || !strings.Contains(txt, "timed out after 300ms") || !strings.Contains(txt, `"timeout"`) {
		t.Fatalf("timed-out call: %+v", res)
	}
}

func TestToolListChanged(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q}}}`, mcptest.Fake(t)))
	e.state("f", mcp.StateReady)
	for _, tl := range e.h.Tools() {
		if tl.Name() == "mcp__f__added" {
			t.Fatal("added exists before add_tool")
		}
	}
	run(t, e.tool("mcp__f__add_tool"), `{}`)
	deadline := time.Now().Add(wait)
	for {
		found := false
		for _, tl := range e.h.Tools() {
			found = found || tl.Name() == "mcp__f__added"
		}
		if found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("notifications/tools/list_changed did not bring the new tool")
		}
		time.Sleep(20 * time.Millisecond)
	}
	res, _ := run(t, e.tool("mcp__f__added"), `{}`)
	if message.TextOf(res.Content) != "I was added" {
		t.Fatalf("added: %+v", res)
	}
}

func TestServerExitingAtStartFailsWithItsStderr(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q, "env": {"FAKEMCP_MODE": "exit"}}}}`, mcptest.Fake(t)))
	st := e.state("f", mcp.StateFailed)
	if !strings.Contains(st.LastError, "missing DATABASE_URL") || st.Restarts != 2 {
		t.Fatalf("status %+v (one restart allowed, then failed, with the server's stderr)", st)
	}
	if len(e.h.Tools()) != 0 {
		t.Fatal("a failed server offers no tools")
	}
	b, _ := os.ReadFile(filepath.Join(e.home, "logs", "mcp-f.log"))
	if !strings.Contains(string(b), "missing DATABASE_URL") {
		t.Fatalf("log:\n%s", b)
	}
}

func TestServerHangingInInitialize(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q, "env": {"FAKEMCP_MODE": "hang"}}}}`, mcptest.Fake(t)),
		func(o *mcp.Options) { o.StartTimeout = time.Second; o.RestartBackoff = []time.Duration{} })
	st := e.state("f", mcp.StateFailed)
	if !strings.Contains(st.LastError, "no answer to initialize within 1s") {
		t.Fatalf("status %+v", st)
	}
}

// An SSE server that opens its stream and never names its endpoint: the
// start timeout still ends the connect (the stream's context outlives
// connect only once connected).
func TestSSEServerSilentAfterConnect(t *testing.T) {
	held := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-held:
		}
	}))
	defer srv.Close()
	defer close(held)
	e := start(t, fmt.Sprintf(`{"mcpServers": {"old": {"type": "sse", "url": %q}}}`, srv.URL+"/sse"),
		func(o *mcp.Options) { o.StartTimeout = time.Second; o.RestartBackoff = []time.Duration{} })
	st := e.state("old", mcp.StateFailed)
	if !strings.Contains(st.LastError, "no answer to initialize within 1s") {
		t.Fatalf("status %+v", st)
	}
}

func TestCrashMidCallRestarts(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q}}}`, mcptest.Fake(t)),
		func(o *mcp.Options) { o.RestartBackoff = []time.Duration{3 * time.Second} })
	pid := e.state("f", mcp.StateReady).PID
	crash := e.tool("mcp__f__crash")
	res, _ := run(t, crash, `{}`)
	if !res.IsError || !strings.Contains(message.TextOf(res.Content), "exited during the call") {
		t.Fatalf("crashing call: %+v", res)
	}
	st := e.state("f", mcp.StateRestarting)
	if !strings.Contains(st.LastError, "crashing on purpose") {
		t.Fatalf("status %+v", st)
	}
	proctest.WaitGone(t, pid, "the crashed server")
	res, _ = run(t, e.tool("mcp__f__write"), `{}`)
	if !res.IsError || !strings.Contains(message.TextOf(res.Content), "MCP server f is restarting") {
		t.Fatalf("a call while restarting: %+v", res)
	}
	st = e.state("f", mcp.StateReady)
	if st.PID == pid || st.Restarts != 1 {
		t.Fatalf("after the restart: %+v", st)
	}
	res, _ = run(t, e.tool("mcp__f__write"), `{"k":1}`)
	if res.IsError || message.TextOf(res.Content) != `written: {"k":1}` {
		t.Fatalf("after the restart: %+v", res)
	}
}

func TestUntrustedProjectServerDoesNotRun(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	marker := filepath.Join(t.TempDir(), "ran")
	// The "server" would leave a marker if it ran.
	doc := fmt.Sprintf(`{"mcpServers": {"p": {"command": "sh", "args": ["-c", "touch %s"]}}}`, marker)
	if err := os.WriteFile(filepath.Join(ws, ".mcp.json"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cfgs, errs := mcp.Load(mcp.Sources{Home: home, Cwd: ws}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	asked := make(chan mcp.TrustRequest, 1)
	h := mcp.NewHost(mcp.Options{Cwd: ws, Home: home, Servers: cfgs, AskTrust: func(ctx context.Context, r mcp.TrustRequest) bool {
		asked <- r
		return false
	}})
	h.Start()
	defer h.Close(context.Background())
	var r mcp.TrustRequest
	select {
	case r = <-asked:
	case <-time.After(wait):
		t.Fatalf("the untrusted project server was not asked about: %+v", h.Status())
	}
	if r.Name != "p" || !strings.Contains(r.CommandLine, "touch") || !strings.HasSuffix(r.File, ".mcp.json") {
		t.Fatalf("trust request %+v", r)
	}
	st := h.Status()[0]
	if st.State != mcp.StateUntrusted || !strings.Contains(st.LastError, "zot mcp trust p") {
		t.Fatalf("status %+v", st)
	}
	if err := h.Restart(context.Background(), "p"); err == nil || !strings.Contains(err.Error(), "not trusted") {
		t.Fatalf("restart of an untrusted server: %v", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the untrusted server ran")
	}
	// Trust is recorded in the extensions' store, against the entry's hash.
	if err := h.Trust("p"); err != nil {
		t.Fatal(err)
	}
	if !extensions.IsTrusted(home, ws, cfgs[0].TrustKey(), cfgs[0].TrustHash()) {
		t.Fatal("trust not recorded")
	}
	deadline := time.Now().Add(wait)
	for {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the trusted server never ran")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestCloseLeavesNoProcess(t *testing.T) {
	e := start(t, everything(t))
	pid := e.state("everything", mcp.StateReady).PID
	if err := e.h.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, pid, "server-everything")
	if st := e.h.Status()[0]; st.State != mcp.StateStopped {
		t.Fatalf("after Close: %+v", st)
	}
}

func TestRestart(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q}}}`, mcptest.Fake(t)))
	pid := e.state("f", mcp.StateReady).PID
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := e.h.Restart(ctx, "f"); err != nil {
		t.Fatal(err)
	}
	st := e.state("f", mcp.StateReady)
	if st.PID == pid {
		t.Fatal("the server was not restarted")
	}
	proctest.WaitGone(t, pid, "the old server")
}

func TestSessionServers(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q}}}`, mcptest.Fake(t)))
	e.state("f", mcp.StateReady)
	set, err := e.h.AddSessionServers(configs(t, e.cwd, fmt.Sprintf(`{"mcpServers": {"g": {"command": %q}}}`, mcptest.Fake(t))))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(wait)
	for len(set.Status()) != 1 || set.Status()[0].State != mcp.StateReady {
		if time.Now().After(deadline) {
			t.Fatalf("session server: %+v", set.Status())
		}
		time.Sleep(20 * time.Millisecond)
	}
	pid := set.Status()[0].PID
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name())
	}
	if s := strings.Join(names, " "); !strings.Contains(s, "mcp__f__write") || !strings.Contains(s, "mcp__g__write") {
		t.Fatalf("session tools %s", s)
	}
	for _, tl := range e.h.Tools() {
		if strings.HasPrefix(tl.Name(), "mcp__g__") {
			t.Fatal("a session's server leaked into the host's tools")
		}
	}
	if err := set.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	proctest.WaitGone(t, pid, "the session's server")
}

func TestPromptsOfEverything(t *testing.T) {
	e := start(t, everything(t))
	e.state("everything", mcp.StateReady)
	var args *mcp.PromptInfo
	for _, p := range e.h.Prompts() {
		if p.Name == "mcp__everything__args-prompt" {
			args = &p
		}
	}
	if args == nil || args.Usage() != "city [state]" || args.Description == "" {
		t.Fatalf("prompts: %+v", e.h.Prompts())
	}
	ctx := context.Background()
	text, err := e.h.GetPrompt(ctx, "mcp__everything__args-prompt", "Chicago Illinois and more")
	if err != nil || text != "What's weather in Chicago, Illinois and more?" {
		t.Fatalf("args-prompt: %q, %v", text, err)
	}
	if _, err := e.h.GetPrompt(ctx, "mcp__everything__args-prompt", ""); err == nil || !strings.Contains(err.Error(), "needs city") {
		t.Fatalf("missing argument: %v", err)
	}
	if text, err := e.h.GetPrompt(ctx, "mcp__everything__simple-prompt", ""); err != nil || text == "" {
		t.Fatalf("simple-prompt: %q, %v", text, err)
	}
}

// Restart of a server that fails again answers once that start has failed
// (restarting, with the server's error), not after the backoff: with an
// hour's backoff, waiting through it would run into the test's bound.
func TestRestartOfAFailingServerAnswersAfterItsStart(t *testing.T) {
	e := start(t, fmt.Sprintf(`{"mcpServers": {"f": {"command": %q, "env": {"FAKEMCP_MODE": "exit"}}}}`, mcptest.Fake(t)),
		func(o *mcp.Options) { o.RestartBackoff = []time.Duration{time.Hour} })
	e.state("f", mcp.StateRestarting)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := e.h.Restart(ctx, "f"); err != nil {
		t.Fatalf("Restart: %v (it waited through the backoff?)", err)
	}
	st := e.h.Status()[0]
	if st.State != mcp.StateRestarting || !strings.Contains(st.LastError, "missing DATABASE_URL") {
		t.Fatalf("after the restart: %+v; want restarting with the server's error", st)
	}
}
