package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/zot-editors/zot/agent/provider"
)

// ExtensionProviders is what the runtime needs of the extensions'
// providers (the extension host implements it).
type ExtensionProviders interface {
	// ProviderModels lists the models of the providers registered now:
	// ID "provider/model", Provider the provider's name.
	ProviderModels() []provider.Model
	// ProviderClient is the client of a registered provider; nil when no
	// running extension registers it (yet).
	ProviderClient(name string) provider.Client
	// AwaitProviders waits, bounded by ctx, for extensions still
	// starting: a provider named on the command line may be theirs.
	AwaitProviders(ctx context.Context)
}

// extModel reports whether id ("provider/model") names an extension
// provider's model rather than one of the catalogue's.
func (r *Runtime) extModel(id string) (provider.Model, bool) {
	if r.cfg.Providers == nil {
		return provider.Model{}, false
	}
	for _, m := range r.cfg.Providers.ProviderModels() {
		if m.ID == id {
			return m, true
		}
	}
	return provider.Model{}, false
}

// pendingExtModel is a --model "provider/model" the catalogue does not
// know, kept until the extensions have started (resolveModel).
func (r *Runtime) pendingExtModel(id string) (provider.Model, bool) {
	name, _, ok := strings.Cut(id, "/")
	if !ok || r.cfg.Providers == nil || name == provider.Anthropic || name == provider.OpenAI {
		return provider.Model{}, false
	}
	return provider.Model{ID: id, Provider: name}, true
}

// clientFor is the client that serves model: an extension's provider,
// or the runtime's own.
func (r *Runtime) clientFor(ctx context.Context, m provider.Model) (provider.Client, provider.Model, error) {
	if r.cfg.Providers == nil || m.Provider == "" || m.Provider == r.cfg.Provider {
		if r.client == nil {
			return nil, m, r.clientErr
		}
		return r.client, m, nil
	}
	c := r.cfg.Providers.ProviderClient(m.Provider)
	if c == nil {
		r.cfg.Providers.AwaitProviders(ctx)
		c = r.cfg.Providers.ProviderClient(m.Provider)
	}
	if full, ok := r.extModel(m.ID); ok {
		m = full
	}
	if c == nil && r.fallback.ID == m.ID && r.client != nil {
		return r.client, r.fallback, nil // the base URL's server serves this id
	}
	if c == nil {
		return nil, m, fmt.Errorf("model %s: no running extension provides %q (zot ext list shows the extensions; /model lists the models)", m.ID, m.Provider)
	}
	return c, m, nil
}
