//go:build unix

package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

var (
	zotBin string // the real zot, built once
	extBin string // servertest's lspext extension, built once
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zot-acptest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zotBin, extBin = filepath.Join(dir, "zot"), filepath.Join(dir, "lspext")
	for pkg, out := range map[string]string{"./cmd/zot": zotBin, "./server/servertest/testdata/lspext": extBin} {
		if err := servertest.Build(pkg, out, raceEnabled && pkg == "./cmd/zot"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// waitTimeout bounds every wait: generous, the machine is shared.
const waitTimeout = 60 * time.Second

// env is one test's world: a scripted LLM, $ZOT_HOME and a project.
type env struct {
	t    *testing.T
	llm  *llmtest.Server
	home string
	root string
}

func newEnv(t *testing.T, replies ...llmtest.Reply) *env {
	t.Helper()
	t.Parallel()
	e := &env{t: t, llm: llmtest.New(llmtest.Script{Replies: replies}), home: t.TempDir(), root: t.TempDir()}
	if r, err := filepath.EvalSymlinks(e.root); err == nil {
		e.root = r
	}
	t.Cleanup(e.llm.Close)
	return e
}

func (e *env) write(rel, text string) string {
	p := filepath.Join(e.root, rel)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) environ() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ZOT") {
			continue
		}
		out = append(out, kv)
	}
	return servertest.CoverEnv(append(out, "ZOT_HOME="+e.home))
}

// proc is a running `zot acp`.
type proc struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout io.ReadCloser
	stderr *syncBuffer
	done   chan struct{}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// start runs `zot acp` against the scripted model.
func (e *env) start(extra ...string) *proc {
	e.t.Helper()
	return e.startArgs(append([]string{"acp", "--api-key", "test-key", "--base-url", e.llm.URL()}, extra...)...)
}

func (e *env) startArgs(args ...string) *proc {
	e.t.Helper()
	cmd := exec.Command(zotBin, args...)
	cmd.Env = e.environ()
	cmd.Dir = e.root
	p := &proc{cmd: cmd, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	var err error
	if p.stdin, err = cmd.StdinPipe(); err != nil {
		e.t.Fatal(err)
	}
	if p.stdout, err = cmd.StdoutPipe(); err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	go func() { cmd.Wait(); close(p.done) }()
	e.t.Cleanup(func() {
		p.stdin.Close()
		select {
		case <-p.done:
		case <-time.After(waitTimeout):
			cmd.Process.Kill()
			e.t.Errorf("zot acp did not exit at the end of its input\nstderr:\n%s", p.stderr.String())
		}
		if e.t.Failed() {
			e.t.Logf("zot acp stderr:\n%s", p.stderr.String())
		}
	})
	return p
}

// client is an ACP client on the SDK's client side: it records every
// update, serves files from its "unsaved buffers", runs terminals as real
// processes and answers permission requests as the test says.
type client struct {
	t    *testing.T
	conn *sdk.ClientSideConnection

	mu      sync.Mutex
	updates []sdk.SessionNotification
	changed chan struct{}
	buffers map[string]string // path → unsaved text
	writes  []sdk.WriteTextFileRequest
	reads   []string
	perms   []sdk.RequestPermissionRequest
	permit  func(sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome
	// permitCtx, when set, answers instead of permit and sees the
	// request's context (cancelled by $/cancel_request).
	permitCtx  func(context.Context, sdk.RequestPermissionRequest) sdk.RequestPermissionOutcome
	terminals  map[string]*terminal
	terminalNo int
	kills      []string
}

type terminal struct {
	req  sdk.CreateTerminalRequest
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	code int
}

func (e *env) connect(p *proc, caps sdk.ClientCapabilities) (*client, sdk.InitializeResponse) {
	e.t.Helper()
	c := &client{t: e.t, changed: make(chan struct{}, 1), buffers: map[string]string{}, terminals: map[string]*terminal{}}
	c.conn = sdk.NewClientSideConnection(c, p.stdin, p.stdout)
	c.conn.SetLogger(slog.New(slog.NewTextHandler(io.Discard, nil)))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	init, err := c.conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber, ClientCapabilities: caps,
		ClientInfo: &sdk.Implementation{Name: "acp-test", Version: "1"}})
	if err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	e.t.Cleanup(c.killTerminals)
	return c, init
}

func (c *client) newSession(cwd string) sdk.NewSessionResponse {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	s, err := c.conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		c.t.Fatalf("session/new: %v", err)
	}
	return s
}

func (c *client) setMode(id sdk.SessionId, mode string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	if _, err := c.conn.SetSessionMode(ctx, sdk.SetSessionModeRequest{SessionId: id, ModeId: sdk.SessionModeId(mode)}); err != nil {
		c.t.Fatalf("session/set_mode: %v", err)
	}
}

func (c *client) prompt(id sdk.SessionId, text string) (sdk.PromptResponse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	return c.conn.Prompt(ctx, sdk.PromptRequest{SessionId: id, Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
}

func (c *client) mustPrompt(id sdk.SessionId, text string) sdk.PromptResponse {
	c.t.Helper()
	r, err := c.prompt(id, text)
	if err != nil {
		c.t.Fatalf("session/prompt: %v", err)
	}
	return r
}

// SessionUpdate records the update.
func (c *client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}

// waitUpdate waits for an update matching ok and returns it.
func (c *client) waitUpdate(what string, ok func(sdk.SessionUpdate) bool) sdk.SessionUpdate {
	c.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		c.mu.Lock()
		for _, u := range c.updates {
			if ok(u.Update) {
				c.mu.Unlock()
				return u.Update
			}
		}
		c.mu.Unlock()
		select {
		case <-c.changed:
		case <-deadline:
			c.t.Fatalf("no %s within %v; updates: %s", what, waitTimeout, c.dump())
		}
	}
}

// waitNotification waits for a session/update (with its session id)
// matching ok.
func (c *client) waitNotification(what string, ok func(sdk.SessionNotification) bool) sdk.SessionNotification {
	c.t.Helper()
	deadline := time.After(waitTimeout)
	for {
		for _, n := range c.notifications() {
			if ok(n) {
				return n
			}
		}
		select {
		case <-c.changed:
		case <-deadline:
			c.t.Fatalf("no %s within %v; updates: %s", what, waitTimeout, c.dump())
		}
	}
}

func (c *client) notifications() []sdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionNotification(nil), c.updates...)
}

func (c *client) allUpdates() []sdk.SessionUpdate {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]sdk.SessionUpdate, len(c.updates))
	for i, u := range c.updates {
		out[i] = u.Update
	}
	return out
}

func (c *client) dump() string {
	b, _ := json.Marshal(c.allUpdates())
	return string(b)
}

// agentText is every agent_message_chunk's text, in order.
func (c *client) agentText() string {
	var b strings.Builder
	for _, u := range c.allUpdates() {
		if u.AgentMessageChunk != nil && u.AgentMessageChunk.Content.Text != nil {
			b.WriteString(u.AgentMessageChunk.Content.Text.Text)
		}
	}
	return b.String()
}

func (c *client) ReadTextFile(ctx context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	c.mu.Lock()
	c.reads = append(c.reads, p.Path)
	text, ok := c.buffers[p.Path]
	c.mu.Unlock()
	if ok {
		return sdk.ReadTextFileResponse{Content: text}, nil
	}
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}

// WriteTextFile puts the text in the buffer, as an editor would; the
// disk is left alone so a test can tell the two apart.
func (c *client) WriteTextFile(ctx context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	c.writes = append(c.writes, p)
	c.buffers[p.Path] = p.Content
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, nil
}

func (c *client) RequestPermission(ctx context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	c.mu.Lock()
	c.perms = append(c.perms, p)
	permit, permitCtx := c.permit, c.permitCtx
	c.mu.Unlock()
	if permitCtx != nil {
		return sdk.RequestPermissionResponse{Outcome: permitCtx(ctx, p)}, nil
	}
	if permit == nil {
		return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected("allow_once")}, nil
	}
	return sdk.RequestPermissionResponse{Outcome: permit(p)}, nil
}

func (c *client) CreateTerminal(ctx context.Context, p sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	cmd := exec.Command(p.Command, p.Args...)
	if p.Cwd != nil {
		cmd.Dir = *p.Cwd
	}
	cmd.Env = os.Environ()
	for _, v := range p.Env {
		cmd.Env = append(cmd.Env, v.Name+"="+v.Value)
	}
	term := &terminal{req: p, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = term.out, term.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return sdk.CreateTerminalResponse{}, err
	}
	go func() {
		cmd.Wait()
		term.code = cmd.ProcessState.ExitCode()
		close(term.done)
	}()
	c.mu.Lock()
	c.terminalNo++
	id := fmt.Sprintf("term-%d", c.terminalNo)
	c.terminals[id] = term
	c.mu.Unlock()
	return sdk.CreateTerminalResponse{TerminalId: id}, nil
}

func (c *client) terminal(id string) (*terminal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.terminals[id]
	if t == nil {
		return nil, fmt.Errorf("no terminal %s", id)
	}
	return t, nil
}

func (c *client) TerminalOutput(ctx context.Context, p sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.TerminalOutputResponse{}, err
	}
	res := sdk.TerminalOutputResponse{Output: t.out.String()}
	select {
	case <-t.done:
		res.ExitStatus = &sdk.TerminalExitStatus{ExitCode: sdk.Ptr(t.code)}
	default:
	}
	return res, nil
}

func (c *client) WaitForTerminalExit(ctx context.Context, p sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.WaitForTerminalExitResponse{}, err
	}
	select {
	case <-t.done:
		return sdk.WaitForTerminalExitResponse{ExitCode: sdk.Ptr(t.code)}, nil
	case <-ctx.Done():
		return sdk.WaitForTerminalExitResponse{}, ctx.Err()
	}
}

func (c *client) KillTerminal(ctx context.Context, p sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.KillTerminalResponse{}, err
	}
	c.mu.Lock()
	c.kills = append(c.kills, p.TerminalId)
	c.mu.Unlock()
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	<-t.done
	return sdk.KillTerminalResponse{}, nil
}

func (c *client) ReleaseTerminal(ctx context.Context, p sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	t, err := c.terminal(p.TerminalId)
	if err != nil {
		return sdk.ReleaseTerminalResponse{}, err
	}
	syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	return sdk.ReleaseTerminalResponse{}, nil
}

func (c *client) killTerminals() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.terminals {
		syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
	}
}
