package node

import (
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Moving back. A node with several gateway URLs starts at the replica its
// id hashes to first (ReplicaOrder) and moves to the next one when its
// connection fails. Without more, a rolling restart would leave every node
// on the replica it failed over to: one replica with none, another with
// all. So while the node is connected to a replica it ranks below others,
// it asks those preferred replicas whether they are ready (GET /readyz,
// the load balancers' probe: 200 once the replica serves a loaded store
// and, with a cluster, sees the whole fleet), every MoveBack/6 or so with
// jitter, the best first. Once the best ready one has answered 200 at every
// probe for MoveBack, and then for a random delay in [0, MoveBackWindow)
// more, the node connects there, and closes the old connection only once
// the new one has answered connect and has its facts. The random delay
// spreads the moves of N nodes waiting on the same replica over the
// window, about N/MoveBackWindow a second, instead of a reconnect storm
// when it comes back.

// Defaults of moving back.
const (
	// DefaultMoveBack is how long a preferred replica must stay ready
	// before the node moves back to it.
	DefaultMoveBack = 30 * time.Second
	// DefaultMoveBackWindow is the span over which the moves back are
	// spread: each node waits a random part of it more.
	DefaultMoveBackWindow = 60 * time.Second
	// MinMoveBack is the shortest MoveBack accepted: the preferred replica
	// is probed every MoveBack/6.
	MinMoveBack = 100 * time.Millisecond
)

// readyPath is the gateway's readiness probe, next to ConnectPath.
const readyPath = "/readyz"

// readyURL turns a node's WebSocket URL (ConnectURL) into the URL of the
// same gateway's /readyz: ws → http, wss → https, ConnectPath replaced.
func readyURL(ws string) (string, error) {
	u, err := url.Parse(ws)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "ws":
		u.Scheme = "http"
	case "wss":
		u.Scheme = "https"
	default:
		return "", errors.New("not a ws:// or wss:// URL: " + ws)
	}
	u.Path = strings.TrimSuffix(u.Path, ConnectPath) + readyPath
	u.RawPath = ""
	u.RawQuery = ""
	return u.String(), nil
}

// mover watches, for one session, the replicas the node prefers to the
// one it is on, and moves the session to one of them.
type mover struct {
	c    *Client
	cur  int // the session's replica, an index in c.urls
	move chan int
	// refused are the replicas that refused a move for good during this
	// session (a token or TLS error): not tried again until the next one.
	refused map[int]bool
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// watchPreferred starts watching the replicas ranked above cur, if any and
// if moving back is on. Its move channel (nil when not watching) gives the
// replica to move to.
func (c *Client) watchPreferred(ctx context.Context, cur int) *mover {
	m := &mover{c: c, cur: cur, refused: map[int]bool{}}
	m.ctx, m.cancel = context.WithCancel(ctx)
	m.start()
	return m
}

// start runs a probe loop, unless there is nothing to watch.
func (m *mover) start() {
	var cands []int
	for i := range m.cur {
		if !m.refused[i] && m.c.urls[i] != m.c.urls[m.cur] {
			cands = append(cands, i)
		}
	}
	if m.c.moveBack <= 0 || len(cands) == 0 {
		m.move = nil
		return
	}
	m.move = make(chan int, 1)
	m.wg.Go(func() { m.c.probeLoop(m.ctx, cands, m.move) })
}

// stop ends the probe loop and waits for it.
func (m *mover) stop() {
	m.cancel()
	m.wg.Wait()
}

// moveTo connects to c.urls[idx] and returns the new session, or nil when
// that failed (or ctx ended); it then watches again.
func (m *mover) moveTo(ctx context.Context, idx int) *gatewayConn {
	m.wg.Wait() // the probe loop that sent idx has returned
	c := m.c
	c.log.Info("moving back to a preferred gateway", "gateway", c.urls[idx], "from", c.urls[m.cur])
	n, err := c.open(ctx, idx)
	if err == nil {
		return n
	}
	if n != nil {
		n.end()
	}
	if ctx.Err() != nil {
		return nil
	}
	if _, ok := errors.AsType[*FatalError](err); ok {
		m.refused[idx] = true
		c.log.Error("a preferred gateway refused this node; staying, and not trying it again until the next connection", "gateway", c.urls[idx], "err", err.Error())
	} else {
		c.log.Warn("could not move back to a preferred gateway; staying", "gateway", c.urls[idx], "err", err.Error())
	}
	m.start()
	return nil
}

// probeLoop probes the candidates (indexes in c.urls, best first) until
// the best ready one has been ready at every probe for c.moveBack plus its
// random delay, then sends its index on move and returns.
func (c *Client) probeLoop(ctx context.Context, cands []int, move chan<- int) {
	every := max(c.moveBack/6, time.Millisecond)
	jitter := func() time.Duration { return every/2 + rand.N(every) }
	var tr *http.Transport
	defer func() {
		if tr != nil {
			tr.CloseIdleConnections()
		}
	}()
	cand, due := -1, time.Time{}
	t := time.NewTimer(jitter())
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if cand < 0 {
			// A fresh transport (the TLS files read again) while no
			// replica is ready; one connection kept alive while one is.
			if tr != nil {
				tr.CloseIdleConnections()
			}
			tr = c.probeTransport()
		}
		hc := &http.Client{Transport: tr, Timeout: c.connectTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		best := -1
		for _, i := range cands {
			if c.ready(ctx, hc, i) {
				best = i
				break
			}
		}
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		switch {
		case best < 0:
			if cand >= 0 {
				c.log.Info("the preferred gateway is not ready any more; staying", "gateway", c.urls[cand])
			}
			cand = -1
		case best != cand:
			cand = best
			due = now.Add(c.moveBack)
			if c.moveBackWindow > 0 {
				due = due.Add(rand.N(c.moveBackWindow))
			}
			c.log.Info("a preferred gateway is ready; moving back to it if it stays ready", "gateway", c.urls[cand],
				"move_in", due.Sub(now).Round(time.Millisecond).String())
		case !now.Before(due):
			move <- cand
			return
		}
		d := jitter()
		if cand >= 0 {
			d = min(d, max(due.Sub(now), 0))
		}
		t.Reset(d)
	}
}

// probeTransport is the transport of the readiness probes: the node's TLS
// settings, HTTP/1.1, one connection per replica kept between probes.
func (c *Client) probeTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = c.tls.config()
	tr.MaxIdleConnsPerHost = 1
	tr.IdleConnTimeout = 2 * c.moveBack
	return tr
}

// ready reports whether c.urls[idx] answers its /readyz with 200.
func (c *Client) ready(ctx context.Context, hc *http.Client, idx int) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.readyURLs[idx], nil)
	if err != nil {
		return false
	}
	req.Header.Set("User-Agent", clientName())
	resp, err := hc.Do(req)
	if err != nil {
		c.log.Debug("preferred gateway not reachable", "gateway", c.urls[idx], "err", err.Error())
		return false
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so that the connection is kept
	if resp.StatusCode != http.StatusOK {
		c.log.Debug("preferred gateway not ready", "gateway", c.urls[idx], "status", resp.StatusCode)
		return false
	}
	return true
}
