package extensions

import (
	"slices"
	"strings"
	"testing"
)

// Schemas in the shapes extensions send: args are checked with messages
// the model can act on.
func TestToolSchemaValidation(t *testing.T) {
	cases := []struct {
		schema, args, want string // want "" = valid
	}{
		{`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, `{"city":"Berlin"}`, ""},
		{`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, `{"city":3}`, "city"},
		{`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`, `{}`, "city"},
		{`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"n":{"type":"integer","minimum":1}}}`, `{"n":0}`, "minimum"},
		{`{"type":"object","properties":{"mode":{"enum":["a","b"]}}}`, `{"mode":"c"}`, "mode"},
		{`{"type":"object","additionalProperties":false,"properties":{}}`, `{"x":1}`, "x"},
	}
	for _, c := range cases {
		compiled, err := compileSchema([]byte(c.schema))
		if err != nil {
			t.Fatalf("%s: %v", c.schema, err)
		}
		tr := &toolReg{name: "t", compiled: compiled}
		err = tr.validateArgs([]byte(c.args))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s with %s: unexpected %v", c.schema, c.args, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s with %s: got %v, want mention of %q", c.schema, c.args, err, c.want)
		}
	}
	if err := (&toolReg{name: "t"}).validateArgs([]byte(`{nope`)); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Errorf("bad JSON: %v", err)
	}
}

// A schema the validator cannot use (a $ref to nothing) still registers the
// tool: zot passes schemas to the model unchecked, and existing extensions
// must run unmodified. Its args are not checked; the extension says so.
func TestUnusableSchemaStillRegisters(t *testing.T) {
	e := newEnv(t)
	e.global("odd", "-tools", "echo", "-schema", `{"type":"object","properties":{"text":{"$ref":"#/$defs/missing"}}}`)
	h := e.start(nil)
	if toolNamed(h, "echo") == nil {
		t.Fatalf("the tool did not register: %+v", statusOf(h, "odd"))
	}
	if !slices.ContainsFunc(statusOf(h, "odd").Diagnostics, func(d string) bool { return strings.Contains(d, "schema not usable for validation") }) {
		t.Fatalf("no diagnostic about the schema: %+v", statusOf(h, "odd"))
	}
	if r := callTool(t, h, "echo", `{"text":"x","extra":[1]}`); resultText(r) != "echo: x" {
		t.Fatalf("the call: %+v", r)
	}
}
