package main

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// churner disconnects and reconnects opt.churn random ready nodes per
// second, once the fleet is up (or 5 s after the last node was launched).
func (f *fleet) churner() {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var launchedAt time.Time
	var credit float64
	closers := make(chan struct{}, 64)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-f.done:
			return
		case <-tick.C:
		}
		if f.allUpNanos.Load() == 0 {
			if f.launched.Load() < int64(len(f.nodes)) {
				continue
			}
			if launchedAt.IsZero() {
				launchedAt = time.Now()
			}
			if time.Since(launchedAt) < 5*time.Second {
				continue
			}
		}
		credit += f.opt.churn / 10
		for ; credit >= 1; credit-- {
			var n *simNode
			for range 16 { // a few tries to find a ready node
				c := &f.nodes[rand.IntN(len(f.nodes))]
				if c.ready.Load() && !c.churn.Load() {
					n = c
					break
				}
			}
			if n == nil {
				continue
			}
			n.churn.Store(true)
			conn := n.conn.Load()
			if conn == nil {
				n.churn.Store(false)
				continue
			}
			f.churned.Add(1)
			select {
			case closers <- struct{}{}:
			case <-f.done:
				return
			}
			wg.Go(func() {
				defer func() { <-closers }()
				conn.Close(websocket.StatusGoingAway, "churn")
			})
		}
	}
}
