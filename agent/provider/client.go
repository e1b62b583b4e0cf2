package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/zot-editors/zot/agent/message"
)

// Provider names.
const (
	Anthropic = "anthropic"
	OpenAI    = "openai"
)

// Default API base URLs.
const (
	AnthropicBaseURL = "https://api.anthropic.com"
	OpenAIBaseURL    = "https://api.openai.com/v1"
)

// Options configure a Client.
type Options struct {
	Provider string // "anthropic" or "openai"
	// APIKey may be empty only when the base URL is a loopback server.
	APIKey string
	// BaseURL overrides the API endpoint for every request; else a request's
	// Model.BaseURL, else the provider's public API. Both "http://host:port"
	// and "http://host:port/v1" work for either provider (see normalizeBaseURL).
	BaseURL    string
	HTTPClient *http.Client // nil: a client without timeouts (streams are long)
	// MaxRetries is the number of retries after the first attempt: 0 means
	// the default 3, a negative number means none.
	MaxRetries int
	// Catalog prices requests whose Model carries no prices (optional).
	Catalog *Catalog
	// Wait sleeps between retries; nil: a timer that stops at ctx's end.
	// Tests may replace it to record the delays without sleeping.
	Wait func(ctx context.Context, d time.Duration) error
	// FirstByteTimeout is how long a request may wait for the first byte
	// of its answer, IdleTimeout how long a stream may then fall silent;
	// 0: DefaultFirstByteTimeout / DefaultIdleTimeout. A stall before any
	// delta is retried once; after one, the call fails naming the stall.
	FirstByteTimeout time.Duration
	IdleTimeout      time.Duration
}

var defaultHTTPClient = &http.Client{Transport: defaultTransport()}

// New builds the client for opts.Provider. It contacts nothing.
func New(opts Options) (Client, error) {
	if opts.APIKey == "" {
		if !IsLoopback(opts.BaseURL) {
			return nil, noKeyError(opts.Provider, "")
		}
		opts.APIKey = LocalPlaceholderKey
	}
	r := retrier{provider: opts.Provider, max: opts.MaxRetries, wait: opts.Wait}
	switch {
	case r.max == 0:
		r.max = 3
	case r.max < 0:
		r.max = 0
	}
	if r.wait == nil {
		r.wait = sleepCtx
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = defaultHTTPClient
	}
	switch opts.Provider {
	case Anthropic:
		return newAnthropic(opts, r), nil
	case OpenAI:
		return newOpenAI(opts, r), nil
	}
	return nil, fmt.Errorf("unknown provider %q (want %s or %s)", opts.Provider, Anthropic, OpenAI)
}

// normalizeBaseURL lets one base URL serve both providers: Anthropic's
// endpoint is base+"/v1/messages", so a trailing /v1 is dropped; OpenAI's
// is base+"/chat/completions" on a base that already names the version, so a
// bare host gets /v1 (as Ollama, vLLM, llama.cpp and LM Studio serve it).
// A base with any other path (https://openrouter.ai/api/v1) is kept.
func normalizeBaseURL(provider, base string) string {
	base = strings.TrimRight(strings.TrimSpace(base), "/")
	if base == "" {
		return ""
	}
	switch provider {
	case Anthropic:
		return strings.TrimSuffix(base, "/v1")
	case OpenAI:
		if u, err := url.Parse(base); err == nil && u.Host != "" && (u.Path == "" || u.Path == "/") {
			return base + "/v1"
		}
	}
	return base
}

// cost prices usage by the request's model, or by the catalogue entry of
// the same id when the request's model carries no prices.
func cost(cat *Catalog, m Model, u *message.Usage) {
	if cat != nil && m.InputPrice == 0 && m.OutputPrice == 0 {
		if e, ok := cat.lookup(m.Provider, m.ID); ok {
			m = e
		}
	}
	u.CostUSD = m.Cost(*u)
}

func maxTokens(req Request) int64 {
	if req.MaxTokens > 0 {
		return int64(req.MaxTokens)
	}
	if req.Model.MaxOutput > 0 {
		return int64(req.Model.MaxOutput)
	}
	return defaultMaxOutput
}

// encodeJSON marshals a request body without HTML escaping (code is full of
// <, > and &; escaping them costs time and bytes for nothing).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
