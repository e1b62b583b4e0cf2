package textdiff

import (
	"strings"
	"testing"
)

func TestRebase(t *testing.T) {
	base := "one\ntwo\nthree\nfour\n"
	cases := []struct {
		name, mine, theirs, want string
		conflict                 bool
	}{
		{"disjoint", "one\nTWO\nthree\nfour\n", "one\ntwo\nthree\nfour!\n", "one\nTWO\nthree\nfour!\n", false},
		{"they prepend", "one\ntwo\nTHREE\nfour\n", "zero\none\ntwo\nthree\nfour\n", "zero\none\ntwo\nTHREE\nfour\n", false},
		{"same line", "one\nTWO\nthree\nfour\n", "one\ntwo?\nthree\nfour\n", "", true},
		{"same insertion point", "one\nnew\ntwo\nthree\nfour\n", "one\nmine\ntwo\nthree\nfour\n", "", true},
		{"adjacent lines", "one\nTWO\nthree\nfour\n", "one\ntwo\nthree!\nfour\n", "one\nTWO\nthree!\nfour\n", false},
		{"theirs unchanged", "x\n", base, "x\n", false},
	}
	for _, c := range cases {
		got, err := Rebase(base, c.mine, c.theirs)
		if c.conflict {
			if err == nil {
				t.Errorf("%s: no conflict, got %q", c.name, got)
			} else if !strings.Contains(err.Error(), "overlaps") {
				t.Errorf("%s: error %v", c.name, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}
