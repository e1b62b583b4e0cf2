// Package home resolves $ZOT_HOME with zot's rules: the ZOT_HOME variable,
// else ~/Library/Application Support/zot on macOS, else $XDG_STATE_HOME/zot
// or ~/.local/state/zot.
package home

import (
	"os"
	"path/filepath"
	"runtime"
)

// Dir returns the zot home directory. It does not create it.
func Dir() string {
	if d := os.Getenv("ZOT_HOME"); d != "" {
		return d
	}
	h, err := os.UserHomeDir()
	if err != nil {
		h = os.TempDir()
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(h, "Library", "Application Support", "zot")
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "zot")
	}
	return filepath.Join(h, ".local", "state", "zot")
}
