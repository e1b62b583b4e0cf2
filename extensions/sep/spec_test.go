package sep

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/extensions/sep/schema"
	"github.com/zot-editors/zot/extensions/wire"
	"github.com/zot-editors/zot/internal/testenv"
)

// EnvSEPSpec names a checkout of SEP's spec/extension directory; the
// conformance tests run only with it (SEP's files are not in this
// repository: docs/decisions.md).
const EnvSEPSpec = "ZOT_SEP_SPEC"

// specDir returns $ZOT_SEP_SPEC or skips.
func specDir(t *testing.T) *schema.Spec {
	dir := testenv.OptIn(t, EnvSEPSpec, "a checkout of SEP's spec/extension directory (smooth-operator's repository)")
	s, err := schema.LoadSpec(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type fixture struct {
	name     string
	ref      string
	instance json.RawMessage
	valid    bool
}

func readFixtures(t *testing.T, dir string) []fixture {
	b, err := os.ReadFile(filepath.Join(dir, "conformance", "fixtures.json"))
	if err != nil {
		t.Fatal(err)
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Name     string          `json:"name"`
		Ref      string          `json:"$schema_ref"`
		Instance json.RawMessage `json:"instance"`
	}
	var out []fixture
	for name, raw := range all {
		switch name {
		case "$comment":
		case "$invalid":
			var inv []entry
			if err := json.Unmarshal(raw, &inv); err != nil {
				t.Fatal(err)
			}
			for _, e := range inv {
				out = append(out, fixture{e.Name, e.Ref, compact(t, e.Instance), false})
			}
		default:
			var e entry
			if err := json.Unmarshal(raw, &e); err != nil {
				t.Fatal(err)
			}
			out = append(out, fixture{name, e.Ref, compact(t, e.Instance), true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// hostSent maps the SEP definitions of what zot's host sends onto zot's
// own schemas (extensions/sep/schema), which the host's recorded
// messages are checked against in every SEP test.
var hostSent = map[string][2]string{
	"initialize.schema.json#/$defs/Params":         {"initialize", schema.Params},
	"shutdown.schema.json#/$defs/Params":           {"shutdown", schema.Params},
	"ping.schema.json#/$defs/Params":               {"ping", schema.Params},
	"ping.schema.json#/$defs/Result":               {"ping", schema.Result},
	"event.schema.json#/$defs/Params":              {"event", schema.Params},
	"hook.schema.json#/$defs/Params":               {"hook", schema.Params},
	"tool-execute.schema.json#/$defs/Params":       {"tool/execute", schema.Params},
	"command-execute.schema.json#/$defs/Params":    {"command/execute", schema.Params},
	"command-complete.schema.json#/$defs/Params":   {"command/complete", schema.Params},
	"cancel.schema.json#/$defs/Params":             {"$/cancel", schema.Params},
	"ui-request.schema.json#/$defs/Result":         {"ui/request", schema.Result},
	"tools-set-active.schema.json#/$defs/Result":   {"tools/set_active", schema.Result},
	"session.schema.json#/$defs/StateResult":       {"session/state", schema.Result},
	"kv.schema.json#/$defs/GetResult":              {"kv/get", schema.Result},
	"kv.schema.json#/$defs/ListResult":             {"kv/list", schema.Result},
	"exec-run.schema.json#/$defs/Result":           {"exec/run", schema.Result},
	"session.schema.json#/$defs/SendMessageResult": {"session/send_message", schema.Result},
	"provider.schema.json#/$defs/CompleteParams":   {"provider/complete", schema.Params},
}

// SEP's conformance fixtures through the host's message types: SEP's
// own schemas give each its verdict (valid, or in $invalid), and the
// host must agree — frames through the host's decoder (an invalid one
// refused with -32600), what the host sends through zot's schemas, and
// what it receives from an extension through a running bridge (an
// invalid request refused with -32602, an invalid answer treated as
// junk: a guard's fails closed). Fixtures of what zot does not
// implement are counted as not covered.
func TestSEPConformanceFixtures(t *testing.T) {
	spec := specDir(t)
	fixtures := readFixtures(t, spec.Dir())
	r := newRig(t, Manifest{})
	// Pumps: every line the bridge writes either way, in order.
	hostCh, extCh := make(chan wire.Frame, 64), make(chan map[string]any, 64)
	go func() {
		for {
			line, err := r.hostR.ReadBytes('\n')
			if err != nil {
				close(hostCh)
				return
			}
			var f wire.Frame
			_ = json.Unmarshal(line, &f)
			hostCh <- f
		}
	}()
	go func() {
		for {
			line, err := r.extR.ReadBytes('\n')
			if err != nil {
				close(extCh)
				return
			}
			var m map[string]any
			_ = json.Unmarshal(line, &m)
			extCh <- m
		}
	}()
	hostFrame := func(types ...string) wire.Frame {
		t.Helper()
		for {
			select {
			case f := <-hostCh:
				if len(types) == 0 || slices.Contains(types, f.Type) {
					return f
				}
			case <-time.After(30 * time.Second): // a hang guard
				t.Fatalf("no host frame %v within 30 s", types)
			}
		}
	}
	extMsg := func(method string) map[string]any {
		t.Helper()
		select {
		case m := <-extCh:
			if m["method"] != method {
				t.Fatalf("the extension got %v, want %s", m, method)
			}
			return m
		case <-time.After(30 * time.Second):
			t.Fatalf("no %s within 30 s", method)
		}
		return nil
	}
	full := wire.UICapabilities{Confirm: true, Select: true, Input: true, Status: true, Widget: true}
	ack, _ := json.Marshal(wire.Frame{Type: wire.TypeHelloAck, Cwd: "/w", ZotVersion: "9",
		HostCapabilities: &wire.HostCapabilities{UI: full, Features: []string{wire.CapExec, wire.CapProviders}}})
	hostFrame(wire.TypeHello)
	r.toBridge(r.hostW, string(ack))
	init := extMsg("initialize")
	r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(init["id"])+`,"result":{"protocol_version":1,"extension":{"name":"x","version":"1"},"registrations":{"hooks":["tool_call"]}}}`)
	hostFrame(wire.TypeReady)
	seq := 0
	next := func() string { seq++; return "f" + strconv.Itoa(seq) }

	type verdict struct {
		covered, accepted bool
		how               string
	}
	// request sends the extension's request and waits for its answer,
	// serving what the host is asked meanwhile: a shape the bridge
	// understood reaches the host or gets a result; one it refused gets
	// -32602 or -32600.
	request := func(method string, params json.RawMessage) verdict {
		t.Helper()
		id := next()
		r.toBridge(r.extW, `{"jsonrpc":"2.0","id":"`+id+`","method":"`+method+`","params":`+string(params)+`}`)
		asked := ""
		for {
			select {
			case f := <-hostCh:
				asked += f.Type + " "
				var ans []byte
				switch f.Type {
				case wire.TypeUIRequest:
					ans, _ = json.Marshal(wire.Frame{Type: wire.TypeUIResponse, ID: f.ID, Cancelled: true})
				case wire.TypeSendMessage, wire.TypeAppendEntry, wire.TypeSetModel, wire.TypeGetEntries, wire.TypeGetTools, wire.TypeSetActiveTools, wire.TypeExec:
					ans, _ = json.Marshal(wire.Frame{Type: wire.TypeActionResult, ID: f.ID, Error: "conformance: not served"})
				}
				if ans != nil {
					r.toBridge(r.hostW, string(ans))
				}
			case m := <-extCh:
				if m["id"] != id {
					t.Fatalf("the extension got %v while waiting for the answer to %s", m, id)
				}
				if e, _ := m["error"].(map[string]any); e != nil {
					code := e["code"].(float64)
					return verdict{true, code != CodeInvalidParams && code != CodeInvalidRequest, "asked the host: " + asked + "; error " + jsonOf(e)}
				}
				return verdict{true, true, "asked the host: " + asked + "; result " + jsonOf(m["result"])}
			case <-time.After(30 * time.Second):
				t.Fatalf("no answer to %s %s within 30 s", method, params)
			}
		}
	}

	var agree, covered, mismatch int
	var notCovered []string
	for _, fx := range fixtures {
		if err := spec.ValidateRef(fx.ref, fx.instance); (err == nil) != fx.valid {
			t.Errorf("%s: SEP's own schema says %v for a fixture listed as valid=%v", fx.name, err, fx.valid)
			continue
		}
		file, def, _ := strings.Cut(strings.TrimPrefix(fx.ref, "methods/"), "#/$defs/")
		var v verdict
		switch {
		case file == "envelope.schema.json":
			_, e := Decode(fx.instance)
			v = verdict{true, e == nil, "decode"}
			if e != nil && e.Code != CodeInvalidRequest {
				v.accepted, v.how = true, "refused with "+jsonOf(e)+", not -32600"
			}
		case hostSent[file+"#/$defs/"+def][0] != "":
			m := hostSent[file+"#/$defs/"+def]
			err := schema.Validate(m[0], m[1], fx.instance)
			v = verdict{true, err == nil, "zot's schema"}
		case def == "HookOutcome":
			f := hookAnswer(pendingCall{zotID: "h", event: wire.EventToolCall}, Message{JSONRPC: "2.0", ID: json.RawMessage("1"), Result: fx.instance}, t.Logf)
			var o struct {
				Action string `json:"action"`
			}
			_ = json.Unmarshal(fx.instance, &o)
			v = verdict{true, f.Block == (o.Action == "block"), "hook answer " + jsonOf(f)}
		case file == "ui-request.schema.json" && def == "Params":
			v = request("ui/request", fx.instance)
		case file == "session.schema.json" && strings.HasSuffix(def, "Params"):
			method := map[string]string{"SendMessageParams": "session/send_message", "SendUserMessageParams": "session/send_user_message",
				"AppendEntryParams": "session/append_entry", "SetModelParams": "session/set_model"}[def]
			v = request(method, fx.instance)
		case file == "kv.schema.json" && strings.HasSuffix(def, "Params"):
			v = request("kv/"+strings.ToLower(strings.TrimSuffix(def, "Params")), fx.instance)
		case file == "bus-publish.schema.json", file == "exec-run.schema.json" && def == "Params",
			file == "tools-set-active.schema.json" && def == "Params", file == "registry-update.schema.json" && def == "Params":
			method := map[string]string{"bus-publish.schema.json": "bus/publish", "exec-run.schema.json": "exec/run",
				"tools-set-active.schema.json": "tools/set_active", "registry-update.schema.json": "registry/update"}[file]
			inst := fx.instance
			if method == "exec/run" { // a token of this session: the tier is what SEP's fixture says
				var p map[string]any
				_ = json.Unmarshal(inst, &p)
				p["context"] = b2ctx(r.b, "command")
				inst, _ = json.Marshal(p)
			}
			v = request(method, inst)
		case file == "provider.schema.json" && def == "DeltaParams":
			v = request("provider/delta", fx.instance)
		case file == "provider.schema.json" && def == "CompleteResult":
			pc, _ := json.Marshal(wire.Frame{Type: wire.TypeProviderComplete, ID: next(), Name: "p", Model: "m", Messages: json.RawMessage("[]")})
			r.toBridge(r.hostW, string(pc))
			req := extMsg("provider/complete")
			r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(req["id"])+`,"result":`+string(fx.instance)+`}`)
			f := hostFrame(wire.TypeProviderResult)
			v = verdict{true, f.Error == "", "provider_result " + jsonOf(f)}
		case file == "log.schema.json":
			v = request("log", fx.instance)
		case file == "command-execute.schema.json" && def == "Result":
			ci, _ := json.Marshal(wire.Frame{Type: wire.TypeCommandInvoked, ID: next(), Name: "c", Args: json.RawMessage(`""`)})
			r.toBridge(r.hostW, string(ci))
			req := extMsg("command/execute")
			r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(req["id"])+`,"result":`+string(fx.instance)+`}`)
			f := hostFrame(wire.TypeCommandResponse)
			v = verdict{true, f.Error == "", "command_response " + jsonOf(f)}
		case file == "shutdown.schema.json" && def == "Result":
			sd, _ := json.Marshal(wire.Frame{Type: wire.TypeShutdown})
			r.toBridge(r.hostW, string(sd))
			req := extMsg("shutdown")
			r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(req["id"])+`,"result":`+string(fx.instance)+`}`)
			hostFrame(wire.TypeShutdownAck)
			v = verdict{true, true, "shutdown_ack"}
		case file == "tool-update.schema.json":
			call, _ := json.Marshal(wire.Frame{Type: wire.TypeToolCall, ID: callID(fx.instance), Name: "t", Args: json.RawMessage("{}")})
			r.toBridge(r.hostW, string(call))
			exe := extMsg("tool/execute")
			v = request("tool/update", fx.instance)
			r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(exe["id"])+`,"result":{"content":"done"}}`)
			hostFrame(wire.TypeToolResult)
		case file == "tool-execute.schema.json" && def == "Result":
			call, _ := json.Marshal(wire.Frame{Type: wire.TypeToolCall, ID: next(), Name: "t", Args: json.RawMessage("{}")})
			r.toBridge(r.hostW, string(call))
			exe := extMsg("tool/execute")
			r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(exe["id"])+`,"result":`+string(fx.instance)+`}`)
			f := hostFrame(wire.TypeToolResult)
			v = verdict{true, !strings.Contains(jsonOf(f.Content), "is not {content, is_error}"), "tool_result " + jsonOf(f.Content)}
		case file == "command-complete.schema.json" && def == "Result":
			cc, _ := json.Marshal(wire.Frame{Type: wire.TypeCommandComplete, ID: next(), Name: "c", Text: ""})
			r.toBridge(r.hostW, string(cc))
			req := extMsg("command/complete")
			r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(req["id"])+`,"result":`+string(fx.instance)+`}`)
			f := hostFrame(wire.TypeCompletions)
			var want struct {
				Completions []wire.Completion `json:"completions"`
			}
			_ = json.Unmarshal(fx.instance, &want)
			v = verdict{true, len(f.Completions) == len(want.Completions), "completions " + jsonOf(f.Completions)}
		default:
			notCovered = append(notCovered, fx.name)
			continue
		}
		covered++
		if v.accepted == fx.valid {
			agree++
		} else {
			mismatch++
			t.Errorf("%s (%s, SEP: valid=%v): the host says accepted=%v (%s)", fx.name, fx.ref, fx.valid, v.accepted, v.how)
		}
	}
	t.Logf("SEP conformance fixtures: %d in all; %d through the host's message types, %d agree with SEP, %d do not; not covered (%d): %s",
		len(fixtures), covered, agree, mismatch, len(notCovered), strings.Join(notCovered, ", "))
}

// compact puts a fixture's instance on one line (a SEP message is one line).
func compact(t *testing.T, raw json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// b2ctx issues a context token of tier on the bridge, as a host call would.
func b2ctx(b *Bridge, tier string) map[string]string { return b.context(tier) }

// callID is the call_id of a tool/update fixture.
func callID(instance json.RawMessage) string {
	var p struct {
		CallID string `json:"call_id"`
	}
	_ = json.Unmarshal(instance, &p)
	return p.CallID
}
