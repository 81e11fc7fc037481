package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
)

// Timing and bounds of the simulated nodes.
const (
	handshakeTimeout = 10 * time.Second // dial + answer to connect
	writeTimeout     = 10 * time.Second
	backoffMin       = 500 * time.Millisecond
	backoffMax       = 30 * time.Second
	stopTimeout      = 15 * time.Second // closing every node at the end
	noConnectAbort   = 20 * time.Second // give up when no node connected by then
	maxNodes         = 1_000_000
	maxLatencySample = 1 << 20 // connect latencies kept for the summary
	fdReserve        = 64      // descriptors besides the nodes' sockets
)

// nodesOptions is the validated command line of `nodes`.
type nodesOptions struct {
	base        *url.URL // http(s) base of the gateway
	wsURL       string   // {base}/v1/nodes/connect, host rewritten to an IP when spreading
	n           int
	mix         *mix
	mixName     string
	churn       float64 // nodes per second
	duration    time.Duration
	connectRate float64
	concurrency int
	prefix      string
	token       string
	probeAgent  string
	probeRuns   int
	agentToken  string
	json        bool
	readyFile   string
	localIPs    []net.IP // source addresses to spread over; nil = let the kernel choose
}

func cmdNodes(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet nodes", stderr)
	gw := fs.String("gateway", "", "gateway base URL on loopback, e.g. http://127.0.0.1:7780")
	n := fs.Int("n", 10000, "number of simulated nodes")
	mixPath := fs.String("mix", "", "HuJSON file of weighted node profiles (default: the built-in mix)")
	churn := fs.String("churn", "0", "disconnect and reconnect this many random nodes per second, e.g. 50/s")
	duration := fs.Duration("duration", 0, "stop after this long, counted from the start (0: run until SIGINT)")
	rate := fs.String("connect-rate", "2000/s", "at most this many connection attempts per second")
	conc := fs.Int("connect-concurrency", 256, "at most this many handshakes in flight")
	prefix := fs.String("id-prefix", "sim-", "node ids are this prefix followed by the node's index")
	tokenFile := fs.String("token-file", "", "file holding the node token (default: $"+nodeTokenEnv+")")
	seed := fs.Uint64("seed", 1, "seed of the per-node profile and name draws")
	probeAgent := fs.String("probe-agent", "", "after the fleet is up, measure connect → prompt latency on this agent's prompt")
	probeRuns := fs.Int("probe-runs", 20, "probe repetitions")
	agentTokenFile := fs.String("agent-token-file", "", "file holding the agents' bearer token for the probe (default: $"+agentTokenEnv+")")
	jsonOut := fs.Bool("json", false, "print the summary as JSON")
	readyFile := fs.String("ready-file", "", "write this file once every node reported facts (and the probe finished), for scripts")
	if err := parseFlags(fs, args); err != nil {
		return err
	}

	o := nodesOptions{n: *n, duration: *duration, concurrency: *conc, prefix: *prefix, probeAgent: *probeAgent,
		probeRuns: *probeRuns, json: *jsonOut, readyFile: *readyFile}
	var err error
	if o.base, err = gatewayBase(*gw); err != nil {
		return err
	}
	host := o.base.Hostname()
	if !isLoopbackHost(host) {
		return cli.Usagef("--gateway: host %q is not a loopback address; skillgate-fleet simulates nodes only against a gateway on this machine (127.0.0.0/8, ::1 or localhost), so that a load test never reaches a real deployment", host)
	}
	switch {
	case o.n < 1 || o.n > maxNodes:
		return cli.Usagef("-n: %d is out of range (1…%d)", o.n, maxNodes)
	case o.duration < 0:
		return cli.Usagef("--duration: must not be negative (0 runs until SIGINT)")
	case o.concurrency < 1:
		return cli.Usagef("--connect-concurrency: must be at least 1")
	case o.probeRuns < 1:
		return cli.Usagef("--probe-runs: must be at least 1")
	}
	if o.probeAgent != "" {
		if err := protocol.ValidateID(o.probeAgent); err != nil {
			return cli.Usagef("--probe-agent: agent id %v", err)
		}
	}
	if err := protocol.ValidateID(o.prefix + strconv.Itoa(o.n-1)); err != nil {
		return cli.Usagef("--id-prefix: node ids would be invalid: %v", err)
	}
	if o.churn, err = parseRate("churn", *churn); err != nil {
		return err
	}
	if o.churn > float64(o.n) {
		return cli.Usagef("--churn: %s is more than the %d nodes; churn at most -n nodes per second", *churn, o.n)
	}
	if o.connectRate, err = parseRate("connect-rate", *rate); err != nil {
		return err
	}
	if o.connectRate <= 0 {
		return cli.Usagef("--connect-rate: must be positive, e.g. 2000/s")
	}
	if o.mix, err = loadMix(*mixPath, *seed); err != nil {
		return err
	}
	o.mixName = "built-in"
	if *mixPath != "" {
		o.mixName = *mixPath
	}
	if o.token, err = readToken("token-file", *tokenFile, nodeTokenEnv); err != nil {
		return err
	}
	if o.agentToken, err = readToken("agent-token-file", *agentTokenFile, agentTokenEnv); err != nil {
		return err
	}
	if err := o.resolveTarget(ctx); err != nil {
		return err
	}
	lim, err := raiseFileLimit()
	if err != nil {
		fmt.Fprintf(stderr, "skillgate-fleet nodes: warning: %v\n", err)
	}
	if lim.cur > 0 && uint64(o.n)+fdReserve > lim.cur {
		return cli.Usagef("-n: %d nodes need about %d open files but RLIMIT_NOFILE is %d (hard %d); raise the hard limit (ulimit -Hn, or LimitNOFILE in systemd) or lower -n",
			o.n, o.n+fdReserve, lim.cur, lim.max)
	}

	f := newFleet(o, stderr)
	f.limit = lim
	sum, runErr := f.run(ctx)
	if o.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		enc.Encode(sum)
	} else {
		sum.print(stdout)
	}
	return runErr
}

// resolveTarget rewrites "localhost" to a loopback IP and decides whether
// to spread source addresses: on Linux every 127.0.0.0/8 address is local,
// so with the gateway on IPv4 loopback the nodes bind 127.0.0.1…254 in
// turn and 10,000 connections do not exhaust one address's ephemeral ports.
func (o *nodesOptions) resolveTarget(ctx context.Context) error {
	u := *o.base
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		addrs, err := net.DefaultResolver.LookupIPAddr(ctx, host)
		if err != nil {
			return cli.Usagef("--gateway: resolving localhost: %v", err)
		}
		var pick net.IP
		for _, a := range addrs {
			if !a.IP.IsLoopback() {
				return cli.Usagef("--gateway: localhost resolves to %s, which is not loopback; give a loopback IP such as 127.0.0.1", a.IP)
			}
			if a.IP.To4() != nil && pick == nil {
				pick = a.IP
			}
		}
		if pick == nil && len(addrs) > 0 {
			pick = addrs[0].IP
		}
		if pick == nil {
			return cli.Usagef("--gateway: localhost resolves to nothing; give a loopback IP such as 127.0.0.1")
		}
		u.Host = net.JoinHostPort(pick.String(), u.Port())
		host = pick.String()
	}
	ws := u
	ws.Scheme = map[string]string{"http": "ws", "https": "wss"}[u.Scheme]
	ws.Path = u.Path + "/v1/nodes/connect"
	o.wsURL = ws.String()
	if ip := net.ParseIP(host); ip != nil && ip.To4() != nil && runtime.GOOS == "linux" {
		for i := 1; i <= 254; i++ {
			o.localIPs = append(o.localIPs, net.IPv4(127, 0, 0, byte(i)).To4())
		}
	}
	return nil
}

// simNode is the whole per-node state the fleet keeps; the rest lives on
// the node's goroutine while it runs.
type simNode struct {
	idx   int32
	ready atomic.Bool // connected and facts sent on the current connection
	churn atomic.Bool // the churner closed the connection: reconnect at once
	conn  atomic.Pointer[websocket.Conn]
}

// sessionEnd says why a node's session ended.
type sessionEnd int

const (
	endStop  sessionEnd = iota // the fleet is stopping
	endChurn                   // closed by the churner: reconnect now
	endRetry                   // an error: reconnect after a backoff
	endGone                    // this node stops (refused for good, or replaced)
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
	var workers sync.WaitGroup
	next := atomic.Int64{}
	for range min(256, len(f.nodes)) {
		workers.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(f.nodes)) {
					return
				}
				if c := f.nodes[i].conn.Load(); c != nil {
					c.Close(websocket.StatusGoingAway, "fleet stopping")
				}
			}
		})
	}
	workers.Wait()
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

// runNode is a node's only goroutine: it connects, answers the gateway
// from its read loop, and reconnects after churn or errors.
func (f *fleet) runNode(n *simNode) {
	defer f.wg.Done()
	facts := f.opt.mix.node(int(n.idx))
	id := f.opt.prefix + strconv.Itoa(int(n.idx))
	client := f.clients[int(n.idx)%len(f.clients)]
	failures := 0
	for {
		end := f.session(n, &facts, id, client)
		switch end {
		case endStop, endGone:
			return
		case endChurn:
			failures = 0
			f.churnReconnects.Add(1)
		case endRetry:
			failures++
			d := min(backoffMax, backoffMin<<min(failures-1, 10))
			t := time.NewTimer(rand.N(d) + backoffMin/2)
			select {
			case <-f.done:
				t.Stop()
				return
			case <-t.C:
			}
		}
		if !f.pace.wait(f.done) {
			return
		}
	}
}

// session runs one connection of a node until it ends.
func (f *fleet) session(n *simNode, facts *simNodeFacts, id string, client *http.Client) sessionEnd {
	select {
	case f.sem <- struct{}{}:
	case <-f.done:
		return endStop
	}
	inFlight := true
	release := func() {
		if inFlight {
			inFlight = false
			<-f.sem
		}
	}
	defer release()

	t0 := time.Now()
	f.dials.Add(1)
	hctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	conn, resp, err := websocket.Dial(hctx, f.opt.wsURL, &websocket.DialOptions{
		HTTPClient: client, HTTPHeader: f.header, CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		if f.stopping.Load() {
			return endStop
		}
		if resp != nil { // the gateway answered, but not with an upgrade
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			f.errs.add("upgrade", fmt.Sprintf("gateway answered the WebSocket upgrade with %s: %s", resp.Status, strings.TrimSpace(string(body))))
		} else {
			f.errs.add("dial", fmt.Sprintf("%v (is a gateway serving %s?)", err, f.opt.base))
		}
		return endRetry
	}
	conn.SetReadLimit(protocol.ReadLimit)
	n.conn.Store(conn)
	connected, ready := false, false
	defer func() {
		n.conn.Store(nil)
		if ready {
			n.ready.Store(false)
			f.ready.Add(-1)
		}
		if connected {
			f.connected.Add(-1)
		}
		conn.CloseNow()
	}()
	if f.stopping.Load() { // stop() may have passed this node already
		conn.Close(websocket.StatusGoingAway, "fleet stopping")
		return endStop
	}

	info := facts.info(id)
	req, err := protocol.NewReq("1", protocol.MethodConnect, protocol.ConnectParams{
		Protocol: protocol.Version, Token: f.opt.token, Client: clientName, Node: info,
	})
	if err != nil { // a NodeInfo always encodes
		f.abort(fmt.Errorf("encoding connect: %w", err))
		return endStop
	}
	if err := conn.Write(hctx, websocket.MessageText, req); err != nil {
		return f.ended(n, "handshake", err)
	}
	interest, end, ok := f.awaitConnect(hctx, conn, id)
	if !ok {
		return end
	}
	connected = true
	f.connected.Add(1)
	f.connects.Add(1)
	f.recordConnect(time.Since(t0))
	release()
	cancel()

	nextID := 2
	sendFacts := func(in protocol.Interest) error {
		b, err := protocol.NewReq(strconv.Itoa(nextID), protocol.MethodFactsUpdate, facts.answer(in))
		if err != nil {
			return err
		}
		nextID++
		wctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
		defer cancel()
		if err := conn.Write(wctx, websocket.MessageText, b); err != nil {
			return err
		}
		f.factsSent.Add(1)
		return nil
	}
	if err := sendFacts(interest); err != nil {
		return f.ended(n, "write", err)
	}
	ready = true
	n.ready.Store(true)
	if f.ready.Add(1) == int64(f.opt.n) {
		f.allUpNanos.CompareAndSwap(0, int64(time.Since(f.start)))
	}

	for {
		// No deadline: the gateway's pings and the close handshake are
		// answered inside Read, and stop() or the churner end it with Close.
		typ, data, err := conn.Read(context.Background())
		if err != nil {
			return f.ended(n, "disconnected", err)
		}
		if typ != websocket.MessageText {
			f.errs.add("protocol", "the gateway sent a binary frame")
			continue
		}
		fr, err := protocol.DecodeFrame(data)
		if err != nil {
			f.errs.add("protocol", "malformed frame from the gateway: "+err.Error())
			continue
		}
		switch {
		case fr.Type == protocol.TypeEvt && fr.Event == protocol.EventInterest:
			in, err := f.interests.parse(fr.Payload, protocol.ParseInterest)
			if err != nil {
				f.errs.add("protocol", "malformed interest event: "+err.Error())
				continue
			}
			f.interestEvts.Add(1)
			if err := sendFacts(in); err != nil {
				return f.ended(n, "write", err)
			}
		case fr.Type == protocol.TypeRes && *fr.OK:
			f.factsAcked.Add(1)
		case fr.Type == protocol.TypeRes:
			f.errs.add("facts.update", fmt.Sprintf("gateway answered %s: %s (node %s)", fr.Error.Code, fr.Error.Message, id))
		default:
			f.errs.add("protocol", fmt.Sprintf("unexpected %s frame from the gateway (event %q, method %q)", fr.Type, fr.Event, fr.Method))
		}
	}
}

// awaitConnect reads until the answer to connect and returns the interest
// in it; ok is false when the session ended (end says how).
func (f *fleet) awaitConnect(ctx context.Context, conn *websocket.Conn, id string) (in protocol.Interest, end sessionEnd, ok bool) {
	for {
		typ, data, err := conn.Read(ctx)
		if err != nil {
			return in, f.ended(nil, "handshake", err), false
		}
		if typ != websocket.MessageText {
			continue
		}
		fr, err := protocol.DecodeFrame(data)
		if err != nil || fr.Type != protocol.TypeRes || fr.ID != "1" {
			continue // nothing else is expected before the answer
		}
		if !*fr.OK {
			switch fr.Error.Code {
			case protocol.CodeUnauthorized:
				f.abort(fmt.Errorf("gateway refused node %s (%s): %s; set %s or --token-file to the gateway's node token",
					id, fr.Error.Code, fr.Error.Message, nodeTokenEnv))
				return in, endGone, false
			case protocol.CodeInvalidFacts, protocol.CodeUnsupportedProtocol:
				f.abort(fmt.Errorf("gateway refused node %s (%s): %s; fix the profile in --mix", id, fr.Error.Code, fr.Error.Message))
				return in, endGone, false
			}
			f.errs.add("connect", fmt.Sprintf("gateway refused connect of %s (%s): %s", id, fr.Error.Code, fr.Error.Message))
			return in, endRetry, false
		}
		in, err := f.connectResults.parse(fr.Payload, func(raw json.RawMessage) (protocol.Interest, error) {
			cr, err := protocol.ParseConnectResult(raw)
			return cr.Interest, err
		})
		if err != nil {
			f.errs.add("connect", "malformed connect answer: "+err.Error())
			return in, endRetry, false
		}
		return in, 0, true
	}
}

// ended classifies the end of a session. n is nil during the handshake.
func (f *fleet) ended(n *simNode, kind string, err error) sessionEnd {
	if n != nil && n.churn.Swap(false) {
		return endChurn
	}
	if f.stopping.Load() {
		return endStop
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code == websocket.StatusPolicyViolation && ce.Reason == "replaced" {
		f.errs.add("replaced", "the gateway replaced a node with a newer connection of the same id; is another fleet using --id-prefix "+strconv.Quote(f.opt.prefix)+"? Use a different prefix")
		return endGone
	}
	f.errs.add(kind, err.Error())
	return endRetry
}

func (f *fleet) recordConnect(d time.Duration) {
	f.connLatMu.Lock()
	if len(f.connLat) < maxLatencySample {
		f.connLat = append(f.connLat, d)
	}
	f.connLatMu.Unlock()
}

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

// report prints a progress line every second.
func (f *fleet) report() {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	announced := false
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		el := time.Since(f.start).Round(time.Second)
		fmt.Fprintf(f.progress, "fleet %s: connected %d/%d (ready %d, launched %d) | facts sent %d acked %d | interest evts %d | churned %d | errors %d\n",
			el, f.connected.Load(), f.opt.n, f.ready.Load(), f.launched.Load(), f.factsSent.Load(), f.factsAcked.Load(),
			f.interestEvts.Load(), f.churned.Load(), f.errs.total())
		if up := f.allUpNanos.Load(); up != 0 && !announced {
			announced = true
			fmt.Fprintf(f.progress, "fleet: all %d nodes connected and reported facts in %s\n", f.opt.n, fmtDur(time.Duration(up)))
		}
	}
}

// writeReadyFile writes opt.readyFile once every node is ready and the
// probe (if any) finished.
func (f *fleet) writeReadyFile() {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-f.done:
			return
		case <-t.C:
		}
		if f.allUpNanos.Load() != 0 && (f.opt.probeAgent == "" || f.probeDone.Load()) {
			msg := fmt.Sprintf("{\"nodes\": %d, \"allConnectedSeconds\": %.3f}\n", f.opt.n, time.Duration(f.allUpNanos.Load()).Seconds())
			if err := os.WriteFile(f.opt.readyFile, []byte(msg), 0o644); err != nil {
				f.abort(fmt.Errorf("--ready-file: %w", err))
			}
			return
		}
	}
}

// interestCache remembers the last parsed interest: every node gets the
// same one, so parsing (and holding) it once instead of once per node
// keeps the simulator's CPU and memory out of the measurement. The parsed
// lists are shared and must be treated as read-only.
type interestCache struct {
	last atomic.Pointer[parsedInterest]
}

type parsedInterest struct {
	raw string
	in  protocol.Interest
}

// parse returns the interest of raw, calling parse only when raw differs
// from the last payload seen.
func (c *interestCache) parse(raw json.RawMessage, parse func(json.RawMessage) (protocol.Interest, error)) (protocol.Interest, error) {
	if p := c.last.Load(); p != nil && p.raw == string(raw) {
		return p.in, nil
	}
	in, err := parse(raw)
	if err != nil {
		return in, err
	}
	c.last.Store(&parsedInterest{raw: string(raw), in: in})
	return in, nil
}

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

// errorCounts counts errors by kind and keeps the first message of each.
type errorCounts struct {
	mu     sync.Mutex
	counts map[string]int64
	firsts map[string]string
	order  []string
}

func (e *errorCounts) add(kind, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts, e.firsts = map[string]int64{}, map[string]string{}
	}
	if _, ok := e.counts[kind]; !ok {
		e.firsts[kind] = msg
		e.order = append(e.order, kind)
	}
	e.counts[kind]++
}

func (e *errorCounts) total() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	var t int64
	for _, c := range e.counts {
		t += c
	}
	return t
}

// first returns the first error seen, with its kind.
func (e *errorCounts) first() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.order) == 0 {
		return "none"
	}
	return e.order[0] + ": " + e.firsts[e.order[0]]
}

// errorSummary is one kind of error in the summary.
type errorSummary struct {
	Kind  string `json:"kind"`
	Count int64  `json:"count"`
	First string `json:"first"`
}

func (e *errorCounts) list() []errorSummary {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := []errorSummary{}
	for _, k := range e.order {
		out = append(out, errorSummary{k, e.counts[k], e.firsts[k]})
	}
	return out
}

// nodesSummary is the result of `nodes`, printed at the end.
type nodesSummary struct {
	Gateway             string         `json:"gateway"`
	Nodes               int            `json:"nodes"`
	Mix                 string         `json:"mix"`
	Profiles            map[string]int `json:"profiles"`
	SourceAddresses     int            `json:"sourceAddresses"`
	FileLimitAtStart    uint64         `json:"rlimitNofileAtStart"` // as the Go runtime left it
	FileLimit           uint64         `json:"rlimitNofile"`
	FileLimitMax        uint64         `json:"rlimitNofileMax"`
	RanSeconds          float64        `json:"ranSeconds"`
	AllConnectedSeconds *float64       `json:"allConnectedSeconds"` // null: never all up
	ReadyAtStop         int64          `json:"readyAtStop"`
	Dials               int64          `json:"dials"`
	Connects            int64          `json:"connects"`
	ConnectLatency      latencyStats   `json:"connectLatency"`
	FactsSent           int64          `json:"factsSent"`
	FactsAcked          int64          `json:"factsAcked"`
	InterestEvents      int64          `json:"interestEvents"`
	Churned             int64          `json:"churned"`
	ChurnReconnects     int64          `json:"churnReconnects"`
	Errors              int64          `json:"errors"`
	ErrorKinds          []errorSummary `json:"errorKinds"`
	StopSeconds         float64        `json:"stopSeconds"`
	Stuck               int            `json:"stuck"`
	Probe               *probeResult   `json:"probe,omitempty"`
}

func (f *fleet) summary(stopTook time.Duration, stuck int) *nodesSummary {
	s := &nodesSummary{
		Gateway: f.opt.base.String(), Nodes: f.opt.n, Mix: f.opt.mixName, Profiles: map[string]int{},
		SourceAddresses: max(1, len(f.opt.localIPs)), FileLimitAtStart: f.limit.start, FileLimit: f.limit.cur, FileLimitMax: f.limit.max,
		RanSeconds:  time.Since(f.start).Seconds() - stopTook.Seconds(),
		ReadyAtStop: f.readyAtStop, Dials: f.dials.Load(), Connects: f.connects.Load(),
		FactsSent: f.factsSent.Load(), FactsAcked: f.factsAcked.Load(), InterestEvents: f.interestEvts.Load(),
		Churned: f.churned.Load(), ChurnReconnects: f.churnReconnects.Load(),
		Errors: f.errs.total(), ErrorKinds: f.errs.list(), StopSeconds: stopTook.Seconds(), Stuck: stuck,
		Probe: f.probe,
	}
	for i := range f.opt.n {
		s.Profiles[f.opt.mix.node(i).prof.Name]++
	}
	if up := f.allUpNanos.Load(); up != 0 {
		v := time.Duration(up).Seconds()
		s.AllConnectedSeconds = &v
	}
	f.connLatMu.Lock()
	s.ConnectLatency = summarize(f.connLat)
	f.connLatMu.Unlock()
	return s
}

func (s *nodesSummary) print(w io.Writer) {
	var profs []string
	for _, name := range slices.Sorted(maps.Keys(s.Profiles)) {
		profs = append(profs, fmt.Sprintf("%s %d", name, s.Profiles[name]))
	}
	fmt.Fprintf(w, "skillgate-fleet nodes: %d nodes against %s for %.1fs (mix %s: %s)\n", s.Nodes, s.Gateway, s.RanSeconds, s.Mix, strings.Join(profs, ", "))
	fmt.Fprintf(w, "  RLIMIT_NOFILE      %d (hard %d; %d as the Go runtime left it); %d source addresses\n",
		s.FileLimit, s.FileLimitMax, s.FileLimitAtStart, s.SourceAddresses)
	if s.AllConnectedSeconds != nil {
		fmt.Fprintf(w, "  all connected in   %.2fs\n", *s.AllConnectedSeconds)
	} else {
		fmt.Fprintf(w, "  all connected in   never (%d ready when stopping)\n", s.ReadyAtStop)
	}
	fmt.Fprintf(w, "  connects           %d of %d dials; latency (dial → connect answer) %s\n", s.Connects, s.Dials, s.ConnectLatency)
	fmt.Fprintf(w, "  facts.update       sent %d, acked %d; interest events %d\n", s.FactsSent, s.FactsAcked, s.InterestEvents)
	fmt.Fprintf(w, "  churn              %d disconnects, %d reconnects\n", s.Churned, s.ChurnReconnects)
	fmt.Fprintf(w, "  errors             %d\n", s.Errors)
	for _, e := range s.ErrorKinds {
		fmt.Fprintf(w, "    %-16s %d, first: %s\n", e.Kind, e.Count, e.First)
	}
	fmt.Fprintf(w, "  stop               closed with 1001 in %.2fs", s.StopSeconds)
	if s.Stuck > 0 {
		fmt.Fprintf(w, "; %d connections did not close in time and were cut", s.Stuck)
	}
	fmt.Fprintln(w)
	if p := s.Probe; p != nil {
		fmt.Fprintf(w, "  probe (agent %s)  %d runs: connect → prompt %s; disconnect → gone %s\n", p.Agent, p.Runs, p.Appear, p.Gone)
	}
}

// fmtDur rounds a duration for progress lines.
func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}
