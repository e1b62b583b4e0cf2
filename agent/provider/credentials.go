package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/zot-editors/zot/internal/jsonerr"
)

// LocalPlaceholderKey is sent to loopback servers (Ollama, llama.cpp, vLLM,
// llmtest) that need no key.
const LocalPlaceholderKey = "zot-local-no-key"

// EnvVar is the environment variable holding a provider's API key.
func EnvVar(provider string) string {
	switch provider {
	case Anthropic:
		return "ANTHROPIC_API_KEY"
	case OpenAI:
		return "OPENAI_API_KEY"
	}
	return strings.ToUpper(provider) + "_API_KEY"
}

// APIKey finds the API key of provider: flagKey (--api-key), else the
// provider's environment variable, else $ZOT_HOME/auth.json, which holds
// {"anthropic":{"api_key":"…"},"openai":{"api_key":"…"}} or
// {"anthropic":"sk-…"}. With none, a loopback baseURL (Ollama, llama.cpp,
// llmtest…) gets LocalPlaceholderKey; anything else is one error saying
// what to set. It contacts nothing.
func APIKey(provider, flagKey, baseURL, zotHome string) (string, error) {
	if !knownProvider(provider) {
		return "", fmt.Errorf("unknown provider %q (want %s or %s)", provider, Anthropic, OpenAI)
	}
	if k := strings.TrimSpace(flagKey); k != "" {
		return k, nil
	}
	if k := strings.TrimSpace(os.Getenv(EnvVar(provider))); k != "" {
		return k, nil
	}
	authPath := ""
	if zotHome != "" {
		authPath = filepath.Join(zotHome, "auth.json")
		k, err := keyFromAuthFile(authPath, provider)
		if err != nil {
			return "", err
		}
		if k != "" {
			return k, nil
		}
	}
	if IsLoopback(baseURL) {
		return LocalPlaceholderKey, nil
	}
	return "", noKeyError(provider, authPath)
}

func noKeyError(provider, authPath string) error {
	msg := fmt.Sprintf("no API key for %s: set %s or pass --api-key", provider, EnvVar(provider))
	if authPath != "" {
		msg += fmt.Sprintf(` (or put {"%s":{"api_key":"…"}} in %s)`, provider, authPath)
	}
	return errors.New(msg)
}

func keyFromAuthFile(path, provider string) (string, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("auth.json: %w", err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(data, &all); err != nil {
		return "", fmt.Errorf("%s: %v", path, jsonerr.Describe(data, err, "a JSON object", ""))
	}
	raw, ok := all[provider]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return strings.TrimSpace(s), nil
	}
	var obj struct {
		APIKey string `json:"api_key"`
		Key    string `json:"key"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return "", fmt.Errorf(`%s: %q must be "sk-…" or {"api_key": "…"}`, path, provider)
	}
	if obj.APIKey == "" {
		obj.APIKey = obj.Key
	}
	return strings.TrimSpace(obj.APIKey), nil
}

// IsLoopback reports whether a base URL points at this machine (localhost,
// 127.0.0.0/8, ::1).
func IsLoopback(baseURL string) bool {
	if baseURL == "" {
		return false
	}
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return false
	}
	h := strings.ToLower(u.Hostname())
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
