package gateway

import (
	"sync"
	"time"
)

// lifecycle tracks everything the gateway runs, so that Close can end it
// all and return only once it has ended (as nats-server's Shutdown does):
//
//   - goroutines the gateway starts, through goFunc only (the poller, the
//     HTTP server's accept loop, interest pushes, closes of replaced or
//     revoked nodes);
//   - calls into the gateway on goroutines it does not own, through
//     enter and leave: every HTTP request (a node's upgrade among them;
//     its read loop then runs on a goroutine of goFunc, for days);
//   - timer functions that are due (connect timeouts, pings): counted from
//     arming until they have run or were stopped before running;
//   - the open node connections (track), which Close closes.
//
// Once closed it starts and admits nothing more: goFunc, enter and track
// report false. Counting in takes the read lock and closing the write
// lock, so no count can start from zero while wait runs; timers are armed
// only by code that is itself counted.
type lifecycle struct {
	mu     sync.RWMutex // read: counting in; write: closing
	closed bool
	wg     sync.WaitGroup

	connsMu sync.Mutex
	conns   map[*nodeConn]struct{}
}

// goFunc runs f on a new goroutine counted until f returns. It reports
// false, and does not run f, once Close has begun.
func (l *lifecycle) goFunc(f func()) bool {
	if !l.enter() {
		return false
	}
	go func() {
		defer l.leave()
		f()
	}()
	return true
}

// enter counts the calling goroutine in until leave. It reports false
// once Close has begun; the caller must then not run gateway code that
// starts anything.
func (l *lifecycle) enter() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return false
	}
	l.wg.Add(1)
	return true
}

// leave ends a successful enter.
func (l *lifecycle) leave() { l.wg.Done() }

// armed counts a timer function that is now due to run. The caller must be
// counted itself (so the count is not zero). The function calls fired when
// it ends; whoever stops the timer in time calls disarmed.
func (l *lifecycle) armed()    { l.wg.Add(1) }
func (l *lifecycle) fired()    { l.wg.Done() }
func (l *lifecycle) disarmed() { l.wg.Done() }

// afterFunc is time.AfterFunc for a timer armed once, counted as armed
// does. The returned stop reports whether it stopped f from running.
func (l *lifecycle) afterFunc(d time.Duration, f func()) (stop func() bool) {
	l.armed()
	t := time.AfterFunc(d, func() {
		defer l.fired()
		f()
	})
	return func() bool {
		if t.Stop() {
			l.disarmed()
			return true
		}
		return false
	}
}

// track records an open node connection, for Close to close. It reports
// false once Close has begun (Close would not see it).
func (l *lifecycle) track(c *nodeConn) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		return false
	}
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	if l.conns == nil {
		l.conns = map[*nodeConn]struct{}{}
	}
	l.conns[c] = struct{}{}
	return true
}

// untrack forgets a connection whose handler is returning.
func (l *lifecycle) untrack(c *nodeConn) {
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	delete(l.conns, c)
}

// close admits nothing more and returns the open node connections.
func (l *lifecycle) close() (conns []*nodeConn) {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	l.connsMu.Lock()
	defer l.connsMu.Unlock()
	for c := range l.conns {
		conns = append(conns, c)
	}
	return conns
}

// isClosed reports whether close was called.
func (l *lifecycle) isClosed() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.closed
}

// wait returns once everything counted has ended. Call it after close.
func (l *lifecycle) wait() { l.wg.Wait() }
