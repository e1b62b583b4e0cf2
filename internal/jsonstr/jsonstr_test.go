package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// stdlib is what encoding/json writes for s without HTML escaping: the
// output Append promises to match byte for byte.
func stdlib(t testing.TB, s string) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// The bytes are compared, not the decoded strings: decoding maps an
// invalid byte and a raw U+2028 to the same string as their escapes, so a
// round trip cannot see the difference a JavaScript client would.
func TestAppendMatchesEncodingJSON(t *testing.T) {
	cases := map[string]struct {
		in, want string
	}{
		"plain":                {"hello, world", `"hello, world"`},
		"empty":                {"", `""`},
		"quote and backslash":  {`a"b\c`, `"a\"b\\c"`},
		"newline tab cr":       {"a\nb\tc\rd", `"a\nb\tc\rd"`},
		"backspace, form feed": {"\b\f", `"\b\f"`},
		"other controls":       {"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		"html left alone":      {"<a href='x'>&</a>", `"<a href='x'>&</a>"`},
		"multibyte":            {"héllo 世界 🙂", `"héllo 世界 🙂"`},
		"line separator":       {"a\u2028b", `"a\u2028b"`},
		"paragraph separator":  {"a\u2029b", `"a\u2029b"`},
		"invalid byte":         {"a\xffb", `"a\ufffdb"`},
		"truncated rune":       {"a\xe4\xb8", `"a\ufffd\ufffd"`},
		"surrogate half":       {"\xed\xa0\x80", `"\ufffd\ufffd\ufffd"`},
		"overlong slash":       {"\xc0\xaf", `"\ufffd\ufffd"`},
		"literal U+FFFD":       {"\uFFFD", "\"\uFFFD\""},
		"invalid then escaped": {"\xff\n\u2028\"", `"\ufffd\n\u2028\""`},
	}
	for name, c := range cases {
		got := Append(nil, c.in)
		if string(got) != c.want {
			t.Errorf("%s: Append(%q) = %s, want %s", name, c.in, got, c.want)
		}
		if std := stdlib(t, c.in); !bytes.Equal(got, std) {
			t.Errorf("%s: Append(%q) = %s, encoding/json writes %s", name, c.in, got, std)
		}
	}
}

func TestAppendKeepsPrefix(t *testing.T) {
	got := Append([]byte(`{"k":`), "v\n")
	if want := `{"k":"v\n"`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

// FuzzAppend checks every input against encoding/json, byte for byte.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "\b\f", "\u2028\u2029", "\xff", "\xe2\x80", "<>&", `"\`, "🙂\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, std := Append(nil, s), stdlib(t, s); !bytes.Equal(got, std) {
			t.Fatalf("Append(%q) = %s, encoding/json writes %s", s, got, std)
		}
	})
}
