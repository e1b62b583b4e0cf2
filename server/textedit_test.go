package server

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf16"

	"go.lsp.dev/protocol"

	"github.com/zot-editors/zot/internal/textdiff"
)

// applyLSP applies LSP TextEdits to text the way an editor does, with an
// independent UTF-16 conversion.
func applyLSP(t testing.TB, text string, edits []protocol.TextEdit) string {
	t.Helper()
	off := func(p protocol.Position) int {
		lines := strings.SplitAfter(text, "\n")
		start := 0
		for i := 0; i < int(p.Line) && i < len(lines); i++ {
			start += len(lines[i])
		}
		if int(p.Line) >= len(lines) {
			return len(text)
		}
		content := strings.TrimRight(lines[p.Line], "\r\n")
		u := utf16.Encode([]rune(content))
		c := min(int(p.Character), len(u))
		return start + len(string(utf16.Decode(u[:c])))
	}
	type abs struct {
		s, e int
		t    string
	}
	var as []abs
	for _, e := range edits {
		as = append(as, abs{off(e.Range.Start), off(e.Range.End), e.NewText})
	}
	for i := len(as) - 1; i >= 0; i-- {
		if i > 0 && as[i].s < as[i-1].e {
			t.Fatalf("overlapping or unsorted edits: %+v", edits)
		}
		text = text[:as[i].s] + as[i].t + text[as[i].e:]
	}
	return text
}

func TestComputeEditsRoundTrip(t *testing.T) {
	cases := []struct{ a, b string }{
		{"", "hello\n"},
		{"hello\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n"},
		{"a\nb\nc", "a\nb\nc\nd"},
		{"one two three\n", "one 2 three\n"},
		{"第一行 🙂 hello\r\n二行目 👍🏽 world\r\n", "第一行 🙂 hello\r\n二行目 👍🏽 wörld 🌍\r\n"},
		{"x\r\ny\r\n", "x\ny\n"},
		{"x\ny\n", "x\r\ny\r\n"},
		{"a\r\nb", "a\r\r\nb"},
		{"🙂🙂🙂", "🙂🙃🙂"},
		{"same", "same"},
		{"line\n", "line"},
		{"\n\n\n", "\n\nx\n\n"},
		{"func f() {\n\treturn 1\n}\n", "// doc\nfunc f() {\n\treturn 2\n}\n"},
	}
	for _, c := range cases {
		for _, enc := range []encoding{encUTF16} {
			edits := textdiff.Compute(c.a, c.b)
			if got := textdiff.Apply(c.a, edits); got != c.b {
				t.Fatalf("Apply(%q → %q) = %q (%+v)", c.a, c.b, got, edits)
			}
			if got := applyLSP(t, c.a, toTextEdits(c.a, edits, enc)); got != c.b {
				t.Fatalf("LSP apply (%q → %q) = %q (%+v)", c.a, c.b, got, toTextEdits(c.a, edits, enc))
			}
		}
	}
}

func TestComputeEditsRandom(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	alphabet := []string{"a", "b", "\n", "\r\n", "🙂", "語", "é", " ", "x\n"}
	gen := func(n int) string {
		var b strings.Builder
		for i := 0; i < n; i++ {
			b.WriteString(alphabet[r.Intn(len(alphabet))])
		}
		return b.String()
	}
	for i := 0; i < 2000; i++ {
		a := gen(r.Intn(40))
		b := a
		for k := r.Intn(4); k >= 0; k-- {
			if b == "" {
				b = gen(3)
				continue
			}
			p := r.Intn(len(b) + 1)
			for p < len(b) && (b[p]&0xC0) == 0x80 {
				p++
			}
			q := min(len(b), p+r.Intn(6))
			for q < len(b) && (b[q]&0xC0) == 0x80 {
				q++
			}
			b = b[:p] + gen(r.Intn(4)) + b[q:]
		}
		edits := textdiff.Compute(a, b)
		if got := textdiff.Apply(a, edits); got != b {
			t.Fatalf("Apply(%q → %q) = %q", a, b, got)
		}
		for _, e := range edits {
			if e.Start > 0 && e.Start < len(a) && a[e.Start-1] == '\r' && a[e.Start] == '\n' ||
				e.End > 0 && e.End < len(a) && a[e.End-1] == '\r' && a[e.End] == '\n' {
				t.Fatalf("edit splits a CRLF: %q → %q: %+v", a, b, e)
			}
		}
		if got := applyLSP(t, a, toTextEdits(a, edits, encUTF16)); got != b {
			t.Fatalf("LSP apply (%q → %q) = %q", a, b, got)
		}
	}
}

// A one-line change in a big file is one small edit: the payload is
// proportional to the change, not the file.
func TestOneLineEditIsSmall(t *testing.T) {
	a, b := bigFile(10000)
	edits := toTextEdits(a, textdiff.Compute(a, b), encUTF16)
	if len(edits) != 1 || edits[0].Range.Start.Line != 5000 || len(edits[0].NewText) > 20 {
		t.Fatalf("edits: %+v", edits)
	}
}

func bigFile(lines int) (string, string) {
	var sb strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&sb, "\tfmt.Println(\"line %d of a reasonably long Go file\") // 🙂\n", i)
	}
	a := sb.String()
	b := strings.Replace(a, "line 5000 of", "line 5000 (changed) of", 1)
	return a, b
}

func TestLineIndex(t *testing.T) {
	text := "a🙂b\r\n語x\rlast"
	li := newLineIndex(text)
	cases := []struct {
		line, char uint32
		enc        encoding
		off        int
	}{
		{0, 0, encUTF16, 0},
		{0, 1, encUTF16, 1},
		{0, 3, encUTF16, 5}, // after the surrogate pair
		{0, 2, encUTF16, 1}, // inside the pair: rounds down
		{0, 4, encUTF16, 6},
		{0, 99, encUTF16, 6}, // clamps before \r\n
		{1, 1, encUTF16, 11},
		{1, 2, encUTF16, 12},
		{2, 4, encUTF16, 17},
		{9, 0, encUTF16, len(text)},
		{0, 2, encUTF32, 5},
		{0, 5, encUTF8, 5},
		{0, 3, encUTF8, 1}, // inside 🙂: rounds down
	}
	for _, c := range cases {
		if got := li.offset(protocol.Position{Line: c.line, Character: c.char}, c.enc); got != c.off {
			t.Errorf("offset(%d:%d %v) = %d, want %d", c.line, c.char, c.enc, got, c.off)
		}
	}
	for _, off := range []int{0, 1, 5, 6, 8, 11, 12, 13, 17} {
		for _, enc := range []encoding{encUTF8, encUTF16, encUTF32} {
			p := li.position(off, enc)
			if back := li.offset(p, enc); back != off {
				t.Errorf("%v: position(%d) = %v → offset %d", enc, off, p, back)
			}
		}
	}
}

// offsetOf (didChange's, reading only up to the line) agrees with the
// line index on random texts: "\n", "\r\n" and lone "\r" endings, multi-
// byte runes, surrogate pairs, long texts (the block skipping), positions
// past a line's end and past the last line.
func TestOffsetOfMatchesLineIndex(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	pieces := []string{"a", "bc", "\n", "\n", "\r\n", "\r", "語", "🙂", "é", "\n\n", strings.Repeat("x", 5000)}
	for round := range 3000 {
		var sb strings.Builder
		for range rng.Intn(60) {
			sb.WriteString(pieces[rng.Intn(len(pieces))])
		}
		text := sb.String()
		if round%3 == 0 {
			text = strings.ReplaceAll(text, "\r", "") // the "\n"-only path
		}
		li := newLineIndex(text)
		for range 20 {
			p := protocol.Position{Line: uint32(rng.Intn(len(li.starts) + 2)), Character: uint32(rng.Intn(8))}
			if rng.Intn(4) == 0 {
				p.Character = uint32(rng.Intn(6000))
			}
			for _, enc := range []encoding{encUTF8, encUTF16, encUTF32} {
				if got, want := offsetOf(text, p, enc), li.offset(p, enc); got != want {
					t.Fatalf("text %q, %v %v: offsetOf %d, line index %d", text, p, enc, got, want)
				}
			}
		}
	}
}

func BenchmarkOneLineEdit10kLines(b *testing.B) {
	a, c := bigFile(10000)
	var payload int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		edits := toTextEdits(a, textdiff.Compute(a, c), encUTF16)
		if i == 0 {
			payload = len(mustJSON(b, edits))
		}
	}
	b.ReportMetric(float64(payload), "payload-bytes")
	b.ReportMetric(float64(len(a)), "file-bytes")
}

func mustJSON(t testing.TB, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
