// Package secrets keeps zot's credentials out of what the agent touches:
// the environment of the processes it starts, and the text of tool
// results, events and session files.
package secrets

import (
	"os"
	"slices"
	"strings"
)

// EnvNames are the variables holding credentials zot itself uses: the
// provider keys and the RPC token. They are removed from the environment of
// the bash tool (and of extensions that do not ask for them by name).
var EnvNames = []string{"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ZOTCORE_RPC_TOKEN"}

// ScrubEnv returns env without the EnvNames variables.
func ScrubEnv(env []string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(EnvNames, name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// minSecretLen keeps short, common strings (a placeholder key, "test")
// from being redacted all over the text.
const minSecretLen = 8

// Mask replaces a redacted secret.
const Mask = "[REDACTED]"

// Redactor replaces known secret values in text. The zero value and nil
// redact nothing.
type Redactor struct {
	values []string
	repl   *strings.Replacer
}

// NewRedactor redacts the given values (blank and short ones are ignored)
// and the current values of EnvNames.
func NewRedactor(values ...string) *Redactor {
	for _, n := range EnvNames {
		values = append(values, os.Getenv(n))
	}
	r := &Redactor{}
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minSecretLen || slices.Contains(r.values, v) {
			continue
		}
		r.values = append(r.values, v)
	}
	// Longest first, so a key that contains another is masked whole.
	slices.SortFunc(r.values, func(a, b string) int { return len(b) - len(a) })
	if len(r.values) > 0 {
		pairs := make([]string, 0, 2*len(r.values))
		for _, v := range r.values {
			pairs = append(pairs, v, Mask)
		}
		r.repl = strings.NewReplacer(pairs...)
	}
	return r
}

// Active reports whether there is anything to redact.
func (r *Redactor) Active() bool { return r != nil && r.repl != nil }

// String masks every secret in s.
func (r *Redactor) String(s string) string {
	if !r.Active() || s == "" {
		return s
	}
	for _, v := range r.values {
		if strings.Contains(s, v) {
			return r.repl.Replace(s)
		}
	}
	return s
}

// Bytes masks every secret in b; b is returned as is when it holds none.
func (r *Redactor) Bytes(b []byte) []byte {
	if !r.Active() || len(b) == 0 {
		return b
	}
	for _, v := range r.values {
		if strings.Contains(string(b), v) {
			return []byte(r.repl.Replace(string(b)))
		}
	}
	return b
}
