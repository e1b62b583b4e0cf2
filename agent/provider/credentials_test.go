package provider

import (
	"strings"
	"testing"
)

func TestAPIKeyPrecedence(t *testing.T) {
	home := writeHome(t, "auth.json", `{"anthropic":{"api_key":"from-file"},"openai":"sk-file"}`)

	t.Setenv("ANTHROPIC_API_KEY", "from-env")
	if k, _ := APIKey(Anthropic, "from-flag", "", home); k != "from-flag" {
		t.Errorf("flag: %q", k)
	}
	if k, _ := APIKey(Anthropic, "", "", home); k != "from-env" {
		t.Errorf("env: %q", k)
	}
	t.Setenv("ANTHROPIC_API_KEY", "")
	if k, _ := APIKey(Anthropic, "", "", home); k != "from-file" {
		t.Errorf("file object form: %q", k)
	}
	t.Setenv("OPENAI_API_KEY", "")
	if k, _ := APIKey(OpenAI, "", "", home); k != "sk-file" {
		t.Errorf("file string form: %q", k)
	}
	// A key found anywhere wins over the loopback placeholder.
	if k, _ := APIKey(OpenAI, "", "http://localhost:11434", home); k != "sk-file" {
		t.Errorf("loopback with key: %q", k)
	}
}

func TestAPIKeyMissing(t *testing.T) {
	t.Setenv("ANTHROPIC_API_KEY", "")
	t.Setenv("OPENAI_API_KEY", "")
	home := t.TempDir()
	_, err := APIKey(Anthropic, "", "", home)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{"no API key for anthropic", "ANTHROPIC_API_KEY", "--api-key"} {
		if !strings.Contains(msg, want) {
			t.Errorf("%q lacks %q", msg, want)
		}
	}
	if _, err := APIKey(OpenAI, "", "https://openrouter.ai/api/v1", home); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("remote base URL: %v", err)
	}
	for _, base := range []string{"http://localhost:11434/v1", "http://127.0.0.1:8080", "http://[::1]:1234"} {
		if k, err := APIKey(OpenAI, "", base, home); err != nil || k != LocalPlaceholderKey {
			t.Errorf("%s: %q %v", base, k, err)
		}
	}
}

func TestAPIKeyMalformedAuthFile(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	home := writeHome(t, "auth.json", `{"openai": {"api_key": }`)
	_, err := APIKey(OpenAI, "", "", home)
	if err == nil || !strings.Contains(err.Error(), "auth.json") {
		t.Fatalf("err = %v", err)
	}
	home = writeHome(t, "auth.json", `{"openai": 42}`)
	if _, err := APIKey(OpenAI, "", "", home); err == nil || !strings.Contains(err.Error(), `"openai" must be`) {
		t.Fatalf("err = %v", err)
	}
}

func TestIsLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"http://localhost:1": true, "http://127.0.0.1": true, "http://127.1.2.3:9/v1": true, "http://[::1]:80": true,
		"http://ollama.localhost": true, "https://api.openai.com/v1": false, "http://192.168.1.2:11434": false, "": false, "localhost": false,
	} {
		if got := IsLoopback(in); got != want {
			t.Errorf("%q: %v", in, got)
		}
	}
}
