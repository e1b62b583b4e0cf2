package mcp

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadMergesScopesAndExpands(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	writeFile(t, filepath.Join(home, "mcp.json"), `{"mcpServers": {
		"db": {"command": "user-db"},
		"docs": {"type": "http", "url": "https://${HOST:-docs.example}/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
	}}`)
	writeFile(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {
		"db": {"command": "claude-db", "args": ["--root", "${HOME_DIR}"], "env": {"K": "${K:-dflt}"}},
		"fs": {"command": "fs-server", "cwd": "sub"},
		"off": {"command": "x", "disabled": true}
	}}`)
	writeFile(t, filepath.Join(ws, ".zot", "mcp.json"), `{"mcpServers": {"fs": {"command": "zot-fs", "timeout": 5}}}`)
	got, errs := Load(Sources{Home: home, Cwd: ws}, env(map[string]string{"TOKEN": "t0k", "HOME_DIR": "/h"}))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	by := map[string]ServerConfig{}
	for _, c := range got {
		if c.Err != nil {
			t.Fatalf("%s: %v", c.Name, c.Err)
		}
		by[c.Name] = c
	}
	if len(by) != 3 {
		t.Fatalf("servers %v, want db, docs, fs (off is disabled)", by)
	}
	if db := by["db"]; db.Command != "claude-db" || db.Scope != ScopeProject || strings.Join(db.Args, " ") != "--root /h" || db.Env["K"] != "dflt" {
		t.Fatalf("db (the project wins over the user): %+v", db)
	}
	if fs := by["fs"]; fs.Command != "zot-fs" || !strings.HasSuffix(fs.File, filepath.Join(".zot", "mcp.json")) || fs.Timeout != 5*time.Second {
		t.Fatalf("fs (.zot/mcp.json wins over .mcp.json): %+v", fs)
	}
	if d := by["docs"]; d.Type != TransportHTTP || d.URL != "https://docs.example/mcp" || d.Headers["Authorization"] != "Bearer t0k" || d.Scope != ScopeUser || d.Timeout != DefaultCallTimeout {
		t.Fatalf("docs: %+v", d)
	}
	if by["db"].NeedsTrust() == false || by["docs"].NeedsTrust() {
		t.Fatal("project servers need trust, user servers do not")
	}
}

func TestLoadErrorsNameFileServerAndField(t *testing.T) {
	ws := t.TempDir()
	bad := filepath.Join(ws, "bad.json")
	writeFile(t, bad, `{"mcpServers": {"a": {"command": 3}, "b": {"type": "ws", "url": "x"}, "c": {"command": "x", "args": "one"},
		"d": {"command": "x", "env": {"T": "${UNSET_VAR}"}}, "e": {"type": "http"}, "f": {"command": "ok"}}}`)
	notJSON := filepath.Join(ws, "broken.json")
	writeFile(t, notJSON, `{"mcpServers": {`)
	got, errs := Load(Sources{Extra: []string{bad, notJSON, filepath.Join(ws, "missing.json")}}, env(nil))
	if len(errs) != 2 || !strings.Contains(errs[0].Error(), "broken.json") || !strings.Contains(errs[0].Error(), "not valid JSON") || !strings.Contains(errs[1].Error(), "missing.json") {
		t.Fatalf("file errors: %v", errs)
	}
	want := map[string][]string{
		"a": {`server "a"`, `field "command"`, "wrong type"},
		"b": {`field "type"`, `"ws"`},
		"c": {`field "args"`, "array of strings"},
		"d": {`field "env.T"`, "UNSET_VAR is not set"},
		"e": {`field "url"`, "needs a url"},
	}
	for _, c := range got {
		if c.Name == "f" {
			if c.Err != nil || c.Scope != ScopeFlag {
				t.Fatalf("f: %+v", c)
			}
			continue
		}
		if c.Err == nil {
			t.Fatalf("%s: no error", c.Name)
		}
		for _, w := range append(want[c.Name], bad) {
			if !strings.Contains(c.Err.Error(), w) {
				t.Errorf("%s: %q lacks %q", c.Name, c.Err, w)
			}
		}
	}
	if len(got) != 6 {
		t.Fatalf("got %d servers, want 6 (invalid ones are listed)", len(got))
	}
}

func TestEditorConfigInsideWorkspaceNeedsTrust(t *testing.T) {
	ws := t.TempDir()
	in := filepath.Join(ws, "tools", "mcp.json")
	writeFile(t, in, `{"mcpServers": {"x": {"command": "x"}}}`)
	got, _ := Load(Sources{Cwd: ws, Extra: []string{in}, ExtraNeedTrust: true}, env(nil))
	if len(got) != 1 || !got[0].NeedsTrust() {
		t.Fatalf("an editor-named file inside the workspace must need trust: %+v", got)
	}
	got, _ = Load(Sources{Cwd: ws, Extra: []string{in}}, env(nil))
	if got[0].NeedsTrust() {
		t.Fatal("--mcp-config is the user's own act")
	}
}

func TestTrustHashFollowsTheEntry(t *testing.T) {
	a, _ := Parse([]byte(`{"mcpServers":{"s":{"command":"a","args":["1"]}}}`), "f", ScopeProject, "", env(nil))
	b, _ := Parse([]byte(`{"mcpServers":{"s":{"command":"a","args":["2"]}}}`), "f", ScopeProject, "", env(nil))
	c, _ := Parse([]byte(`{"mcpServers":{"s":{ "command" : "a", "args":["1"] }}}`), "f", ScopeProject, "", env(nil))
	if a[0].TrustHash() == b[0].TrustHash() || a[0].TrustHash() != c[0].TrustHash() {
		t.Fatal("the trust hash must change with the entry and not with whitespace")
	}
	if cl := a[0].CommandLine(); cl != "a 1" {
		t.Fatalf("command line %q", cl)
	}
}

func TestExpand(t *testing.T) {
	e := env(map[string]string{"A": "x", "EMPTY": ""})
	for in, want := range map[string]string{"${A}": "x", "p${A}s": "pxs", "${B:-d}": "d", "${EMPTY:-d}": "d", "${EMPTY}": "", "none": "none", "${A}${A}": "xx"} {
		if got, err := Expand(in, e); err != nil || got != want {
			t.Errorf("Expand(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"${B}", "${A", "${1X}"} {
		if _, err := Expand(in, e); err == nil {
			t.Errorf("Expand(%q): no error", in)
		}
	}
}

func TestToolNames(t *testing.T) {
	if n := ToolName("my server", "get.thing"); n != "mcp__my_server__get_thing" {
		t.Fatal(n)
	}
	long := ToolName("s", strings.Repeat("x", 80))
	long2 := ToolName("s", strings.Repeat("x", 81))
	if len(long) != 64 || long == long2 {
		t.Fatalf("long names: %q %q", long, long2)
	}
	got := uniqueNames([]string{"mcp__a_b__t", "mcp__a_b__t", "mcp__a_b__t"})
	if got[0] != "mcp__a_b__t" || got[1] != "mcp__a_b__t_2" || got[2] != "mcp__a_b__t_3" {
		t.Fatal(got)
	}
}
