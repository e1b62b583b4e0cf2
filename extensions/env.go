package extensions

import (
	"slices"
	"strings"
)

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
