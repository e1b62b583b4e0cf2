package tools

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func grepTree(t testing.TB) string {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		".gitignore":     "*.log\nbuild/\n!keep.log\n",
		".git/config":    "needle in git",
		"a.go":           "package a\n\nfunc Needle() {}\n// needle lower\n",
		"b.txt":          "one\ntwo needle\nthree\nfour\nfive\nsix\nseven needle\n",
		"crlf.txt":       "x\r\nneedle crlf\r\n",
		"debug.log":      "needle in log\n",
		"keep.log":       "needle kept\n",
		"build/out.go":   "needle built\n",
		"bin.dat":        "needle\x00binary",
		"sub/.gitignore": "gen.go\n",
		"sub/gen.go":     "needle generated\n",
		"sub/deep/c.go":  "var x = \"needle.(*\"\n",
		"long.txt":       strings.Repeat("z", 1000) + "needle" + strings.Repeat("z", 1000) + "\n",
	})
	return dir
}

func TestGrep(t *testing.T) {
	dir := grepTree(t)
	tool := NewGrep(NewDiskWorkspace(dir))
	cases := []struct {
		name string
		args map[string]any
		want string
	}{
		{"basic respects gitignore and skips binary", map[string]any{"pattern": "needle", "glob": "*.{go,log}"},
			"a.go:4: // needle lower\nkeep.log:1: needle kept\nsub/deep/c.go:1: var x = \"needle.(*\""},
		{"ignoreCase", map[string]any{"pattern": "NEEDLE", "ignoreCase": true, "path": "a.go"},
			"a.go:3: func Needle() {}\na.go:4: // needle lower"},
		{"regex", map[string]any{"pattern": `^func \w+\(`, "path": "a.go"}, "a.go:3: func Needle() {}"},
		{"literal", map[string]any{"pattern": "needle.(*", "literal": true}, "sub/deep/c.go:1: var x = \"needle.(*\""},
		{"glob with path", map[string]any{"pattern": "needle", "glob": "deep/*.go", "path": "sub"}, "sub/deep/c.go:1: var x = \"needle.(*\""},
		{"crlf lines and $", map[string]any{"pattern": "crlf$"}, "crlf.txt:2: needle crlf"},
		{"context", map[string]any{"pattern": "needle", "path": "b.txt", "context": 1},
			"b.txt-1- one\nb.txt:2: two needle\nb.txt-3- three\n--\nb.txt-6- six\nb.txt:7: seven needle"},
		{"context merges groups", map[string]any{"pattern": "needle", "path": "b.txt", "context": 3},
			"b.txt-1- one\nb.txt:2: two needle\nb.txt-3- three\nb.txt-4- four\nb.txt-5- five\nb.txt-6- six\nb.txt:7: seven needle"},
		{"adjacent context groups join", map[string]any{"pattern": "needle", "path": "b.txt", "context": 2},
			"b.txt-1- one\nb.txt:2: two needle\nb.txt-3- three\nb.txt-4- four\nb.txt-5- five\nb.txt-6- six\nb.txt:7: seven needle"},
		{"context groups in two files", map[string]any{"pattern": "needle", "glob": "{b,crlf}.txt", "context": 1},
			"b.txt-1- one\nb.txt:2: two needle\nb.txt-3- three\n--\nb.txt-6- six\nb.txt:7: seven needle\n--\ncrlf.txt-1- x\ncrlf.txt:2: needle crlf"},
		{"limit met exactly", map[string]any{"pattern": "needle", "path": "b.txt", "limit": 2}, "b.txt:2: two needle\nb.txt:7: seven needle"},
		{"limit", map[string]any{"pattern": "needle", "path": "b.txt", "limit": 1},
			"b.txt:2: two needle\n\n[limit of 1 match reached; there may be more. Narrow the pattern, path or glob, or raise limit]"},
		{"no match", map[string]any{"pattern": "haystack"}, `No matches for "haystack" in the workspace root.`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := mustOK(t, run(t, tool, c.args)); got != c.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestGrepLongLinesAndErrors(t *testing.T) {
	dir := grepTree(t)
	tool := NewGrep(NewDiskWorkspace(dir))
	out := mustOK(t, run(t, tool, map[string]any{"pattern": "needle", "path": "long.txt"}))
	contains(t, out, "long.txt:1: [900 chars cut] …zzz", "zneedlez", "[line truncated:")
	if len(out) > MaxGrepLineLength+100 {
		t.Fatalf("line not cut: %d bytes", len(out))
	}
	// A match far into a long line is still shown.
	writeFiles(t, dir, map[string]string{"far.txt": strings.Repeat("y", 5000) + "FAR" + strings.Repeat("y", 5000) + "\n"})
	out = mustOK(t, run(t, tool, map[string]any{"pattern": "FAR"}))
	contains(t, out, "far.txt:1: [4900 chars cut] …yyy", "yFARy", "[line truncated:")
	mustErr(t, run(t, tool, map[string]any{"pattern": "a(b"}), "Invalid regular expression", "literal")
	mustErr(t, run(t, tool, map[string]any{"pattern": ""}), "grep needs a pattern")
	mustErr(t, run(t, tool, map[string]any{"pattern": "x", "path": "nope"}), "Path not found")
	mustErr(t, run(t, tool, map[string]any{"pattern": "x", "glob": "[a"}), "Invalid glob")
	mustErr(t, run(t, tool, map[string]any{"pattern": "needle", "path": "bin.dat"}), "binary")
}

func TestGrepLimitAcrossFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 150 {
		files[fmt.Sprintf("f%03d.txt", i)] = "match me\n"
	}
	writeFiles(t, dir, files)
	out := mustOK(t, run(t, NewGrep(NewDiskWorkspace(dir)), map[string]any{"pattern": "match"}))
	if n := strings.Count(out, ": match me"); n != DefaultGrepLimit {
		t.Fatalf("%d matches, want %d", n, DefaultGrepLimit)
	}
	contains(t, out, "f000.txt:1:", "f099.txt:1:", "[limit of 100 matches reached")
	notContains(t, out, "f100.txt")
}

func TestGrepSeesOverlay(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.go": "old text on disk\n", "b.go": "untouched needle\n"})
	ws := newOverlay(dir)
	ws.open(filepath.Join(dir, "a.go"), "first\nneedle only in the buffer\n")
	out := mustOK(t, run(t, NewGrep(ws), map[string]any{"pattern": "needle"}))
	if want := "a.go:2: needle only in the buffer\nb.go:1: untouched needle"; out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
	contains(t, mustOK(t, run(t, NewGrep(ws), map[string]any{"pattern": "on disk"})), "No matches")
}

func BenchmarkGrep(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{".gitignore": "ignored/\n"}
	var sb strings.Builder
	for i := range 400 {
		fmt.Fprintf(&sb, "func handler%d(w http.ResponseWriter, r *http.Request) { serve(w, r, %d) }\n", i, i)
	}
	body := sb.String()
	for i := range 500 {
		files[fmt.Sprintf("pkg%02d/file%03d.go", i%25, i)] = body
		files[fmt.Sprintf("ignored/file%03d.go", i)] = body
	}
	files["pkg07/target.go"] = body + "// TODO(zot): find me\n"
	writeFiles(b, dir, files)
	tool := NewGrep(NewDiskWorkspace(dir))
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"literal", map[string]any{"pattern": "TODO(zot)", "literal": true}},
		{"regex", map[string]any{"pattern": `TODO\(\w+\): find`}},
		{"ignoreCase", map[string]any{"pattern": "todo(zot)", "literal": true, "ignoreCase": true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				r := run(b, tool, c.args)
				if r.IsError || !strings.Contains(text(r), "pkg07/target.go:401:") {
					b.Fatalf("unexpected result: %s", text(r))
				}
			}
		})
	}
}

func TestRequiredLiterals(t *testing.T) {
	cases := []struct {
		src  string
		want []literal
	}{
		{"needle", []literal{{"needle", false}}},
		{`\w+Handler\(`, []literal{{"Handler(", false}}},
		{"(?i)Needle", []literal{{"needle", true}}},
		{"(?i)straße", nil},
		{"foo|bar", []literal{{"foo", false}, {"bar", false}}},
		{"a|b", nil}, // parsed as the class [ab]
		{"foo|ba(r|z)", []literal{{"foo", false}, {"ba", false}}},
		{"foo|x*", nil},
		{"foo?", []literal{{"fo", false}}},
		{"(abc)+x", []literal{{"abc", false}}},
		{"x*", nil},
	}
	for _, c := range cases {
		if got := requiredLiterals(c.src); !slices.Equal(got, c.want) {
			t.Errorf("requiredLiterals(%q) = %+v, want %+v", c.src, got, c.want)
		}
	}
}

func TestIndexFold(t *testing.T) {
	cases := []struct {
		data, lower string
		want        int
	}{
		{"xxDeadLine yy", "deadline", 2},
		{"deadlin DEADLINE", "deadline", 8},
		{"no match here", "deadline", -1},
		{"ab", "abc", -1},
		{"zzQ", "q", 2},
		{"a-B a-b", "a-b", 0},
		{"A_B", "a_b", 0},
	}
	for _, c := range cases {
		if got := indexFold([]byte(c.data), c.lower); got != c.want {
			t.Errorf("indexFold(%q, %q) = %d, want %d", c.data, c.lower, got, c.want)
		}
	}
}

// TestMatcherAgreesWithLineByLine checks that the literal prefilter finds
// exactly the lines a plain line-by-line regexp scan finds.
func TestMatcherAgreesWithLineByLine(t *testing.T) {
	text := "alpha beta\r\nGamma delta\n\nbeta gamma beta\nthe \u212aelvin k\nepsilon\nlast beta"
	for _, src := range []string{"beta", "(?i)gamma", "beta$", "^beta", "alpha|epsilon", "(?i)K", `\bbeta\b`, "(?i)GAMMA|last", "zzz", "b.ta", "k"} {
		re := regexp.MustCompile(src)
		m := newMatcher(re, src)
		if m.lits == nil && src != "b.ta" {
			t.Errorf("%q: no literal found", src)
		}
		got := m.scan([]byte(text), 100, nil)
		want := m.scanLines([]byte(text), 100, nil)
		if !slices.Equal(got, want) {
			t.Errorf("%q: prefiltered %v, line by line %v", src, got, want)
		}
		if len(want) == 0 && src != "zzz" {
			t.Errorf("%q: no match at all", src)
		}
	}
}

func TestGrepFoldsSpecialRunes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "the \u212aelvin sign\n"})
	contains(t, mustOK(t, run(t, NewGrep(NewDiskWorkspace(dir)), map[string]any{"pattern": "kelvin", "ignoreCase": true})), "a.txt:1:")
}

// An early stop (limit reached) or a cancel ends the walk and the workers
// before grep returns.
func TestGrepStopsItsGoroutines(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 2000 {
		files[fmt.Sprintf("f%04d.txt", i)] = "match me\n" // one directory: more than the walk can queue
	}
	writeFiles(t, dir, files)
	tool := NewGrep(NewDiskWorkspace(dir))
	// goleak waits (with a deadline) for goroutines that have called
	// wg.Done but not yet exited; a bare NumGoroutine count flaked on CI.
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	contains(t, mustOK(t, run(t, tool, map[string]any{"pattern": "match", "limit": 1})), "f0000.txt:1: match me", "[limit of 1 match reached")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	mustErr(t, runCtx(t, ctx, tool, map[string]any{"pattern": "match"}, nil), "grep was cancelled")
}

// Files over the size limit are skipped and counted, read from disk or
// from an editor buffer.
func TestGrepSkipsHugeFiles(t *testing.T) {
	dir := t.TempDir()
	huge := "needle\n" + strings.Repeat("x", maxGrepFileSize)
	writeFiles(t, dir, map[string]string{"huge.txt": huge, "small.txt": "needle\n", "open.txt": "disk\n"})
	ws := newOverlay(dir)
	ws.open(filepath.Join(dir, "open.txt"), huge)
	out := mustOK(t, run(t, NewGrep(ws), map[string]any{"pattern": "needle"}))
	if want := "small.txt:1: needle\n[2 files larger than 20.0 MB skipped]"; out != want {
		t.Fatalf("got:\n%s\nwant:\n%s", out, want)
	}
}
