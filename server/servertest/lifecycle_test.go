package servertest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/proctest"
	"github.com/zot-editors/zot/server"
	"github.com/zot-editors/zot/server/servertest"
)

type initResult struct {
	Capabilities struct {
		PositionEncoding string `json:"positionEncoding"`
		TextDocumentSync struct {
			OpenClose bool `json:"openClose"`
			Change    int  `json:"change"`
		} `json:"textDocumentSync"`
		Experimental struct {
			Zot struct {
				ProtocolVersion int    `json:"protocolVersion"`
				Protocol        int    `json:"protocol"`
				Version         string `json:"version"`
				Provider        string `json:"provider"`
				Model           string `json:"model"`
				Cwd             string `json:"cwd"`
				PermissionMode  string `json:"permissionMode"`
				Error           string `json:"error"`
				Commands        []struct {
					Name   string `json:"name"`
					Source string `json:"source"`
				} `json:"commands"`
			} `json:"zot"`
		} `json:"experimental"`
	} `json:"capabilities"`
	ServerInfo struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"serverInfo"`
}

// The version handshake's test override: ZOT_TEST_PROTOCOL_REVISION makes
// zot lsp report another revision (the clients' tests of an old server use
// it); anything but a positive number is refused at start, by name.
func TestInitializeReportsRevisionOverride(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.Env = append(cfg.Env, "ZOT_TEST_PROTOCOL_REVISION=3")
	ed := servertest.Start(t, cfg)
	var res initResult
	ed.Initialize(&res)
	if got := res.Capabilities.Experimental.Zot.Protocol; got != 3 {
		t.Fatalf("experimental.zot.protocol = %d with ZOT_TEST_PROTOCOL_REVISION=3, want 3", got)
	}

	cmd := exec.Command(zotBin, "lsp")
	cmd.Env = append(e.environ(true), "ZOT_TEST_PROTOCOL_REVISION=new")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), `ZOT_TEST_PROTOCOL_REVISION must be a positive number, not "new"`) {
		t.Fatalf("zot lsp with ZOT_TEST_PROTOCOL_REVISION=new: %v, %s", err, out)
	}
}

func TestInitializeAdvertisesZot(t *testing.T) {
	e := newEnv(t)
	ed := servertest.Start(t, e.config("--model", "claude-haiku-4-5"))
	var res initResult
	ed.Initialize(&res)
	c := res.Capabilities
	z := c.Experimental.Zot
	if !c.TextDocumentSync.OpenClose || c.TextDocumentSync.Change != 2 || c.PositionEncoding != "utf-16" {
		t.Fatalf("capabilities: %+v", c)
	}
	if z.ProtocolVersion != server.ProtocolVersion || z.Protocol != server.ProtocolRevision || z.Version == "" ||
		res.ServerInfo.Version != z.Version || z.Provider != "anthropic" || z.Model != "claude-haiku-4-5" ||
		z.Cwd != e.root || z.PermissionMode != "auto" || z.Error != "" || res.ServerInfo.Name != "zot" {
		t.Fatalf("experimental.zot: %+v", z)
	}
	var names []string
	for _, c := range z.Commands {
		names = append(names, c.Name+"/"+c.Source)
	}
	if !strings.Contains(strings.Join(names, " "), "clear/builtin") {
		t.Fatalf("commands: %v", names)
	}
	if code := ed.Shutdown(); code != 0 {
		t.Fatalf("exit code after shutdown+exit = %d", code)
	}
}

func TestInitializationOptionsOverrideFlags(t *testing.T) {
	e := newEnv(t)
	cfg := e.config("--model", "claude-haiku-4-5")
	cfg.InitOptions = map[string]any{"model": "claude-sonnet-4-5", "permissionMode": "readonly"}
	cfg.PositionEncodings = []string{"utf-32", "utf-16"}
	ed := servertest.Start(t, cfg)
	var res initResult
	ed.Initialize(&res)
	z := res.Capabilities.Experimental.Zot
	if z.Model != "claude-sonnet-4-5" || z.PermissionMode != "readonly" || res.Capabilities.PositionEncoding != "utf-32" {
		t.Fatalf("init options not applied: %+v, encoding %s", z, res.Capabilities.PositionEncoding)
	}
	var st map[string]any
	ed.MustCall("zot/state", nil, &st)
	if st["model"] != "claude-sonnet-4-5" || st["permissionMode"] != "readonly" {
		t.Fatalf("zot/state: %v", st)
	}
}

func TestBadInitializationOptions(t *testing.T) {
	e := newEnv(t)
	ed := servertest.Start(t, e.config())
	err := ed.Call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"permissionMode": "yolo"}}, nil)
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "initializationOptions.permissionMode") {
		t.Fatalf("want InvalidParams naming initializationOptions.permissionMode, got %v", err)
	}
	err = ed.Call("initialize", map[string]any{"capabilities": map[string]any{}, "initializationOptions": map[string]any{"maxSteps": "many"}}, nil)
	if err == nil || err.Code != -32602 || !strings.Contains(err.Message, "initializationOptions.maxSteps") {
		t.Fatalf("want InvalidParams naming initializationOptions.maxSteps, got %v", err)
	}
}

func TestRequestsBeforeInitialize(t *testing.T) {
	e := newEnv(t)
	ed := servertest.Start(t, e.config())
	if err := ed.Call("zot/state", nil, nil); err == nil || err.Code != -32002 {
		t.Fatalf("zot/state before initialize: %v", err)
	}
	ed.Initialize(nil)
	if err := ed.Call("zot/state", nil, nil); err != nil {
		t.Fatal(err)
	}
}

func TestNoAPIKeyIsShownAsIs(t *testing.T) {
	e := newEnv(t)
	cfg := e.config()
	cfg.Args = []string{"--no-session"} // no key anywhere: env and $ZOT_HOME are clean
	ed := servertest.Start(t, cfg)
	var res initResult
	ed.Initialize(&res)
	z := res.Capabilities.Experimental.Zot
	if !strings.Contains(z.Error, "API key") {
		t.Fatalf("experimental.zot.error = %q", z.Error)
	}
	msg := ed.WaitNote("window/showMessage", nil)
	if !strings.Contains(string(msg.Params), "API key") {
		t.Fatalf("showMessage: %s", msg.Params)
	}
	err := ed.Call("zot/prompt", map[string]any{"text": "hi"}, nil)
	if err == nil || err.Code != -32001 || !strings.HasPrefix(err.Message, "zot cannot start: ") || !strings.Contains(err.Message, "API key") {
		t.Fatalf("zot/prompt without a key: %v", err)
	}
	// Everything else still answers.
	if err := ed.Call("zot/commands", nil, nil); err != nil {
		t.Fatal(err)
	}
}

// An editor that dies (stdin EOF) takes everything with it: the running
// bash command and the extension processes.
func TestEOFLeavesNoChildProcess(t *testing.T) {
	e := newEnv(t,
		llmtest.ToolReply("bash", map[string]any{"command": "echo $$ > bash.pid; exec sleep 300"}),
		llmtest.TextReply("never reached"))
	e.installExt(e.root+"/exts/lspext", "lspext")
	cfg := e.config("--ext", e.root+"/exts/lspext")
	ed := servertest.Start(t, cfg)
	ed.Initialize(nil)
	extPID := waitExt(ed, "lspext", "loaded").PID
	if extPID <= 0 {
		t.Fatalf("no pid for the extension")
	}
	run := ed.Prompt("sleep")
	ed.WaitEvent(run.RunID, "tool_call")
	var bashPID int
	ed.Wait("bash to start", func() bool {
		b, err := os.ReadFile(ed.Path("bash.pid"))
		if err != nil {
			return false
		}
		bashPID = atoi(strings.TrimSpace(string(b)))
		return bashPID > 0
	})
	ed.CloseStdin()
	ed.WaitExit()
	for _, pid := range []int{bashPID, extPID} {
		ed.Wait("process to be gone", func() bool { return !proctest.Alive(pid) })
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func TestExitWithoutShutdown(t *testing.T) {
	e := newEnv(t)
	ed := e.start(nil)
	ed.Notify("exit", nil)
	if code := ed.WaitExit(); code != 1 {
		t.Fatalf("exit without shutdown: code %d, want 1", code)
	}
	_ = time.Second
}
