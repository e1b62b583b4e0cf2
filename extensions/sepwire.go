package extensions

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/zot-editors/zot/extensions/sep"
	"github.com/zot-editors/zot/extensions/wire"
)

// SEP extensions (extension.toml) reach the host through a sep.Bridge:
// the bridge says hello and registers for them in the host's frames, so
// tools, commands, hooks, dialogs, status, guards, restarts and reloads
// are the host's own code for both wires (docs/decisions.md).

const (
	// sepShutdownWait is SEP's grace after shutdown before the kill.
	sepShutdownWait = 5 * time.Second
	// EnvSEPPing overrides the idle time before the host pings a SEP
	// extension (SEP: 60 s); two pings missed in a row are a crash.
	EnvSEPPing = "ZOT_SEP_PING_INTERVAL"
	// EnvSEPTrace names a directory where every line the host sends a
	// SEP extension is appended to <name>.ndjson (debugging; the schema
	// test records real sessions with it).
	EnvSEPTrace = "ZOT_SEP_TRACE"
)

func newBridge(h *Host, p *proc, c Candidate, hostIn, hostOut, childIn, childOut *os.File) *sep.Bridge {
	cfg := sep.Config{
		Name:         c.Name,
		Manifest:     *c.Manifest.SEP,
		HostIn:       hostIn,
		HostOut:      hostOut,
		ChildIn:      childIn,
		ChildOut:     childOut,
		Logf:         p.log.printf,
		PingInterval: envDuration(EnvSEPPing, 60*time.Second, h.o.Logf),
		// It runs: a project extension did so only after trust.
		Trusted: true,
		Kill:    func() { p.kill(syscall.SIGKILL) },
		Flags:   sepFlags(os.Getenv(EnvPiFlags), h.o.Logf),
	}
	if h.o.Home != "" {
		cfg.KV = sep.OpenKV(sep.KVPath(h.o.Home, c.Name))
	}
	name := c.Name
	cfg.Publish = func(topic string, payload json.RawMessage) { h.publish(name, topic, payload) }
	if dir := os.Getenv(EnvSEPTrace); dir != "" {
		if f, err := os.OpenFile(filepath.Join(dir, c.Name+".ndjson"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
			cfg.Trace = f // the bridge closes it when it ends
		}
	}
	return sep.New(cfg)
}

// sepFlags are initialize's flags for a SEP extension: the flag values
// the user gave (--flag name=value, VS Code's and Neovim's piFlags), the
// ones pi extensions read with getFlag ($ZOT_PI_FLAGS, a JSON object of
// strings). "true" and "false" become booleans, as a CLI parse of
// `--name` gives; the rest stay strings. SEP declares its flags in the
// initialize result, after these are sent, so every value given is sent
// (an extension reads those it owns).
func sepFlags(env string, logf func(string, ...any)) map[string]any {
	if env == "" {
		return nil
	}
	var vals map[string]string
	if err := json.Unmarshal([]byte(env), &vals); err != nil {
		if logf != nil {
			logf("%s is not a JSON object of strings (%v); SEP extensions get no flags", EnvPiFlags, err)
		}
		return nil
	}
	out := make(map[string]any, len(vals))
	for k, v := range vals {
		switch v {
		case "true":
			out[k] = true
		case "false":
			out[k] = false
		default:
			out[k] = v
		}
	}
	return out
}

// onBusPublish: a zot extension that negotiated "bus" publishes.
func (p *proc) onBusPublish(f wire.Frame) {
	p.mu.Lock()
	ok := slices.Contains(p.caps, wire.CapBus)
	p.mu.Unlock()
	switch {
	case !ok:
		p.sendError(f.Type, f.ID, `bus_publish needs "bus" in hello.capabilities`)
	case f.Key == "" || !isJSONObject(f.Data):
		p.sendError(f.Type, f.ID, "bus_publish needs a key (the topic) and data (a JSON object)")
	case len(f.Data) > wire.MaxActionBytes:
		p.sendError(f.Type, f.ID, "bus_publish data is %d bytes; the limit is %d", len(f.Data), wire.MaxActionBytes)
	default:
		p.s.h.publish(p.name, f.Key, f.Data)
	}
}

// publish fans a bus message out to every other running extension that
// takes it: SEP ones as an event bus/event (if subscribed), zot ones that
// negotiated "bus" as a bus_event frame.
func (h *Host) publish(from, topic string, payload json.RawMessage) {
	h.mu.Lock()
	slots := append([]*slot(nil), h.slots...)
	h.mu.Unlock()
	for _, s := range slots {
		s.mu.Lock()
		p := s.cur
		s.mu.Unlock()
		if p == nil || p.name == from || p.isDead() {
			continue
		}
		if p.bridge != nil {
			p.bridge.BusEvent(from, topic, payload)
			continue
		}
		p.mu.Lock()
		bus := slices.Contains(p.caps, wire.CapBus)
		p.mu.Unlock()
		if bus {
			p.send(wire.Frame{Type: wire.TypeBusEvent, Name: from, Key: topic, Data: payload}, true)
		}
	}
}
