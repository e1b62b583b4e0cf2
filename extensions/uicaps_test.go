package extensions

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// A cut text keeps whole runes, fits its cap with the mark, and a text
// of several lines gets the mark on a line of its own.
func TestClipText(t *testing.T) {
	for _, s := range []string{strings.Repeat("é", 5000), strings.Repeat("😀", 3000), strings.Repeat("ab\n", 4000)} {
		got, cut := clipText(s, MaxLabelBytes, "x")
		if !cut || len(got) > MaxLabelBytes || !utf8.ValidString(got) || !strings.HasSuffix(got, truncatedMark("x")) {
			t.Fatalf("clipText(%q…) = %q (%d bytes), %v", s[:8], got, len(got), cut)
		}
		if strings.Contains(s, "\n") != strings.HasSuffix(got, "\n"+truncatedMark("x")) {
			t.Fatalf("mark's separator: %q", got[len(got)-80:])
		}
	}
	if got, cut := clipText("short", MaxLabelBytes, "x"); cut || got != "short" {
		t.Fatalf("a short text: %q %v", got, cut)
	}
}
