package gateway

import (
	"container/list"
	"net"
	"sync"
)

// Defaults of the caps on node sockets that have not completed connect.
const (
	DefaultMaxPending        = 1024
	DefaultMaxPendingPerAddr = 256
)

// pendingSockets tracks node sockets that are upgraded but have not
// completed connect. They are unauthenticated, so they never count against
// maxNodes; they have caps of their own, in total and per source address.
// Over a cap the oldest pending socket (of that address, or of all) is
// closed rather than the new one refused: a real node completes connect in
// one round trip, so silent sockets cannot keep it out, however many an
// attacker reopens, even from the same address as the node.
type pendingSockets struct {
	maxTotal, maxPerAddr int

	mu     sync.Mutex
	order  list.List                   // *pendingEntry, oldest first
	byAddr map[string]int              // source address → pending sockets
	elems  map[*nodeConn]*list.Element // for removal
}

type pendingEntry struct {
	c    *nodeConn
	addr string
}

func newPendingSockets(maxTotal, maxPerAddr int) *pendingSockets {
	return &pendingSockets{maxTotal: maxTotal, maxPerAddr: maxPerAddr,
		byAddr: map[string]int{}, elems: map[*nodeConn]*list.Element{}}
}

// add registers a pending socket and returns the sockets to evict (to be
// closed by the caller, outside any lock).
func (p *pendingSockets) add(c *nodeConn, remoteAddr string) (evict []*nodeConn) {
	addr := sourceAddr(remoteAddr)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.elems[c] = p.order.PushBack(&pendingEntry{c: c, addr: addr})
	p.byAddr[addr]++
	if p.byAddr[addr] > p.maxPerAddr {
		for e := p.order.Front(); e != nil; e = e.Next() {
			if pe := e.Value.(*pendingEntry); pe.addr == addr {
				evict = append(evict, pe.c)
				p.removeLocked(pe.c)
				break
			}
		}
	}
	for p.order.Len() > p.maxTotal {
		pe := p.order.Front().Value.(*pendingEntry)
		evict = append(evict, pe.c)
		p.removeLocked(pe.c)
	}
	return evict
}

// done removes a socket that completed or failed connect; it reports
// whether the socket was still pending (false: it was evicted).
func (p *pendingSockets) done(c *nodeConn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.removeLocked(c)
}

func (p *pendingSockets) removeLocked(c *nodeConn) bool {
	e, ok := p.elems[c]
	if !ok {
		return false
	}
	pe := p.order.Remove(e).(*pendingEntry)
	delete(p.elems, c)
	if p.byAddr[pe.addr]--; p.byAddr[pe.addr] == 0 {
		delete(p.byAddr, pe.addr)
	}
	return true
}

// len returns the number of pending sockets.
func (p *pendingSockets) len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.order.Len()
}

// sourceAddr is the IP of a RemoteAddr ("ip:port"); the whole string if it
// has no port. Forwarding headers are not trusted: they are the client's.
func sourceAddr(remoteAddr string) string {
	if host, _, err := net.SplitHostPort(remoteAddr); err == nil {
		return host
	}
	return remoteAddr
}
