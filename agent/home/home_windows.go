package home

import (
	"os"
	"path/filepath"
)

// defaultDir is %LOCALAPPDATA%\zot: local (not roaming) application data,
// since sessions and logs are per machine.
func defaultDir() string {
	if d := os.Getenv("LOCALAPPDATA"); d != "" {
		return filepath.Join(d, "zot")
	}
	return filepath.Join(userHome(), "AppData", "Local", "zot")
}
