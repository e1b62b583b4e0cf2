package extensions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/zot-editors/zot/internal/ospath"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"time"

	"github.com/zot-editors/zot/extensions/sep"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/atomicfile"
)

// ManifestFile is the manifest's file name inside an extension directory.
const ManifestFile = "extension.json"

// Manifest is extension.json, as in zot, plus an optional per-extension
// tool timeout.
type Manifest struct {
	Name        string   `json:"name"`
	Version     string   `json:"version,omitempty"`
	Exec        string   `json:"exec"`
	Args        []string `json:"args,omitempty"`
	Language    string   `json:"language,omitempty"`
	Description string   `json:"description,omitempty"`
	Enabled     *bool    `json:"enabled,omitempty"`
	// Timeout is the tool-call and command timeout in seconds; 0 means
	// the host's default (60 s).
	Timeout float64 `json:"timeout,omitempty"`
	// Env names credentials (SecretEnv: provider keys, the RPC token) the
	// extension needs; without it they are removed from its environment.
	Env []string `json:"env,omitempty"`

	// SEP is set for an extension.toml manifest (a SEP extension): the
	// host speaks SEP to it through sep.Bridge. The fields above are
	// filled from it (exec = [run] command, enabled = !disabled, env =
	// the variables [run] env reads).
	SEP *sep.Manifest `json:"-"`
	// Pi is set for a pi extension (a .ts/.js module, a directory with
	// index.ts, a package with a "pi" key): it runs in zot's Node runtime
	// (extensions/pi.go). Exec is node, Args its entry files.
	Pi *PiModule `json:"-"`
}

// FileName is the manifest's file name: extension.json or extension.toml.
func (m Manifest) FileName() string {
	if m.Pi != nil && len(m.Pi.Entries) > 0 {
		return filepath.Base(m.Pi.Entries[0])
	}
	if m.SEP != nil {
		return sep.ManifestFile
	}
	return ManifestFile
}

// IsManifestName reports whether a file name is an extension manifest.
func IsManifestName(base string) bool { return base == ManifestFile || base == sep.ManifestFile }

// manifestPath is dir's manifest: extension.json, else extension.toml
// (an error naming both when neither exists).
func manifestPath(dir string) (string, error) {
	for _, f := range []string{ManifestFile, sep.ManifestFile} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return filepath.Join(dir, ManifestFile), fmt.Errorf("no %s or %s in %s", ManifestFile, sep.ManifestFile, dir)
}

// IsEnabled reports the effective enabled flag (default true).
func (m Manifest) IsEnabled() bool { return m.Enabled == nil || *m.Enabled }

// CallTimeout is the manifest timeout, or def when unset.
func (m Manifest) CallTimeout(def time.Duration) time.Duration {
	if m.Timeout > 0 {
		return time.Duration(m.Timeout * float64(time.Second))
	}
	return def
}

// The name rules are byte loops, not regexps: RE2 expands a counted
// repetition like {0,63} into 63 copies, and compiling those at start-up
// cost every zot process ~2 ms (TestNameRulesMatchRegexps keeps them
// equal to the regexps they replace).
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// nameOK reports whether s is 1–64 bytes, its first byte alphanumeric
// (or in rest, when firstAny) and every other byte alphanumeric or in rest.
func nameOK(s string, firstAny bool, rest string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			continue
		}
		if (i > 0 || firstAny) && strings.IndexByte(rest, c) >= 0 {
			continue
		}
		return false
	}
	return true
}

// ValidExtensionName reports whether s may name an extension: it becomes
// part of a log file name, so no separators and no leading dot
// (^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$).
func ValidExtensionName(s string) bool { return nameOK(s, false, "._-") }

// ValidToolName is the name rule both Anthropic and OpenAI impose
// (^[A-Za-z0-9_-]{1,64}$).
func ValidToolName(s string) bool { return nameOK(s, true, "_-") }

// ValidCommandName is a slash command name without the slash
// (^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$).
func ValidCommandName(s string) bool { return nameOK(s, false, ":._-") }

// Validate checks the fields the host needs.
func (m Manifest) Validate() error {
	switch {
	case m.Name == "":
		return errors.New("manifest: name is required")
	case !ValidExtensionName(m.Name):
		return fmt.Errorf("manifest: invalid name %q (letters, digits, '.', '_', '-'; at most 64)", m.Name)
	case strings.TrimSpace(m.Exec) == "":
		return errors.New("manifest: exec is required")
	case m.Timeout < 0:
		return errors.New("manifest: timeout must be a positive number of seconds")
	}
	for _, n := range m.Env {
		if !envNameRE.MatchString(n) {
			return fmt.Errorf("manifest: env: %q is not an environment variable name", n)
		}
	}
	return nil
}

// ReadManifest reads and validates dir/extension.json, or for a SEP
// extension dir/extension.toml. It also returns the raw bytes (they are
// part of the trust hash).
func ReadManifest(dir string) (Manifest, []byte, error) {
	// Neither file: the error names extension.json, as before SEP.
	path, _ := manifestPath(dir)
	if filepath.Base(path) == sep.ManifestFile {
		return readSEPManifest(path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return Manifest{}, raw, fmt.Errorf("manifest: %s: %w", ManifestFile, err)
	}
	if err := m.Validate(); err != nil {
		return m, raw, err
	}
	return m, raw, nil
}

// readSEPManifest reads extension.toml into the host's Manifest.
func readSEPManifest(path string) (Manifest, []byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Manifest{}, nil, err
	}
	sm, err := sep.ParseManifest(raw)
	m := Manifest{
		Name: sm.Name, Version: sm.Version, Description: sm.Description,
		Exec: sm.Run.Command, Args: sm.Run.Args, Env: sm.EnvRefs(), SEP: &sm,
	}
	if sm.Disabled {
		off := false
		m.Enabled = &off
	}
	if err != nil {
		return m, raw, err
	}
	if m.Name == "" {
		return m, raw, fmt.Errorf("manifest: %s: name is required", sep.ManifestFile)
	}
	if err := m.Validate(); err != nil {
		return m, raw, fmt.Errorf("%w (%s)", err, sep.ManifestFile)
	}
	return m, raw, nil
}

// HookTimeout is how long the host waits for this extension's answer
// to the hook on event: the manifest's hook_timeout_ms, else def. A SEP
// extension's tool_call hook defaults to SEP's 60 s.
func (m Manifest) HookTimeout(event string, def time.Duration) time.Duration {
	if m.SEP == nil {
		return def
	}
	t, _ := m.SEP.HookTimeouts()
	if d, ok := t[sep.HookName(event)]; ok {
		return d
	}
	if d, ok := t[""]; ok {
		return d
	}
	if event == wire.EventToolCall || event == wire.EventUserBash {
		return sep.FailClosedHookTimeout
	}
	return def
}

// ExecPath resolves the manifest's exec against dir: absolute paths stay,
// paths with a separator are relative to dir, and a bare name is a file in
// dir if one exists, else looked up on $PATH (python3, node, …); see
// resolveExec for Windows' extra rules.
func (m Manifest) ExecPath(dir string) (string, error) {
	p, _, err := resolveExec(runtime.GOOS, dir, m.Exec, hostExecEnv())
	return p, err
}

// codeFiles lists the files inside dir whose change should reload the
// extension and whose bytes go into its trust hash: the exec when it lives
// in dir, and every arg naming a regular file in dir (node index.js,
// python3 main.py).
func (m Manifest) codeFiles(dir string) []string {
	if m.Pi != nil {
		return m.piCodeFiles()
	}
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		p = filepath.Clean(p)
		if seen[p] || !within(dir, p) {
			return
		}
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			seen[p] = true
			out = append(out, p)
		}
	}
	if p, err := m.ExecPath(dir); err == nil {
		add(p)
	}
	for _, a := range m.Args {
		if a == "" || strings.HasPrefix(a, "-") {
			continue
		}
		if filepath.IsAbs(a) {
			add(a)
		} else {
			add(filepath.Join(dir, a))
		}
	}
	return out
}

// within reports whether p is dir or below it.
func within(dir, p string) bool {
	return ospath.Within(filepath.Clean(dir), filepath.Clean(p))
}

// SetEnabled rewrites dir/extension.json with enabled set. The file keeps
// its layout and every other field (unknown ones included): an existing
// "enabled" value is replaced in place, else the field is appended.
func SetEnabled(dir string, enabled bool) error {
	path, err := manifestPath(dir)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if filepath.Base(path) == sep.ManifestFile {
		out, err := sep.SetDisabled(raw, !enabled)
		if err != nil {
			return err
		}
		st, err := os.Stat(path)
		if err != nil {
			return err
		}
		return atomicfile.Write(path, out, st.Mode().Perm())
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return fmt.Errorf("manifest: %w", err)
	}
	val := fmt.Sprint(enabled)
	var out []byte
	if _, ok := fields["enabled"]; ok {
		out = enabledRE.ReplaceAll(raw, []byte(`${1}`+val))
	} else if i := bytes.LastIndexByte(raw, '}'); i > 0 {
		head := bytes.TrimRight(raw[:i], " \t\r\n")
		sep := ","
		if len(head) > 0 && head[len(head)-1] == '{' {
			sep = ""
		}
		out = append(append([]byte{}, head...), []byte(sep+"\n  \"enabled\": "+val+"\n")...)
		out = append(out, raw[i:]...)
	}
	var check Manifest
	if json.Unmarshal(out, &check) != nil || check.IsEnabled() != enabled {
		// Unusual layout: fall back to re-encoding (sorted keys).
		fields["enabled"] = json.RawMessage(val)
		if out, err = json.MarshalIndent(fields, "", "  "); err != nil {
			return err
		}
		out = append(out, '\n')
	}
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, out, st.Mode().Perm())
}

var enabledRE = regexp.MustCompile(`("enabled"\s*:\s*)(true|false|null)`)
