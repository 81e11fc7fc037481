//go:build !unix

package store

// openFlags are added to O_RDONLY when the directory store opens a file;
// named pipes that block on open are a Unix matter.
const openFlags = 0
