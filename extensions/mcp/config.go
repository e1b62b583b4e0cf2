package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Scopes: where a server's configuration came from.
const (
	ScopeUser    = "user"    // $ZOT_HOME/mcp.json
	ScopeProject = "project" // the workspace's .mcp.json or .zot/mcp.json; needs trust
	ScopeFlag    = "flag"    // --mcp-config FILE, the user's own act
	ScopeSession = "session" // ACP session/new mcpServers, for one session
)

// Transports.
const (
	TransportStdio = "stdio"
	TransportHTTP  = "http" // streamable HTTP
	TransportSSE   = "sse"  // the legacy HTTP+SSE transport
)

// DefaultCallTimeout bounds one tool call unless the server's "timeout"
// says otherwise.
const DefaultCallTimeout = 10 * time.Minute

// UserFile is the user's configuration inside $ZOT_HOME.
const UserFile = "mcp.json"

// ProjectFiles are the workspace's configurations, lowest precedence
// first: Claude Code's .mcp.json, then zot's own .zot/mcp.json.
var ProjectFiles = []string{".mcp.json", filepath.Join(".zot", "mcp.json")}

// ServerConfig is one server of an mcpServers object, its ${VAR}s
// expanded.
type ServerConfig struct {
	Name  string `json:"name"`
	Scope string `json:"scope"`
	File  string `json:"file,omitempty"` // the file it came from ("" for session servers)
	Type  string `json:"transport"`      // stdio | http | sse

	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"-"` // values may be secrets: never shown
	Cwd     string            `json:"cwd,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"-"`
	// Timeout bounds one tool call ("timeout" in seconds; default 10 min).
	Timeout time.Duration `json:"-"`

	// Err is why the entry is unusable (a bad field, an unset ${VAR});
	// the server is listed as invalid with it.
	Err error `json:"-"`
	// raw is the entry as written (before expansion): trust is recorded
	// against its hash, so editing the entry asks again.
	raw json.RawMessage
}

// NeedsTrust reports whether the server may run only once the user
// trusted it: a repository can ship a project file.
func (c ServerConfig) NeedsTrust() bool { return c.Scope == ScopeProject }

// TrustKey is the server's name in the trust store, beside extensions.
func (c ServerConfig) TrustKey() string { return "mcp:" + c.Name }

// TrustHash covers the entry as written and its name: any change asks again.
func (c ServerConfig) TrustHash() string {
	var buf bytes.Buffer
	buf.WriteString(c.Name)
	buf.WriteByte(0)
	if err := json.Compact(&buf, c.raw); err != nil {
		buf.Write(c.raw)
	}
	sum := sha256.Sum256(buf.Bytes())
	return hex.EncodeToString(sum[:])
}

// CommandLine is what runs, as the trust question and `zot mcp list`
// show it: the command and every argument (quoted where needed), or the
// URL; environment variable names, never their values.
func (c ServerConfig) CommandLine() string {
	if c.Type != TransportStdio {
		s := c.Type + " " + c.URL
		if len(c.Headers) > 0 {
			s += " (headers: " + strings.Join(sortedKeys(c.Headers), ", ") + ")"
		}
		return s
	}
	parts := []string{shellQuote(c.Command)}
	for _, a := range c.Args {
		parts = append(parts, shellQuote(a))
	}
	s := strings.Join(parts, " ")
	if len(c.Env) > 0 {
		s += " (env: " + strings.Join(sortedKeys(c.Env), ", ") + ")"
	}
	if c.Cwd != "" {
		s += " (in " + c.Cwd + ")"
	}
	return s
}

func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`;&|<>(){}*?!#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Sources names the configuration files to read.
type Sources struct {
	Home string // $ZOT_HOME: mcp.json there is the user's
	Cwd  string // the workspace: .mcp.json and .zot/mcp.json
	// Extra are --mcp-config files, in order; each wins over the ones
	// before it and over the user and project files. Trusted (the user
	// named them) unless ExtraNeedTrust.
	Extra []string
	// ExtraNeedTrust: Extra came from an editor's settings, which a
	// repository can ship: those inside the workspace need trust.
	ExtraNeedTrust bool
}

// Load reads every configuration file that exists and merges them by
// name (later files win). A file that cannot be read or parsed is an
// error naming it; a bad server entry is returned with Err set, so it is
// listed (invalid) instead of silently missing.
func Load(src Sources, getenv func(string) (string, bool)) ([]ServerConfig, []error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	type file struct {
		path, scope string
		required    bool
	}
	var files []file
	if src.Home != "" {
		files = append(files, file{filepath.Join(src.Home, UserFile), ScopeUser, false})
	}
	if src.Cwd != "" {
		for _, f := range ProjectFiles {
			files = append(files, file{filepath.Join(src.Cwd, f), ScopeProject, false})
		}
	}
	for _, f := range src.Extra {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		scope := ScopeFlag
		if src.ExtraNeedTrust && src.Cwd != "" && inside(src.Cwd, abs) {
			scope = ScopeProject
		}
		files = append(files, file{abs, scope, true})
	}
	var errs []error
	byName := map[string]int{}
	var out []ServerConfig
	for _, f := range files {
		b, err := os.ReadFile(f.path)
		if errors.Is(err, os.ErrNotExist) && !f.required {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("MCP configuration %s: %w", f.path, err))
			continue
		}
		servers, err := Parse(b, f.path, f.scope, src.Cwd, getenv)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, s := range servers {
			if i, ok := byName[s.Name]; ok {
				out[i] = s
				continue
			}
			byName[s.Name] = len(out)
			out = append(out, s)
		}
	}
	return out, errs
}

func inside(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// Parse reads one mcpServers document. A document that is not JSON, or
// whose mcpServers is not an object, is an error naming file; a bad
// entry comes back with Err naming the file, the server and the field.
// Servers come in name order (a JSON object has none).
func Parse(data []byte, file, scope, cwd string, getenv func(string) (string, bool)) ([]ServerConfig, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("MCP configuration %s: not valid JSON: %v", file, err)
	}
	rawServers, ok := doc["mcpServers"]
	if !ok {
		return nil, nil // a file for something else (or empty): nothing to run
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(rawServers, &entries); err != nil || entries == nil {
		return nil, fmt.Errorf("MCP configuration %s: \"mcpServers\" must be an object of servers by name", file)
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []ServerConfig
	for _, name := range names {
		c, skip := parseServer(name, entries[name], file, scope, cwd, getenv)
		if skip {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// ParseServers parses servers given as a JSON object by name (the value
// of mcpServers) for scope, with no file (ACP session servers).
func ParseServers(entries map[string]json.RawMessage, scope, cwd string, getenv func(string) (string, bool)) []ServerConfig {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	names := make([]string, 0, len(entries))
	for n := range entries {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []ServerConfig
	for _, name := range names {
		if c, skip := parseServer(name, entries[name], "", scope, cwd, getenv); !skip {
			out = append(out, c)
		}
	}
	return out
}

// entry is a server as written; every field is decoded on its own so an
// error can name it.
type entry map[string]json.RawMessage

func parseServer(name string, raw json.RawMessage, file, scope, cwd string, getenv func(string) (string, bool)) (c ServerConfig, skip bool) {
	c = ServerConfig{Name: name, Scope: scope, File: file, raw: raw, Timeout: DefaultCallTimeout}
	where := fmt.Sprintf("server %q", name)
	if file != "" {
		where = fmt.Sprintf("MCP configuration %s: server %q", file, name)
	}
	fail := func(field, format string, args ...any) (ServerConfig, bool) {
		c.Err = fmt.Errorf("%s: field %q: %s", where, field, fmt.Sprintf(format, args...))
		return c, false
	}
	if name == "" {
		c.Name = "(empty)"
		return fail("name", "a server needs a non-empty name")
	}
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil || e == nil {
		c.Err = fmt.Errorf("%s: must be an object with \"command\" (stdio) or \"type\" and \"url\" (http, sse)", where)
		return c, false
	}
	var disabled bool
	if err := e.get("disabled", &disabled); err != nil {
		return fail("disabled", "%v", err)
	}
	if disabled {
		return c, true // Cline's "disabled": true
	}
	var typ string
	if err := e.get("type", &typ); err != nil {
		return fail("type", "%v", err)
	}
	if typ == "" {
		typ = TransportStdio
		if _, hasURL := e["url"]; hasURL {
			if _, hasCmd := e["command"]; !hasCmd {
				typ = TransportHTTP
			}
		}
	}
	switch typ {
	case TransportStdio, TransportHTTP, TransportSSE:
	case "streamable-http", "streamableHttp", "streamable_http":
		typ = TransportHTTP
	default:
		return fail("type", "must be \"stdio\", \"http\" or \"sse\", not %q", typ)
	}
	c.Type = typ
	expand := func(field, s string) (string, bool) {
		v, err := Expand(s, getenv)
		if err != nil {
			fail(field, "%v", err)
			return "", false
		}
		return v, true
	}
	var secs float64
	if err := e.get("timeout", &secs); err != nil {
		return fail("timeout", "must be a number of seconds: %v", err)
	}
	if secs < 0 {
		return fail("timeout", "must be a positive number of seconds, not %v", secs)
	}
	if secs > 0 {
		c.Timeout = time.Duration(secs * float64(time.Second))
	}
	if typ == TransportStdio {
		var cmd string
		if err := e.get("command", &cmd); err != nil {
			return fail("command", "%v", err)
		}
		if strings.TrimSpace(cmd) == "" {
			return fail("command", "a stdio server needs a command")
		}
		var ok bool
		if c.Command, ok = expand("command", cmd); !ok {
			return c, false
		}
		var args []string
		if err := e.get("args", &args); err != nil {
			return fail("args", "must be an array of strings: %v", err)
		}
		for i, a := range args {
			v, ok := expand(fmt.Sprintf("args[%d]", i), a)
			if !ok {
				return c, false
			}
			c.Args = append(c.Args, v)
		}
		var env map[string]string
		if err := e.get("env", &env); err != nil {
			return fail("env", "must be an object of strings: %v", err)
		}
		if len(env) > 0 {
			c.Env = map[string]string{}
		}
		for k, v := range env {
			x, ok := expand("env."+k, v)
			if !ok {
				return c, false
			}
			c.Env[k] = x
		}
		var dir string
		if err := e.get("cwd", &dir); err != nil {
			return fail("cwd", "%v", err)
		}
		if dir != "" {
			if dir, ok = expand("cwd", dir); !ok {
				return c, false
			}
			if !filepath.IsAbs(dir) && cwd != "" {
				dir = filepath.Join(cwd, dir)
			}
			c.Cwd = dir
		}
		return c, false
	}
	var u string
	if err := e.get("url", &u); err != nil {
		return fail("url", "%v", err)
	}
	if strings.TrimSpace(u) == "" {
		return fail("url", "an %s server needs a url", typ)
	}
	var ok bool
	if c.URL, ok = expand("url", u); !ok {
		return c, false
	}
	if !strings.HasPrefix(c.URL, "http://") && !strings.HasPrefix(c.URL, "https://") {
		return fail("url", "must be an http:// or https:// URL, not %q", c.URL)
	}
	var headers map[string]string
	if err := e.get("headers", &headers); err != nil {
		return fail("headers", "must be an object of strings: %v", err)
	}
	if len(headers) > 0 {
		c.Headers = map[string]string{}
	}
	for k, v := range headers {
		x, ok := expand("headers."+k, v)
		if !ok {
			return c, false
		}
		c.Headers[k] = x
	}
	return c, false
}

// get decodes field into v; a missing field or null leaves v alone.
func (e entry) get(field string, v any) error {
	raw, ok := e[field]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("has the wrong type (%s where %s was expected)", te.Value, te.Type)
		}
		return err
	}
	return nil
}

// Expand replaces ${VAR} and ${VAR:-default} as Claude Code does. An
// unset variable without a default is an error naming it: running a
// server with an empty token would fail later and less clearly.
func Expand(s string, getenv func(string) (string, bool)) (string, error) {
	if !strings.Contains(s, "${") {
		return s, nil
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		rest := s[i+2:]
		j := strings.IndexByte(rest, '}')
		if j < 0 {
			return "", fmt.Errorf("unterminated ${ in %q", s)
		}
		expr := rest[:j]
		name, def, hasDef := strings.Cut(expr, ":-")
		if !validVarName(name) {
			return "", fmt.Errorf("${%s}: %q is not an environment variable name", expr, name)
		}
		v, set := getenv(name)
		switch {
		case set && (v != "" || !hasDef):
			b.WriteString(v)
		case hasDef:
			b.WriteString(def)
		default:
			return "", fmt.Errorf("environment variable %s is not set (write ${%s:-default} for a default)", name, name)
		}
		s = rest[j+1:]
	}
}

func validVarName(n string) bool {
	if n == "" {
		return false
	}
	for i, r := range n {
		if r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') || (i > 0 && r >= '0' && r <= '9') {
			continue
		}
		return false
	}
	return true
}
