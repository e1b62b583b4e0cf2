package tools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEdit(t *testing.T) {
	const src = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n\nfunc other() {\n\treturn\n}\n"
	cases := []struct {
		name  string
		args  map[string]any
		want  string   // file content afterwards
		diff  []string // in the result
		nDiff []string
	}{
		{
			name: "single edit",
			args: map[string]any{"edits": []map[string]string{{"oldText": "\"hello\"", "newText": "\"hi\""}}},
			want: strings.Replace(src, `"hello"`, `"hi"`, 1),
			diff: []string{"Edited f.go: 1 edit applied (+1 -1 lines)", "@@ -3,7 +3,7 @@", "-\tfmt.Println(\"hello\")", "+\tfmt.Println(\"hi\")", " func main() {"},
		},
		{
			name: "legacy top-level form",
			args: map[string]any{"oldText": "return", "newText": "return // done"},
			want: strings.Replace(src, "return", "return // done", 1),
			diff: []string{"+\treturn // done"},
		},
		{
			name: "snake_case aliases",
			args: map[string]any{"old_string": "return", "new_string": "panic(1)"},
			want: strings.Replace(src, "return", "panic(1)", 1),
		},
		{
			name: "two edits applied together",
			args: map[string]any{"edits": []map[string]string{
				{"oldText": "func other() {\n\treturn\n}\n", "newText": ""},
				{"oldText": "import \"fmt\"", "newText": "import (\n\t\"fmt\"\n\t\"os\"\n)"},
			}},
			want: "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n\n",
			diff: []string{"2 edits applied", "+\t\"os\"", "-func other() {"},
		},
		{
			name: "edits as a JSON string",
			args: map[string]any{"edits": `[{"oldText":"main()","newText":"run()"}]`},
			want: strings.Replace(src, "main()", "run()", 1),
		},
		{
			name: "join lines",
			args: map[string]any{"edits": []map[string]string{{"oldText": "{\n\treturn\n}", "newText": "{ return }"}}},
			want: strings.Replace(src, "{\n\treturn\n}", "{ return }", 1),
			diff: []string{"-func other() {", "-\treturn", "-}", "+func other() { return }"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f.go": src})
			c.args["path"] = "f.go"
			out := mustOK(t, run(t, NewEdit(NewDiskWorkspace(dir)), c.args))
			if got := readFile(t, filepath.Join(dir, "f.go")); got != c.want {
				t.Fatalf("content:\n%q\nwant:\n%q", got, c.want)
			}
			contains(t, out, c.diff...)
			notContains(t, out, c.nDiff...)
		})
	}
}

func TestEditErrors(t *testing.T) {
	const src = "a := 1\nb := 2\na := 1\nc := 3\n\tindented line\n"
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"not found", map[string]any{"path": "f.go", "oldText": "zzz", "newText": "y"}, []string{"was not found in f.go", "Read the file again", "No edits were applied"}},
		{"not found whitespace hint", map[string]any{"path": "f.go", "oldText": "    indented line\n", "newText": "y"}, []string{"was not found", "at line 5"}},
		{"ambiguous", map[string]any{"path": "f.go", "oldText": "a := 1", "newText": "a := 9"}, []string{"matches 2 times", "lines 1, 3", "Add surrounding lines"}},
		{"second edit ambiguous", map[string]any{"path": "f.go", "edits": []map[string]string{{"oldText": "b := 2", "newText": "b := 0"}, {"oldText": "a := 1", "newText": "a := 9"}}}, []string{"OldText of edit 2 matches 2 times"}},
		{"overlap", map[string]any{"path": "f.go", "edits": []map[string]string{{"oldText": "b := 2\na", "newText": "x"}, {"oldText": "2\na := 1\nc", "newText": "y"}}}, []string{"Edits 1 and 2 overlap", "Merge them"}},
		{"empty oldText", map[string]any{"path": "f.go", "oldText": "", "newText": "y"}, []string{"OldText is empty", "write"}},
		{"no change", map[string]any{"path": "f.go", "oldText": "c := 3", "newText": "c := 3"}, []string{"changes nothing"}},
		{"missing newText", map[string]any{"path": "f.go", "edits": []map[string]string{{"oldText": "c := 3"}}}, []string{"needs both oldText and newText"}},
		{"no edits", map[string]any{"path": "f.go"}, []string{"at least one replacement"}},
		{"missing file", map[string]any{"path": "nope.go", "oldText": "a", "newText": "b"}, []string{"File not found: nope.go", "write"}},
		{"directory", map[string]any{"path": ".", "oldText": "a", "newText": "b"}, []string{"is a directory"}},
		{"binary", map[string]any{"path": "bin", "oldText": "a", "newText": "b"}, []string{"binary"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f.go": src, "bin": "a\x00b"})
			mustErr(t, run(t, NewEdit(NewDiskWorkspace(dir)), c.args), c.want...)
			if got := readFile(t, filepath.Join(dir, "f.go")); got != src {
				t.Fatalf("file changed by a failed edit: %q", got)
			}
		})
	}
}

func TestEditLineEndingsAndBOM(t *testing.T) {
	cases := []struct {
		name, src string
		edits     []map[string]string
		want      string
	}{
		{
			name:  "crlf kept",
			src:   "one\r\ntwo\r\nthree\r\n",
			edits: []map[string]string{{"oldText": "two\nthree", "newText": "2\n3\n3.5"}},
			want:  "one\r\n2\r\n3\r\n3.5\r\n",
		},
		{
			name:  "crlf oldText given with CRLF",
			src:   "one\r\ntwo\r\n",
			edits: []map[string]string{{"oldText": "one\r\ntwo", "newText": "uno\r\ndos"}},
			want:  "uno\r\ndos\r\n",
		},
		{
			name:  "crlf match starting at a newline",
			src:   "a\r\nb\r\nc\r\n",
			edits: []map[string]string{{"oldText": "\nb", "newText": "\nB\nB2"}},
			want:  "a\r\nB\r\nB2\r\nc\r\n",
		},
		{
			name:  "crlf untouched lines keep odd endings",
			src:   "x\r\ny\r\nlone\nz\r\n",
			edits: []map[string]string{{"oldText": "z", "newText": "Z"}},
			want:  "x\r\ny\r\nlone\nZ\r\n",
		},
		{
			name:  "bom kept",
			src:   "\xef\xbb\xbfhello\nworld\n",
			edits: []map[string]string{{"oldText": "hello", "newText": "goodbye"}},
			want:  "\xef\xbb\xbfgoodbye\nworld\n",
		},
		{
			name:  "bom and crlf, two edits",
			src:   "\xef\xbb\xbfa\r\nb\r\nc\r\nd\r\n",
			edits: []map[string]string{{"oldText": "a\nb", "newText": "A"}, {"oldText": "d\n", "newText": "D\nE\n"}},
			want:  "\xef\xbb\xbfA\r\nc\r\nD\r\nE\r\n",
		},
		{
			name:  "lf file with model CRLF text stays lf",
			src:   "a\nb\n",
			edits: []map[string]string{{"oldText": "a\r\nb", "newText": "x\r\ny"}},
			want:  "x\ny\n",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f.txt": c.src})
			out := mustOK(t, run(t, NewEdit(NewDiskWorkspace(dir)), map[string]any{"path": "f.txt", "edits": c.edits}))
			if got := readFile(t, filepath.Join(dir, "f.txt")); got != c.want {
				t.Fatalf("content %q, want %q", got, c.want)
			}
			notContains(t, out, "\r", "\ufeff")
		})
	}
}

func TestEditThroughWorkspace(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": "disk version\n"})
	p := filepath.Join(dir, "a.go")
	ws := newOverlay(dir)
	ws.open(p, "buffer version\n")
	out := mustOK(t, run(t, NewEdit(ws), map[string]any{"path": "a.go", "oldText": "buffer", "newText": "edited"}))
	contains(t, out, "+edited version")
	if string(ws.buffers[p]) != "edited version\n" || readFile(t, p) != "disk version\n" || ws.edits != 1 {
		t.Fatalf("buffer %q disk %q edits %d", ws.buffers[p], readFile(t, p), ws.edits)
	}
	// Text only on disk is not what the editor shows: not found.
	mustErr(t, run(t, NewEdit(ws), map[string]any{"path": "a.go", "oldText": "disk", "newText": "x"}), "not found")
}

// staleWorkspace refuses every edit as if the buffer moved on.
type staleWorkspace struct{ Workspace }

func (staleWorkspace) EditFile(_ context.Context, p string, _, _ []byte) error {
	return fmt.Errorf("%s: %w", p, ErrFileChanged)
}

func TestEditReportsStaleBuffer(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "x\n"})
	mustErr(t, run(t, NewEdit(staleWorkspace{NewDiskWorkspace(dir)}), map[string]any{"path": "a.txt", "oldText": "x", "newText": "y"}), "changed while the edit", "Read it again")
}

func TestEditDiffIsSmall(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"big.txt": numbered(5000)})
	out := mustOK(t, run(t, NewEdit(NewDiskWorkspace(dir)), map[string]any{"path": "big.txt", "edits": []map[string]string{
		{"oldText": "line 100\n", "newText": "line one hundred\n"},
		{"oldText": "line 4000\n", "newText": ""},
	}}))
	contains(t, out, "@@ -97,7 +97,7 @@", "@@ -3997,7 +3997,6 @@", "+line one hundred", "-line 4000", " line 4003")
	notContains(t, out, "line 4004", "line 96\n", "line 2000")
	if n := strings.Count(out, "\n"); n > 20 {
		t.Fatalf("diff too long (%d lines):\n%s", n, out)
	}
}

func TestUnifiedDiffTruncates(t *testing.T) {
	diff, added, removed := unifiedDiff(numbered(1000), "", 3, 50)
	if removed != 1000 || added != 0 {
		t.Fatalf("added %d removed %d", added, removed)
	}
	if n := strings.Count(diff, "\n"); n > 51 || !strings.HasSuffix(diff, "[diff truncated]") {
		t.Fatalf("diff not truncated (%d lines)", n)
	}
}

func BenchmarkEditLargeFile(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := range 100_000 {
		fmt.Fprintf(&sb, "\tvalue%d := compute(%d) // some typical source line\r\n", i, i)
	}
	src := sb.String()
	p := filepath.Join(dir, "big.go")
	tool := NewEdit(NewDiskWorkspace(dir))
	b.SetBytes(int64(len(src)))
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		r := run(b, tool, map[string]any{"path": "big.go", "edits": []map[string]string{
			{"oldText": "value500 := compute(500)", "newText": "value500 := cached(500)"},
			{"oldText": "value99000 := compute(99000)", "newText": "value99000 := cached(99000)\n\textra()"},
		}})
		if r.IsError {
			b.Fatal(text(r))
		}
	}
}

func TestEditDiffWindows(t *testing.T) {
	cases := []struct {
		name  string
		src   string
		edits []map[string]string
		want  []string
	}{
		{"first line", numbered(10), []map[string]string{{"oldText": "line 1\n", "newText": "first\n"}}, []string{"@@ -1,4 +1,4 @@\n-line 1\n+first\n line 2"}},
		{"last line no newline", "a\nb\nc", []map[string]string{{"oldText": "c", "newText": "C"}}, []string{"@@ -1,3 +1,3 @@\n a\n b\n-c\n+C"}},
		{"close edits share a hunk", numbered(20), []map[string]string{{"oldText": "line 5\n", "newText": "five\n"}, {"oldText": "line 9\n", "newText": "nine\n"}}, []string{"@@ -2,11 +2,11 @@", "+five", "+nine"}},
		{"delete joins lines", "a\nb\nc\n", []map[string]string{{"oldText": "a\n", "newText": "A"}}, []string{"-a\n-b\n+Ab\n c"}},
		{"insert lines shifts later hunk", numbered(40), []map[string]string{{"oldText": "line 2\n", "newText": "line 2\nx\ny\n"}, {"oldText": "line 30\n", "newText": "thirty\n"}}, []string{"@@ -1,5 +1,7 @@", "@@ -27,7 +29,7 @@"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"f": c.src})
			contains(t, mustOK(t, run(t, NewEdit(NewDiskWorkspace(dir)), map[string]any{"path": "f", "edits": c.edits})), c.want...)
		})
	}
}

// askingWorkspace is the disk with a write policy that asks (as an editor
// does) and records the questions.
type askingWorkspace struct {
	Workspace
	policy *WritePolicy
	asked  []WriteApproval
}

func (w *askingWorkspace) CheckWrite(ctx context.Context, tool, path string, change func() string) error {
	return w.policy.Check(ctx, tool, path, change)
}
func (w *askingWorkspace) SetWriteRules(rules ...WriteRule) { w.policy.Rules = rules }

// A user asked about an edit outside the workspace sees the whole diff,
// not the cut the model's result gets; a "no" changes nothing.
func TestEditApprovalShowsTheWholeDiff(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	var lines []string
	for i := range 400 {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	orig := strings.Join(lines, "\n") + "\n"
	target := filepath.Join(outside, "big.txt")
	writeFiles(t, outside, map[string]string{"big.txt": orig})
	ws := &askingWorkspace{Workspace: NewDiskWorkspace(root)}
	ws.policy = &WritePolicy{Root: root, Ask: func(_ context.Context, a WriteApproval) (bool, error) {
		ws.asked = append(ws.asked, a)
		return false, nil
	}}
	var edits []map[string]any
	for i := 0; i < 400; i += 2 {
		edits = append(edits, map[string]any{"oldText": fmt.Sprintf("line %d\n", i), "newText": fmt.Sprintf("LINE %d\n", i)})
	}
	mustErr(t, run(t, NewEdit(ws), map[string]any{"path": target, "edits": edits}), "the user denied writing")
	if len(ws.asked) != 1 {
		t.Fatalf("asked %d times", len(ws.asked))
	}
	q := ws.asked[0].Message()
	for _, want := range []string{"outside the workspace", target, "-line 0\n+LINE 0", "-line 398\n+LINE 398"} {
		if !strings.Contains(q, want) {
			t.Fatalf("question lacks %q:\n%.500s", want, q)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != orig {
		t.Fatal("the denied edit changed the file")
	}
}
