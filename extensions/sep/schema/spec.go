package schema

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Spec is SEP's own schema files, read from a checkout of its
// repository (spec/extension) at test time: zot ships none of them
// (docs/decisions.md). It checks fixtures and recorded messages against
// SEP's definitions rather than zot's.
type Spec struct {
	dir   string
	mu    sync.Mutex
	files map[string]map[string]json.RawMessage // file → its $defs
	cache map[string]*jsonschema.Resolved       // ref → schema
}

// LoadSpec opens SEP's spec/extension directory.
func LoadSpec(dir string) (*Spec, error) {
	if _, err := os.Stat(filepath.Join(dir, "methods", "envelope.schema.json")); err != nil {
		return nil, fmt.Errorf("%s is not SEP's spec/extension directory (no methods/envelope.schema.json): %w", dir, err)
	}
	return &Spec{dir: dir, files: map[string]map[string]json.RawMessage{}, cache: map[string]*jsonschema.Resolved{}}, nil
}

// Dir is the spec directory.
func (s *Spec) Dir() string { return s.dir }

// resolve compiles a reference "methods/x.schema.json#/$defs/Name".
func (s *Spec) resolve(ref string) (*jsonschema.Resolved, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r := s.cache[ref]; r != nil {
		return r, nil
	}
	file, def, ok := strings.Cut(ref, "#/$defs/")
	if !ok {
		return nil, fmt.Errorf("reference %q is not FILE#/$defs/NAME", ref)
	}
	defs, ok := s.files[file]
	if !ok {
		b, err := os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(file)))
		if err != nil {
			return nil, err
		}
		var f struct {
			Defs map[string]json.RawMessage `json:"$defs"`
		}
		if err := json.Unmarshal(b, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		defs = f.Defs
		s.files[file] = defs
	}
	if _, ok := defs[def]; !ok {
		return nil, fmt.Errorf("%s has no $defs/%s", file, def)
	}
	rawDefs, _ := json.Marshal(defs)
	body := fmt.Sprintf(`{"$schema":"https://json-schema.org/draft/2020-12/schema","$defs":%s,"$ref":"#/$defs/%s"}`, rawDefs, def)
	var sch jsonschema.Schema
	if err := json.Unmarshal([]byte(body), &sch); err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	r, err := sch.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	s.cache[ref] = r
	return r, nil
}

// ValidateRef checks value against a SEP definition
// ("methods/x.schema.json#/$defs/Name").
func (s *Spec) ValidateRef(ref string, value json.RawMessage) error {
	r, err := s.resolve(ref)
	if err != nil {
		return err
	}
	var v any
	if len(value) == 0 {
		value = json.RawMessage("{}")
	}
	if err := json.Unmarshal(value, &v); err != nil {
		return err
	}
	return r.Validate(v)
}

// MethodRef is the SEP definition of a method's params or result
// (Params / Result): kv/get → kv.schema.json GetParams, session/state →
// session.schema.json StateResult, $/cancel → cancel.schema.json.
func MethodRef(method, part string) string {
	group, verb, _ := strings.Cut(method, "/")
	switch group {
	case "kv", "session", "provider":
		camel := ""
		for _, w := range strings.Split(verb, "_") {
			if w != "" {
				camel += strings.ToUpper(w[:1]) + w[1:]
			}
		}
		return "methods/" + group + ".schema.json#/$defs/" + camel + part
	case "$":
		return "methods/" + verb + ".schema.json#/$defs/" + part
	}
	return "methods/" + strings.ReplaceAll(strings.ReplaceAll(method, "/", "-"), "_", "-") + ".schema.json#/$defs/" + part
}

// CheckTraceSpec is CheckTrace against SEP's own schemas: the envelope
// (SEP's Frame, one of Request, Notification, SuccessResponse,
// ErrorResponse) and each method's params or result.
func (s *Spec) CheckTraceSpec(lines []byte) (sent map[string]int, errs []error) {
	sent = map[string]int{}
	asked := map[string]string{}
	for _, line := range strings.Split(string(lines), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var rec struct {
			To  string          `json:"to"`
			Msg json.RawMessage `json:"msg"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			errs = append(errs, fmt.Errorf("trace line %q: %w", line, err))
			continue
		}
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
			Result json.RawMessage `json:"result"`
		}
		_ = json.Unmarshal(rec.Msg, &m)
		if rec.To == "host" {
			if m.Method != "" && len(m.ID) > 0 {
				asked[string(m.ID)] = m.Method
			}
			continue
		}
		kind := "ErrorResponse"
		switch {
		case m.Method != "" && len(m.ID) > 0:
			kind = "Request"
		case m.Method != "":
			kind = "Notification"
		case m.Result != nil:
			kind = "SuccessResponse"
		}
		if err := s.ValidateRef("methods/envelope.schema.json#/$defs/"+kind, rec.Msg); err != nil {
			errs = append(errs, fmt.Errorf("envelope (%s) of %s: %w", kind, rec.Msg, err))
		}
		switch {
		case m.Method != "":
			sent[m.Method]++
			if err := s.ValidateRef(MethodRef(m.Method, "Params"), m.Params); err != nil {
				errs = append(errs, fmt.Errorf("%s params %s: %w", m.Method, m.Params, err))
			}
		case m.Result != nil:
			method := asked[string(m.ID)]
			sent["reply:"+method]++
			if err := s.ValidateRef(MethodRef(method, "Result"), m.Result); err != nil {
				errs = append(errs, fmt.Errorf("reply to %s (id %s) %s: %w", method, m.ID, m.Result, err))
			}
		default:
			sent["error reply"]++
		}
	}
	return sent, errs
}
