//go:build unix

package acp_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/zot-editors/zot/agent/llmtest"
	"github.com/zot-editors/zot/internal/testenv"
)

// An extension's model provider in zot acp: once its extension runs, its
// model is among the session's models (ACP's model option), the client
// selects it, and the prompt's answer streams from the extension.
func TestExtensionProviderIsAModelOption(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("from zot's provider"))
	fake := testenv.GoBuild(t, filepath.Dir(zotBin), "github.com/zot-editors/zot/extensions/testdata/fakeext")
	dir := filepath.Join(t.TempDir(), "vprov")
	os.MkdirAll(dir, 0o755)
	m, _ := json.Marshal(map[string]any{"name": "vprov", "exec": fake, "args": []string{"-name", "vprov", "-caps", "providers", "-provider", "tiny"}})
	if err := os.WriteFile(filepath.Join(dir, "extension.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	p := e.start("--ext", dir)
	c, _ := e.connect(p, sdk.ClientCapabilities{})
	s := c.newSession(e.root)
	c.mustPrompt(s.SessionId, "hi") // the extensions start meanwhile
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	// The model is an option once its extension has registered it (a
	// loaded machine may take longer than the prompt's wait for starts).
	for {
		_, err := c.conn.UnstableSetSessionModel(ctx, sdk.UnstableSetSessionModelRequest{SessionId: s.SessionId, ModelId: "tiny/m1"})
		if err == nil {
			break
		}
		if ctx.Err() != nil || !strings.Contains(err.Error(), "modelId") {
			t.Fatalf("session/set_model tiny/m1: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	c.mustPrompt(s.SessionId, "hello")
	if got := c.agentText(); !strings.HasSuffix(got, "v1: hello") {
		t.Fatalf("agent text %q, want the extension's answer last", got)
	}
	if n := len(e.llm.Requests()); n != 1 {
		t.Fatalf("zot's own provider was called %d times, want once (the first prompt)", n)
	}
}
