package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent/llmtest"
)

// zotModelsJSON is a models.json as zot writes it: keyed by provider (with
// zot's aliases), every model field zot knows, and a field from the future.
func zotModelsJSON(anthropicBase, openaiBase string) string {
	return fmt.Sprintf(`{
  "providers": {
    "anthropic-messages": {"models": [
      {"id": "zot-sonnet", "name": "Zot Sonnet", "reasoning": false, "contextWindow": 50000, "maxTokens": 777,
       "priceInput": 3, "priceOutput": 15, "priceCacheRead": 0.3, "priceCacheWrite": 3.75,
       "input": ["text", "image"], "api": "anthropic-messages", "baseUrl": %q, "futureField": {"x": 1}}
    ]},
    "openai-codex": {"models": [
      {"id": "gpt-5.5", "name": "GPT-5.5", "reasoning": true, "contextWindow": 400000, "maxTokens": 128000,
       "priceInput": 2.5, "priceOutput": 15, "priceCacheRead": 0.25, "baseUrl": %q}
    ]},
    "ollama": {"models": [{"id": "qwen3:8b", "name": "Qwen 3", "contextWindow": 32768, "maxTokens": 4096, "input": ["text"]}]},
    "kimi": {"models": [{"id": "kimi-k2", "contextWindow": 256000}]}
  },
  "defaultProvider": "openai"
}`, anthropicBase, openaiBase)
}

func TestZotModelsJSONListsAndServes(t *testing.T) {
	e := newEnv(t, llmtest.TextReply("served by zot-sonnet"), llmtest.TextReply("served by gpt-5.5"))
	if err := os.WriteFile(filepath.Join(e.home, "models.json"), []byte(zotModelsJSON(e.llm.URL(), e.llm.OpenAIURL())), 0o600); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := e.runZot("--list-models")
	if code != 0 {
		t.Fatalf("--list-models: exit %d, stderr %s", code, errOut)
	}
	for _, row := range []string{
		`anthropic\s+zot-sonnet\s+50000\s+777\s+no\s+3\s+15\s+0\.3\s+3\.75\s+` + regexp.QuoteMeta(e.llm.URL()),
		`openai\s+gpt-5\.5\s+400000\s+128000\s+yes\s+2\.5\s+15\s+0\.25\s+-\s+` + regexp.QuoteMeta(e.llm.OpenAIURL()),
		`openai\s+qwen3:8b\s+32768\s+4096\s+no\s+-\s+-\s+-\s+-\s+http://localhost:11434/v1`,
		`anthropic\s+claude-sonnet-4-5\s+200000\s+64000\s+yes\s+3\s+15\s+0\.3\s+3\.75\s+-`,
	} {
		if !regexp.MustCompile(`(?m)^` + row + `\s*$`).MatchString(out) {
			t.Errorf("--list-models has no row matching %s:\n%s", row, out)
		}
	}
	if !strings.Contains(errOut, `provider "kimi" skipped`) {
		t.Errorf("stderr does not say the kimi model was skipped: %q", errOut)
	}

	// A prompt with the zot-format model: its provider, base URL and
	// output limit come from the file (no --provider, no --base-url).
	out, errOut, code = e.runZot("-p", "hi", "--model", "zot-sonnet", "--api-key", "k", "--cwd", e.cwd, "--no-session")
	if code != 0 || strings.TrimSpace(out) != "served by zot-sonnet" {
		t.Fatalf("exit %d out %q stderr %s", code, out, errOut)
	}
	reqs := e.llm.Requests()
	if len(reqs) != 1 || !strings.HasSuffix(reqs[0].Path, "/v1/messages") {
		t.Fatalf("requests: %+v", reqs)
	}
	if reqs[0].Body["model"] != "zot-sonnet" || reqs[0].Body["max_tokens"] != float64(777) {
		t.Fatalf("request model %v max_tokens %v, want zot-sonnet 777", reqs[0].Body["model"], reqs[0].Body["max_tokens"])
	}

	// --model alone picks the provider of its entry (openai-codex → openai).
	out, errOut, code = e.runZot("-p", "hi", "--model", "gpt-5.5", "--api-key", "k", "--cwd", e.cwd, "--no-session")
	if code != 0 || strings.TrimSpace(out) != "served by gpt-5.5" {
		t.Fatalf("--model gpt-5.5: exit %d out %q stderr %s", code, out, errOut)
	}
	if reqs := e.llm.Requests(); len(reqs) != 2 || !strings.HasSuffix(reqs[1].Path, "/chat/completions") || reqs[1].Body["model"] != "gpt-5.5" {
		t.Fatalf("requests: %+v", reqs)
	}
}

func TestModelsJSONInvalidNamesFileLineColumn(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(e.home, "models.json")
	if err := os.WriteFile(path, []byte("{\"providers\": {\n  \"openai\": {\"models\": [\n    {\"id\": \"x\",}\n  ]}}}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--list-models"}, e.args("-p", "hi")} {
		_, errOut, code := e.runZot(args...)
		if code != 1 || !strings.Contains(errOut, path+": line 3, column 16:") {
			t.Errorf("%v: exit %d, stderr %q; want exit 1 naming %s, line 3, column 16", args, code, errOut, path)
		}
	}
}
