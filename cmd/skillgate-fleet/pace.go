package main

import (
	"sync"
	"time"
)

// pacer spaces events at a fixed interval, without bursts.
type pacer struct {
	mu       sync.Mutex
	next     time.Time
	interval time.Duration
}

// wait blocks until the caller's slot; false when done closed first.
func (p *pacer) wait(done <-chan struct{}) bool {
	p.mu.Lock()
	now := time.Now()
	if p.next.Before(now) {
		p.next = now
	}
	slot := p.next
	p.next = p.next.Add(p.interval)
	p.mu.Unlock()
	d := time.Until(slot)
	if d <= 0 {
		select {
		case <-done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-done:
		return false
	case <-t.C:
		return true
	}
}
