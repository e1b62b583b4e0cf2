// Package testenv is how a test says "this machine cannot run me": every
// skip in the suite goes through Skip, so that CI, which promises to run
// everything, can turn skips into failures. With ZOT_REQUIRE_ALL=1 in the
// environment (.ci/run sets it) a skip fails the test instead, naming what
// the machine lacks. `make lint` rejects a t.Skip anywhere else.
package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
)

// RequireAll reports whether skips are failures (ZOT_REQUIRE_ALL=1).
func RequireAll() bool { return os.Getenv("ZOT_REQUIRE_ALL") == "1" }

// Skip skips the test, or fails it under ZOT_REQUIRE_ALL=1.
func Skip(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if RequireAll() {
		t.Fatalf("cannot run (ZOT_REQUIRE_ALL=1 makes this a failure): %s", msg)
		return
	}
	t.Skip(msg)
}

// NeedCommand skips the test (or fails it, see Skip) unless name is on
// PATH; it returns the command's path.
func NeedCommand(t testing.TB, name, why string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Skip(t, "%s is not installed (%s needs it)", name, why)
	}
	return p
}

// OptIn returns the value of the environment variable name, or skips the
// test when it is unset — even under ZOT_REQUIRE_ALL=1: an opt-in test
// needs something the project does not ship (what names it), not
// something the machine lacks, so CI's promise to run everything does
// not cover it. Such tests are listed in docs/testing.md.
func OptIn(t testing.TB, name, what string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("opt-in: set %s to %s", name, what)
	}
	return v
}
