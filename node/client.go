package node

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/protocol"
)

// Timing of the connection loop. Client copies them into fields so that
// tests can shorten them.
const (
	stableAfter    = 30 * time.Second // a session this long resets the backoff
	connectTimeout = 10 * time.Second // dial + answer to connect
	writeTimeout   = 10 * time.Second
	pingInterval   = 30 * time.Second // detects a gateway that vanished without a FIN
	pingTimeout    = 15 * time.Second
	closeGrace     = 2 * time.Second // wait for the gateway's close frame on shutdown

	// interestPace is the least time between two probes that answer the
	// gateway's interest. Each answer stats every asked name in every PATH
	// directory, so a gateway flooding interest events would otherwise pin
	// a core; events within the pace are coalesced into one answer to the
	// latest. The gateway sends one when its skills change, so a lone event
	// is still answered at once, and a burst waits at most this long.
	interestPace = 200 * time.Millisecond
)

// FatalError is the gateway refusing this node for a reason that retrying
// cannot fix (a code protocol.IsFatalCode names, or CodeRedirected,
// CodeForbidden or CodeTLS):
// the operator must change the node's configuration, so Run stops and
// returns it.
type FatalError struct {
	Code    string
	Message string
}

// CodeRedirected is the FatalError code of a gateway URL that answers the
// WebSocket upgrade with a redirect. It is the node's own: the gateway
// never sends it.
const CodeRedirected = "redirected"

// Error implements the error interface.
func (e *FatalError) Error() string {
	if e.Code == CodeTLS {
		return "TLS with the gateway failed: " + e.Message
	}
	return fmt.Sprintf("gateway refused this node (%s): %s", e.Code, e.Message)
}

// Client is a node agent's connection to the gateway. Create it with New
// and call Run once.
type Client struct {
	cfg  Config
	url  string   // the gateway URL connected to now: urls[cur]
	urls []string // every gateway URL (replicas), in --gateway's order
	cur  int
	log  *slog.Logger
	tls  *tlsFiles

	backoffMin, backoffMax time.Duration
	stableAfter            time.Duration
	connectTimeout         time.Duration
	writeTimeout           time.Duration
	pingInterval           time.Duration
	pingTimeout            time.Duration
	closeGrace             time.Duration
	interestPace           time.Duration

	// Moving back to a preferred replica (moveback.go): how long it must
	// stay ready, and the window the random extra wait is drawn from. 0
	// moveBack: never.
	moveBack, moveBackWindow time.Duration
	readyURLs                []string // each replica's /readyz, as urls
}

// New checks cfg, fills in its defaults and returns a client. A
// configuration error is a *ConfigError naming the field.
func New(cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	// Only now, once everything cheap is checked: this runs the login shell.
	if len(cfg.Path) == 0 {
		dirs, err := defaultPath(os.Getenv("SHELL"), os.Getenv("PATH"), loginShellTimeout)
		if err != nil {
			cfg.Logger.Info("login shell PATH unavailable; searching this process's PATH", "reason", err.Error())
		}
		if len(dirs) == 0 {
			return nil, &ConfigError{"path", errors.New("no directory to search for binaries (PATH is empty); set --path")}
		}
		cfg.Path = dirs
	}
	urls, err := cfg.Gateways()
	if err != nil {
		return nil, &ConfigError{"gateway", err}
	}
	urls = ReplicaOrder(cfg.ID, urls)
	readyURLs := make([]string, len(urls))
	for i, u := range urls {
		if readyURLs[i], err = readyURL(u); err != nil {
			return nil, &ConfigError{"gateway", err}
		}
	}
	cur := 0
	tf := &tlsFiles{caFile: cfg.CAFile, certFile: cfg.CertFile, keyFile: cfg.KeyFile, log: cfg.Logger}
	if tf.last, err = tf.load(); err != nil {
		return nil, err
	}
	return &Client{
		cfg:            cfg,
		urls:           urls,
		cur:            cur,
		url:            urls[cur],
		log:            cfg.Logger,
		tls:            tf,
		backoffMin:     BackoffMin,
		backoffMax:     BackoffMax,
		stableAfter:    stableAfter,
		connectTimeout: connectTimeout,
		writeTimeout:   writeTimeout,
		pingInterval:   pingInterval,
		pingTimeout:    pingTimeout,
		closeGrace:     closeGrace,
		interestPace:   interestPace,
		moveBack:       max(cfg.MoveBack, 0),
		moveBackWindow: max(cfg.MoveBackWindow, 0),
		readyURLs:      readyURLs,
	}, nil
}

// URL returns the WebSocket URL the client connects to: before Run, the
// first of its replica order; after Run, the one it was last on. Run
// changes it as the node moves between replicas, so it is not to be read
// while Run runs.
func (c *Client) URL() string { return c.url }

// Run connects to the gateway and keeps the session alive until ctx ends,
// reconnecting with exponential backoff and full jitter after network
// errors and closes. It returns nil when ctx ends (after closing the socket
// with status 1001), or a *FatalError when the gateway refuses the node for
// good. Run must not be called concurrently.
func (c *Client) Run(ctx context.Context) error {
	c.log.Info("node agent starting",
		"gateway", c.url, "gateways", len(c.urls), "id", c.cfg.ID, "os", runtime.GOOS,
		"roles", c.cfg.Roles, "capabilities", c.cfg.Capabilities,
		"path", c.cfg.Path, "recheck", c.cfg.Recheck.String(),
		"token", c.cfg.Token != "", // whether one is set, never the token
		"ca_file", c.cfg.CAFile, "client_cert", c.cfg.CertFile)
	b := Backoff{Min: c.backoffMin, Max: c.backoffMax}
	refusals := 0 // final errors in a row, one per replica
	for {
		connectedAt, err := c.runConn(ctx)
		if ctx.Err() != nil {
			c.log.Info("node agent stopped")
			return nil
		}
		if !connectedAt.IsZero() {
			refusals = 0
		}
		if fe, ok := errors.AsType[*FatalError](err); ok {
			refusals++
			// One replica that refuses (a lagging token list, a bad
			// certificate) must not end a node the others would take: it
			// stops only once every replica in a row refused it.
			if refusals < len(c.urls) {
				c.log.Error("gateway refused this node; trying the next replica", "gateway", c.url, "code", fe.Code, "message", fe.Message)
			} else {
				msg := "gateway refused this node; not retrying"
				if fe.Code == CodeTLS {
					msg = "TLS with the gateway failed; not retrying"
				}
				c.log.Error(msg, "code", fe.Code, "message", fe.Message)
				return fe
			}
		} else {
			refusals = 0
		}
		if !connectedAt.IsZero() && time.Since(connectedAt) >= c.stableAfter {
			b.Reset()
		}
		d := b.Next()
		msg := "cannot connect to gateway; retrying"
		if !connectedAt.IsZero() {
			msg = "gateway connection lost; reconnecting"
		}
		attrs := []any{"err", err.Error(), "retry_in", d.Round(time.Millisecond).String()}
		if len(c.urls) > 1 {
			// The next replica, after the same backoff and jitter.
			c.cur = (c.cur + 1) % len(c.urls)
			c.url = c.urls[c.cur]
			attrs = append(attrs, "next_gateway", c.url)
		}
		if ce, ok := errors.AsType[websocket.CloseError](err); ok && ce.Code == protocol.ClosePolicyViolation && ce.Reason == protocol.CloseReasonReplaced {
			attrs = append(attrs, "hint", "another node connected with the same id "+strconv.Quote(c.cfg.ID))
		}
		c.log.Warn(msg, attrs...)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			c.log.Info("node agent stopped")
			return nil
		case <-t.C:
		}
	}
}

// inbound is one message read from the socket, or the read error.
type inbound struct {
	typ  websocket.MessageType
	data []byte
	err  error
}

// runConn connects to the replica at c.url and runs the session until it
// fails or ctx ends, moving it to a replica the node prefers when one is
// back (moveback.go); it returns when connect last succeeded (zero if it
// never did) and why the session ended.
func (c *Client) runConn(ctx context.Context) (connectedAt time.Time, err error) {
	g, err := c.open(ctx, c.cur)
	if g == nil {
		return time.Time{}, err
	}
	// The connections left behind close in the background; Run returns
	// only once they have.
	var leaving sync.WaitGroup
	defer leaving.Wait()
	defer func() { g.end() }()
	if err != nil {
		return g.connectedAt, err
	}
	for {
		next, err := g.serve(ctx)
		if next == nil {
			return g.connectedAt, err
		}
		// The preferred replica has answered connect and has the facts:
		// only now is the old connection closed, so that the node is never
		// connected nowhere. (The old replica closes it too, with 1008
		// replaced, once it sees the newer connection.)
		old := g
		g = next
		c.cur, c.url = g.idx, g.url
		leaving.Go(old.leave)
	}
}

// link is one WebSocket connection to a gateway replica, with its read and
// ping goroutines.
type link struct {
	idx     int    // in c.urls
	url     string // c.urls[idx]
	conn    *websocket.Conn
	frames  chan inbound
	pingErr chan error
	// hard is the connection's own lifetime: it outlives the session's
	// context by closeGrace, so that a close handshake can complete, and
	// then ends everything.
	hard context.Context
	// cut ends hard and the raw TCP connection, whatever the WebSocket
	// library is blocked on.
	cut func()
	// end stops the goroutines and drops the socket, and waits for them.
	end func()
}

// dial opens a WebSocket to c.urls[idx] and starts reading and pinging
// on it.
func (c *Client) dial(ctx context.Context, idx int) (*link, error) {
	gw := c.urls[idx]
	// The raw TCP connection is kept so that shutdown can cut it after the
	// grace period, whatever the WebSocket library is blocked on.
	var (
		rawMu sync.Mutex
		raw   net.Conn
	)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	// WebSocket upgrades need HTTP/1.1.
	transport.ForceAttemptHTTP2 = false
	transport.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	transport.TLSClientConfig = c.tls.config()
	dialer := &net.Dialer{Timeout: c.connectTimeout, KeepAlive: 30 * time.Second}
	transport.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dialer.DialContext(ctx, network, addr)
		if err == nil {
			rawMu.Lock()
			raw = conn
			rawMu.Unlock()
		}
		return conn, err
	}
	cutRaw := func() {
		rawMu.Lock()
		defer rawMu.Unlock()
		if raw != nil {
			raw.Close()
		}
	}

	dctx, cancel := context.WithTimeout(ctx, c.connectTimeout)
	conn, resp, err := websocket.Dial(dctx, gw, &websocket.DialOptions{
		HTTPClient: &http.Client{
			Transport: transport,
			// Never follow a redirect: the connect frame carries the token,
			// which must go only to the gateway the operator named.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		HTTPHeader: http.Header{"User-Agent": {clientName()}},
	})
	cancel()
	transport.CloseIdleConnections() // a WebSocket's connection is not idle
	if err != nil {
		if resp != nil && resp.StatusCode >= 300 && resp.StatusCode < 400 {
			if loc, lerr := resp.Location(); lerr == nil {
				return nil, c.redirectError(gw, resp.StatusCode, loc)
			}
		}
		if fe := c.tlsFatal(gw, err, resp); fe != nil {
			return nil, fe
		}
		return nil, err
	}
	conn.SetReadLimit(protocol.ReadLimit)

	hard, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	cut := func() { hardCancel(); cutRaw() }
	stopGrace := context.AfterFunc(ctx, func() { time.AfterFunc(c.closeGrace, cut) })
	l := &link{idx: idx, url: gw, conn: conn, frames: make(chan inbound), pingErr: make(chan error, 1), hard: hard, cut: cut}
	var wg sync.WaitGroup
	wg.Go(func() { readLoop(hard, conn, l.frames) })
	wg.Go(func() { c.pingLoop(hard, conn, l.pingErr) })
	var once sync.Once
	l.end = func() {
		once.Do(func() {
			stopGrace()
			hardCancel()
			conn.CloseNow()
			wg.Wait()
		})
	}
	return l, nil
}

// open dials c.urls[idx] and runs connect on it: it returns once the
// gateway answered connect and the first facts.update is sent. On an
// error the session is nil if the dial failed; otherwise the caller ends
// it (its connectedAt says whether connect was answered).
func (c *Client) open(ctx context.Context, idx int) (*gatewayConn, error) {
	l, err := c.dial(ctx, idx)
	if err != nil {
		return nil, err
	}
	g := &gatewayConn{client: c, link: l, pending: map[string]string{}}
	return g, g.connect(ctx)
}

func clientName() string { return "skillgate-node/" + Version }

// redirectError is the final error for a redirect answer to the upgrade.
// Following it silently would hand the token to whatever server it names
// (an attacker on a plain-http path, a misrouted proxy), and retrying would
// get the same answer: the operator decides whether to trust the location.
func (c *Client) redirectError(gw string, status int, loc *url.URL) *FatalError {
	where := clip(loc.String())
	hint := "point --gateway at the gateway's final URL"
	if strings.HasSuffix(loc.Path, ConnectPath) {
		base := *loc
		base.Path = strings.TrimSuffix(loc.Path, ConnectPath)
		base.RawPath = ""
		hint = "if that is your gateway, point --gateway at it: --gateway " + clip(base.String())
	}
	return &FatalError{Code: CodeRedirected, Message: fmt.Sprintf(
		"%s answered %d, a redirect to %s; the node never follows redirects, so that its token goes only to the gateway it was given: %s",
		gw, status, where, hint)}
}

// clip bounds a string that comes from the gateway before it goes into a
// log line.
func clip(s string) string {
	const limit = 512
	if len(s) <= limit {
		return s
	}
	return s[:limit] + "…"
}

// readLoop reads messages until an error and hands them to the connection.
// Keeping a read in progress is also what makes the library answer the
// gateway's pings.
func readLoop(ctx context.Context, conn *websocket.Conn, out chan<- inbound) {
	for {
		typ, data, err := conn.Read(ctx)
		select {
		case out <- inbound{typ, data, err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

func (c *Client) pingLoop(ctx context.Context, conn *websocket.Conn, errc chan<- error) {
	t := time.NewTicker(c.pingInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, c.pingTimeout)
		err := conn.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				errc <- err
			}
			return
		}
	}
}

// gatewayConn is one connection to the gateway: what was sent and
// answered on it, and what the gateway asked for.
type gatewayConn struct {
	client *Client
	*link
	nextID  int
	pending map[string]string // request id → method, for answers

	connectedAt time.Time
	interest    protocol.Interest
	interestDue bool                 // interest holds an event not yet answered
	answeredAt  time.Time            // end of the last forced report, for the pace
	last        protocol.FactsUpdate // what the gateway was last told
	sentFacts   bool
}

// connect sends connect and waits for its answer; once answered, the
// first facts.update is sent (handleRes) and it returns nil.
func (g *gatewayConn) connect(ctx context.Context) error {
	c := g.client
	params := protocol.ConnectParams{
		Protocol: protocol.Version,
		Token:    c.cfg.Token,
		Client:   clientName(),
		Node: protocol.NodeInfo{
			ID: c.cfg.ID, OS: runtime.GOOS, Roles: c.cfg.Roles, Capabilities: c.cfg.Capabilities,
		},
	}
	if err := g.send(protocol.MethodConnect, params); err != nil {
		return err
	}
	deadline := time.NewTimer(c.connectTimeout)
	defer deadline.Stop()
	for g.connectedAt.IsZero() {
		select {
		case <-ctx.Done():
			g.closeGoingAway()
			return ctx.Err()
		case err := <-g.pingErr:
			return fmt.Errorf("gateway did not answer a ping: %w", err)
		case <-deadline.C:
			return fmt.Errorf("gateway did not answer connect within %v", c.connectTimeout)
		case in := <-g.frames:
			if in.err != nil {
				return in.err
			}
			if err := g.handle(in); err != nil {
				return err
			}
		}
	}
	return nil
}

// serve runs a connected session until it fails or ctx ends, or until the
// node moved to a replica it prefers: next is then the session there,
// connected, and this one is left for the caller to close.
func (g *gatewayConn) serve(ctx context.Context) (next *gatewayConn, err error) {
	c := g.client
	recheck := time.NewTicker(c.cfg.Recheck)
	defer recheck.Stop()
	pace := time.NewTimer(c.interestPace)
	pace.Stop()
	defer pace.Stop()
	var paceC <-chan time.Time // pace.C while an answer to interest waits
	mb := c.watchPreferred(ctx, g.idx)
	defer mb.stop()
	for {
		select {
		case <-ctx.Done():
			g.closeGoingAway()
			return nil, ctx.Err()
		case err := <-g.pingErr:
			return nil, fmt.Errorf("gateway did not answer a ping: %w", err)
		case <-recheck.C:
			// With an interest due, the pace timer probes soon anyway.
			if !g.interestDue {
				if err := g.report(false); err != nil {
					return nil, err
				}
			}
		case <-paceC:
			paceC = nil
			if err := g.answerInterest(); err != nil {
				return nil, err
			}
		case idx := <-mb.move:
			if n := mb.moveTo(ctx, idx); n != nil {
				return n, nil
			}
			if ctx.Err() != nil {
				g.closeGoingAway()
				return nil, ctx.Err()
			}
		case in := <-g.frames:
			if in.err != nil {
				return nil, in.err
			}
			if err := g.handle(in); err != nil {
				return nil, err
			}
			if g.interestDue && paceC == nil {
				// At once if the last answer is older than the pace,
				// otherwise when it is; later events only replace the
				// interest meanwhile.
				if d := c.interestPace - time.Since(g.answeredAt); d > 0 {
					pace.Reset(d)
					paceC = pace.C
				} else if err := g.answerInterest(); err != nil {
					return nil, err
				}
			}
		}
	}
}

// answerInterest reports facts for the latest interest event.
func (g *gatewayConn) answerInterest() error {
	g.interestDue = false
	return g.report(true)
}

// closeGoingAway closes the socket with 1001. It is bounded by the grace
// timer of dial, which cuts the connection if the gateway does not answer
// the close.
func (g *gatewayConn) closeGoingAway() {
	if err := g.conn.Close(protocol.CloseGoingAway, protocol.CloseReasonNodeStop); err != nil {
		g.client.log.Debug("close handshake incomplete", "err", err.Error())
	}
}

// leave closes a connection the node moved away from, with 1001 and
// protocol.CloseReasonNodeMoved, cut after closeGrace if the gateway does
// not answer, and ends it.
func (g *gatewayConn) leave() {
	t := time.AfterFunc(g.client.closeGrace, g.cut)
	if err := g.conn.Close(protocol.CloseGoingAway, protocol.CloseReasonNodeMoved); err != nil {
		g.client.log.Debug("close handshake incomplete", "gateway", g.url, "err", err.Error())
	}
	t.Stop()
	g.end()
}

// handle processes one message from the gateway. An error ends the
// connection.
func (g *gatewayConn) handle(in inbound) error {
	log := g.client.log
	if in.typ != websocket.MessageText {
		log.Warn("ignoring a binary frame from the gateway", "bytes", len(in.data))
		return nil
	}
	f, err := protocol.DecodeFrame(in.data)
	if err != nil {
		log.Warn("ignoring a malformed frame from the gateway", "err", err.Error())
		return nil
	}
	switch f.Type {
	case protocol.TypeRes:
		return g.handleRes(f)
	case protocol.TypeEvt:
		if f.Event != protocol.EventInterest {
			log.Warn("ignoring an unknown event from the gateway", "event", f.Event)
			return nil
		}
		if g.connectedAt.IsZero() {
			log.Warn("ignoring an interest event that came before the connect answer")
			return nil
		}
		in, err := protocol.ParseInterest(f.Payload)
		if err != nil {
			log.Warn("ignoring a malformed interest event", "err", err.Error())
			return nil
		}
		// Answered by run, paced: see interestPace.
		g.interest, g.interestDue = in, true
		log.Debug("gateway interest changed", "bins", len(in.Bins), "env", len(in.Env))
		return nil
	default: // a req: the gateway has no methods to call on a node in version 1
		log.Warn("ignoring a request from the gateway", "method", f.Method, "id", f.ID)
		return nil
	}
}

func (g *gatewayConn) handleRes(f protocol.Frame) error {
	log := g.client.log
	method, known := g.pending[f.ID]
	delete(g.pending, f.ID)
	if !*f.OK {
		e := f.Error
		if protocol.IsFatalCode(e.Code) {
			return &FatalError{Code: e.Code, Message: e.Message}
		}
		if method == protocol.MethodConnect {
			return fmt.Errorf("gateway refused connect: %s: %s", e.Code, e.Message)
		}
		log.Warn("gateway answered with an error", "method", method, "id", f.ID, "code", e.Code, "message", e.Message)
		return nil
	}
	if !known {
		log.Warn("ignoring an answer to no pending request", "id", f.ID)
		return nil
	}
	if method != protocol.MethodConnect {
		return nil
	}
	r, err := protocol.ParseConnectResult(f.Payload)
	if err != nil {
		if pe, ok := errors.AsType[*protocol.Error](err); ok && protocol.IsFatalCode(pe.Code) {
			return &FatalError{Code: pe.Code, Message: pe.Message}
		}
		return fmt.Errorf("malformed connect answer: %w", err)
	}
	g.connectedAt = time.Now()
	g.interest = r.Interest
	log.Info("connected to gateway", "gateway", g.url, "id", g.client.cfg.ID, "interest_bins", len(r.Interest.Bins), "interest_env", len(r.Interest.Env))
	return g.report(true)
}

// report probes and sends facts.update: always when force is set (after
// connect and each interest event), otherwise only if the answer changed.
func (g *gatewayConn) report(force bool) error {
	u := Probe(g.client.cfg.Path, g.interest)
	if !force && g.sentFacts && slices.Equal(u.Env, g.last.Env) && maps.Equal(u.HostBinStatus, g.last.HostBinStatus) {
		return nil
	}
	if err := g.send(protocol.MethodFactsUpdate, u); err != nil {
		return err
	}
	g.last, g.sentFacts = u, true
	if force {
		g.answeredAt = time.Now()
	}
	var missing []string
	for name, ok := range u.HostBinStatus {
		if !ok {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	// Counts at info (the interest may hold hundreds of names); names at
	// debug. Names only: env values never leave Probe.
	g.client.log.Info("reported facts", "bins", len(u.HostBinStatus), "bins_missing", len(missing),
		"env", len(g.interest.Env), "env_set", len(u.Env))
	g.client.log.Debug("reported facts in detail", "bins_missing", missing, "env_set", u.Env)
	return nil
}

// send writes a req with the next id and remembers it until answered.
func (g *gatewayConn) send(method string, params any) error {
	g.nextID++
	id := strconv.Itoa(g.nextID)
	b, err := protocol.NewReq(id, method, params)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(g.hard, g.client.writeTimeout)
	defer cancel()
	if err := g.conn.Write(ctx, websocket.MessageText, b); err != nil {
		return fmt.Errorf("sending %s: %w", method, err)
	}
	g.pending[id] = method
	return nil
}

// ReplicaOrder is the order in which node id tries the gateway replicas:
// by a hash of the id and each URL, highest first (rendezvous hashing).
// Nodes listing the same replicas start at different ones, so that they
// spread; and when a replica goes, its nodes' next choices spread over the
// others instead of all falling on the one listed after it.
func ReplicaOrder(id string, urls []string) []string {
	score := func(u string) uint64 {
		// A well-mixed hash: FNV's output barely moves when only the
		// URLs' last characters differ.
		sum := sha256.Sum256([]byte(id + "\x00" + u))
		return binary.BigEndian.Uint64(sum[:8])
	}
	out := slices.Clone(urls)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(score(b), score(a)) })
	return out
}
