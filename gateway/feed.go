package gateway

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// MaxWait caps the wait of a long poll (GET …/prompt?wait=D).
const MaxWait = 5 * time.Minute

// changeFeed wakes long polls when a block they wait on may have changed:
// the same events that drop cached blocks (live.go) signal here, so a
// waiter sleeps until its view's block was dropped and only then looks
// again. Waiters of other views are not woken by a view's change.
type changeFeed struct {
	mu     sync.Mutex
	all    chan struct{}                       // closed when every view may have changed
	views  map[string]chan struct{}            // closed when that view key's block may have changed
	parked map[string]map[*parkedPoll]struct{} // parked long polls by view key (longpoll.go)
	closed bool                                // the gateway is closing: nothing parks
}

func newChangeFeed() *changeFeed {
	return &changeFeed{all: make(chan struct{}), views: map[string]chan struct{}{}, parked: map[string]map[*parkedPoll]struct{}{}}
}

// park adds a parked poll under a view key; false once the feed is closed.
func (f *changeFeed) park(key string, p *parkedPoll) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	m := f.parked[key]
	if m == nil {
		m = map[*parkedPoll]struct{}{}
		f.parked[key] = m
	}
	m[p] = struct{}{}
	return true
}

// unpark removes a parked poll (a no-op when a wake took it already).
func (f *changeFeed) unpark(key string, p *parkedPoll) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if m := f.parked[key]; m != nil {
		delete(m, p)
		if len(m) == 0 {
			delete(f.parked, key)
		}
	}
}

// takeLocked removes and returns the polls parked under key.
func (f *changeFeed) takeLocked(key string) []*parkedPoll {
	m := f.parked[key]
	delete(f.parked, key)
	out := make([]*parkedPoll, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	return out
}

// close ends every parked poll (without an answer) and parks no more.
func (f *changeFeed) close() {
	f.mu.Lock()
	f.closed = true
	var all []*parkedPoll
	for key := range f.parked {
		all = append(all, f.takeLocked(key)...)
	}
	f.mu.Unlock()
	for _, p := range all {
		p.finish(nil)
	}
}

// subscribe returns the channels closed at the next change of every view
// or of this view key. Subscribe before looking at the block, so that no
// change between the look and the wait is missed.
func (f *changeFeed) subscribe(key string) (all, view <-chan struct{}) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.views[key]
	if !ok {
		c = make(chan struct{})
		f.views[key] = c
	}
	return f.all, c
}

// changedAll wakes every waiter.
func (f *changeFeed) changedAll() {
	f.mu.Lock()
	close(f.all)
	f.all = make(chan struct{})
	// Every waiter also listens to all: the view channels can go.
	clear(f.views)
	var woken []*parkedPoll
	for key := range f.parked {
		woken = append(woken, f.takeLocked(key)...)
	}
	f.mu.Unlock()
	for _, p := range woken {
		p.wake()
	}
}

// changed wakes the waiters of one view key.
func (f *changeFeed) changed(key string) {
	f.mu.Lock()
	if c, ok := f.views[key]; ok {
		close(c)
		delete(f.views, key)
	}
	woken := f.takeLocked(key)
	f.mu.Unlock()
	for _, p := range woken {
		p.wake()
	}
}

// etagOf is the strong validator of a block: its bytes' SHA-256 (128
// bits of it), so that the same block has the same ETag on any gateway.
func etagOf(block string) string {
	sum := sha256.Sum256([]byte(block))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// etagListMatches reports whether an If-None-Match value names etag
// (weak comparison, as RFC 9110 asks of If-None-Match; "*" matches).
func etagListMatches(header, etag string) bool {
	for part := range strings.SplitSeq(header, ",") {
		part = strings.TrimSpace(part)
		if part == "*" || strings.TrimPrefix(part, "W/") == etag {
			return true
		}
	}
	return false
}
