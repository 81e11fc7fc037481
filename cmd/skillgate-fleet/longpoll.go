package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/protocol"
)

// Bounds and timing of `longpoll`.
const (
	maxWaiters       = 1_000_000
	maxLongPollWait  = 5 * time.Minute        // the gateway's cap (gateway.MaxWait)
	lpDialsInFlight  = 2000                   // long polls being opened at once
	lpSettle         = time.Second            // after every request is written: the gateway reads and parks them
	lpOpenTimeout    = 2 * time.Minute        // for every long poll to be written
	lpFlipTimeout    = 30 * time.Second       // for every waiter to answer one flip
	lpRetryPause     = 100 * time.Millisecond // after a transport error or an error status
	lpStopTimeout    = 15 * time.Second       // for the waiters to end after the run
	lpProbeID        = "longpoll-probe"
	lpBodyBufferSize = 16 << 10
)

// longpollResult is the report of `longpoll`.
type longpollResult struct {
	Gateway string `json:"gateway"` // the waiters' (and the precheck's)
	// ProbeGateway is the probe node's: where the flips' facts.update
	// and close happen. It differs from Gateway when measuring the time
	// from a change on one replica to the answer on another.
	ProbeGateway string   `json:"probeGateway"`
	Waiters      int      `json:"waiters"`
	Agents       []string `json:"agents"`
	WaitSeconds  float64  `json:"waitSeconds"`
	FileLimit    uint64   `json:"rlimitNofile"`
	// Connections is how many TCP connections were dialed, and
	// ReusedConnections how many requests went out on one already open.
	// The gateway closes a parked poll's connection with its answer, so a
	// re-poll dials anew; a poll answered before it parked (the block had
	// already changed when it arrived) keeps its connection for the next.
	Connections       int64   `json:"connections"`
	ReusedConnections int64   `json:"reusedConnections"`
	SourceAddresses   int     `json:"sourceAddresses"`
	OpenSeconds       float64 `json:"openSeconds"` // from the start until every long poll was written
	HoldSeconds       float64 `json:"holdSeconds"`
	// Flips are the probe skill's flips, in order: odd ones "appear"
	// (measured from sending the probe node's facts.update), even ones
	// "go" (measured from starting to close its socket).
	Flips []flipResult `json:"flips"`
	// Latency is every waiter's flip → answer time over all flips.
	Latency latencyStats `json:"latency"`
	// LastP50Ms and LastMaxMs summarize the flips' time to the last
	// waiter answered.
	LastP50Ms float64 `json:"lastP50Ms"`
	LastMaxMs float64 `json:"lastMaxMs"`
	// Missed counts waiter-flips never answered within the flip timeout.
	Missed int64 `json:"missed"`
	// Errors is the sum of the error counts below and Missed.
	Errors          int64          `json:"errors"`
	NotModified     int64          `json:"notModified"`     // 304: the wait ended before a flip
	Non200          int64          `json:"non200"`          // statuses other than 200 and 304
	TransportErrors int64          `json:"transportErrors"` // failed requests and body reads
	MarkerErrors    int64          `json:"markerErrors"`    // a flip's 200 with (or without) the marker against expectation
	Unexpected      int64          `json:"unexpected"`      // a 200 outside a flip, a second one in a flip, or one after the flip timeout
	ErrorKinds      []errorSummary `json:"errorKinds"`
}

// flipResult is one flip of the probe skill.
type flipResult struct {
	Flip int `json:"flip"`
	// Skill is "appear" (the probe node connected and reported probe-bin)
	// or "go" (it disconnected).
	Skill string `json:"skill"`
	// From names the event latencies count from: "facts.update" (sent by
	// the probe node) or "close" (of its socket).
	From     string       `json:"from"`
	Answered int          `json:"answered"` // 200 with the marker present (appear) or absent (go)
	Wrong    int          `json:"wrong"`    // 200 with the marker's presence wrong
	Missed   int          `json:"missed"`
	Latency  latencyStats `json:"latency"` // flip → body fully read, over the answered waiters
	LastMs   float64      `json:"lastMs"`  // flip → last waiter answered (the latency's max)
}

// longpollOptions is the validated command line of `longpoll`.
type longpollOptions struct {
	base       *url.URL // the waiters' and the precheck's gateway
	probeBase  *url.URL // the probe node's gateway (--probe-gateway)
	wsURL      string   // the probe node's WebSocket URL, on probeBase
	localIPs   []net.IP // the waiters' source addresses
	n          int
	agents     []string
	wait       time.Duration
	flips      int
	token      string // node token of the probe node
	agentToken string
	readyFile  string
	hold       time.Duration
	json       bool
}

func cmdLongPoll(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlagSet("skillgate-fleet longpoll", stderr)
	gw := fs.String("gateway", "", "gateway base URL on loopback, e.g. http://127.0.0.1:7780")
	probeGW := fs.String("probe-gateway", "", "the probe node connects here, on loopback, to flip the probe skill; the long polls and the precheck stay on --gateway (default: --gateway)")
	n := fs.Int("n", 10000, "number of concurrent long polls, each on its own connection")
	agentList := fs.String("agents", "main", "comma-separated agent ids; long polls are spread over them round-robin")
	wait := fs.Duration("wait", 2*time.Minute, "the ?wait= of each long poll (at most 5m, the gateway's cap)")
	flips := fs.Int("flips", 5, "flips of the probe skill: the probe node connects (skill appears), disconnects (skill goes), …")
	tokenFile := fs.String("token-file", "", "file holding the node token for the probe node (default: $"+nodeTokenEnv+")")
	agentTokenFile := fs.String("agent-token-file", "", "file holding the agents' bearer token (default: $"+agentTokenEnv+")")
	readyFile := fs.String("ready-file", "", "write this file once every long poll is waiting, before --hold and the flips, for scripts")
	hold := fs.Duration("hold", 0, "keep the long polls waiting this long after --ready-file, before the flips")
	jsonOut := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	o := longpollOptions{n: *n, wait: *wait, flips: *flips, readyFile: *readyFile, hold: *hold, json: *jsonOut}
	var err error
	if o.base, err = gatewayBase("gateway", *gw); err != nil {
		return err
	}
	if host := o.base.Hostname(); !isLoopbackHost(host) {
		return cli.Usagef("--gateway: host %q is not a loopback address; skillgate-fleet longpoll opens thousands of connections and connects a probe node, so it only targets a gateway on this machine (127.0.0.0/8, ::1 or localhost)", host)
	}
	o.probeBase = o.base
	if *probeGW != "" {
		if o.probeBase, err = gatewayBase("probe-gateway", *probeGW); err != nil {
			return err
		}
		if host := o.probeBase.Hostname(); !isLoopbackHost(host) {
			return cli.Usagef("--probe-gateway: host %q is not a loopback address; the probe node connects only to a gateway on this machine (127.0.0.0/8, ::1 or localhost), so that a load test never changes a real deployment's fleet", host)
		}
	}
	o.agents = splitList(*agentList)
	if len(o.agents) == 0 {
		return cli.Usagef("--agents: give at least one agent id, e.g. --agents main")
	}
	for _, a := range o.agents {
		if err := protocol.ValidateID(a); err != nil {
			return cli.Usagef("--agents: agent id %v", err)
		}
	}
	switch {
	case o.n < 1 || o.n > maxWaiters:
		return cli.Usagef("-n: %d is out of range (1…%d)", o.n, maxWaiters)
	case o.wait <= 0 || o.wait > maxLongPollWait:
		return cli.Usagef("--wait: %v is out of range (more than 0, at most %v: the gateway's cap)", o.wait, maxLongPollWait)
	case o.flips < 0:
		return cli.Usagef("--flips: must not be negative")
	case o.hold < 0:
		return cli.Usagef("--hold: must not be negative")
	}
	if o.token, err = readToken("token-file", *tokenFile, nodeTokenEnv); err != nil {
		return err
	}
	if o.agentToken, err = readToken("agent-token-file", *agentTokenFile, agentTokenEnv); err != nil {
		return err
	}
	// The fleet's target resolution: the waiters' source addresses to
	// spread over, and the WebSocket URL of the probe node (localhost
	// rewritten to an IP), which dials from an address the kernel picks.
	if _, o.localIPs, err = resolveGateways(ctx, "gateway", []*url.URL{o.base}); err != nil {
		return err
	}
	probeTarget, _, err := resolveGateways(ctx, "probe-gateway", []*url.URL{o.probeBase})
	if err != nil {
		return err
	}
	o.wsURL = probeTarget[0].wsURL
	lim, err := raiseFileLimit()
	if err != nil {
		fmt.Fprintf(stderr, "skillgate-fleet longpoll: warning: %v\n", err)
	}
	if lim.cur > 0 && uint64(o.n)+fdReserve > lim.cur {
		return cli.Usagef("-n: %d long polls need about %d open files but RLIMIT_NOFILE is %d (hard %d); raise the hard limit (ulimit -Hn) or lower -n",
			o.n, o.n+fdReserve, lim.cur, lim.max)
	}

	lp := newLongPoller(o, stderr)
	res, runErr := lp.run(ctx)
	if runErr != nil && ctx.Err() != nil {
		runErr = errors.New("interrupted")
	}
	if res != nil {
		res.FileLimit = lim.cur
		if o.json {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			enc.Encode(res)
		} else {
			res.print(stdout)
		}
	}
	if runErr != nil {
		return runErr
	}
	if res.Errors > 0 {
		return fmt.Errorf("%d errors (%d waiter-flips missed); first: %s", res.Errors, res.Missed, lp.errs.first())
	}
	return nil
}

// longPoller runs the long polls and the flips.
type longPoller struct {
	opt      longpollOptions
	progress io.Writer
	urls     []string // per agent: its prompt URL with ?wait=
	etags    []string // per agent: its ETag before the first flip
	marker   []byte
	clients  []*http.Client // one per source address
	dials    atomic.Int64
	reused   atomic.Int64
	sem      chan struct{} // long polls being opened

	// armed counts requests written and not yet answered: every long
	// poll is waiting at the gateway when it is n.
	armed atomic.Int64

	mu          sync.Mutex
	cur         *flipState   // the current or last flip; nil before the first
	flipHistory []*flipState // every flip so far
	lastFlip    []int32      // per waiter: the last flip it answered

	notModified, non200, transport, markerErrs, unexpected atomic.Int64
	errs                                                   errorCounts
}

// flipState is a flip in progress, guarded by longPoller.mu.
type flipState struct {
	k      int32
	want   bool // whether the answers must hold the marker
	t0     time.Time
	lat    []time.Duration
	seen   int  // waiters answered, marker right or wrong
	wrong  int  // of which with the marker's presence wrong
	closed bool // done or timed out: later answers are late
	done   chan struct{}
}

func newLongPoller(o longpollOptions, progress io.Writer) *longPoller {
	lp := &longPoller{
		opt:      o,
		progress: progress,
		marker:   []byte(`<skill name="` + probeSkill + `">`),
		sem:      make(chan struct{}, lpDialsInFlight),
		lastFlip: make([]int32, o.n),
	}
	q := url.Values{"wait": {o.wait.String()}}.Encode()
	for _, a := range o.agents {
		lp.urls = append(lp.urls, promptURL(o.base, a)+"?"+q)
	}
	ips := o.localIPs
	if len(ips) == 0 {
		ips = []net.IP{nil}
	}
	perClient := o.n/len(ips) + 1
	for _, ip := range ips {
		d := &net.Dialer{Timeout: handshakeTimeout, KeepAlive: 30 * time.Second}
		if ip != nil {
			d.LocalAddr = &net.TCPAddr{IP: ip}
		}
		t := &http.Transport{
			DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
				lp.dials.Add(1)
				return d.DialContext(ctx, network, addr)
			},
			// Every long poll holds its connection; a re-poll takes it
			// back from the idle pool, so at most n are ever dialed.
			MaxIdleConns:        0, // no limit
			MaxIdleConnsPerHost: perClient,
			MaxConnsPerHost:     0, // no limit
			IdleConnTimeout:     90 * time.Second,
			TLSHandshakeTimeout: handshakeTimeout,
			// HTTP/1.1 only: HTTP/2 would multiplex every long poll on a
			// few connections.
			TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{},
			// Bodies are scanned as sent (no Accept-Encoding).
			DisableCompression: true,
		}
		lp.clients = append(lp.clients, &http.Client{Transport: t})
	}
	return lp
}

// run opens the long polls, writes the ready file, holds, flips the probe
// skill opt.flips times and returns the report. An error is returned
// when the run could not be carried out (the report is then partial or
// nil); errors of the waiters are in the report.
func (lp *longPoller) run(ctx context.Context) (*longpollResult, error) {
	o := lp.opt
	if err := lp.precheck(ctx); err != nil {
		return nil, err
	}
	res := &longpollResult{Gateway: o.base.String(), ProbeGateway: o.probeBase.String(), Waiters: o.n, Agents: o.agents, WaitSeconds: o.wait.Seconds(),
		SourceAddresses: len(lp.clients), Flips: []flipResult{}}

	wctx, stopWaiters := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	start := time.Now()
	for w := range o.n {
		wg.Go(func() { lp.waiter(wctx, w) })
	}
	var probe *probeNode
	finish := func() {
		// The waiters end before the probe node leaves: its leaving
		// changes the block, which a waiter still polling would take for
		// a second answer in the last flip.
		stopWaiters()
		ended := make(chan struct{})
		go func() { wg.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(lpStopTimeout):
			fmt.Fprintf(lp.progress, "longpoll: warning: some waiters did not end within %v\n", lpStopTimeout)
		}
		if probe != nil {
			probe.close("longpoll flip")
		}
		for _, c := range lp.clients {
			c.CloseIdleConnections()
		}
		res.Connections = lp.dials.Load()
		res.ReusedConnections = lp.reused.Load()
		lp.fillErrors(res)
	}
	defer finish()

	if err := lp.awaitArmed(ctx, lpOpenTimeout); err != nil {
		return nil, fmt.Errorf("opening the long polls: %w", err)
	}
	res.OpenSeconds = time.Since(start).Seconds()
	fmt.Fprintf(lp.progress, "longpoll: %d long polls waiting after %.2fs (%d connections dialed)\n", o.n, res.OpenSeconds, lp.dials.Load())
	if !sleepCtx(ctx, lpSettle) {
		return nil, ctx.Err()
	}
	if o.readyFile != "" {
		msg := fmt.Sprintf("{\"waiters\": %d, \"openSeconds\": %.3f}\n", o.n, res.OpenSeconds)
		if err := os.WriteFile(o.readyFile, []byte(msg), 0o644); err != nil {
			return nil, fmt.Errorf("--ready-file: %w", err)
		}
	}
	if o.hold > 0 {
		t := time.Now()
		if !sleepCtx(ctx, o.hold) {
			return nil, ctx.Err()
		}
		res.HoldSeconds = time.Since(t).Seconds()
	}

	var in protocol.Interest
	// Each flip's time to its last waiter, kept as a duration: a round
	// trip through the report's float milliseconds may come back a
	// nanosecond off, and the summary's max would no longer be the flips'.
	var lasts []time.Duration
	for k := 1; k <= o.flips; k++ {
		if k > 1 {
			// Every answered waiter re-polled: wait until all are parked.
			if err := lp.awaitArmed(ctx, lpFlipTimeout); err != nil {
				return res, fmt.Errorf("before flip %d: %w", k, err)
			}
			if !sleepCtx(ctx, lpSettle) {
				return res, ctx.Err()
			}
		}
		appear := k%2 == 1
		fr := flipResult{Flip: k, Skill: "appear", From: "facts.update"}
		var fl *flipState
		if appear {
			var err error
			if probe, in, err = lp.connectProbe(ctx); err != nil {
				return res, fmt.Errorf("flip %d: %w", k, err)
			}
			fl = lp.startFlip(k, true)
			if err := probe.sendFacts(in); err != nil {
				return res, fmt.Errorf("flip %d: probe node: sending facts.update: %w", k, err)
			}
		} else {
			fr.Skill, fr.From = "go", "close"
			fl = lp.startFlip(k, false)
			probe.close("longpoll flip")
			probe = nil
		}
		select {
		case <-fl.done:
		case <-time.After(lpFlipTimeout):
		case <-ctx.Done():
		}
		lp.mu.Lock()
		fl.closed = true
		fr.Answered, fr.Wrong, fr.Missed = len(fl.lat), fl.wrong, o.n-fl.seen
		fr.Latency = summarize(fl.lat) // fl.lat is not appended to once closed
		if len(fl.lat) > 0 {
			lasts = append(lasts, fl.lat[len(fl.lat)-1]) // sorted by summarize
		}
		lp.mu.Unlock()
		if ctx.Err() != nil {
			return res, ctx.Err()
		}
		fr.LastMs = fr.Latency.Max
		res.Flips = append(res.Flips, fr)
		res.Missed += int64(fr.Missed)
		fmt.Fprintf(lp.progress, "longpoll: flip %d (%s): %d answered, %d wrong, %d missed; %s\n", k, fr.Skill, fr.Answered, fr.Wrong, fr.Missed, fr.Latency)
		if fr.Missed > 0 {
			lp.errs.add("missed", fmt.Sprintf("%d of %d waiters were not answered within %v of flip %d (%s); does every agent of --agents see the probe skill (agents.<id>.skills, prompt budget)?",
				fr.Missed, o.n, lpFlipTimeout, k, fr.Skill))
			break // the missed waiters wait on a stale ETag: later flips would not be measured right
		}
	}
	if res.Missed == 0 && len(res.Flips) == o.flips {
		// Every answered waiter re-polls after the last flip too: wait
		// for those, so that the run's request count does not depend on
		// how fast the report is taken.
		if err := lp.awaitArmed(ctx, lpFlipTimeout); err != nil {
			return res, fmt.Errorf("after the last flip: %w", err)
		}
	}

	// Over all flips.
	res.Latency = summarize(lp.allLatencies())
	ls := summarize(lasts)
	res.LastP50Ms, res.LastMaxMs = ls.P50, ls.Max
	return res, nil
}

// precheck checks that every agent does not see the probe skill yet and
// would see it (it is in the store and in the agent's scope), and takes
// each agent's current ETag.
func (lp *longPoller) precheck(ctx context.Context) error {
	c := &http.Client{Transport: &http.Transport{DisableCompression: true}, Timeout: requestTimeout}
	defer c.CloseIdleConnections()
	for _, agent := range lp.opt.agents {
		// The probe skill's verdict for this agent.
		var search struct {
			Skills []struct {
				Name     string   `json:"name"`
				Eligible bool     `json:"eligible"`
				Stage    string   `json:"stage"`
				Reasons  []string `json:"reasons"`
			} `json:"skills"`
		}
		// The whole report, not a search: a skill outside the agent's
		// scope is not searched, and the report says so.
		u := lp.opt.base.JoinPath("v1", "agents", agent, "skills").String()
		body, _, err := lp.get(ctx, c, u)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(body, &search); err != nil {
			return fmt.Errorf("GET %s: %v", u, err)
		}
		found := false
		for _, s := range search.Skills {
			if s.Name != probeSkill {
				continue
			}
			found = true
			switch {
			case s.Eligible:
				return fmt.Errorf("skill %s is already eligible for agent %s before the probe node connected: some connected node has %s", probeSkill, agent, probeBin)
			case s.Stage == "config":
				return fmt.Errorf("agent %s does not see skill %s (%s); leave it out of --agents or widen agents.%s.skills", agent, probeSkill, strings.Join(s.Reasons, "; "), agent)
			}
		}
		if !found {
			return fmt.Errorf("agent %s has no skill %s; generate the store with `skillgate-fleet skills --probe`", agent, probeSkill)
		}
		// Its block and ETag now.
		u = promptURL(lp.opt.base, agent)
		body, etag, err := lp.get(ctx, c, u)
		if err != nil {
			return err
		}
		if bytes.Contains(body, lp.marker) {
			return fmt.Errorf("skill %s is already in agent %s's prompt before the probe node connected", probeSkill, agent)
		}
		if etag == "" {
			return fmt.Errorf("GET %s: no ETag in the answer; does this gateway support long polls?", u)
		}
		lp.etags = append(lp.etags, etag)
	}
	return nil
}

// get fetches u with the agent token and returns its body and ETag.
func (lp *longPoller) get(ctx context.Context, c *http.Client, u string) ([]byte, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, "", err
	}
	if lp.opt.agentToken != "" {
		req.Header.Set("Authorization", "Bearer "+lp.opt.agentToken)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w (is a gateway serving %s?)", u, err, lp.opt.base)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, "", fmt.Errorf("GET %s: %w", u, err)
	}
	if resp.StatusCode != http.StatusOK {
		hint := ""
		if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden {
			hint = "; set " + agentTokenEnv + " or --agent-token-file to the gateway's agent token"
		}
		return nil, "", fmt.Errorf("GET %s: %s: %s%s", u, resp.Status, strings.TrimSpace(string(body)), hint)
	}
	return body, resp.Header.Get("ETag"), nil
}

// awaitArmed waits until every long poll is written and unanswered.
func (lp *longPoller) awaitArmed(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for lp.armed.Load() < int64(lp.opt.n) {
		if time.Now().After(deadline) {
			return fmt.Errorf("only %d of %d long polls waiting after %v; first error: %s", lp.armed.Load(), lp.opt.n, timeout, lp.errs.first())
		}
		if !sleepCtx(ctx, 5*time.Millisecond) {
			return ctx.Err()
		}
	}
	return nil
}

// startFlip makes flip k the current one, its latencies counted from now.
func (lp *longPoller) startFlip(k int, want bool) *flipState {
	fl := &flipState{k: int32(k), want: want, lat: make([]time.Duration, 0, lp.opt.n), done: make(chan struct{})}
	lp.mu.Lock()
	lp.cur = fl
	lp.flipHistory = append(lp.flipHistory, fl)
	fl.t0 = time.Now()
	lp.mu.Unlock()
	return fl
}

// allLatencies gathers every answered waiter's latency of every flip.
func (lp *longPoller) allLatencies() []time.Duration {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	var all []time.Duration
	for _, fl := range lp.flipHistory {
		all = append(all, fl.lat...)
	}
	return all
}

// waiter runs long poll w: its first request (opened under the dial
// bound), then a re-poll after each answer, until ctx ends.
func (lp *longPoller) waiter(ctx context.Context, w int) {
	// The transport derives a cancelable context from each request's:
	// from the waiter's own, not from the one shared by all waiters, whose
	// lock would be taken by every request.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	agent := w % len(lp.opt.agents)
	u, etag := lp.urls[agent], lp.etags[agent]
	client := lp.clients[w%len(lp.clients)]
	first := true
	select {
	case lp.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	for ctx.Err() == nil {
		// st: bit 1 the request was written, bit 2 Do returned; each
		// event does its part of the bookkeeping in whichever order
		// they come.
		var st atomic.Int32
		opening := first
		first = false
		event := func(bit int32) {
			old := st.Or(bit)
			if old == 0 && opening {
				<-lp.sem
			}
			switch {
			case bit == 1 && old&2 == 0:
				lp.armed.Add(1)
			case bit == 2 && old&1 != 0:
				lp.armed.Add(-1)
			}
		}
		trace := &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) {
				if info.Reused {
					lp.reused.Add(1)
				}
			},
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					event(1)
				}
			},
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodGet, u, nil)
		if err != nil { // the URL was built from a valid base and agent id
			event(2)
			lp.errs.add("transport", err.Error())
			lp.transport.Add(1)
			return
		}
		req.Header.Set("If-None-Match", etag)
		if lp.opt.agentToken != "" {
			req.Header.Set("Authorization", "Bearer "+lp.opt.agentToken)
		}
		resp, err := client.Do(req)
		event(2)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			lp.transport.Add(1)
			lp.errs.add("transport", err.Error())
			sleepCtx(ctx, lpRetryPause)
			continue
		}
		switch resp.StatusCode {
		case http.StatusOK:
			found, err := scanBody(resp.Body, lp.marker)
			resp.Body.Close()
			at := time.Now()
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				lp.transport.Add(1)
				lp.errs.add("transport", "reading the answer: "+err.Error())
				sleepCtx(ctx, lpRetryPause)
				continue
			}
			if ctx.Err() != nil {
				return // the run is over: the answer is not booked
			}
			etag = resp.Header.Get("ETag")
			lp.answered(w, at, found)
		case http.StatusNotModified:
			resp.Body.Close()
			if e := resp.Header.Get("ETag"); e != "" {
				etag = e
			}
			lp.notModified.Add(1)
			lp.errs.add("304", fmt.Sprintf("a long poll of agent %s ended with 304 after its wait of %v without a flip: raise --wait", lp.opt.agents[agent], lp.opt.wait))
		default:
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			lp.non200.Add(1)
			lp.errs.add("status", fmt.Sprintf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body))))
			sleepCtx(ctx, lpRetryPause)
		}
	}
}

// answered books waiter w's 200, its body fully read at at.
func (lp *longPoller) answered(w int, at time.Time, found bool) {
	lp.mu.Lock()
	defer lp.mu.Unlock()
	fl := lp.cur
	switch {
	case fl == nil:
		lp.unexpected.Add(1)
		lp.errs.add("unexpected", "a long poll was answered 200 before the first flip: the block changed without the probe node (a store reload, another node?)")
		return
	case lp.lastFlip[w] == fl.k:
		lp.unexpected.Add(1)
		lp.errs.add("unexpected", fmt.Sprintf("a long poll was answered 200 twice in flip %d: the block changed again without the probe node", fl.k))
		return
	case fl.closed:
		lp.unexpected.Add(1)
		lp.errs.add("unexpected", fmt.Sprintf("a long poll was answered 200 more than %v after flip %d", lpFlipTimeout, fl.k))
		return
	}
	lp.lastFlip[w] = fl.k
	fl.seen++
	if found == fl.want {
		fl.lat = append(fl.lat, at.Sub(fl.t0))
	} else {
		fl.wrong++
		lp.markerErrs.Add(1)
		if fl.want {
			lp.errs.add("marker", fmt.Sprintf("flip %d answered 200 without %s in the block", fl.k, lp.marker))
		} else {
			lp.errs.add("marker", fmt.Sprintf("flip %d answered 200 with %s still in the block", fl.k, lp.marker))
		}
	}
	if fl.seen == lp.opt.n {
		close(fl.done)
	}
}

// fillErrors copies the error counts into the report.
func (lp *longPoller) fillErrors(res *longpollResult) {
	res.NotModified, res.Non200, res.TransportErrors = lp.notModified.Load(), lp.non200.Load(), lp.transport.Load()
	res.MarkerErrors, res.Unexpected = lp.markerErrs.Load(), lp.unexpected.Load()
	res.Errors = res.NotModified + res.Non200 + res.TransportErrors + res.MarkerErrors + res.Unexpected + res.Missed
	res.ErrorKinds = lp.errs.list()
}

// bodyBufs are the buffers answers are read through: no body is kept.
var bodyBufs = sync.Pool{New: func() any { b := make([]byte, lpBodyBufferSize); return &b }}

// scanBody reads r to its end and reports whether marker occurs in it.
func scanBody(r io.Reader, marker []byte) (bool, error) {
	bp := bodyBufs.Get().(*[]byte)
	defer bodyBufs.Put(bp)
	buf := *bp
	found := false
	keep := 0 // the end of the last read, where a marker may begin
	for {
		k, err := r.Read(buf[keep:])
		if !found && k > 0 {
			win := buf[:keep+k]
			if bytes.Contains(win, marker) {
				found, keep = true, 0
			} else {
				keep = min(len(marker)-1, len(win))
				copy(buf, win[len(win)-keep:])
			}
		}
		if err == io.EOF {
			return found, nil
		}
		if err != nil {
			return found, err
		}
	}
}

// connectProbe dials the probe node and sends connect; it returns the
// interest of the connect answer, which its facts.update answers. The
// fleet's pieces do the handshake, on the probe's gateway.
func (lp *longPoller) connectProbe(ctx context.Context) (*probeNode, protocol.Interest, error) {
	gw := gatewayTarget{base: lp.opt.probeBase, wsURL: lp.opt.wsURL}
	f := newFleet(nodesOptions{gateways: []gatewayTarget{gw}, connectRate: 1, concurrency: 1, token: lp.opt.token}, io.Discard)
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	return f.dialProbeNode(hctx, lpProbeID, lp.opt.token, simNodeFacts{prof: probeProfile()})
}

// sleepCtx sleeps d and reports whether ctx is still live.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (r *longpollResult) print(w io.Writer) {
	fmt.Fprintf(w, "skillgate-fleet longpoll: %d long polls (wait %v) on GET %s/v1/agents/{%s}/prompt, %d flips of skill %s by a probe node on %s\n",
		r.Waiters, time.Duration(r.WaitSeconds*float64(time.Second)), r.Gateway, strings.Join(r.Agents, ","), len(r.Flips), probeSkill, r.ProbeGateway)
	fmt.Fprintf(w, "  connections  %d dialed, %d reused, from %d source addresses; RLIMIT_NOFILE %d\n", r.Connections, r.ReusedConnections, r.SourceAddresses, r.FileLimit)
	fmt.Fprintf(w, "  open         all %d waiting in %.2fs (at most %d being opened at once)\n", r.Waiters, r.OpenSeconds, lpDialsInFlight)
	if r.HoldSeconds > 0 {
		fmt.Fprintf(w, "  hold         %.1fs\n", r.HoldSeconds)
	}
	for _, f := range r.Flips {
		fmt.Fprintf(w, "  flip %-2d %-6s %d/%d answered (%d wrong, %d missed), from %s: %s; last %.3fms\n",
			f.Flip, f.Skill, f.Answered, r.Waiters, f.Wrong, f.Missed, f.From, f.Latency, f.LastMs)
	}
	if len(r.Flips) > 0 {
		fmt.Fprintf(w, "  all flips    per waiter p99 %.3fms, max %.3fms; flip → last waiter answered p50 %.3fms, max %.3fms\n",
			r.Latency.P99, r.Latency.Max, r.LastP50Ms, r.LastMaxMs)
	}
	fmt.Fprintf(w, "  errors       %d (missed %d, 304 %d, other status %d, transport %d, marker %d, unexpected 200 %d)\n",
		r.Errors, r.Missed, r.NotModified, r.Non200, r.TransportErrors, r.MarkerErrors, r.Unexpected)
	for _, e := range r.ErrorKinds {
		fmt.Fprintf(w, "    %-10s %d, first: %s\n", e.Kind, e.Count, e.First)
	}
}
