package gateway

import (
	"container/list"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Limits of the listener on connections that have not sent a byte yet
// (L7): idle sockets opened faster than the header timeout ends them used
// up the process's descriptors, and every admin request timed out.
const (
	// FirstByteTimeout is how long a new connection may stay silent.
	FirstByteTimeout = 5 * time.Second
	// MaxSilentPerAddr is how many silent connections one source address
	// may hold; a new one past it closes that address's oldest.
	MaxSilentPerAddr = 512
	// fdReserve descriptors are kept out of the listener's budget: the
	// store, NATS, log and config files, and a few spare.
	fdReserve = 64
)

// connLimiter wraps the gateway's listener. It counts open connections
// and, per source address, those that have not sent their first byte
// ("silent"). A silent connection is closed after FirstByteTimeout; past
// MaxSilentPerAddr silent ones from an address, or when the open
// connections reach the descriptor budget, the oldest silent one is closed
// to make room, so that a new client (an operator's request, a node's
// connect) always gets in while sockets that say nothing go first.
type connLimiter struct {
	net.Listener
	maxOpen   int // open connections at once before silent ones are shed; 0: no bound
	perAddr   int
	firstByte time.Duration

	mu     sync.Mutex
	open   int
	silent *list.List     // of *limitedConn, oldest first
	byAddr map[string]int // silent connections per address
}

func newConnLimiter(ln net.Listener, maxOpen, perAddr int, firstByte time.Duration) *connLimiter {
	return &connLimiter{Listener: ln, maxOpen: maxOpen, perAddr: perAddr, firstByte: firstByte,
		silent: list.New(), byAddr: map[string]int{}}
}

// limitedConn is a connection the limiter tracks.
type limitedConn struct {
	net.Conn
	l      *connLimiter
	addr   string
	elem   *list.Element // in l.silent while silent; nil after the first byte
	timer  *time.Timer
	spoke  atomic.Bool
	closed atomic.Bool
}

func (l *connLimiter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	addr := c.RemoteAddr().String()
	if h, _, err := net.SplitHostPort(addr); err == nil {
		addr = h
	}
	lc := &limitedConn{Conn: c, l: l, addr: addr}
	// Set before lc is reachable by anyone else; only Read stops it (the
	// timer's own Close does not touch it).
	lc.timer = time.AfterFunc(l.firstByte, func() {
		if !lc.spoke.Load() {
			lc.Close()
		}
	})
	var shed []*limitedConn
	l.mu.Lock()
	l.open++
	lc.elem = l.silent.PushBack(lc)
	l.byAddr[addr]++
	if l.byAddr[addr] > l.perAddr {
		shed = append(shed, l.oldestSilentLocked(addr))
	}
	if l.maxOpen > 0 && l.open > l.maxOpen {
		if o := l.oldestSilentLocked(""); o != nil && o != lc && !contains(shed, o) {
			shed = append(shed, o)
		}
	}
	l.mu.Unlock()
	for _, o := range shed {
		if o != nil {
			o.Close()
		}
	}
	return lc, nil
}

func contains(cs []*limitedConn, c *limitedConn) bool {
	for _, x := range cs {
		if x == c {
			return true
		}
	}
	return false
}

// oldestSilentLocked returns the oldest silent connection (of addr, or of
// any address for ""), or nil.
func (l *connLimiter) oldestSilentLocked(addr string) *limitedConn {
	for e := l.silent.Front(); e != nil; e = e.Next() {
		if c := e.Value.(*limitedConn); addr == "" || c.addr == addr {
			return c
		}
	}
	return nil
}

// spoken takes c out of the silent ones.
func (l *connLimiter) spoken(c *limitedConn) {
	l.mu.Lock()
	if c.elem != nil {
		l.silent.Remove(c.elem)
		c.elem = nil
		if l.byAddr[c.addr]--; l.byAddr[c.addr] == 0 {
			delete(l.byAddr, c.addr)
		}
	}
	l.mu.Unlock()
}

func (c *limitedConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.spoke.Load() && c.spoke.CompareAndSwap(false, true) {
		c.timer.Stop()
		c.l.spoken(c)
	}
	return n, err
}

func (c *limitedConn) Close() error {
	if c.closed.CompareAndSwap(false, true) {
		c.l.spoken(c)
		c.l.mu.Lock()
		c.l.open--
		c.l.mu.Unlock()
	}
	return c.Conn.Close()
}

// openConns returns the connections open now and the silent ones.
func (l *connLimiter) openConns() (open, silent int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open, l.silent.Len()
}
