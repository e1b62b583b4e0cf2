package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeHome(t *testing.T, name, content string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestBuiltinCatalog(t *testing.T) {
	c := Builtin()
	for _, p := range Providers() {
		ms := c.Models(p)
		if len(ms) < 3 {
			t.Fatalf("%s: %d models", p, len(ms))
		}
		def, err := c.Resolve(p, "", "")
		if err != nil || def.ID != c.Default(p) {
			t.Fatalf("%s default: %+v %v", p, def, err)
		}
		for _, m := range ms {
			if m.ContextWindow <= 0 || m.MaxOutput <= 0 || m.InputPrice <= 0 || m.OutputPrice <= 0 || m.CacheRead <= 0 {
				t.Errorf("incomplete entry %+v", m)
			}
		}
	}
	for _, id := range []string{"claude-opus-4-5", "claude-sonnet-4-5", "claude-haiku-4-5"} {
		if _, err := c.Resolve(Anthropic, id, ""); err != nil {
			t.Error(err)
		}
	}
	for _, id := range []string{"gpt-5", "gpt-5-mini", "gpt-4.1", "gpt-4o-mini"} {
		if _, err := c.Resolve(OpenAI, id, ""); err != nil {
			t.Error(err)
		}
	}
}

func TestLoadCatalogMissingFile(t *testing.T) {
	c, err := LoadCatalog(t.TempDir())
	if err != nil || len(c.Models(Anthropic)) != len(Builtin().Models(Anthropic)) {
		t.Fatalf("%v", err)
	}
}

func TestLoadCatalogMerge(t *testing.T) {
	for _, form := range []string{"array", "object"} {
		t.Run(form, func(t *testing.T) {
			entries := `[
  {"id": "gpt-5", "provider": "openai", "input_price": 9},
  {"id": "qwen3-coder", "provider": "openai", "baseUrl": "http://localhost:11434/v1", "context_window": 32768},
  {"id": "claude-sonnet-4-5", "provider": "anthropic", "max_output": 1000, "reasoning": false}
]`
			if form == "object" {
				entries = `{"models": ` + entries + `}`
			}
			c, err := LoadCatalog(writeHome(t, "models.json", entries))
			if err != nil {
				t.Fatal(err)
			}
			g, _ := c.Resolve(OpenAI, "gpt-5", "")
			if g.InputPrice != 9 || g.OutputPrice != 10 || g.ContextWindow != 400_000 {
				t.Errorf("override kept other fields? %+v", g)
			}
			q, err := c.Resolve(OpenAI, "qwen3-coder", "")
			if err != nil || q.BaseURL != "http://localhost:11434/v1" || q.ContextWindow != 32768 || q.MaxOutput != defaultMaxOutput {
				t.Errorf("new entry %+v %v", q, err)
			}
			s, _ := c.Resolve(Anthropic, "claude-sonnet-4-5", "")
			if s.MaxOutput != 1000 || s.Reasoning || s.InputPrice != 3 {
				t.Errorf("sonnet %+v", s)
			}
			if n := len(c.Models(OpenAI)); n != len(Builtin().Models(OpenAI))+1 {
				t.Errorf("openai models = %d", n)
			}
		})
	}
}

func TestLoadCatalogMalformed(t *testing.T) {
	cases := []struct{ body, want string }{
		{"[\n  {\"id\": \"x\", \"provider\": \"openai\",}\n]", "line 2"},
		{`{"id": "x"}`, `want a JSON array of models or {"models": [...]}, found field "id"`},
		{`[{"provider": "openai"}]`, `model 1: missing "id"`},
		{`[{"id": "x", "provider": "gemini"}]`, `unknown provider "gemini"`},
		{`[{"id": "x", "provider": "openai", "context_window": "big"}]`, `"context_window"`},
		{`[{"id": "x", "provider": "openai", "contextWindow": 5}]`, `unknown field "contextWindow"`},
		{`"nope"`, "want a JSON array of models"},
	}
	for _, c := range cases {
		home := writeHome(t, "models.json", c.body)
		_, err := LoadCatalog(home)
		if err == nil {
			t.Errorf("%s: no error", c.body)
			continue
		}
		if !strings.Contains(err.Error(), filepath.Join(home, "models.json")) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q should name the file and contain %q", c.body, err, c.want)
		}
	}
}

func TestResolveUnknownModel(t *testing.T) {
	c := Builtin()
	_, err := c.Resolve(Anthropic, "claude-9", "")
	if err == nil || !strings.Contains(err.Error(), `unknown anthropic model "claude-9"`) || !strings.Contains(err.Error(), "claude-sonnet-4-5") {
		t.Fatalf("err = %v", err)
	}
	m, err := c.Resolve(OpenAI, "llama3.2", "http://localhost:11434/v1")
	if err != nil {
		t.Fatal(err)
	}
	want := Model{ID: "llama3.2", Provider: OpenAI, BaseURL: "http://localhost:11434/v1", ContextWindow: 128_000, MaxOutput: 8192}
	if m != want {
		t.Fatalf("m = %+v", m)
	}
	if _, err := c.Resolve("gemini", "x", "http://localhost"); err == nil {
		t.Fatal("unknown provider accepted")
	}
	k, _ := c.Resolve(Anthropic, "claude-haiku-4-5", "http://127.0.0.1:9")
	if k.BaseURL != "http://127.0.0.1:9" || k.InputPrice != 1 {
		t.Fatalf("known with base URL: %+v", k)
	}
}
