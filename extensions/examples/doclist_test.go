package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The lists of examples in this package's doc and in docs/extensions.md
// name every example directory (one with an extension.json), and only
// those.
func TestExampleListsNameEveryExample(t *testing.T) {
	dirs, err := filepath.Glob("*/extension.json")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, d := range dirs {
		want = append(want, filepath.Dir(d))
	}
	slices.Sort(want)
	if len(want) < 8 {
		t.Fatalf("examples found: %v", want)
	}
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	ext, err := os.ReadFile(filepath.Join("..", "..", "docs", "extensions.md"))
	if err != nil {
		t.Fatal(err)
	}
	// doc.go: the sentence after "one per directory:"; docs/extensions.md:
	// the parenthesis after `extensions/examples`.
	docList := regexp.MustCompile(`one per directory:([^.]*)\.`).FindSubmatch([]byte(strings.ReplaceAll(string(doc), "\n//", "")))
	extList := regexp.MustCompile("`extensions/examples`\\s*\\(([^)]*)\\)").FindSubmatch(ext)
	for _, c := range []struct {
		where string
		m     [][]byte
	}{{"extensions/examples/doc.go", docList}, {"docs/extensions.md", extList}} {
		if c.m == nil {
			t.Fatalf("%s: the list of examples is not where this test looks", c.where)
		}
		var got []string
		for _, w := range regexp.MustCompile(`[a-z][a-z-]*`).FindAllString(string(c.m[1]), -1) {
			if slices.Contains(want, w) && !slices.Contains(got, w) {
				got = append(got, w)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s lists %v; the examples are %v", c.where, got, want)
		}
	}
}
