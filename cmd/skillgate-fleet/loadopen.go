package main

import (
	"context"
	"sync"
	"time"
)

// due is one request of the open-loop schedule.
type due struct {
	i  int64     // its place in the schedule, which picks the agent
	at time.Time // when it is due; its latency counts from here
}

// openSchedule sends requests on a fixed schedule for d (open loop):
// request i is due at start + i/rate, whether or not earlier ones were
// answered, so a gateway that stalls cannot slow the load down and hide
// its stall (coordinated omission). c workers send them: worker(w) returns
// the function worker w calls for each request. A request due while every
// worker is busy is late: it waits, at most c of them, and is sent as soon
// as a worker is free; a request due when c are already waiting is
// dropped. Latency is measured from the time a request was due (r.at), so
// waiting counts. It returns the counts and the run's length.
func openSchedule(ctx context.Context, rate float64, d time.Duration, c int, worker func(w int) func(r due)) (o openLoopStats, took time.Duration) {
	// work hands a request to a worker idle at its time; waiting holds
	// the late ones. Workers take from both, so a worker blocked on work
	// means nothing is waiting.
	work := make(chan due)
	waiting := make(chan due, c)
	var wg sync.WaitGroup
	for w := range c {
		send := worker(w)
		wg.Go(func() {
			work, waiting := work, waiting
			for work != nil || waiting != nil {
				var r due
				var ok bool
				select {
				case r, ok = <-waiting:
					if !ok {
						waiting = nil
						continue
					}
				case r, ok = <-work:
					if !ok {
						work = nil
						continue
					}
				}
				send(r)
			}
		})
	}
	o.TargetRate = rate
	interval := float64(time.Second) / rate
	start := time.Now()
	end := start.Add(d)
	for i := int64(0); ; i++ {
		at := start.Add(time.Duration(float64(i) * interval))
		if !at.Before(end) {
			break
		}
		// Waits are short (a request's interval, at most a second before
		// the first one): check ctx between them.
		for wait := time.Until(at); wait > 0 && ctx.Err() == nil; wait = time.Until(at) {
			preciseSleep(min(wait, 50*time.Millisecond))
		}
		if ctx.Err() != nil {
			break
		}
		o.Scheduled++
		r := due{i: i, at: at}
		select {
		case work <- r:
			continue
		default:
		}
		select {
		case waiting <- r:
			o.Late++
		default:
			o.Dropped++
		}
	}
	close(work)
	close(waiting)
	wg.Wait()
	took = time.Since(start)
	o.AchievedRate = float64(o.Scheduled-o.Dropped) / d.Seconds()
	return o, took
}

// runOpen sends rate requests per second for d on openSchedule's fixed
// schedule, with the gateway's URLs in turn.
func (g *loadGen) runOpen(ctx context.Context, rate float64) *loadResult {
	client, tr := g.client()
	defer tr.CloseIdleConnections()

	perWorker := maxSamples / g.c / 2 // latency and send lag
	workers := make([]loadWorker, g.c)
	lags := make([][]time.Duration, g.c)
	o, took := openSchedule(ctx, rate, g.d, g.c, func(w int) func(due) {
		lw := &workers[w]
		lw.codes = map[int]int{}
		lw.lat = make([]time.Duration, 0, min(perWorker, 1<<14))
		lags[w] = make([]time.Duration, 0, min(perWorker, 1<<14))
		return func(r due) {
			u := g.urls[r.i%int64(len(g.urls))]
			req, err := g.request(ctx, u)
			if err != nil {
				lw.transport++
				lw.note(err.Error())
				return
			}
			sent := time.Now()
			resp, err := do(client, req)
			lat := time.Since(r.at)
			if ctx.Err() != nil {
				return // cut by SIGINT: not a sample
			}
			if len(lags[w]) < perWorker {
				lags[w] = append(lags[w], sent.Sub(r.at))
			}
			lw.record(u, resp, err, lat, perWorker)
		}
	})
	res := g.result(workers, took)
	var all []time.Duration
	for _, l := range lags {
		all = append(all, l...)
	}
	o.SendLag = summarize(all)
	res.OpenLoop = &o
	return res
}
