package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/mcptest"
	"github.com/zot-editors/zot/internal/testenv"
)

// rpcClient is one of examples/rpc's reference clients: how to run it
// with a prompt.
type rpcClient struct {
	name string
	argv func(t *testing.T, prompt string) []string
}

func rpcClients() []rpcClient {
	example := func(rel string) string { return filepath.Join(mcptest.Root(), "examples", "rpc", rel) }
	return []rpcClient{
		{"python", func(t *testing.T, p string) []string {
			return []string{testenv.NeedCommand(t, "python3", "the Python RPC client"), example("python/zot_client.py"), p}
		}},
		{"node", func(t *testing.T, p string) []string {
			return []string{testenv.NeedCommand(t, "node", "the Node RPC client"), example("node/zot-client.js"), p}
		}},
		{"shell", func(t *testing.T, p string) []string {
			testenv.NeedCommand(t, "jq", "the shell RPC client")
			return []string{testenv.NeedCommand(t, "bash", "the shell RPC client"), example("shell/prompt.sh"), p}
		}},
		{"go", func(t *testing.T, p string) []string {
			return []string{testenv.GoBuild(t, t.TempDir(), "github.com/zot-editors/zot/examples/rpc/go"), p}
		}},
	}
}

// runClient runs a reference client as its user would: `zot` on PATH
// (here a wrapper pointing the real zot rpc at the scripted model), the
// prompt as its argument.
func (e *env) runClient(t *testing.T, c rpcClient, prompt string, extraEnv ...string) (stdout, stderr string, code int) {
	t.Helper()
	bin := t.TempDir()
	wrapper := "#!/bin/sh\nsub=$1; shift\nexec " + shellQuote(zotBin) + ` "$sub" --api-key test-key --base-url ` + shellQuote(e.llm.URL()) + " --cwd " + shellQuote(e.cwd) + ` "$@"` + "\n"
	if err := os.WriteFile(filepath.Join(bin, "zot"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	argv := c.argv(t, prompt)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = e.cwd
	cmd.Env = append(e.environ(), append(extraEnv, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))...)
	var so, se bytes.Buffer
	cmd.Stdout, cmd.Stderr = &so, &se
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("running the %s client: %v", c.name, err)
	}
	return so.String(), se.String(), code
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Each reference client in examples/rpc (Python, Node, bash + jq, Go),
// against the real zot rpc: it says hello with ZOTCORE_RPC_TOKEN, sends
// the prompt, prints the streamed answer on stdout and the tool call on
// stderr, and exits 0 at done; a run that fails ends with the error on
// stderr and exit status 1.
func TestRPCReferenceClients(t *testing.T) {
	for _, c := range rpcClients() {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t,
				llmtest.Reply{Deltas: []string{"Let me ", "look. "}, ToolCalls: []llmtest.ToolCall{{Name: "read", Args: []byte(`{"path":"a.txt"}`)}}},
				llmtest.Reply{Deltas: []string{"It says ", "\"hi\" — ", "done."}},
				llmtest.ErrorReply(400, "prompt is too long"),
			)
			e.write("a.txt", "hi\n")
			out, errOut, code := e.runClient(t, c, "what does a.txt say?", "ZOTCORE_RPC_TOKEN=s3cret")
			if code != 0 || out != "Let me look. It says \"hi\" — done.\n" {
				t.Fatalf("exit %d\nstdout %q\nstderr %s", code, out, errOut)
			}
			if !strings.Contains(errOut, "[tool] read ") || !strings.Contains(errOut, "a.txt") || strings.Contains(errOut, "[error]") {
				t.Fatalf("stderr: %s", errOut)
			}
			if got := len(e.llm.Requests()); got != 2 {
				t.Fatalf("%d model calls; want 2 (the tool's result went back)", got)
			}

			out, errOut, code = e.runClient(t, c, "again")
			if code != 1 || !strings.Contains(errOut, "[error]") || !strings.Contains(errOut, "prompt is too long") {
				t.Fatalf("a failed run: exit %d\nstdout %q\nstderr %s", code, out, errOut)
			}
		})
	}
}
