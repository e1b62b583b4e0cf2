package extensions

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/zot-editors/zot/extensions/wire"
)

func TestDecodeFrame(t *testing.T) {
	good := []string{
		`{"type":"hello","name":"x","version":"1","capabilities":["tools"]}`,
		"{\"type\":\"ready\"}\r",
		`  {"type":"notify","level":"warn","message":"m","unknown_field":[1,2]}  `,
		`{"type":"command_invoked","id":"1","name":"n","args":"a b"}`,
		`{"type":"tool_call","id":"1","name":"n","args":{"a":1}}`,
	}
	for _, g := range good {
		if _, err := DecodeFrame([]byte(g)); err != nil {
			t.Errorf("%s: %v", g, err)
		}
	}
	bad := []string{``, `   `, `[1]`, `"str"`, `{"type":""}`, `{"name":"x"}`, `{"type":1}`, `{"type":"x"`, `not json`, `null`}
	for _, b := range bad {
		if _, err := DecodeFrame([]byte(b)); err == nil {
			t.Errorf("%q decoded", b)
		}
	}
	f, _ := DecodeFrame([]byte(`{"type":"event_intercept_response","id":"i","replace_text":""}`))
	if f.ReplaceText == nil || *f.ReplaceText != "" {
		t.Fatal("an empty replace_text must stay distinguishable from none")
	}
}

func TestEncodeFrameFieldNames(t *testing.T) {
	b, _ := EncodeFrame(wire.Frame{Type: wire.TypeHelloAck, ProtocolVersion: 1, ExtensionDir: "/d", DataDir: "/d", Cwd: "/c"})
	want := `{"type":"hello_ack","protocol_version":1,"cwd":"/c","extension_dir":"/d","data_dir":"/d"}` + "\n"
	if string(b) != want {
		t.Fatalf("got %s", b)
	}
	b, _ = EncodeFrame(wire.Frame{Type: wire.TypeToolCancel, ID: "tool_call-3"})
	if string(b) != `{"type":"tool_cancel","id":"tool_call-3"}`+"\n" {
		t.Fatalf("got %s", b)
	}
}

func TestLineReader(t *testing.T) {
	max := 1000
	in := strings.Join([]string{
		"short",
		strings.Repeat("a", max), // exactly the limit
		strings.Repeat("b", max+1),
		"",
		strings.Repeat("c", 300000), // far past it, spans many buffer fills
		"after",
	}, "\n") + "\nlast-without-newline"
	lr := newLineReader(strings.NewReader(in), max)
	var got []string
	for {
		l, err := lr.next()
		if errors.Is(err, ErrLineTooLong) {
			got = append(got, "TOO-LONG")
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(l) > 100 {
			got = append(got, string(l[:1])+"*")
		} else {
			got = append(got, string(l))
		}
	}
	want := "short a* TOO-LONG  TOO-LONG after last-without-newline"
	if strings.Join(got, " ") != want {
		t.Fatalf("got  %q\nwant %q", strings.Join(got, " "), want)
	}
}

// FuzzDecodeFrame: the decoder never panics, and what it accepts survives
// an encode/decode round trip unchanged.
func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"type":"hello","name":"x","version":"1.0.0","capabilities":["commands","tools","panels"]}`,
		`{"type":"register_tool","name":"w","description":"d","schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}`,
		`{"type":"tool_result","id":"1","content":[{"type":"text","text":"ok"},{"type":"image","mime_type":"image/png","data":"AAAA"}],"is_error":true}`,
		`{"type":"event_intercept_response","id":"1","block":true,"reason":"no","modified_args":{"a":[1,2]},"replace_text":"x"}`,
		`{"type":"command_response","id":"1","action":"open_panel","open_panel":{"id":"p","title":"t","lines":["a"],"footer":"f"}}`,
		`{"type":"panel_render","panel_id":"p","lines":null}`,
		`{"type":"notify","level":"info","message":"\u00e9\ud83d\ude00"}`,
		"{\"type\":\"x\",\"args\":\"str\"}\r",
		`{"type":"x","args":null,"step":-1}`,
		`{"type":"x","text":"\xff\xfe"}`,
		`[]`, `{}`, ``, `{"type":`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fr, err := DecodeFrame(line)
		if err != nil {
			return
		}
		if fr.Type == "" {
			t.Fatal("accepted a frame without type")
		}
		b1, err := EncodeFrame(fr)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		if bytes.Count(b1, []byte{'\n'}) != 1 {
			t.Fatalf("encoded frame spans lines: %q", b1)
		}
		fr2, err := DecodeFrame(b1)
		if err != nil {
			t.Fatalf("decode of own encoding: %v (%s)", err, b1)
		}
		b2, _ := EncodeFrame(fr2)
		if !bytes.Equal(b1, b2) {
			t.Fatalf("round trip changed the frame:\n%s\n%s", b1, b2)
		}
	})
}

// badHello names the field of a hello that does not decode, and leaves
// other frames to the bad-line log.
func TestBadHelloNamesTheField(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{`{"type":"hello","capabilities":{"tools":true}}`, `malformed hello: "capabilities" must be an array of strings, not an object`},
		{`{"type":"hello","name":7}`, `malformed hello: "name" must be a string, not a number`},
		{`{"type":"hello","capabilities":"tools"}`, `malformed hello: "capabilities" must be an array of strings, not a string`},
		{`{"type":"register_tool","name":7}`, ""},
	} {
		_, err := DecodeFrame([]byte(c.line))
		if err == nil {
			t.Fatalf("%s decoded", c.line)
		}
		got := badHello([]byte(c.line), err)
		if (got == nil) != (c.want == "") || got != nil && got.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.line, got, c.want)
		}
	}
}
