package gateway

import "time"

// Pacing of one node's frames. Every frame a node sends, whatever its
// kind, waits until minFrameInterval after the previous one, and the time
// the gateway spends processing a node's frames is bounded by a budget:
// frameBudget per second on average, with bursts up to frameBurst. A node
// over budget has its read loop paused until it is back under it; TCP then
// pushes back on the sender. Ten nodes flooding full-size frames therefore
// cost the gateway at most 10 × frameBudget per second, not every core.
const (
	minFrameInterval = 50 * time.Millisecond
	frameBudget      = 20 * time.Millisecond // per second of wall time
	frameBurst       = 200 * time.Millisecond
)

// pacer is the per-node frame pace; used by the read loop only.
type pacer struct {
	interval time.Duration
	rate     float64       // budget earned per unit of wall time
	burst    time.Duration // most budget that can be saved up
	last     time.Time     // when the previous frame started processing
	credit   time.Duration // processing time the node may still spend
	refilled time.Time
}

func newPacer(now time.Time) *pacer {
	return &pacer{interval: minFrameInterval, rate: float64(frameBudget) / float64(time.Second),
		burst: frameBurst, credit: frameBurst, refilled: now}
}

// delay returns how long the next frame must wait, at now.
func (p *pacer) delay(now time.Time) time.Duration {
	p.refill(now)
	var wait time.Duration
	if !p.last.IsZero() {
		wait = p.last.Add(p.interval).Sub(now)
	}
	if p.credit < 0 {
		// The debt is repaid at rate: debt/rate of wall time.
		wait = max(wait, time.Duration(float64(-p.credit)/p.rate))
	}
	return max(wait, 0)
}

// start records that a frame starts being processed at now.
func (p *pacer) start(now time.Time) { p.last = now }

// charge records the processing time a frame cost.
func (p *pacer) charge(cost time.Duration) { p.credit -= cost }

func (p *pacer) refill(now time.Time) {
	if d := now.Sub(p.refilled); d > 0 {
		p.credit = min(p.burst, p.credit+time.Duration(float64(d)*p.rate))
		p.refilled = now
	}
}
