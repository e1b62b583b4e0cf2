package schema

import (
	"encoding/json"
	"testing"
)

// The schemas accept what SEP allows and refuse what it does not: each
// check below fails if the schema it exercises is loosened.
func TestSchemasAcceptAndRefuse(t *testing.T) {
	ok := []struct{ method, part, v string }{
		{"initialize", Params, `{"protocol_version":1,"host":{"name":"zot","version":"1"},"workspace":{"root":"/w","trusted":true},"mode":"widget","ui_capabilities":["confirm"],"capabilities_enabled":{"kv":true}}`},
		{"hook", Params, `{"hook":"tool_call","context":{"token":"e1","tier":"event"},"input":{"tool":"bash"}}`},
		{"tool/execute", Params, `{"call_id":"c","tool":"t","arguments":{},"context":{"token":"c1","tier":"command"}}`},
		{"ping", Result, `{}`},
		{"kv/get", Result, `{"value":null}`},
	}
	for _, c := range ok {
		if err := Validate(c.method, c.part, json.RawMessage(c.v)); err != nil {
			t.Errorf("%s %s %s: %v", c.method, c.part, c.v, err)
		}
	}
	bad := []struct{ method, part, v string }{
		{"initialize", Params, `{"protocol_version":0,"host":{"name":"zot","version":"1"},"workspace":{"root":"/w","trusted":true},"mode":"widget"}`},
		{"initialize", Params, `{"protocol_version":1,"host":{"name":"zot","version":"1"},"workspace":{"root":"/w","trusted":true},"mode":"editor"}`},
		{"hook", Params, `{"hook":"tool_call","context":{"token":"e1","tier":"turn"},"input":{}}`},
		{"hook", Params, `{"hook":"nope","context":{"token":"e1","tier":"event"},"input":{}}`},
		{"tool/execute", Params, `{"call_id":"c","tool":"t","context":{"token":"c1","tier":"command"}}`},
		{"event", Params, `{"event":"turn_start","context":{"token":"e","tier":"event"},"extra":1}`},
		{"ping", Result, `{"pong":true}`},
	}
	for _, c := range bad {
		if err := Validate(c.method, c.part, json.RawMessage(c.v)); err == nil {
			t.Errorf("%s %s accepted %s", c.method, c.part, c.v)
		}
	}
	for _, f := range []string{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","method":"event","params":{}}`, `{"jsonrpc":"2.0","id":"a","result":{}}`, `{"jsonrpc":"2.0","id":2,"error":{"code":-32003,"message":"no"}}`} {
		if err := ValidateFrame(json.RawMessage(f)); err != nil {
			t.Errorf("frame %s: %v", f, err)
		}
	}
	for _, f := range []string{`{"jsonrpc":"1.0","id":1,"method":"ping"}`, `{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}`, `{"jsonrpc":"2.0","id":1.5,"result":{}}`, `{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}`} {
		if err := ValidateFrame(json.RawMessage(f)); err == nil {
			t.Errorf("frame accepted: %s", f)
		}
	}
	if err := Validate("provider/complete", Params, json.RawMessage(`{}`)); err == nil {
		t.Error("a method without a schema validated")
	}
}
