package extensions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/zot-editors/zot/agent"
	"github.com/zot-editors/zot/agent/message"
	"github.com/zot-editors/zot/agent/provider"
	"github.com/zot-editors/zot/extensions/wire"
)

// Model providers that extensions contribute (SEP's provider/*, zot's
// register_provider; docs/extensions.md "Providers"): their models are
// listed and selectable as "provider/model" in every front, and a model
// call on one streams through the extension like a built-in provider's.

var _ agent.ExtensionProviders = (*Host)(nil)

// providerReg is a register_provider as accepted.
type providerReg struct {
	name   string
	models []wire.ProviderModel
}

// onRegisterProvider accepts a provider of an extension that declared
// "providers".
func (p *proc) onRegisterProvider(f wire.Frame) bool {
	if !p.has(wire.CapProviders) {
		p.sendError(f.Type, "", `register_provider needs "providers" in hello.capabilities`)
		return false
	}
	name := strings.TrimSpace(f.Name)
	switch {
	case !ValidExtensionName(name):
		p.sendError(f.Type, "", "register_provider: %q is not a provider name (letters, digits, . _ -)", f.Name)
		return false
	case name == provider.Anthropic || name == provider.OpenAI:
		p.sendError(f.Type, "", "register_provider: %q is zot's own provider", name)
		return false
	case len(f.Models) == 0:
		p.sendError(f.Type, "", "register_provider %s: no models", name)
		return false
	}
	var models []wire.ProviderModel
	for _, m := range f.Models {
		if m.ID == "" {
			p.sendError(f.Type, "", "register_provider %s: a model without an id", name)
			return false
		}
		models = append(models, m)
	}
	p.mu.Lock()
	p.providers = slices.DeleteFunc(p.providers, func(r providerReg) bool { return r.name == name })
	p.providers = append(p.providers, providerReg{name: name, models: models})
	p.mu.Unlock()
	p.log.printf("registered provider %s (%d models)", name, len(models))
	return true
}

// onUnregisterProvider withdraws a provider the extension registered
// (pi's unregisterProvider): its models leave the fronts' lists. A name it
// did not register is no error (pi: no effect).
func (p *proc) onUnregisterProvider(f wire.Frame) bool {
	name := strings.TrimSpace(f.Name)
	p.mu.Lock()
	n := len(p.providers)
	p.providers = slices.DeleteFunc(p.providers, func(r providerReg) bool { return r.name == name })
	removed := len(p.providers) < n
	p.mu.Unlock()
	if removed {
		p.log.printf("unregistered provider %s", name)
	}
	return removed
}

// providerOwners is each registered provider's extension, in load order
// (the first extension with a provider name wins).
func (h *Host) providerOwners() (order []string, regs map[string]providerReg, owners map[string]*proc) {
	h.mu.Lock()
	slots := append([]*slot(nil), h.slots...)
	h.mu.Unlock()
	regs, owners = map[string]providerReg{}, map[string]*proc{}
	for _, s := range slots {
		s.mu.Lock()
		p := s.cur
		s.mu.Unlock()
		if p == nil || p.isDead() {
			continue
		}
		p.mu.Lock()
		prs := slices.Clone(p.providers)
		p.mu.Unlock()
		for _, r := range prs {
			if _, taken := regs[r.name]; !taken {
				order = append(order, r.name)
				regs[r.name], owners[r.name] = r, p
			}
		}
	}
	return order, regs, owners
}

// ProviderModels is agent.ExtensionProviders: every registered provider's
// models, "provider/model".
func (h *Host) ProviderModels() []provider.Model {
	order, regs, _ := h.providerOwners()
	var out []provider.Model
	for _, name := range order {
		for _, m := range regs[name].models {
			out = append(out, provider.Model{ID: name + "/" + m.ID, Provider: name, ContextWindow: m.ContextWindow, MaxOutput: m.MaxOutput})
		}
	}
	return out
}

// ProviderClient is agent.ExtensionProviders: the client of a registered
// provider.
func (h *Host) ProviderClient(name string) provider.Client {
	if _, regs, _ := h.providerOwners(); regs[name].name == "" {
		return nil
	}
	return &extProviderClient{h: h, name: name}
}

// AwaitProviders is agent.ExtensionProviders: a model call on a provider
// not registered yet waits for the extensions still starting (each
// bounded by its hello budget).
func (h *Host) AwaitProviders(ctx context.Context) { h.WaitStarting(ctx) }

// extProviderClient streams a model call through the extension that
// registered the provider.
type extProviderClient struct {
	h    *Host
	name string
}

func (c *extProviderClient) Provider() string { return c.name }

// providerDelta is one SEP stream event (provider_delta's delta).
type providerDelta struct {
	Type           string `json:"type"`
	Content        string `json:"content"`
	Index          int    `json:"index"`
	ID             string `json:"id"`
	Name           string `json:"name"`
	ArgumentsChunk string `json:"arguments_chunk"`
}

// Stream sends provider_complete and turns provider_delta pieces into
// stream events and provider_result into the response; an error answer,
// the extension's death or its timeout are errors, and ctx's end sends
// tool_cancel.
func (c *extProviderClient) Stream(ctx context.Context, req provider.Request, onEvent func(provider.StreamEvent)) (provider.Response, error) {
	_, _, owners := c.h.providerOwners()
	p := owners[c.name]
	if p == nil {
		return provider.Response{}, fmt.Errorf("provider %s: its extension is not running", c.name)
	}
	if !p.begin() {
		return provider.Response{}, p.deadError()
	}
	defer p.end()
	msgs := make([]message.Message, 0, len(req.Messages)+1)
	if req.System != "" {
		msgs = append(msgs, message.Message{Role: "system", Content: []message.Content{message.Text(req.System)}})
	}
	msgs = append(msgs, req.Messages...)
	rawMsgs, err := json.Marshal(msgs)
	if err != nil {
		return provider.Response{}, err
	}
	tools, _ := json.Marshal(req.Tools)
	model := strings.TrimPrefix(req.Model.ID, c.name+"/")
	id := p.newID(wire.TypeProviderComplete)

	// Deltas arrive on the reader goroutine; onEvent runs on this one, in
	// order (provider.Client's contract).
	var mu sync.Mutex
	var pending []provider.StreamEvent
	wake := make(chan struct{}, 1)
	calls := map[int]*message.Content{}
	var text, thinking strings.Builder
	p.mu.Lock()
	p.deltas[id] = func(raw json.RawMessage) {
		var d providerDelta
		if json.Unmarshal(raw, &d) != nil {
			return
		}
		var evs []provider.StreamEvent
		switch d.Type {
		case "Delta":
			if d.Content != "" {
				evs = append(evs, provider.StreamEvent{TextDelta: d.Content})
			}
		case "Reasoning":
			if d.Content != "" {
				evs = append(evs, provider.StreamEvent{ThinkingDelta: d.Content})
			}
		case "ToolCallStart":
			evs = append(evs, provider.StreamEvent{ToolUse: &provider.ToolUseDelta{Phase: provider.ToolUseStart, ID: d.ID, Name: d.Name}})
			mu.Lock()
			calls[d.Index] = &message.Content{Type: message.TypeToolCall, ID: d.ID, Name: d.Name}
			mu.Unlock()
		case "ToolCallArgumentsDelta":
			mu.Lock()
			tc := calls[d.Index]
			mu.Unlock()
			if tc != nil && d.ArgumentsChunk != "" {
				evs = append(evs, provider.StreamEvent{ToolUse: &provider.ToolUseDelta{Phase: provider.ToolUseArgs, ID: tc.ID, Args: d.ArgumentsChunk}})
			}
		}
		if len(evs) == 0 {
			return
		}
		mu.Lock()
		pending = append(pending, evs...)
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.deltas, id)
		p.mu.Unlock()
	}()
	flush := func() {
		mu.Lock()
		evs := pending
		pending = nil
		mu.Unlock()
		for _, ev := range evs {
			switch {
			case ev.TextDelta != "":
				text.WriteString(ev.TextDelta)
			case ev.ThinkingDelta != "":
				thinking.WriteString(ev.ThinkingDelta)
			}
			onEvent(ev)
		}
	}

	done := make(chan struct{})
	var res wire.Frame
	var rerr error
	go func() {
		defer close(done)
		res, rerr = p.request(ctx, wire.Frame{Type: wire.TypeProviderComplete, ID: id, Name: c.name, Model: model, Messages: rawMsgs, ToolSpecs: tools}, p.timeout, true)
	}()
	opened := false
	for waiting := true; waiting; {
		select {
		case <-wake:
			if !opened {
				opened = true
				onEvent(provider.StreamEvent{Open: true})
			}
			flush()
		case <-done:
			waiting = false
		}
	}
	flush()
	switch {
	case rerr != nil && ctx.Err() != nil:
		return provider.Response{}, ctx.Err()
	case errors.Is(rerr, errTimeout):
		return provider.Response{}, fmt.Errorf("provider %s (extension %q) did not answer within %s", c.name, p.name, p.timeout)
	case rerr != nil:
		return provider.Response{}, fmt.Errorf("provider %s (extension %q): %w", c.name, p.name, rerr)
	case res.Error != "":
		return provider.Response{}, fmt.Errorf("provider %s: %s", c.name, res.Error)
	}
	if !opened {
		onEvent(provider.StreamEvent{Open: true})
	}
	// The result is the whole answer; the deltas were its preview.
	var out provider.Response
	if thinking.Len() > 0 {
		out.Content = append(out.Content, message.Content{Type: message.TypeThinking, Text: thinking.String()})
	}
	body := res.Text
	if body == "" {
		body = text.String()
	}
	if body != "" {
		out.Content = append(out.Content, message.Text(body))
	}
	for _, tc := range res.ToolCalls {
		args := tc.Arguments
		if len(args) == 0 || !json.Valid(args) {
			args = json.RawMessage("{}")
		}
		call := message.Content{Type: message.TypeToolCall, ID: tc.ID, Name: tc.Name, Args: args}
		onEvent(provider.StreamEvent{ToolCall: &call})
		out.Content = append(out.Content, call)
	}
	out.Stop = providerStop(res.Stop, len(res.ToolCalls) > 0)
	var u struct {
		Prompt     int `json:"prompt_tokens"`
		Completion int `json:"completion_tokens"`
		Cached     int `json:"cached_tokens"`
	}
	if len(res.Usage) > 0 && json.Unmarshal(res.Usage, &u) == nil {
		out.Usage = message.Usage{Input: u.Prompt - u.Cached, Output: u.Completion, CacheRead: u.Cached}
		if out.Usage.Input < 0 {
			out.Usage.Input = 0
		}
	}
	return out, nil
}

// providerStop maps SEP's finish_reason onto zot's stop reasons.
func providerStop(reason string, calls bool) string {
	switch reason {
	case "tool_calls", "tool_use":
		return provider.StopToolUse
	case "length", "max_tokens":
		return provider.StopLength
	case "", "stop", "end_turn":
		if calls {
			return provider.StopToolUse
		}
		return provider.StopEndTurn
	}
	return provider.StopEndTurn
}

// onProviderDelta hands a delta to the model call it belongs to.
func (p *proc) onProviderDelta(f wire.Frame) {
	p.mu.Lock()
	fn := p.deltas[f.ID]
	p.mu.Unlock()
	if fn == nil {
		p.logBad("skipped provider_delta for unknown or finished id %q", f.ID)
		return
	}
	fn(f.Delta)
}
