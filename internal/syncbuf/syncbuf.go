// Package syncbuf provides a bytes.Buffer safe for concurrent writers, for
// collecting the logs and output of servers and processes in tests. It is
// imported by tests and their helper packages only, and imports only the
// standard library.
package syncbuf

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer whose Write and String may be called
// concurrently. The zero value is ready to use.
type Buffer struct {
	// Limit, when above zero, keeps only the last Limit bytes written: a
	// server that runs for a whole test binary prints without bound.
	Limit int

	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.Write(p)
	if n := b.buf.Len() - b.Limit; b.Limit > 0 && n > 0 {
		b.buf.Next(n)
	}
	return len(p), nil
}

// String returns everything written so far (the last Limit bytes).
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
