//go:build !darwin && !windows

package home

import (
	"os"
	"path/filepath"
)

func defaultDir() string {
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "zot")
	}
	return filepath.Join(userHome(), ".local", "state", "zot")
}
