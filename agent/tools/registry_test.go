package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func names(ts []Tool) string {
	var n []string
	for _, t := range ts {
		n = append(n, t.Name())
	}
	return strings.Join(n, ",")
}

func TestBuiltins(t *testing.T) {
	all := Builtins(NewDiskWorkspace(t.TempDir()))
	if got := names(all); got != "read,write,edit,bash,ls,grep,find" {
		t.Fatalf("Builtins order: %s", got)
	}
	for _, tool := range all {
		var schema struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(tool.Schema(), &schema); err != nil {
			t.Fatalf("%s: schema is not valid JSON: %v", tool.Name(), err)
		}
		if schema.Type != "object" || len(schema.Properties) == 0 {
			t.Errorf("%s: schema %s", tool.Name(), tool.Schema())
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", tool.Name(), r)
			}
		}
		if len(tool.Description()) < 100 {
			t.Errorf("%s: description too short", tool.Name())
		}
		// Garbage arguments are an error result, never a panic.
		for _, raw := range []string{``, `null`, `[]`, `{"path": 1}`, `"x"`} {
			if tool.Name() == "bash" && (raw == `` || raw == `null`) {
				continue // valid JSON that decodes to no command: covered elsewhere
			}
			r := tool.Run(t.Context(), Call{Args: json.RawMessage(raw), Progress: func(string) {}})
			if !r.IsError && tool.Name() != "ls" {
				t.Errorf("%s with %q: not an error: %s", tool.Name(), raw, text(r))
			}
		}
	}
}

func TestSelect(t *testing.T) {
	all := Builtins(NewDiskWorkspace(t.TempDir()))
	cases := []struct {
		in   []string
		want string
		err  string
	}{
		{[]string{"read", "bash"}, "read,bash", ""},
		{[]string{"bash", " read ", "bash", ""}, "bash,read", ""},
		{nil, "", ""},
		{[]string{"read", "rm"}, "", `unknown tool "rm"; valid tools are: read, write, edit, bash, ls, grep, find`},
		{[]string{"x", "y"}, "", `unknown tools "x", "y"`},
	}
	for _, c := range cases {
		got, err := Select(all, c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Select(%q) error = %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil || names(got) != c.want {
			t.Errorf("Select(%q) = %s, %v; want %s", c.in, names(got), err, c.want)
		}
	}
}
