package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"golang.org/x/sync/errgroup"
)

// Timing and bounds of the fleet as a whole.
const (
	stopTimeout      = 15 * time.Second // closing every node at the end
	noConnectAbort   = 20 * time.Second // give up when no node connected by then
	maxLatencySample = 1 << 20          // connect latencies kept for the summary
)

// fleet runs the simulated nodes.
type fleet struct {
	opt      nodesOptions
	progress io.Writer
	limit    fileLimit
	nodes    []simNode
	clients  []*http.Client // one per source address
	header   http.Header
	pace     *pacer
	sem      chan struct{} // bounds handshakes in flight

	start    time.Time
	stopping atomic.Bool
	stopOnce sync.Once
	done     chan struct{} // closed when stopping
	fatalMu  sync.Mutex
	fatal    error // why the fleet aborted, nil if it did not
	wg       sync.WaitGroup

	launched, connected, ready             atomic.Int64 // gauges
	dials, connects, factsSent, factsAcked atomic.Int64
	interestEvts, churned, churnReconnects atomic.Int64
	allUpNanos                             atomic.Int64 // since start; 0 until every node is ready
	errs                                   errorCounts
	connLatMu                              sync.Mutex
	connLat                                []time.Duration
	readyAtStop                            int64
	interests, connectResults              interestCache // parsed once for all nodes
	probeDone                              atomic.Bool
	probe                                  *probeResult
}

func newFleet(o nodesOptions, progress io.Writer) *fleet {
	f := &fleet{
		opt:      o,
		progress: progress,
		nodes:    make([]simNode, o.n),
		header:   http.Header{"User-Agent": {clientName}},
		pace:     &pacer{interval: time.Duration(float64(time.Second) / o.connectRate)},
		sem:      make(chan struct{}, o.concurrency),
		done:     make(chan struct{}),
		connLat:  make([]time.Duration, 0, min(o.n, maxLatencySample)),
	}
	for i := range f.nodes {
		f.nodes[i].idx = int32(i)
	}
	ips := o.localIPs
	if len(ips) == 0 {
		ips = []net.IP{nil}
	}
	for _, ip := range ips {
		d := &net.Dialer{Timeout: handshakeTimeout, KeepAlive: -1}
		if ip != nil {
			d.LocalAddr = &net.TCPAddr{IP: ip}
		}
		t := &http.Transport{
			DialContext:         d.DialContext,
			ForceAttemptHTTP2:   false,
			MaxIdleConnsPerHost: -1, // upgraded connections never go back to a pool
			TLSHandshakeTimeout: handshakeTimeout,
		}
		f.clients = append(f.clients, &http.Client{Transport: t})
	}
	return f
}

// run starts the nodes and returns the summary once the duration is over,
// ctx is done or the fleet aborted.
func (f *fleet) run(ctx context.Context) (*nodesSummary, error) {
	f.start = time.Now()
	bg := sync.WaitGroup{}
	bg.Go(f.launch)
	bg.Go(f.report)
	if f.opt.churn > 0 {
		bg.Go(f.churner)
	}
	probeErr := make(chan error, 1)
	if f.opt.probeAgent != "" {
		bg.Go(func() { probeErr <- f.runProbe() })
	} else {
		probeErr <- nil
	}
	if f.opt.readyFile != "" {
		bg.Go(f.writeReadyFile)
	}

	var timeout <-chan time.Time
	if f.opt.duration > 0 {
		t := time.NewTimer(f.opt.duration)
		defer t.Stop()
		timeout = t.C
	}
	watchdog := time.NewTimer(noConnectAbort)
	defer watchdog.Stop()
	var pErr error
	pending := true
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-timeout:
			break loop
		case <-f.done: // aborted
			break loop
		case pErr = <-probeErr:
			pending = false
			if pErr != nil {
				f.abort(pErr)
				break loop
			}
			probeErr = nil
		case <-watchdog.C:
			if f.connects.Load() == 0 {
				f.abort(fmt.Errorf("no node could connect within %v; first error: %s", noConnectAbort, f.errs.first()))
				break loop
			}
		}
	}
	f.readyAtStop = f.ready.Load()
	stopStart := time.Now()
	stuck := f.stop()
	bg.Wait()
	if pending {
		pErr = <-probeErr
	}
	sum := f.summary(time.Since(stopStart), stuck)
	f.fatalMu.Lock()
	defer f.fatalMu.Unlock()
	if f.fatal != nil {
		return sum, f.fatal
	}
	if pErr != nil {
		return sum, pErr
	}
	return sum, nil
}

// abort stops the fleet because of err (the first one wins).
func (f *fleet) abort(err error) {
	f.fatalMu.Lock()
	if f.fatal == nil {
		f.fatal = err
	}
	f.fatalMu.Unlock()
	f.signalStop()
}

func (f *fleet) signalStop() {
	f.stopOnce.Do(func() {
		f.stopping.Store(true)
		close(f.done)
	})
}

// stop closes every connection with 1001 and waits for the nodes'
// goroutines. It returns how many did not end in time.
func (f *fleet) stop() int {
	f.signalStop()
	var closing errgroup.Group
	closing.SetLimit(256)
	for i := range f.nodes {
		closing.Go(func() error {
			if c := f.nodes[i].conn.Load(); c != nil {
				c.Close(websocket.StatusGoingAway, "fleet stopping")
			}
			return nil
		})
	}
	closing.Wait() // closing returns no error
	finished := make(chan struct{})
	go func() { f.wg.Wait(); close(finished) }()
	select {
	case <-finished:
		return 0
	case <-time.After(stopTimeout):
	}
	stuck := 0
	for i := range f.nodes {
		if c := f.nodes[i].conn.Load(); c != nil {
			stuck++
			c.CloseNow()
		}
	}
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
	}
	return stuck
}

// launch starts one goroutine per node at the connect rate.
func (f *fleet) launch() {
	for i := range f.nodes {
		if !f.pace.wait(f.done) {
			return
		}
		f.wg.Add(1)
		f.launched.Add(1)
		go f.runNode(&f.nodes[i])
	}
}
