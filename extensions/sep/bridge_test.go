package sep

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zot-editors/zot/extensions/wire"
)

// rig runs a Bridge between in-memory pipes: the test plays the host's
// frames on one side and the SEP extension on the other.
type rig struct {
	t        *testing.T
	b        *Bridge
	hostW    *io.PipeWriter // host → bridge
	hostR    *bufio.Reader  // bridge → host
	extW     *io.PipeWriter // extension → bridge
	extR     *bufio.Reader  // bridge → extension
	killed   chan struct{}
	killOnce sync.Once
	done     chan struct{}
}

func newRig(t *testing.T, m Manifest) *rig {
	hIn, hostW := io.Pipe()
	hostR, hOut := io.Pipe()
	cOut, extW := io.Pipe()
	extR, cIn := io.Pipe()
	r := &rig{t: t, hostW: hostW, hostR: bufio.NewReader(hostR), extW: extW, extR: bufio.NewReader(extR), killed: make(chan struct{}), done: make(chan struct{})}
	r.b = New(Config{Name: "x", Manifest: m, HostIn: hIn, HostOut: hOut, ChildIn: cIn, ChildOut: cOut,
		KV: OpenKV(t.TempDir() + "/kv.json"), Publish: func(string, json.RawMessage) {},
		Kill: func() { r.killOnce.Do(func() { close(r.killed) }) }})
	go func() { r.b.Run(); close(r.done) }()
	t.Cleanup(func() {
		extW.Close() // the extension's stdout ends: the bridge closes HostOut
		go io.Copy(io.Discard, hostR)
		go io.Copy(io.Discard, extR)
		hostW.Close()
		<-r.done
	})
	return r
}

// readLine reads one line, failing the test if none comes (a hang
// guard, not a timing claim).
func (r *rig) readLine(br *bufio.Reader) ([]byte, error) {
	r.t.Helper()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() { b, err := br.ReadBytes('\n'); ch <- res{b, err} }()
	select {
	case x := <-ch:
		return x.b, x.err
	case <-time.After(30 * time.Second):
		r.t.Fatal("no line within 30 s: the bridge is stuck")
		return nil, nil
	}
}

func (r *rig) hostFrame() wire.Frame {
	r.t.Helper()
	line, err := r.readLine(r.hostR)
	if err != nil {
		r.t.Fatalf("reading the host side: %v", err)
	}
	var f wire.Frame
	if err := json.Unmarshal(line, &f); err != nil {
		r.t.Fatalf("host frame %s: %v", line, err)
	}
	return f
}

func (r *rig) toBridge(w io.Writer, s string) {
	r.t.Helper()
	if _, err := io.WriteString(w, s+"\n"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) extMsg() map[string]any {
	r.t.Helper()
	line, err := r.readLine(r.extR)
	if err != nil {
		r.t.Fatalf("reading the extension side: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(line, &m); err != nil {
		r.t.Fatalf("ext line %s: %v", line, err)
	}
	return m
}

// handshake plays hello_ack (with ui caps) and the extension's
// initialize reply (its protocol_version ext).
func (r *rig) handshake(ext string, ui wire.UICapabilities) map[string]any {
	if f := r.hostFrame(); f.Type != wire.TypeHello || !strings.Contains(strings.Join(f.Capabilities, ","), wire.CapReady) {
		r.t.Fatalf("first frame %+v", f)
	}
	ack, _ := json.Marshal(wire.Frame{Type: wire.TypeHelloAck, Cwd: "/w", ZotVersion: "9", HostCapabilities: &wire.HostCapabilities{UI: ui}})
	r.toBridge(r.hostW, string(ack))
	init := r.extMsg()
	if init["method"] != "initialize" {
		r.t.Fatalf("first message %v", init)
	}
	r.toBridge(r.extW, `{"jsonrpc":"2.0","id":`+jsonOf(init["id"])+`,"result":{"protocol_version":`+ext+`,"extension":{"name":"x","version":"1"},"registrations":{"tools":[{"name":"t","description":"d","parameters":{"type":"object"}}],"hooks":["tool_call"]}}}`)
	return init
}

func jsonOf(v any) string { b, _ := json.Marshal(v); return string(b) }

// Bad input from an extension gets the error SEP names, echoing the id
// where there is one; the bridge goes on serving.
func TestBridgeRefusesWithSEPErrorCodes(t *testing.T) {
	r := newRig(t, Manifest{})
	init := r.handshake("7", wire.UICapabilities{})
	params := init["params"].(map[string]any)
	if params["protocol_version"] != float64(1) || params["mode"] != "headless" {
		t.Fatalf("initialize params %v", params)
	}
	for _, want := range []string{wire.TypeRegisterTool, wire.TypeSubscribe, wire.TypeReady} {
		if f := r.hostFrame(); f.Type != want {
			t.Fatalf("got %+v, want %s (a protocol_version above zot's negotiates down)", f, want)
		}
	}
	cases := []struct {
		line string
		id   any
		code float64
	}{
		{`{not json`, nil, CodeParseError},
		{`[1,2]`, nil, CodeInvalidRequest},
		{`{"jsonrpc":"1.0","id":5,"method":"ping"}`, float64(5), CodeInvalidRequest},
		{`{"jsonrpc":"2.0","id":6,"method":"nope/such"}`, float64(6), CodeMethodNotFound},
		{`{"jsonrpc":"2.0","id":7,"method":"kv/get","params":{}}`, float64(7), CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":8,"method":"exec/run","params":{"command":"ls"}}`, float64(8), CodeCapabilityDisabled},
		{`{"jsonrpc":"2.0","id":"s","method":"session/send_message","params":{"context":{"token":"c999","tier":"command"},"text":"x"}}`, "s", CodeContextViolation},
		{`{"jsonrpc":"2.0","id":9,"method":"ui/request","params":{"kind":"confirm","prompt":"ok?"}}`, float64(9), CodeNoUI},
		{`{"jsonrpc":"2.0","id":10,"method":"ui/request","params":{"kind":"dance"}}`, float64(10), CodeInvalidParams},
		{`{"jsonrpc":"2.0","id":11,"method":"ping","params":[]}`, float64(11), CodeInvalidParams},
	}
	for _, c := range cases {
		r.toBridge(r.extW, c.line)
		m := r.extMsg()
		e, _ := m["error"].(map[string]any)
		if e == nil || e["code"] != c.code || m["id"] != c.id {
			t.Errorf("%s → %v, want code %v id %v", c.line, m, c.code, c.id)
		}
	}
	r.toBridge(r.extW, `{"jsonrpc":"2.0","id":12,"method":"ping","params":{}}`)
	if m := r.extMsg(); m["id"] != float64(12) || jsonOf(m["result"]) != "{}" {
		t.Fatalf("ping after the errors: %v", m)
	}
}

// A handshake reply zot cannot use ends the extension (the host then
// reports the crash and the log says why).
func TestBridgeKillsOnBadInitialize(t *testing.T) {
	r := newRig(t, Manifest{})
	r.handshake("0", wire.UICapabilities{})
	select {
	case <-r.killed:
	case <-time.After(30 * time.Second): // a hang guard, not a timing claim
		t.Fatal("protocol_version 0 was accepted")
	}
}

// Hook outcomes map onto the host's intercept answers; a tool_call hook
// that errors blocks (fail closed), another hook's error lets it pass.
func TestHookOutcomes(t *testing.T) {
	msg := func(s string) Message {
		m, e := Decode([]byte(s))
		if e != nil {
			t.Fatal(e)
		}
		return m
	}
	tc := pendingCall{zotID: "i1", event: wire.EventToolCall}
	if f := hookAnswer(tc, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"block","reason":"no"}}`), t.Logf); !f.Block || f.Reason != "no" || f.ID != "i1" {
		t.Errorf("block: %+v", f)
	}
	if f := hookAnswer(tc, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"modify","patch":{"arguments":{"command":"ls"}}}}`), t.Logf); f.Block || string(f.ModifiedArgs) != `{"command":"ls"}` {
		t.Errorf("modify: %+v", f)
	}
	if f := hookAnswer(tc, msg(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`), t.Logf); !f.Block {
		t.Errorf("a failed tool_call hook did not block: %+v", f)
	}
	if f := hookAnswer(tc, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"maybe"}}`), t.Logf); !f.Block {
		t.Errorf("a junk tool_call answer did not block: %+v", f)
	}
	in := pendingCall{zotID: "i2", event: wire.EventInput}
	if f := hookAnswer(in, msg(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`), t.Logf); f.Block {
		t.Errorf("a failed input hook blocked: %+v", f)
	}
	if f := hookAnswer(in, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"modify","patch":{"text":"new"}}}`), t.Logf); f.ReplaceText == nil || *f.ReplaceText != "new" {
		t.Errorf("input modify: %+v", f)
	}
	// user_bash fails closed as tool_call does; modify carries the
	// extension's own run of the command.
	ub := pendingCall{zotID: "i3", event: wire.EventUserBash}
	if f := hookAnswer(ub, msg(`{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"boom"}}`), t.Logf); !f.Block {
		t.Errorf("a failed user_bash hook did not block: %+v", f)
	}
	if f := hookAnswer(ub, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"later"}}`), t.Logf); !f.Block {
		t.Errorf("a junk user_bash answer did not block: %+v", f)
	}
	if f := hookAnswer(ub, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"modify","patch":{"command":"ls"}}}`), t.Logf); !f.Block {
		t.Errorf("a user_bash modify without a result did not block: %+v", f)
	}
	if f := hookAnswer(ub, msg(`{"jsonrpc":"2.0","id":1,"result":{"action":"modify","patch":{"result":{"output":"remote","exit_code":2}}}}`), t.Logf); f.Block || f.BashResult == nil || f.BashResult.Output != "remote" || f.BashResult.ExitCode != 2 {
		t.Errorf("user_bash modify: %+v", f)
	}
}

// A slow extension sheds the oldest observe events past the cap and is
// told how many with events_lost (no seq); every event is either
// delivered or counted, and requests are never shed.
func TestBridgeEventsLost(t *testing.T) {
	r := newRig(t, Manifest{})
	r.handshake("1", wire.UICapabilities{})
	for i := 0; i < 3; i++ {
		r.hostFrame() // register_tool, subscribe, ready
	}
	const n = MaxQueuedEvents + 500
	ev, _ := json.Marshal(wire.Frame{Type: wire.TypeEvent, Event: wire.EventTurnStart})
	for i := 0; i < n; i++ { // the extension reads nothing meanwhile
		r.toBridge(r.hostW, string(ev))
	}
	call, _ := json.Marshal(wire.Frame{Type: wire.TypeToolCall, ID: "c1", Name: "t", Args: json.RawMessage(`{}`)})
	r.toBridge(r.hostW, string(call))
	delivered, lost, markers := 0, 0, 0
	for {
		m := r.extMsg()
		if m["method"] == "tool/execute" {
			break
		}
		p := m["params"].(map[string]any)
		if p["event"] == "events_lost" {
			markers++
			lost += int(p["payload"].(map[string]any)["lost"].(float64))
			if _, has := p["seq"]; has {
				t.Fatalf("events_lost with a seq: %v", p)
			}
			continue
		}
		delivered++
	}
	if markers == 0 || lost == 0 || delivered+lost != n || delivered > MaxQueuedEvents+1 {
		t.Fatalf("delivered %d, lost %d in %d markers; want all %d accounted for and at most %d delivered", delivered, lost, markers, n, MaxQueuedEvents+1)
	}
}
