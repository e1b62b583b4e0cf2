//go:build !linux

package childproc

// Init does nothing where there is no subreaper: only tracked process
// groups are cleaned up.
func Init() error { return nil }

func killDescendants() {}
