package servertest_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/server/servertest"
)

var (
	zotBin string // the real zot binary, built once
	extBin string // testdata/lspext, built once
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zot-servertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zotBin, extBin = filepath.Join(dir, "zot"), filepath.Join(dir, "lspext")
	for pkg, out := range map[string]string{"./cmd/zot": zotBin, "./server/servertest/testdata/lspext": extBin} {
		race := raceEnabled && pkg == "./cmd/zot"
		if err := servertest.Build(pkg, out, race); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one test's world: a scripted LLM, $ZOT_HOME and a workspace.
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
	// Resolve symlinks (macOS /var → /private/var) so paths compare.
	if r, err := filepath.EvalSymlinks(e.root); err == nil {
		e.root = r
	}
	t.Cleanup(e.llm.Close)
	return e
}

func (e *env) environ(withKey bool) []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "OPENAI_") || strings.HasPrefix(kv, "ZOT") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "ZOT_HOME="+e.home)
}

// config is an editor talking to zot lsp pointed at the scripted LLM.
func (e *env) config(extra ...string) servertest.Config {
	args := append([]string{"--api-key", "test-key", "--base-url", e.llm.URL(), "--no-session"}, extra...)
	return servertest.Config{Bin: zotBin, Args: args, Env: e.environ(true), Root: e.root}
}

// start starts and initializes an editor; tweak adjusts the config.
func (e *env) start(tweak func(*servertest.Config)) *servertest.Editor {
	e.t.Helper()
	cfg := e.config()
	if tweak != nil {
		tweak(&cfg)
	}
	ed := servertest.Start(e.t, cfg)
	ed.Initialize(nil)
	return ed
}

// installExt writes an extension directory (manifest → the lspext binary)
// under dir and returns it.
func (e *env) installExt(dir, name string) string {
	e.t.Helper()
	os.MkdirAll(dir, 0o755)
	m := map[string]any{"name": name, "version": "1.0.0", "exec": extBin, "args": []string{name}, "description": "test extension"}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), b, 0o644); err != nil {
		e.t.Fatal(err)
	}
	return dir
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func ptr[T any](v T) *T { return &v }
