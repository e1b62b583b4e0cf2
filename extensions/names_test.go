package extensions

import (
	"regexp"
	"strings"
	"testing"
)

// The name rules are byte loops; the regexps they replace are the oracle,
// over every short string of an alphabet covering each class and its
// edges, and over lengths around the 64-byte limit.
func TestNameRulesMatchRegexps(t *testing.T) {
	rules := []struct {
		name string
		re   *regexp.Regexp
		fn   func(string) bool
	}{
		{"extension", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`), ValidExtensionName},
		{"tool", regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`), ValidToolName},
		{"command", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9:._-]{0,63}$`), ValidCommandName},
	}
	alphabet := []string{"a", "Z", "0", "9", "_", "-", ".", ":", "/", " ", "\n", "é", "@", "`", "{", "\x00"}
	var inputs []string
	var grow func(prefix string, depth int)
	grow = func(prefix string, depth int) {
		inputs = append(inputs, prefix)
		if depth == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+c, depth-1)
		}
	}
	grow("", 3)
	for _, n := range []int{63, 64, 65, 100} {
		for _, head := range []string{"a", "_", ".", ":"} {
			inputs = append(inputs, head+strings.Repeat("b", n-1), strings.Repeat("a", n-1)+".", strings.Repeat("a", n-1)+"_")
		}
	}
	for _, r := range rules {
		for _, s := range inputs {
			if got, want := r.fn(s), r.re.MatchString(s); got != want {
				t.Errorf("%s name %q: %v, the regexp says %v", r.name, s, got, want)
			}
		}
	}
}
