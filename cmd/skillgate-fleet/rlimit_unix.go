//go:build unix

package main

import (
	"fmt"
	"syscall"
)

// fileLimit is the process's RLIMIT_NOFILE: the soft limit found at start
// (after the Go runtime's own adjustment), and the soft and hard limits in
// force after raiseFileLimit.
type fileLimit struct{ start, cur, max uint64 }

// raiseFileLimit raises the soft RLIMIT_NOFILE to the hard limit. The Go
// runtime (since 1.19) already raises it at start-up, to one below the
// hard limit on Linux; this takes the last descriptor too and makes the
// reported value certain.
func raiseFileLimit() (fileLimit, error) {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
		return fileLimit{}, fmt.Errorf("reading RLIMIT_NOFILE: %v", err)
	}
	start := uint64(r.Cur)
	if r.Cur < r.Max {
		r.Cur = r.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &r); err != nil {
			syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r)
			return fileLimit{start, uint64(r.Cur), uint64(r.Max)}, fmt.Errorf("raising RLIMIT_NOFILE to %d: %v", r.Max, err)
		}
	}
	return fileLimit{start, uint64(r.Cur), uint64(r.Max)}, nil
}
