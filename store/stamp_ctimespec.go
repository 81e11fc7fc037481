//go:build darwin || freebsd || netbsd

package store

import (
	"io/fs"
	"syscall"
)

// changeStamp returns a file's inode change time in nanoseconds and its
// inode number (fileETag).
func changeStamp(fi fs.FileInfo) (ctime int64, ino uint64) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return st.Ctimespec.Nano(), uint64(st.Ino)
}
