package testenv

import (
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// built is what GoBuild made, per output path: each binary is built once
// per test process, however many tests ask for it.
var built sync.Map // path → *buildResult

type buildResult struct {
	once sync.Once
	out  []byte
	err  error
}

// GoBuild builds the main package pkg (an import path, e.g.
// "github.com/zot-editors/zot/extensions/testdata/fakeext") into dir,
// named after its last element, once per test process, and returns the
// executable's path. A build failure fails the test with go's output.
func GoBuild(t testing.TB, dir, pkg string) string {
	t.Helper()
	bin := filepath.Join(dir, filepath.Base(pkg))
	v, _ := built.LoadOrStore(bin, &buildResult{})
	r := v.(*buildResult)
	r.once.Do(func() {
		r.out, r.err = exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	})
	if r.err != nil {
		t.Fatalf("building %s: %v\n%s", pkg, r.err, r.out)
	}
	return bin
}
