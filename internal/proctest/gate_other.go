//go:build !unix

package proctest

import (
	"testing"

	"github.com/zot-editors/zot/internal/testenv"
)

// Gate needs a fifo, which this platform lacks: the test is skipped.
func Gate(t testing.TB) (path string, release func()) {
	t.Helper()
	testenv.Skip(t, "no fifos on this platform")
	return "", func() {}
}
