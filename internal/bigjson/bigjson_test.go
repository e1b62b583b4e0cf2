package bigjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
)

type params struct {
	Text   string            `json:"text"`
	Images []image           `json:"images"`
	Ptr    *image            `json:"ptr"`
	Any    any               `json:"any"`
	Map    map[string]any    `json:"map"`
	Strs   map[string]string `json:"strs"`
	List   []any             `json:"list"`
	Raw    json.RawMessage   `json:"raw"`
	N      int               `json:"n"`
}

type image struct {
	Data string `json:"data"`
}

// check decodes doc with Unmarshal and with encoding/json (on a copy) and
// wants the same value.
func check(t *testing.T, doc string) params {
	t.Helper()
	var want, got params
	wantErr := json.Unmarshal([]byte(doc), &want)
	buf := []byte(doc)
	_, gotErr := Unmarshal(buf, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("errors differ: encoding/json %v, bigjson %v", wantErr, gotErr)
	}
	if wantErr != nil {
		return got
	}
	// RawMessage: the same JSON value, not necessarily the same bytes.
	var wr, gr any
	if len(want.Raw) > 0 {
		json.Unmarshal(want.Raw, &wr)
		if err := json.Unmarshal(got.Raw, &gr); err != nil {
			t.Fatalf("raw %q: %v", got.Raw, err)
		}
	}
	want.Raw, got.Raw = nil, nil
	if !reflect.DeepEqual(wr, gr) {
		t.Fatalf("raw values differ")
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("decoded values differ:\n got %.300v\nwant %.300v", got, want)
	}
	return got
}

func withMin(t *testing.T, n int) {
	old := minString
	minString = n
	t.Cleanup(func() { minString = old })
}

func TestUnmarshalMatchesEncodingJSON(t *testing.T) {
	withMin(t, 16)
	texts := []string{
		strings.Repeat("a prompt line\n", 10),
		`quotes " and \ backslashes / slashes <html> & ` + "\t\r\b\f\x01\x1f",
		"unicode é 中文 😀 \u2028 \u2029 " + strings.Repeat("x", 20),
		strings.Repeat("\x00", 40), // shrinks 6×: copied
	}
	for _, text := range texts {
		enc, _ := json.Marshal(text)
		for _, doc := range []string{
			`{"text":` + string(enc) + `,"n":3}`,
			`{"images":[{"data":` + string(enc) + `},{"data":"small"}],"ptr":{"data":` + string(enc) + `}}`,
			`{"any":` + string(enc) + `,"map":{"k":` + string(enc) + `,"n":{"deep":[` + string(enc) + `]}},"strs":{"s":` + string(enc) + `}}`,
			`{"list":[1,` + string(enc) + `,{"x":` + string(enc) + `}],"raw":{"v":[` + string(enc) + `]}}`,
			`{"raw":` + string(enc) + `, "text" : ` + string(enc) + ` }`,
			`{` + string(enc) + `:1,"text":"short"}`, // a large key stays a key
		} {
			check(t, doc)
		}
	}
	// Escapes written by hand, as other encoders write them.
	for _, lit := range []string{
		`"\u00e9\u00E9\/\ud83d\ude00 and more text here"`,
		`"lone surrogates \ud800 \udc00 \ud800\u0041 \ud800\\ end of it"`,
		`"tail surrogate at the end \ud83d"`,
	} {
		check(t, `{"text":`+lit+`}`)
	}
}

func TestUnmarshalInPlace(t *testing.T) {
	withMin(t, 16)
	doc := []byte(`{"text":"` + strings.Repeat(`line\n`, 100) + `"}`)
	var p params
	if _, err := Unmarshal(doc, &p); err != nil {
		t.Fatal(err)
	}
	if p.Text != strings.Repeat("line\n", 100) {
		t.Fatalf("text %q", p.Text)
	}
	start, end := uintptr(unsafe.Pointer(&doc[0])), uintptr(unsafe.Pointer(&doc[len(doc)-1]))
	if at := uintptr(unsafe.Pointer(unsafe.StringData(p.Text))); at < start || at > end {
		t.Fatal("the text was copied, not unquoted in the document's memory")
	}
}

func TestUnmarshalLeavesOthersAlone(t *testing.T) {
	withMin(t, 16)
	for _, doc := range []string{
		`{"text":"` + strings.Repeat("x", 40) + `"`,           // not JSON
		`{"text":"` + strings.Repeat("x", 40) + "\xff" + `"}`, // invalid UTF-8: U+FFFD grows
		`{"text":"short"}`,
		`{"n":"` + strings.Repeat("x", 40) + `"}`, // a type error
	} {
		buf := []byte(doc)
		check(t, doc)
		var p params
		_, err := Unmarshal(buf, &p)
		if err != nil && !bytes.Equal(buf, []byte(doc)) {
			t.Fatalf("%.40q: failed and changed the document", doc)
		}
	}
}

func TestPlaceholderNotForgeable(t *testing.T) {
	withMin(t, 16)
	doc := `{"text":` + strings.Repeat(" ", 1) + `"\u0000zot-big-0000000000000000-0","any":"` + strings.Repeat("y", 40) + `"}`
	p := check(t, doc)
	if p.Text != "\x00zot-big-0000000000000000-0" {
		t.Fatalf("text %q", p.Text)
	}
}

func FuzzUnmarshal(f *testing.F) {
	f.Add(`{"text":"hello\nworld \u00e9 \ud83d\ude00","list":["a\"b"]}`)
	f.Add(`{"map":{"k":"\/\\\b"},"raw":["x\u2028"]}`)
	f.Fuzz(func(t *testing.T, doc string) {
		withMin(t, 4)
		var want, got params
		wantErr := json.Unmarshal([]byte(doc), &want)
		_, gotErr := Unmarshal([]byte(doc), &got)
		if wantErr != nil || gotErr != nil {
			return // segmentio and encoding/json differ on some errors
		}
		want.Raw, got.Raw = nil, nil
		if !reflect.DeepEqual(want, got) {
			t.Fatalf("decoded values differ:\n got %+v\nwant %+v", got, want)
		}
	})
}
