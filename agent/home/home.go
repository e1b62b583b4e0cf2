// Package home resolves $ZOT_HOME with zot's rules: the ZOT_HOME variable,
// else the platform's place for per-user application state:
// %LOCALAPPDATA%\zot on Windows, ~/Library/Application Support/zot on
// macOS, $XDG_STATE_HOME/zot or ~/.local/state/zot elsewhere.
package home

import (
	"os"
)

// Dir returns the zot home directory. It does not create it.
func Dir() string {
	if d := os.Getenv("ZOT_HOME"); d != "" {
		return d
	}
	return defaultDir()
}

// userHome is the user's home directory, or the temp directory when it
// cannot be found (a service account without a profile).
func userHome() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return os.TempDir()
	}
	return h
}
