package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/zot-editors/zot/internal/jsonerr"
)

// Limits given to a model the catalogue does not know, served from a
// custom base URL.
const (
	defaultContextWindow = 128_000
	defaultMaxOutput     = 8192
)

// builtinModels are the models zot knows without a models.json. Prices are
// USD per million tokens (cache write = 5-minute cache write). Claude
// models think only when asked (the API's default); GPT-5 models reason at
// medium unless told otherwise (theirs).
var builtinModels = []Model{
	{ID: "claude-opus-4-5", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true,
		InputPrice: 5, OutputPrice: 25, CacheRead: 0.5, CacheWrite: 6.25},
	{ID: "claude-sonnet-4-5", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true,
		InputPrice: 3, OutputPrice: 15, CacheRead: 0.3, CacheWrite: 3.75},
	{ID: "claude-haiku-4-5", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true,
		InputPrice: 1, OutputPrice: 5, CacheRead: 0.1, CacheWrite: 1.25},
	{ID: "claude-opus-4-1", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 32_000, Reasoning: true,
		InputPrice: 15, OutputPrice: 75, CacheRead: 1.5, CacheWrite: 18.75},
	{ID: "claude-sonnet-4-0", Provider: Anthropic, ContextWindow: 200_000, MaxOutput: 64_000, Reasoning: true,
		InputPrice: 3, OutputPrice: 15, CacheRead: 0.3, CacheWrite: 3.75},

	{ID: "gpt-5", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, DefaultReasoning: ReasoningMedium,
		InputPrice: 1.25, OutputPrice: 10, CacheRead: 0.125},
	{ID: "gpt-5-mini", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, DefaultReasoning: ReasoningMedium,
		InputPrice: 0.25, OutputPrice: 2, CacheRead: 0.025},
	{ID: "gpt-5-nano", Provider: OpenAI, ContextWindow: 400_000, MaxOutput: 128_000, Reasoning: true, DefaultReasoning: ReasoningMedium,
		InputPrice: 0.05, OutputPrice: 0.4, CacheRead: 0.005},
	{ID: "gpt-4.1", Provider: OpenAI, ContextWindow: 1_047_576, MaxOutput: 32_768,
		InputPrice: 2, OutputPrice: 8, CacheRead: 0.5},
	{ID: "gpt-4.1-mini", Provider: OpenAI, ContextWindow: 1_047_576, MaxOutput: 32_768,
		InputPrice: 0.4, OutputPrice: 1.6, CacheRead: 0.1},
	{ID: "gpt-4o", Provider: OpenAI, ContextWindow: 128_000, MaxOutput: 16_384,
		InputPrice: 2.5, OutputPrice: 10, CacheRead: 1.25},
	{ID: "gpt-4o-mini", Provider: OpenAI, ContextWindow: 128_000, MaxOutput: 16_384,
		InputPrice: 0.15, OutputPrice: 0.6, CacheRead: 0.075},
}

var defaultModels = map[string]string{
	Anthropic: "claude-opus-4-5",
	OpenAI:    "gpt-5",
}

// Catalog is the set of models zot knows: the built-ins with
// $ZOT_HOME/models.json merged over them.
type Catalog struct {
	models []Model
	// notes say which models.json entries were skipped and why (zot's
	// format only: its file must load, so what this host cannot serve is
	// left out rather than refused).
	notes []string
}

// Notes are what loading models.json left out, one sentence each.
func (c *Catalog) Notes() []string { return append([]string(nil), c.notes...) }

// All lists every model, built-ins first. The slice is a copy.
func (c *Catalog) All() []Model { return append([]Model(nil), c.models...) }

// Builtin returns the catalogue without any models.json.
func Builtin() *Catalog {
	return &Catalog{models: append([]Model(nil), builtinModels...)}
}

// Providers lists the providers zot has clients for.
func Providers() []string { return []string{Anthropic, OpenAI} }

func knownProvider(p string) bool { return p == Anthropic || p == OpenAI }

// DefaultModel is the built-in default model id of a provider.
func DefaultModel(provider string) string { return defaultModels[provider] }

// Default is the model id used when none is asked for.
func (c *Catalog) Default(provider string) string { return DefaultModel(provider) }

// LoadCatalog returns the built-ins with $ZOT_HOME/models.json merged over
// them. The file holds a JSON array of models, or {"models": [...]}; an entry
// with the id and provider of a known model overrides only the fields it
// sets. zot's own format, {"providers": {"anthropic": {"models": [...]}}},
// loads too (see mergeZot). A missing file is not an error; a malformed one
// is, naming the file, line and column.
func LoadCatalog(zotHome string) (*Catalog, error) {
	c := Builtin()
	if zotHome == "" {
		return c, nil
	}
	path := filepath.Join(zotHome, "models.json")
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("models.json: %w", err)
	}
	if err := c.merge(data); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

func (c *Catalog) merge(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil
	}
	var entries []json.RawMessage
	if data[0] == '{' {
		if isZotFormat(data) {
			return c.mergeZot(data)
		}
		var wrap struct {
			Models []json.RawMessage `json:"models"`
		}
		if err := strictDecode(data, &wrap); err != nil {
			if strings.HasPrefix(err.Error(), "json: unknown field") {
				return fmt.Errorf(`want a JSON array of models or {"models": [...]}, found %s`, strings.TrimPrefix(err.Error(), "json: unknown "))
			}
			return jsonerr.Describe(data, err, `{"models": [...]}`, modelFields)
		}
		entries = wrap.Models
	} else if err := strictDecode(data, &entries); err != nil {
		return jsonerr.Describe(data, err, "a JSON array of models", modelFields)
	}
	for i, raw := range entries {
		var key struct {
			ID       string `json:"id"`
			Provider string `json:"provider"`
		}
		if err := json.Unmarshal(raw, &key); err != nil {
			return fmt.Errorf("model %d: %v", i+1, jsonerr.Describe(nil, err, "a model object", modelFields))
		}
		switch {
		case key.ID == "":
			return fmt.Errorf("model %d: missing \"id\"", i+1)
		case key.Provider == "":
			return fmt.Errorf("model %d (%s): missing \"provider\" (%s or %s)", i+1, key.ID, Anthropic, OpenAI)
		case !knownProvider(key.Provider):
			return fmt.Errorf("model %d (%s): unknown provider %q (want %s or %s)", i+1, key.ID, key.Provider, Anthropic, OpenAI)
		}
		m, idx := Model{ContextWindow: defaultContextWindow, MaxOutput: defaultMaxOutput}, -1
		for j, b := range c.models {
			if b.Provider == key.Provider && b.ID == key.ID {
				m, idx = b, j
				break
			}
		}
		if err := strictDecode(raw, &m); err != nil {
			return fmt.Errorf("model %d (%s): %v", i+1, key.ID, jsonerr.Describe(nil, err, "a model object", modelFields))
		}
		if m.ContextWindow <= 0 || m.MaxOutput <= 0 {
			return fmt.Errorf("model %d (%s): context_window and max_output must be positive", i+1, key.ID)
		}
		if lvl, err := ParseReasoning(m.DefaultReasoning); err != nil {
			return fmt.Errorf("model %d (%s): default_reasoning: %v", i+1, key.ID, err)
		} else {
			m.DefaultReasoning = lvl
		}
		if m.InputPrice < 0 || m.OutputPrice < 0 || m.CacheRead < 0 || m.CacheWrite < 0 {
			return fmt.Errorf("model %d (%s): prices must not be negative", i+1, key.ID)
		}
		if idx >= 0 {
			c.models[idx] = m
		} else {
			c.models = append(c.models, m)
		}
	}
	return nil
}

func strictDecode(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("extra data after the JSON value")
	}
	return nil
}

// modelFields are the fields a models.json entry may have.
const modelFields = "id, provider, baseUrl, context_window, max_output, reasoning, default_reasoning, input_price, output_price, cache_read_price, cache_write_price"

// Models lists the models of a provider in catalogue order (built-ins
// first). The slice is a copy.
func (c *Catalog) Models(provider string) []Model {
	var out []Model
	for _, m := range c.models {
		if m.Provider == provider {
			out = append(out, m)
		}
	}
	return out
}

// ids are a provider's model ids, sorted.
func (c *Catalog) ids(provider string) []string {
	if c == nil {
		return nil
	}
	var ids []string
	for _, m := range c.models {
		if m.Provider == provider {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// Known reports whether the catalogue has the model (models.json
// included), as opposed to an id Resolve accepts for a base URL.
func (c *Catalog) Known(provider, id string) bool {
	_, ok := c.lookup(provider, id)
	return ok
}

func (c *Catalog) lookup(provider, id string) (Model, bool) {
	if c == nil {
		return Model{}, false
	}
	for _, m := range c.models {
		if m.Provider == provider && m.ID == id {
			return m, true
		}
	}
	return Model{}, false
}

// Resolve finds a model. An empty id means the provider's default. A known
// id gives its entry (with BaseURL set when baseURL is given); an unknown id
// is accepted only with a base URL (a local or proxy server), with default
// limits (128k context, 8192 output) and no prices.
func (c *Catalog) Resolve(provider, id, baseURL string) (Model, error) {
	if !knownProvider(provider) {
		return Model{}, fmt.Errorf("unknown provider %q (want %s or %s)", provider, Anthropic, OpenAI)
	}
	if id == "" {
		id = DefaultModel(provider)
	}
	if m, ok := c.lookup(provider, id); ok {
		if baseURL != "" {
			m.BaseURL = baseURL
		}
		return m, nil
	}
	if baseURL != "" {
		return Model{ID: id, Provider: provider, BaseURL: baseURL,
			ContextWindow: defaultContextWindow, MaxOutput: defaultMaxOutput}, nil
	}
	ids := make([]string, 0, len(c.models))
	for _, m := range c.models {
		if m.Provider == provider {
			ids = append(ids, m.ID)
		}
	}
	sort.Strings(ids)
	return Model{}, fmt.Errorf("unknown %s model %q; known: %s (another model needs --base-url, or an entry in models.json)",
		provider, id, strings.Join(ids, ", "))
}
