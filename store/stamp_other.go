//go:build !(aix || dragonfly || linux || openbsd || solaris || darwin || freebsd || netbsd)

package store

import "io/fs"

// changeStamp: this platform's file information has no inode change time
// (Windows, Plan 9, wasm); fileETag is then the mtime and the size.
func changeStamp(fs.FileInfo) (ctime int64, ino uint64) { return 0, 0 }
