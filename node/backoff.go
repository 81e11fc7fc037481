package node

import (
	"math/rand/v2"
	"time"
)

// backoff computes reconnect delays: exponential from min to max, with full
// jitter (a uniformly random delay up to the current ceiling), so that many
// nodes that lost the same gateway do not reconnect in lockstep.
type backoff struct {
	min, max time.Duration
	ceiling  time.Duration // current upper bound; 0 before the first delay
}

// next returns the next delay and doubles the ceiling, up to max. min must
// be positive.
func (b *backoff) next() time.Duration {
	if b.ceiling == 0 {
		b.ceiling = b.min
	} else {
		b.ceiling = min(b.ceiling*2, b.max)
	}
	return rand.N(b.ceiling)
}

// reset starts again from min, after a connection that was healthy.
func (b *backoff) reset() { b.ceiling = 0 }
