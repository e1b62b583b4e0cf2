package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/zot-editors/zot/agent"
)

// What a release build's -ldflags -X set is what zot version prints.
func TestVersionPrintsLinkerStampedBuild(t *testing.T) {
	oldV, oldC, oldD := agent.Version, commit, date
	t.Cleanup(func() { agent.Version, commit, date = oldV, oldC, oldD })
	agent.Version, commit, date = "1.4.2", "0123456789abcdef0123456789abcdef01234567", "2026-11-23T14:00:00Z"
	var out bytes.Buffer
	if code := run([]string{"version"}, strings.NewReader(""), &out, &out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	if got, want := out.String(), "zot 1.4.2 (commit 0123456789ab, built 2026-11-23T14:00:00Z)\n"; got != want {
		t.Fatalf("zot version = %q, want %q", got, want)
	}
}

// A build nobody stamped still says which version it is.
func TestVersionWithoutStamp(t *testing.T) {
	oldC, oldD := commit, date
	t.Cleanup(func() { commit, date = oldC, oldD })
	commit, date = "", ""
	var out bytes.Buffer
	run([]string{"--version"}, strings.NewReader(""), &out, &out)
	if !strings.HasPrefix(out.String(), "zot "+agent.Version) {
		t.Fatalf("zot --version = %q", out.String())
	}
}
