package main

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/zot-editors/zot/agent"
)

// Set by the release build (scripts/release.sh) with -ldflags -X: the
// version is agent.Version, these are the commit and the build time.
var (
	commit = ""
	date   = ""
)

// buildVersion fills in what the linker was not told from the build
// information Go records: `go install …/cmd/zot@v1.2.3` knows its module
// version, a build in a git checkout its revision and commit time.
func buildVersion() (version, rev, when string) {
	version, rev, when = agent.Version, commit, date
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, rev, when
	}
	if v := bi.Main.Version; version == agent.DevVersion && v != "" && v != "(devel)" {
		version = v
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && rev == "":
			rev = s.Value
		case s.Key == "vcs.time" && when == "":
			when = s.Value
		}
	}
	return version, rev, when
}

// printVersion is `zot version`: the version, then the commit and build
// date when known.
func printVersion(w io.Writer) {
	v, rev, when := buildVersion()
	line := "zot " + v
	if rev != "" {
		if len(rev) > 12 {
			rev = rev[:12]
		}
		line += " (commit " + rev
		if when != "" {
			line += ", built " + when
		}
		line += ")"
	} else if when != "" {
		line += " (built " + when + ")"
	}
	fmt.Fprintln(w, line)
}
