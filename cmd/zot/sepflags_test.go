package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zot-editors/zot/extensions"
)

// A SEP extension's initialize.flags are the flag values the user gave
// zot (--flag name=value, the same values pi extensions read with
// getFlag): a bare --flag is true, the rest strings. Every message the
// host sent validates against SEP's schemas.
func TestRPCSEPInitializeFlags(t *testing.T) {
	e := newEnv(t)
	trace := t.TempDir()
	notes := filepath.Join(trace, "notes")
	dir := writeSEPExt(t, filepath.Join(t.TempDir(), "flagged"), "flagged", notes, nil)
	p := e.startRPC([]string{extensions.EnvSEPTrace + "=" + trace}, "--ext", dir, "--flag", "plan", "--flag", "level=3", "--flag", "quiet=false")
	deadline := time.Now().Add(60 * time.Second) // a hang guard, not a timing claim
	var got string
	for {
		b, _ := os.ReadFile(notes)
		if i := strings.Index(string(b), "flags "); i >= 0 {
			got = strings.SplitN(string(b[i:]), "\n", 2)[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the extension never noted its flags: %q\nstderr: %s", b, p.errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got != `flags {"level":"3","plan":true,"quiet":false}` {
		t.Fatalf("initialize.flags: %s", got)
	}
	p.in.Close()
	for range p.lines {
	}
	checkSEPTrace(t, filepath.Join(trace, "flagged.ndjson"), []string{"initialize"})
}
