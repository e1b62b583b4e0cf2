package home

import "path/filepath"

func defaultDir() string {
	return filepath.Join(userHome(), "Library", "Application Support", "zot")
}
