//go:build unix

package store

import "syscall"

// openFlags are added to O_RDONLY when the directory store opens a file:
// O_NONBLOCK so that opening a named pipe returns at once instead of
// waiting for a writer (it changes nothing for regular files), and
// O_NOCTTY so that a terminal device never becomes the process's
// controlling terminal.
const openFlags = syscall.O_NONBLOCK | syscall.O_NOCTTY
