package servertest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
)

// ModuleRoot is the directory of zot's go.mod.
func ModuleRoot() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("servertest: cannot locate the module")
	}
	dir := filepath.Dir(file)
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("servertest: go.mod not found above %s", file)
		}
		dir = parent
	}
}

// Build compiles a package of the module (e.g. "./cmd/zot") to out, with
// the race detector when race is set (tests run with -race build the
// server with it too, so its races fail the tests). Test binaries call it
// once, from TestMain.
//
// With ZOT_TEST_COVER=1 in the environment (make cover) the binary is built
// with coverage of the whole module; started with CoverEnv's GOCOVERDIR, it
// writes its counters there, so what the real `zot lsp` executes counts
// toward the total.
func Build(pkg, out string, race bool) error {
	root, err := ModuleRoot()
	if err != nil {
		return err
	}
	args := []string{"build", "-o", out}
	if race {
		args = append(args, "-race")
	}
	if os.Getenv("ZOT_TEST_COVER") == "1" {
		args = append(args, "-cover", "-coverpkg=github.com/zot-editors/zot/...")
	}
	cmd := exec.Command("go", append(args, pkg)...)
	cmd.Dir = root
	cmd.Env = os.Environ()
	b, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go build %s: %v\n%s", pkg, err, strings.TrimSpace(string(b)))
	}
	return nil
}

// CoverEnv adds GOCOVERDIR=$ZOT_TEST_COVERDIR to env when that is set (make
// cover), for a zot built by Build. A separate variable, because go test
// -cover points the test binary's own GOCOVERDIR at a directory it deletes.
func CoverEnv(env []string) []string {
	dir := os.Getenv("ZOT_TEST_COVERDIR")
	if dir == "" {
		return env
	}
	return append(slices.Clip(env), "GOCOVERDIR="+dir)
}
