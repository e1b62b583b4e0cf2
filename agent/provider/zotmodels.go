package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/zot-editors/zot/internal/jsonerr"
)

// OllamaBaseURL is where an "ollama" model of zot's models.json is served
// when the entry names no baseUrl (Ollama's OpenAI-compatible endpoint).
const OllamaBaseURL = "http://localhost:11434/v1"

// zotProviders maps the provider keys of zot's models.json to the client
// that serves them here. zot's API-flavoured keys name the same providers;
// Ollama speaks OpenAI's chat completions on loopback, so it needs no key.
var zotProviders = map[string]string{
	"anthropic":          Anthropic,
	"anthropic-messages": Anthropic,
	"openai":             OpenAI,
	"openai-codex":       OpenAI,
	"openai-responses":   OpenAI,
	"openai-completions": OpenAI,
	"ollama":             OpenAI,
}

// zotModelsFile is zot's models.json. Fields this host does not use (name,
// input, and anything zot adds later) are ignored, as zot ignores ours.
type zotModelsFile struct {
	Providers map[string]struct {
		BaseURL string            `json:"baseUrl"`
		Models  []json.RawMessage `json:"models"`
	} `json:"providers"`
}

// zotModel is one model of zot's models.json. Pointers tell "not set"
// (keep the built-in's value) from zero.
type zotModel struct {
	ID              string   `json:"id"`
	Name            string   `json:"name"`
	Reasoning       *bool    `json:"reasoning"`
	ContextWindow   *int     `json:"contextWindow"`
	MaxTokens       *int     `json:"maxTokens"`
	PriceInput      *float64 `json:"priceInput"`
	PriceOutput     *float64 `json:"priceOutput"`
	PriceCacheRead  *float64 `json:"priceCacheRead"`
	PriceCacheWrite *float64 `json:"priceCacheWrite"`
	Input           []string `json:"input"`
	API             string   `json:"api"`
	BaseURL         string   `json:"baseUrl"`
}

// isZotFormat tells zot's models.json (an object with "providers") from
// ours (an array, or {"models": [...]}).
func isZotFormat(data []byte) bool {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return false
	}
	_, ok := top["providers"]
	return ok
}

// mergeZot merges zot's models.json. zot's file must keep working for a
// zot user, so only invalid JSON is an error: an entry this host cannot
// serve (a provider without a client here, a field of the wrong type, no
// id) is skipped and said in Notes.
func (c *Catalog) mergeZot(data []byte) error {
	var f zotModelsFile
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&f); err != nil {
		return jsonerr.Describe(data, err, `{"providers": {...}}`, "")
	}
	keys := make([]string, 0, len(f.Providers))
	for k := range f.Providers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		p := f.Providers[key]
		prov, ok := zotProviders[key]
		if !ok {
			if len(p.Models) > 0 {
				c.notes = append(c.notes, fmt.Sprintf("models.json: provider %q skipped (%d models): this host has clients for anthropic and openai (and OpenAI-compatible servers such as Ollama)", key, len(p.Models)))
			}
			continue
		}
		for i, raw := range p.Models {
			var zm zotModel
			if err := json.Unmarshal(raw, &zm); err != nil {
				c.notes = append(c.notes, fmt.Sprintf("models.json: %s model %d skipped: %v", key, i+1, jsonerr.Describe(nil, err, "a model object", "")))
				continue
			}
			if zm.ID == "" {
				c.notes = append(c.notes, fmt.Sprintf("models.json: %s model %d skipped: no \"id\"", key, i+1))
				continue
			}
			mprov := prov
			switch zm.API {
			case "anthropic-messages":
				mprov = Anthropic
			case "openai-completions", "openai-responses", "openai-codex":
				mprov = OpenAI
			}
			c.put(zm.toModel(c, mprov, key, p.BaseURL))
		}
	}
	return nil
}

// toModel is zm over the built-in entry of the same provider and id (or
// over defaults for a new model).
func (zm zotModel) toModel(c *Catalog, prov, key, providerBaseURL string) Model {
	m, ok := c.lookup(prov, zm.ID)
	if !ok {
		m = Model{ID: zm.ID, Provider: prov, ContextWindow: defaultContextWindow, MaxOutput: defaultMaxOutput}
	}
	switch {
	case zm.BaseURL != "":
		m.BaseURL = zm.BaseURL
	case providerBaseURL != "":
		m.BaseURL = providerBaseURL
	case key == "ollama" && m.BaseURL == "":
		m.BaseURL = OllamaBaseURL
	}
	if zm.Reasoning != nil {
		m.Reasoning = *zm.Reasoning
		if !m.Reasoning {
			m.DefaultReasoning = ""
		}
	}
	if zm.ContextWindow != nil && *zm.ContextWindow > 0 {
		m.ContextWindow = *zm.ContextWindow
	}
	if zm.MaxTokens != nil && *zm.MaxTokens > 0 {
		m.MaxOutput = *zm.MaxTokens
	}
	setPrice := func(dst *float64, v *float64) {
		if v != nil && *v >= 0 {
			*dst = *v
		}
	}
	setPrice(&m.InputPrice, zm.PriceInput)
	setPrice(&m.OutputPrice, zm.PriceOutput)
	setPrice(&m.CacheRead, zm.PriceCacheRead)
	setPrice(&m.CacheWrite, zm.PriceCacheWrite)
	return m
}

// put adds m, or replaces the entry of the same provider and id.
func (c *Catalog) put(m Model) {
	for i, b := range c.models {
		if b.Provider == m.Provider && b.ID == m.ID {
			c.models[i] = m
			return
		}
	}
	c.models = append(c.models, m)
}

// ProviderOf is the provider of the model id, anthropic when no catalogue
// entry has that id (or the id is empty).
func (c *Catalog) ProviderOf(id string) string {
	if id != "" {
		for _, m := range c.models {
			if m.ID == id {
				return m.Provider
			}
		}
	}
	return Anthropic
}
