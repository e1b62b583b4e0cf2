//go:build !unix

package extensions

import "io/fs"

// fileID: without inode and ctime, size and mtime must do.
func fileID(fi fs.FileInfo) statKey {
	return statKey{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
}
