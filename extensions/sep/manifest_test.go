package sep

import (
	"strings"
	"testing"
	"time"
)

const sample = `# gate
name = "gate"
version = "0.2.0"
protocol = 1
hook_timeout_ms = { tool_call = 1500 }

[run]
command = "node"
args = ["dist/index.js"]
env = { KEY = "${env:GATE_KEY}", URL = "https://x/${env:GATE_HOST}/v1", PLAIN = "p" }

[capabilities]
events = ["tool_call"]
exec = false

[resources]
skills = ["skills/"]
`

func TestParseManifest(t *testing.T) {
	m, err := ParseManifest([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "gate" || m.Run.Command != "node" || len(m.Run.Args) != 1 || m.Protocol != 1 {
		t.Fatalf("%+v", m)
	}
	if to, _ := m.HookTimeouts(); to["tool_call"] != 1500*time.Millisecond {
		t.Fatalf("hook timeouts %v", to)
	}
	if m.Enabled("exec") || !m.Enabled("ui") || strings.Join(m.Events(), ",") != "tool_call" {
		t.Fatalf("capabilities %v", m.Capabilities)
	}
	if got := strings.Join(m.EnvRefs(), ","); got != "GATE_HOST,GATE_KEY" {
		t.Fatalf("env refs %q", got)
	}
	env := map[string]string{"GATE_KEY": "k", "GATE_HOST": "h"}
	if got := strings.Join(m.ExpandEnv(func(k string) string { return env[k] }), " "); got != "KEY=k PLAIN=p URL=https://x/h/v1" {
		t.Fatalf("expanded %q", got)
	}
	for _, c := range []struct{ toml, want string }{
		{"name = \"a\"\n", "[run] command is required"},
		{"name = \"a\"\n[run]\ncommand = 3\n", "extension.toml:3"},
		{"name = \"a\"\nhook_timeout_ms = -1\n[run]\ncommand = \"x\"\n", "hook_timeout_ms"},
		{"name = \"a\"\n[run]\ncommand = \"x\"\n[capabilities]\nui = \"yes\"\n", "[capabilities] ui must be true or false"},
	} {
		if _, err := ParseManifest([]byte(c.toml)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.toml, err, c.want)
		}
	}
}

// disabled is written without touching the other lines, and read back.
func TestSetDisabled(t *testing.T) {
	out, err := SetDisabled([]byte(sample), true)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "# gate\n") || !strings.Contains(string(out), "disabled = true\n[run]") {
		t.Fatalf("%s", out)
	}
	again, err := SetDisabled(out, false)
	if err != nil || strings.Count(string(again), "disabled") != 1 || !strings.Contains(string(again), "disabled = false") {
		t.Fatalf("%s %v", again, err)
	}
	m, _ := ParseManifest(again)
	if m.Disabled {
		t.Fatal("still disabled")
	}
	c1, _ := Canonical([]byte(sample))
	c2, _ := Canonical(out)
	if len(c1) != len(c2) {
		t.Fatalf("disabled counts in the trust hash: %v vs %v", c1, c2)
	}
}
