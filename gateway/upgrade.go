package gateway

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"

	"github.com/coder/websocket"
)

// nodeBufSize is the size of a node socket's read and write buffers. A
// node's frames are small and rare; larger reads and writes bypass the
// buffers (a frame over it costs the same two system calls with 512 bytes
// as with 1 KiB: the part that fills the buffer, then the rest). net/http
// would give 4 KiB each, which at 10,000 nodes was a fifth of the
// gateway's memory; 1 KiB each cost 0.8 KiB a node more than this.
const nodeBufSize = 512

// smallBuffers wraps the ResponseWriter handed to websocket.Accept so that
// the hijacked connection gets buffers of nodeBufSize, and the HTTP
// server's own (and the request with its headers) can be freed once the
// handler returns.
type smallBuffers struct{ http.ResponseWriter }

func (w smallBuffers) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err != nil || brw.Reader.Buffered() > 0 {
		// A peer that sent past its upgrade request: keep the bytes the
		// server already read, in the server's buffers.
		return conn, brw, err
	}
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, nodeBufSize), bufio.NewWriterSize(conn, nodeBufSize)), nil
}

// Unwrap lets http.ResponseController reach the server's writer.
func (w smallBuffers) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// frameBufs holds the buffers frames are read into: a node's frame is
// read whole, handled, and its buffer goes back, so that neither a buffer
// per node is kept nor one allocated (and grown) per frame.
var frameBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// readFrame reads one message into a pooled buffer; the caller hands it
// back with putFrame once nothing refers to its bytes.
func readFrame(ctx context.Context, c *websocket.Conn) (websocket.MessageType, *bytes.Buffer, error) {
	typ, r, err := c.Reader(ctx)
	if err != nil {
		return 0, nil, err
	}
	b := frameBufs.Get().(*bytes.Buffer)
	b.Reset()
	if _, err := b.ReadFrom(r); err != nil {
		putFrame(b)
		return 0, nil, err
	}
	return typ, b, nil
}

// putFrame returns a buffer to frameBufs; one grown by a rare large frame
// is left to the collector.
func putFrame(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 {
		frameBufs.Put(b)
	}
}
