//go:build unix

package extensions

import (
	"io/fs"
	"syscall"
)

// fileID is what the hash cache keys a file's content on, besides its
// path: size, mtime, ctime (which a process cannot set back), inode and
// device.
func fileID(fi fs.FileInfo) statKey {
	k := statKey{Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		k.Ino, k.Dev = uint64(st.Ino), uint64(st.Dev)
		k.Ctime = ctime(st)
	}
	return k
}
