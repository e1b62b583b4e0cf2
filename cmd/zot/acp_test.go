package main

import (
	"strings"
	"testing"
)

// zot acp's command line: zot's flags plus --mode; mistakes exit 2 with
// a line saying what to fix (the editor shows stderr).
func TestACPCommandLine(t *testing.T) {
	e := newEnv(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"acp", "--mdoe", "ask"}, "unknown flag --mdoe (did you mean --mode?)"},
		{[]string{"acp", "--mode", "yolo"}, `--mode must be ask, auto or readonly, not "yolo"`},
		{[]string{"acp", "stray"}, `unexpected argument "stray"`},
	} {
		_, errOut, code := e.runZot(c.args...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d stderr %q, want exit 2 and %q", c.args, code, errOut, c.want)
		}
	}
}
