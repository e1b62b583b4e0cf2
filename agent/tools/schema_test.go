package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// schemaNode is the part of a JSON schema the check below reads.
type schemaNode struct {
	Type       string                 `json:"type"`
	Properties map[string]*schemaNode `json:"properties"`
	Items      *schemaNode            `json:"items"`
	Required   []string               `json:"required"`
}

// argField is one JSON field of an arguments struct.
type argField struct {
	typ     reflect.Type
	lenient bool // accepted but deliberately not offered in the schema
}

// argFields lists t's JSON fields, those of embedded structs included
// (lenient when the embedding says so).
func argFields(t reflect.Type, lenient bool) map[string]argField {
	out := map[string]argField{}
	for _, f := range reflect.VisibleFields(t) {
		if len(f.Index) > 1 { // reached through the embedding below
			continue
		}
		_, why := f.Tag.Lookup("lenient")
		if f.Anonymous {
			for k, v := range argFields(f.Type, lenient || why) {
				out[k] = v
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = argField{f.Type, lenient || why}
	}
	return out
}

var rawMessage = reflect.TypeFor[json.RawMessage]()

// jsonType is the JSON schema type a Go field decodes ("" for any).
func jsonType(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == rawMessage:
		return ""
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() == reflect.Bool:
		return "boolean"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	case t.Kind() == reflect.Slice:
		return "array"
	case t.Kind() == reflect.Struct || t.Kind() == reflect.Map:
		return "object"
	}
	return "unknown " + t.String()
}

// schemaProblems compares the object schema s at path with struct t.
func schemaProblems(path string, s *schemaNode, t reflect.Type) []string {
	var out []string
	if s.Type != "object" {
		return []string{fmt.Sprintf("%s: schema type %q, want object", path, s.Type)}
	}
	fields := argFields(t, false)
	for name, prop := range s.Properties {
		f, ok := fields[name]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("%s.%s: in the schema, not a field of %s", path, name, t))
		case jsonType(f.typ) != "" && jsonType(f.typ) != prop.Type:
			out = append(out, fmt.Sprintf("%s.%s: schema type %q, field type %s (%s)", path, name, prop.Type, f.typ, jsonType(f.typ)))
		}
	}
	for name, f := range fields {
		if _, ok := s.Properties[name]; !ok && !f.lenient {
			out = append(out, fmt.Sprintf("%s.%s: field of %s not in the schema (tag it lenient:\"why\" if that is meant)", path, name, t))
		}
	}
	for _, name := range s.Required {
		if _, ok := s.Properties[name]; !ok {
			out = append(out, fmt.Sprintf("%s: requires %q, which is not a property", path, name))
		}
	}
	slices.Sort(out)
	return out
}

// itemTypes names the element type of array properties whose field is
// decoded by the tool itself (json.RawMessage), so their items are checked
// too.
var itemTypes = map[string]reflect.Type{
	"edit.edits": reflect.TypeFor[editPair](),
}

// Every built-in tool is declared with its arguments struct, and its
// schema matches that struct.
func TestBuiltinSchemasMatchTheirArgs(t *testing.T) {
	for _, tool := range append(Builtins(NewDiskWorkspace(t.TempDir())), NewSkill(nil)) {
		d, ok := tool.(interface{ declared() toolInfo })
		if !ok {
			t.Errorf("%s is not declared with declare[Args]", tool.Name())
			continue
		}
		info := d.declared()
		var s schemaNode
		if err := json.Unmarshal(info.schema, &s); err != nil {
			t.Errorf("%s: schema: %v", info.name, err)
			continue
		}
		problems := schemaProblems(info.name, &s, info.args)
		for name, prop := range s.Properties {
			if it, ok := itemTypes[info.name+"."+name]; ok {
				if prop.Items == nil {
					problems = append(problems, info.name+"."+name+": no items schema")
				} else {
					problems = append(problems, schemaProblems(info.name+"."+name+"[]", prop.Items, it)...)
				}
			}
		}
		for _, p := range problems {
			t.Error(p)
		}
	}
}

// The check itself finds each kind of drift.
func TestSchemaProblemsFindsDrift(t *testing.T) {
	type args struct {
		Path  string `json:"path"`
		Limit int    `json:"limit"`
		Extra bool   `json:"extra"`
		Alias string `json:"alias" lenient:"another agent's spelling"`
	}
	var s schemaNode
	json.Unmarshal([]byte(`{"type":"object","properties":{
		"path":{"type":"integer"},"limit":{"type":"integer"},"gone":{"type":"string"}},
		"required":["path","missing"]}`), &s)
	got := schemaProblems("x", &s, reflect.TypeFor[args]())
	want := []string{
		`x.extra: field of tools.args not in the schema (tag it lenient:"why" if that is meant)`,
		`x.gone: in the schema, not a field of tools.args`,
		`x.path: schema type "integer", field type string (string)`,
		`x: requires "missing", which is not a property`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
