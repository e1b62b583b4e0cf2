package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// fakeT records what Skip does instead of ending the test.
type fakeT struct {
	testing.TB
	skipped, failed string
}

func (f *fakeT) Helper()                           {}
func (f *fakeT) Skip(args ...any)                  { f.skipped = args[0].(string) }
func (f *fakeT) Skipf(format string, args ...any)  { f.skipped = fmt.Sprintf(format, args...) }
func (f *fakeT) Fatalf(format string, args ...any) { f.failed = format }

func TestSkipFailsUnderRequireAll(t *testing.T) {
	t.Setenv("ZOT_REQUIRE_ALL", "")
	f := &fakeT{}
	NeedCommand(f, "zot-no-such-command", "this test")
	if f.failed != "" || !strings.Contains(f.skipped, "zot-no-such-command is not installed") {
		t.Fatalf("without ZOT_REQUIRE_ALL: skipped %q, failed %q", f.skipped, f.failed)
	}
	t.Setenv("ZOT_REQUIRE_ALL", "1")
	f = &fakeT{}
	NeedCommand(f, "zot-no-such-command", "this test")
	if f.skipped != "" || !strings.Contains(f.failed, "ZOT_REQUIRE_ALL=1") {
		t.Fatalf("with ZOT_REQUIRE_ALL=1: skipped %q, failed %q", f.skipped, f.failed)
	}
	f = &fakeT{}
	if NeedCommand(f, "go", "this test") == "" || f.failed != "" || f.skipped != "" {
		t.Fatalf("go is on PATH: skipped %q, failed %q", f.skipped, f.failed)
	}
}

func TestOptInSkipsEvenUnderRequireAll(t *testing.T) {
	t.Setenv("ZOT_REQUIRE_ALL", "1")
	t.Setenv("ZOT_TESTENV_OPTIN", "")
	f := &fakeT{}
	OptIn(f, "ZOT_TESTENV_OPTIN", "a directory")
	if f.failed != "" || !strings.Contains(f.skipped, "opt-in: set ZOT_TESTENV_OPTIN to a directory") {
		t.Fatalf("skipped %q, failed %q", f.skipped, f.failed)
	}
	t.Setenv("ZOT_TESTENV_OPTIN", "/x")
	f = &fakeT{}
	if v := OptIn(f, "ZOT_TESTENV_OPTIN", "a directory"); v != "/x" || f.skipped != "" {
		t.Fatalf("set: %q, skipped %q", v, f.skipped)
	}
}
