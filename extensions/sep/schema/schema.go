// Package schema holds zot's JSON Schemas (draft 2020-12) for the SEP
// messages its host sends: the envelope of every frame, and for each
// method the params the host sends or the result it replies with. They
// are written for zot from SEP's field definitions (SEP's own schema
// files stay in SEP's repository; docs/decisions.md says why), and a
// test checks every message of recorded real sessions against them.
package schema

import (
	"bufio"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

//go:embed *.json
var files embed.FS

// Part names what a schema covers: a method's params or its result.
const (
	Params = "Params"
	Result = "Result"
)

var (
	loadOnce sync.Once
	loadErr  error
	frame    *jsonschema.Resolved
	methods  map[string]map[string]*jsonschema.Resolved
)

func read(name string) map[string]json.RawMessage {
	b, err := files.ReadFile(name)
	if err != nil {
		panic(err)
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(fmt.Sprintf("%s: %v", name, err))
	}
	return m
}

// compile resolves body with the shared $defs inlined.
func compile(defs json.RawMessage, body json.RawMessage) (*jsonschema.Resolved, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	m["$schema"] = json.RawMessage(`"https://json-schema.org/draft/2020-12/schema"`)
	m["$defs"] = defs
	raw, _ := json.Marshal(m)
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, err
	}
	return s.Resolve(nil)
}

func load() {
	common := read("common.json")["$defs"]
	env := read("envelope.json")["$defs"]
	var envDefs map[string]json.RawMessage
	_ = json.Unmarshal(env, &envDefs)
	if frame, loadErr = compile(common, envDefs["Frame"]); loadErr != nil {
		loadErr = fmt.Errorf("envelope: %w", loadErr)
		return
	}
	methods = map[string]map[string]*jsonschema.Resolved{}
	for name, raw := range read("methods.json") {
		if name == "$comment" {
			continue
		}
		var parts map[string]json.RawMessage
		if loadErr = json.Unmarshal(raw, &parts); loadErr != nil {
			return
		}
		methods[name] = map[string]*jsonschema.Resolved{}
		for part, body := range parts {
			r, err := compile(common, body)
			if err != nil {
				loadErr = fmt.Errorf("%s %s: %w", name, part, err)
				return
			}
			methods[name][part] = r
		}
	}
}

// ValidateFrame checks one JSON-RPC frame's envelope.
func ValidateFrame(msg json.RawMessage) error {
	loadOnce.Do(load)
	if loadErr != nil {
		return loadErr
	}
	var v any
	if err := json.Unmarshal(msg, &v); err != nil {
		return err
	}
	return frame.Validate(v)
}

// Validate checks a method's params or result; it is an error to ask
// for a method or part zot has no schema for (a message the host should
// not send).
func Validate(method, part string, value json.RawMessage) error {
	loadOnce.Do(load)
	if loadErr != nil {
		return loadErr
	}
	r := methods[method][part]
	if r == nil {
		return fmt.Errorf("no schema for %s %s: the host does not send it", method, part)
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

// CheckTrace validates every message the host sent in a recorded
// session (lines {"to":"ext"|"host","msg":…}, see sep.Config.Trace): the
// envelope, and the params of each request or notification or the result
// of each reply (paired with the extension's request by id). It returns
// the methods the host sent and one error per message that failed.
func CheckTrace(r io.Reader) (sent map[string]int, errs []error) {
	sent = map[string]int{}
	asked := map[string]string{} // the extension's request ids → method
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec struct {
			To  string          `json:"to"`
			Msg json.RawMessage `json:"msg"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			errs = append(errs, fmt.Errorf("trace line %q: %w", sc.Bytes(), err))
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
		if err := ValidateFrame(rec.Msg); err != nil {
			errs = append(errs, fmt.Errorf("envelope of %s: %w", rec.Msg, err))
		}
		switch {
		case m.Method != "":
			sent[m.Method]++
			if err := Validate(m.Method, Params, m.Params); err != nil {
				errs = append(errs, fmt.Errorf("%s params %s: %w", m.Method, m.Params, err))
			}
		case m.Result != nil:
			method := asked[string(m.ID)]
			sent["reply:"+method]++
			if err := Validate(method, Result, m.Result); err != nil {
				errs = append(errs, fmt.Errorf("reply to %s (id %s) %s: %w", method, m.ID, m.Result, err))
			}
		default:
			sent["error reply"]++
		}
	}
	if err := sc.Err(); err != nil {
		errs = append(errs, err)
	}
	return sent, errs
}
