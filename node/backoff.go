package node

import (
	"math/rand/v2"
	"time"
)

// The node's reconnect delays: from 500 ms, doubling up to 30 s.
const (
	BackoffMin = 500 * time.Millisecond
	BackoffMax = 30 * time.Second
)

// Backoff computes reconnect delays: exponential from Min to Max, with full
// jitter (a uniformly random delay up to the current ceiling), so that many
// nodes that lost the same gateway do not reconnect in lockstep. The node
// agent uses it with BackoffMin and BackoffMax, and so do the simulated
// nodes of skillgate-fleet, so that a simulated fleet reconnects as a real
// one would. The zero value is not usable: Min must be positive.
type Backoff struct {
	Min, Max time.Duration
	ceiling  time.Duration // current upper bound; 0 before the first delay
}

// Next returns the next delay and doubles the ceiling, up to Max.
func (b *Backoff) Next() time.Duration {
	if b.ceiling == 0 {
		b.ceiling = b.Min
	} else {
		b.ceiling = min(b.ceiling*2, b.Max)
	}
	return rand.N(b.ceiling)
}

// Reset starts again from Min, after a connection that was healthy.
func (b *Backoff) Reset() { b.ceiling = 0 }
