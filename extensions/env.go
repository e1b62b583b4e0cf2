package extensions

import (
	"os"
	"slices"
	"strings"
	"time"
)

// Environment variables that change the host's defaults (tests of the
// real binary use them; Options set in code win).
const (
	EnvStartWait     = "ZOT_EXT_START_WAIT"     // Options.StartWait, e.g. 30s
	EnvDialogTimeout = "ZOT_EXT_DIALOG_TIMEOUT" // Options.DialogTimeout, e.g. 200ms
)

// envDuration is the duration in the variable name, else def. A value
// that is not a positive duration is reported (logf) and ignored.
func envDuration(name string, def time.Duration, logf func(string, ...any)) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		if logf != nil {
			logf("extensions: $%s=%q is not a positive duration (like 2s or 500ms); using %s", name, v, def)
		}
		return def
	}
	return d
}

// SecretEnv are the variables holding zot's own credentials: the provider
// keys and the RPC token. They are removed from an extension's environment
// unless its manifest asks for them by name ("env": ["OPENAI_API_KEY"]),
// which the trust question shows.
var SecretEnv = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ZOTCORE_RPC_TOKEN"}

// extensionEnv is environ without the SecretEnv variables the manifest
// did not ask for.
func extensionEnv(environ, allow []string) []string {
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(SecretEnv, name) && !slices.Contains(allow, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// secretsAsked lists the SecretEnv names the manifest asks for.
func (m Manifest) secretsAsked() []string {
	var out []string
	for _, n := range m.Env {
		if slices.Contains(SecretEnv, n) && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
