// Package sep is the Smooth Extension Protocol (SEP) wire of zot's
// extension host: the extension.toml manifest, SEP's JSON-RPC 2.0
// messages, and a Bridge that translates between a SEP extension's
// stdio and the host's own frames (extensions/wire). The host keeps one
// set of capabilities (tools, commands, hooks, dialogs, status, trust,
// reload, guards); this package is only a codec onto it
// (docs/decisions.md "SEP: a second wire onto one host").
package sep

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// ManifestFile is a SEP extension's manifest file name.
const ManifestFile = "extension.toml"

// ProtocolVersion is the highest SEP protocol version the host speaks.
const ProtocolVersion = 1

// Manifest is extension.toml. Unknown keys are ignored (SEP's rule).
type Manifest struct {
	Name        string `toml:"name"`
	Version     string `toml:"version"`
	Description string `toml:"description"`
	Protocol    int    `toml:"protocol"`
	Disabled    bool   `toml:"disabled"`
	Run         struct {
		Command string            `toml:"command"`
		Args    []string          `toml:"args"`
		Env     map[string]string `toml:"env"`
	} `toml:"run"`
	// Capabilities: group name → enabled (tools, commands, ui, exec, kv,
	// bus, session, providers); "events" lists hooks/events to deliver.
	Capabilities map[string]any `toml:"capabilities"`
	// Resources (skills, prompts, themes) are read and kept; zot has no
	// surface for them yet.
	Resources map[string]any `toml:"resources"`
	// HookTimeoutMS is a number (every hook) or a table hook → ms.
	HookTimeoutMS any `toml:"hook_timeout_ms"`
}

// ParseManifest decodes and checks extension.toml bytes.
func ParseManifest(raw []byte) (Manifest, error) {
	var m Manifest
	if err := toml.Unmarshal(raw, &m); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return m, fmt.Errorf("manifest: %s:%d:%d: %s", ManifestFile, row, col, de.Error())
		}
		return m, fmt.Errorf("manifest: %s: %w", ManifestFile, err)
	}
	switch {
	case strings.TrimSpace(m.Run.Command) == "":
		return m, fmt.Errorf("manifest: %s: [run] command is required", ManifestFile)
	case m.Protocol < 0:
		return m, fmt.Errorf("manifest: %s: protocol must be a positive integer", ManifestFile)
	}
	if _, err := m.HookTimeouts(); err != nil {
		return m, err
	}
	for k, v := range m.Capabilities {
		switch v.(type) {
		case bool:
		case []any:
			if k != "events" {
				return m, fmt.Errorf("manifest: %s: [capabilities] %s must be true or false", ManifestFile, k)
			}
		default:
			return m, fmt.Errorf("manifest: %s: [capabilities] %s must be true or false", ManifestFile, k)
		}
	}
	return m, nil
}

// HookTimeouts reads hook_timeout_ms: "" keys the value for every hook.
func (m Manifest) HookTimeouts() (map[string]time.Duration, error) {
	out := map[string]time.Duration{}
	ms := func(v any) (time.Duration, bool) {
		switch n := v.(type) {
		case int64:
			return time.Duration(n) * time.Millisecond, n > 0
		case float64:
			return time.Duration(n * float64(time.Millisecond)), n > 0
		}
		return 0, false
	}
	switch v := m.HookTimeoutMS.(type) {
	case nil:
	case map[string]any:
		for k, x := range v {
			d, ok := ms(x)
			if !ok {
				return nil, fmt.Errorf("manifest: %s: hook_timeout_ms.%s must be a positive number of milliseconds", ManifestFile, k)
			}
			out[k] = d
		}
	default:
		d, ok := ms(v)
		if !ok {
			return nil, fmt.Errorf("manifest: %s: hook_timeout_ms must be a positive number of milliseconds or a table hook = ms", ManifestFile)
		}
		out[""] = d
	}
	return out, nil
}

// Enabled reports a capability group the manifest leaves on: a group is
// on unless [capabilities] sets it to false (SEP templates name only what
// they mainly use, e.g. a gate declares events but still asks via ui).
func (m Manifest) Enabled(group string) bool {
	v, ok := m.Capabilities[group].(bool)
	return !ok || v
}

// Events is [capabilities] events: the hooks and events to deliver.
func (m Manifest) Events() []string {
	var out []string
	if l, ok := m.Capabilities["events"].([]any); ok {
		for _, e := range l {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

var envRefRE = regexp.MustCompile(`\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}`)

// EnvRefs lists the host variables [run] env reads through ${env:VAR},
// sorted: the user sees them at trust time, as a zot manifest's "env".
func (m Manifest) EnvRefs() []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range m.Run.Env {
		for _, g := range envRefRE.FindAllStringSubmatch(v, -1) {
			if !seen[g[1]] {
				seen[g[1]] = true
				out = append(out, g[1])
			}
		}
	}
	sort.Strings(out)
	return out
}

// ExpandEnv renders [run] env as NAME=value lines, ${env:VAR} replaced
// by the host's value (empty when unset, as SEP's hosts do).
func (m Manifest) ExpandEnv(getenv func(string) string) []string {
	if getenv == nil {
		getenv = os.Getenv
	}
	keys := make([]string, 0, len(m.Run.Env))
	for k := range m.Run.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		v := envRefRE.ReplaceAllStringFunc(m.Run.Env[k], func(ref string) string {
			return getenv(envRefRE.FindStringSubmatch(ref)[1])
		})
		out = append(out, k+"="+v)
	}
	return out
}

// Canonical is the manifest as a generic map without "disabled", for the
// trust hash: enabling or disabling does not revoke trust.
func Canonical(raw []byte) (map[string]any, error) {
	var fields map[string]any
	if err := toml.Unmarshal(raw, &fields); err != nil {
		return nil, err
	}
	delete(fields, "disabled")
	return fields, nil
}

// SetDisabled rewrites extension.toml bytes with disabled set, keeping
// every other line: an existing top-level disabled line is replaced,
// else one is put before the first table.
func SetDisabled(raw []byte, disabled bool) ([]byte, error) {
	lines := strings.SplitAfter(string(raw), "\n")
	val := fmt.Sprintf("disabled = %v\n", disabled)
	firstTable := len(lines)
	done := false
	for i, l := range lines {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "[") {
			firstTable = i
			break
		}
		if k, _, ok := strings.Cut(t, "="); ok && strings.TrimSpace(k) == "disabled" {
			lines[i], done = val, true
		}
	}
	if !done {
		if firstTable == len(lines) && len(raw) > 0 && !strings.HasSuffix(string(raw), "\n") {
			lines[len(lines)-1] += "\n"
		}
		lines = append(lines[:firstTable], append([]string{val}, lines[firstTable:]...)...)
	}
	out := []byte(strings.Join(lines, ""))
	var check Manifest
	if err := toml.Unmarshal(out, &check); err != nil || check.Disabled != disabled {
		return nil, fmt.Errorf("manifest: cannot set disabled in %s (unusual layout); edit it by hand", ManifestFile)
	}
	return out, nil
}
