//go:build !unix

package main

// fileLimit is the process's RLIMIT_NOFILE (unknown on this system).
type fileLimit struct{ start, cur, max uint64 }

// raiseFileLimit does nothing where there is no RLIMIT_NOFILE.
func raiseFileLimit() (fileLimit, error) { return fileLimit{}, nil }
