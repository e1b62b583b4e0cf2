//go:build !unix

package childproc

// GroupAlive is false where zot does not start process groups.
func GroupAlive(int) bool { return false }

func terminateGroup(int) {}

func killGroupNow(int) {}
