package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/protocol"
)

// writeTimeout bounds every frame write, so a stuck node cannot hold a
// goroutine forever.
const writeTimeout = 10 * time.Second

// preConnectReadLimit is the frame limit before a successful connect.
const preConnectReadLimit = 16 << 10

// nodeConn is one node's WebSocket connection, from the upgrade to the
// close: the handshake, the read loop, pings and interest pushes. What the
// registry keeps of the node once it is connected is in nodeRecord.
type nodeConn struct {
	nodeRecord // guarded by srv.mu; see registry.go

	srv   *Server
	conn  *websocket.Conn
	log   *slog.Logger
	id    string
	token string
	done  chan struct{} // closed by close and closeNow
	once  sync.Once

	// One goroutine per node (the read loop) is all a quiet node costs:
	// pings run from a timer and interest pushes from short-lived
	// goroutines, serialized by pushMu so the last push sends the latest.
	// timerMu orders re-arming the ping timer with stopping it for good,
	// so that no ping runs after close.
	pingTimer *time.Timer
	timerMu   sync.Mutex
	// heard is when the node was last heard from (a frame, a ping or a
	// pong; UnixNano): a node heard within the ping interval is not
	// pinged, so a node agent, which pings every 30 s, costs the gateway
	// no pings of its own.
	heard   atomic.Int64
	pushing atomic.Bool
	pushMu  sync.Mutex
}

// handleNodeConnect serves GET /v1/nodes/connect.
func (s *Server) handleNodeConnect(w http.ResponseWriter, r *http.Request) {
	// maxNodes bounds connected nodes, checked at connect (where the id
	// is known: a node replacing its own stale connection is let in on a
	// full gateway). Sockets still waiting for their connect have caps of
	// their own (pending.go) and never take a node's slot. This total is
	// only a backstop on file descriptors.
	s.mu.RLock()
	maxNodes := s.maxNodesLocked()
	s.mu.RUnlock()
	if s.sockets.Load() >= int64(maxNodes+2*s.cfg.MaxPending) {
		s.metrics.frames.WithLabelValues("upgrade", "over_limit").Inc()
		writeError(w, http.StatusServiceUnavailable, "too many node connections; raise gateway.maxNodes or add a gateway")
		return
	}
	if s.refuseWhileSyncing(w) {
		return
	}
	s.sockets.Add(1)
	handedOff := false
	defer func() {
		if !handedOff {
			s.sockets.Add(-1)
		}
	}()
	// The HTTP server's read and write deadlines are for requests; a node's
	// socket lives for days and is bounded by pings and per-write timeouts.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	c := &nodeConn{srv: s, log: s.log, done: make(chan struct{})}
	ws, err := websocket.Accept(smallBuffers{w}, r, &websocket.AcceptOptions{
		CompressionMode: websocket.CompressionDisabled,
		OnPingReceived:  c.pinged,
		OnPongReceived:  c.ponged,
	})
	if err != nil {
		s.metrics.frames.WithLabelValues("upgrade", "error").Inc()
		return // Accept has answered
	}
	// Until connect succeeds a peer is unauthenticated: it may not make
	// the gateway buffer megabytes (connect params are a few KiB).
	ws.SetReadLimit(preConnectReadLimit)
	c.conn = ws
	// Made stopped now, armed after connect, so close never races its
	// creation.
	c.pingTimer = time.AfterFunc(time.Hour, c.ping)
	c.pingTimer.Stop()
	if !s.life.track(c) {
		// Close began after this request came in: it will not see c.
		c.close(protocol.CloseGoingAway, protocol.CloseReasonGatewayStop)
		return
	}
	for _, old := range s.pending.add(c, r.RemoteAddr) {
		s.metrics.frames.WithLabelValues("upgrade", "evicted").Inc()
		// No close handshake: a silent peer would hold the socket for
		// its timeout, and an attacker's sockets deserve no wait.
		old.closeNow()
	}
	// The connection outlives the server's base context on purpose: on
	// shutdown Close ends it with a 1001 close frame rather than the
	// library dropping the connection. It is served on a goroutine of its
	// own and the handler returns: net/http's request, headers and buffers
	// are then freed, and the goroutine's stack holds no HTTP frames
	// (together a third of a node's memory at 10,000 nodes).
	ctx := context.WithoutCancel(r.Context())
	handedOff = s.life.goFunc(func() {
		defer s.sockets.Add(-1)
		defer s.life.untrack(c)
		c.serve(ctx)
	})
	if !handedOff {
		s.pending.done(c)
		s.life.untrack(c)
		c.close(protocol.CloseGoingAway, protocol.CloseReasonGatewayStop)
	}
}

// close ends the connection with a close handshake (which the library
// bounds). Only the first close or closeNow of a connection does anything.
func (c *nodeConn) close(code websocket.StatusCode, reason string) {
	c.once.Do(func() {
		c.stop()
		c.conn.Close(code, reason)
	})
}

// closeNow drops the connection without a close handshake.
func (c *nodeConn) closeNow() {
	c.once.Do(func() {
		c.stop()
		c.conn.CloseNow()
	})
}

// stop marks the connection done and disarms its ping timer for good.
func (c *nodeConn) stop() {
	c.timerMu.Lock()
	defer c.timerMu.Unlock()
	close(c.done)
	if c.pingTimer.Stop() {
		c.srv.life.disarmed() // the armed ping will not run
	}
}

// armPing schedules the next ping, unless the connection is done. The
// caller is counted by the lifecycle (serve, or the previous ping).
func (c *nodeConn) armPing() {
	c.timerMu.Lock()
	defer c.timerMu.Unlock()
	select {
	case <-c.done:
		return
	default:
	}
	c.srv.life.armed()
	// Up to an eighth of the interval more, at random: nodes that
	// connected together (a fleet's start, a replica's restart) would
	// otherwise be pinged together, interval after interval, in one burst
	// that delays everything else the gateway does in that second.
	c.pingTimer.Reset(c.untilPing(time.Now()) + rand.N(c.srv.cfg.PingInterval/8+1))
}

// untilPing is how long from now the node may stay silent before it is
// pinged: the ping interval after it was last heard from.
func (c *nodeConn) untilPing(now time.Time) time.Duration {
	return time.Duration(c.heard.Load()) + c.srv.cfg.PingInterval - time.Duration(now.UnixNano())
}

// hear notes that the node was heard from now.
func (c *nodeConn) hear() { c.heard.Store(time.Now().UnixNano()) }

// pinged is the WebSocket library's callback for a ping from the node,
// which it answers.
func (c *nodeConn) pinged(context.Context, []byte) bool {
	c.hear()
	return true
}

// ponged is the library's callback for a pong.
func (c *nodeConn) ponged(context.Context, []byte) { c.hear() }

// notifyInterest pushes the current interest to the node, coalescing
// changes that come while a push is pending.
func (c *nodeConn) notifyInterest() {
	if c.pushing.Swap(true) {
		return
	}
	if !c.srv.life.goFunc(c.pushInterest) {
		c.pushing.Store(false) // shutting down: Close ends the connection
	}
}

// pushInterest sends the latest interest event; see notifyInterest.
func (c *nodeConn) pushInterest() {
	c.pushMu.Lock()
	defer c.pushMu.Unlock()
	c.pushing.Store(false) // a change from now on schedules another push
	c.srv.mu.RLock()
	evt := c.srv.interestEvt
	c.srv.mu.RUnlock()
	select {
	case <-c.done:
		return
	default:
	}
	if err := c.write(context.Background(), evt); err != nil {
		c.close(protocol.CloseGoingAway, protocol.CloseReasonWriteFailed)
	}
}

// ping runs from pingTimer: a node silent for the ping interval is
// pinged, and a missed pong drops it at once; one heard from since the
// timer was armed is not, and the timer is armed again.
func (c *nodeConn) ping() {
	defer c.srv.life.fired()
	if c.untilPing(time.Now()) > 0 {
		c.armPing()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), min(c.srv.cfg.PingInterval, MaxPongWait))
	err := c.conn.Ping(ctx)
	cancel()
	select {
	case <-c.done:
		return
	default:
	}
	if err != nil {
		if errors.Is(err, net.ErrClosed) || websocket.CloseStatus(err) != -1 {
			// The node closed its connection while the ping was out: the
			// read loop ends it, and logs why.
			c.log.Debug("node connection closed during a ping", "err", err)
			return
		}
		c.log.Warn("node missed a ping; dropping it", "err", err)
		c.srv.unregister(c) // now, not after the close handshake times out
		c.close(protocol.ClosePolicyViolation, protocol.CloseReasonPingTimeout)
		return
	}
	c.armPing()
}

func (c *nodeConn) write(ctx context.Context, frame []byte) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return c.conn.Write(ctx, websocket.MessageText, frame)
}

// refuse answers a frame with an error and closes with 1008, as for every
// failure before a successful connect.
func (c *nodeConn) refuse(ctx context.Context, id, code, msg string) {
	c.refuseWith(ctx, id, code, msg, protocol.ClosePolicyViolation, code)
}

// refuseWith is refuse with a close status and reason of its own.
func (c *nodeConn) refuseWith(ctx context.Context, id, code, msg string, status websocket.StatusCode, reason string) {
	c.srv.metrics.frames.WithLabelValues("req", code).Inc()
	c.log.Warn("node refused", "code", code, "reason", msg)
	c.write(ctx, protocol.NewErr(id, code, msg))
	c.close(status, reason)
}

// serve runs the connection. ctx is never canceled (the connection ends
// by close or closeNow): a context without Done spares the WebSocket
// library a callback registered per read and the writes' timeouts a
// registration with their parent.
func (c *nodeConn) serve(ctx context.Context) {
	defer c.close(protocol.CloseNormal, "")
	var ok bool
	onOwnStack(func() { ok = c.handshake(ctx) })
	if !ok {
		return
	}
	defer c.srv.unregister(c)
	c.hear()
	c.armPing()
	pace := newPacer(time.Now())
	for {
		typ, buf, err := readFrame(ctx, c.conn)
		if err != nil {
			c.logClosed(err)
			return
		}
		read := time.Now()
		c.heard.Store(read.UnixNano())
		// A frame that came too early waits here, before processing; the
		// next is not read meanwhile, so TCP pushes back on a node that
		// floods, while a close is still noticed at once after the last.
		if wait := pace.delay(read); wait > 0 {
			c.srv.metrics.frames.WithLabelValues("any", "paced").Inc()
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				putFrame(buf)
				return
			case <-c.done:
				putFrame(buf)
				return
			}
		}
		start := time.Now()
		pace.start(start)
		if typ != websocket.MessageText {
			putFrame(buf)
			c.srv.metrics.frames.WithLabelValues("binary", "error").Inc()
			c.close(protocol.CloseUnsupportedData, protocol.CloseReasonBinaryFrame)
			return
		}
		// Nothing of the frame's bytes outlives handleFrame (names are
		// copied into strings), so its buffer goes back at once.
		onOwnStack(func() { c.handleFrame(ctx, buf.Bytes()) })
		putFrame(buf)
		pace.charge(time.Since(start))
	}
}

func (c *nodeConn) logClosed(err error) {
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		c.srv.metrics.frames.WithLabelValues("oversize", "error").Inc()
		c.log.Warn("node sent a frame over the read limit; closed with 1009", "limit", protocol.ReadLimit)
	case errors.Is(err, context.Canceled):
	default:
		c.log.Info("node disconnected", "reason", err.Error())
	}
}

// handshake waits for req connect and answers it. It returns false when
// the node was refused (the socket is then closed).
func (c *nodeConn) handshake(ctx context.Context) bool {
	// Not a Read deadline: the library drops the TCP connection when a
	// Read's context ends, and the node must get a 1008 close.
	stopTimer := c.srv.life.afterFunc(c.srv.cfg.ConnectTimeout, func() {
		c.srv.metrics.frames.WithLabelValues("connect", "timeout").Inc()
		c.log.Warn("node sent no connect in time; closing", "timeout", c.srv.cfg.ConnectTimeout.String())
		c.close(protocol.ClosePolicyViolation, protocol.CloseReasonConnectTimeout)
	})
	typ, buf, err := readFrame(ctx, c.conn)
	if err == nil {
		// Nothing of the connect frame's bytes outlives the handshake
		// (names are copied into strings).
		defer putFrame(buf)
	}
	stillPending := c.srv.pending.done(c)
	if !stopTimer() {
		return false // timed out: closed above
	}
	if !stillPending {
		return false // evicted for a newer socket: closed by the evictor
	}
	if err != nil {
		if errors.Is(err, websocket.ErrMessageTooBig) {
			c.srv.metrics.frames.WithLabelValues("oversize", "error").Inc()
		}
		return false
	}
	if typ != websocket.MessageText {
		// Like any frame before a successful connect: answered, then 1008.
		c.srv.metrics.frames.WithLabelValues("binary", "error").Inc()
		c.refuse(ctx, "", protocol.CodeBadRequest, "binary frames are not part of the protocol; send req connect as a JSON text frame")
		return false
	}
	f, err := protocol.DecodeFrame(buf.Bytes())
	if err != nil {
		c.refuse(ctx, "", protocol.CodeBadRequest, err.Error())
		return false
	}
	if f.Type != protocol.TypeReq || f.Method != protocol.MethodConnect {
		c.refuse(ctx, f.ID, protocol.CodeNotConnected, "the first frame must be req connect")
		return false
	}
	p, err := protocol.ParseConnectParams(f.Params)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			c.refuse(ctx, f.ID, pe.Code, pe.Message)
		} else {
			c.refuse(ctx, f.ID, protocol.CodeBadRequest, err.Error())
		}
		return false
	}
	c.id = p.Node.ID
	c.token = p.Token
	c.log = slog.New(&nodeLog{base: c.srv.log.Handler(), id: c.id})
	if !c.srv.tokenOK(c.id, p.Token) {
		c.refuse(ctx, f.ID, protocol.CodeUnauthorized, "token not valid for node "+c.id)
		return false
	}
	// An interest push must not overtake the connect answer: the node
	// would drop it and keep the older interest of the answer.
	c.pushMu.Lock()
	answer, err := c.srv.register(c, p.Node, f.ID)
	if err != nil {
		c.pushMu.Unlock()
		if errors.Is(err, errGatewayFull) {
			// Not final for the node: it retries with backoff.
			c.refuseWith(ctx, f.ID, protocol.CodeUnavailable, err.Error(), protocol.CloseTryAgainLater, protocol.CloseReasonGatewayFull)
			return false
		}
		c.refuse(ctx, f.ID, protocol.CodeUnauthorized, "token not valid for node "+c.id)
		return false
	}
	c.srv.metrics.frames.WithLabelValues("connect", "ok").Inc()
	err = c.write(ctx, answer)
	c.pushMu.Unlock()
	if err != nil {
		c.srv.unregister(c)
		c.close(protocol.CloseInternalError, protocol.CloseReasonAnswerFailed)
		return false
	}
	c.conn.SetReadLimit(protocol.ReadLimit)
	// What c.log.Info("node connected", …) writes, without the PC that
	// no handler of the gateway prints, and without making c.log's
	// handler.
	if h := c.srv.log.Handler(); h.Enabled(ctx, slog.LevelInfo) {
		r := slog.NewRecord(time.Now(), slog.LevelInfo, "node connected", 0)
		r.AddAttrs(slog.String("node", c.id), slog.String("os", p.Node.OS), slog.Any("roles", p.Node.Roles), slog.String("client", p.Client))
		h.Handle(ctx, r)
	}
	return true
}

func (c *nodeConn) handleFrame(ctx context.Context, data []byte) {
	f, err := protocol.DecodeFrame(data)
	if err != nil {
		c.srv.metrics.frames.WithLabelValues("invalid", protocol.CodeBadRequest).Inc()
		c.write(ctx, protocol.NewErr("", protocol.CodeBadRequest, err.Error()))
		return
	}
	if f.Type != protocol.TypeReq {
		// Nodes have nothing to answer or announce in version 1.
		c.srv.metrics.frames.WithLabelValues(f.Type, "ignored").Inc()
		return
	}
	switch f.Method {
	case protocol.MethodFactsUpdate:
		u := factsScans.Get().(*protocol.FactsScan)
		defer func() {
			u.Reset() // keep no frame buffer alive from the pool
			factsScans.Put(u)
		}()
		if err := u.Scan(f.Params); err != nil {
			code := protocol.CodeBadRequest
			var pe *protocol.Error
			if errors.As(err, &pe) {
				code = pe.Code
			}
			msg := err.Error()
			if pe != nil {
				msg = pe.Message // the code is in its own field
			}
			c.srv.metrics.frames.WithLabelValues("facts.update", code).Inc()
			c.write(ctx, protocol.NewErr(f.ID, code, msg))
			return
		}
		c.srv.updateFacts(c, u)
		c.srv.metrics.frames.WithLabelValues("facts.update", "ok").Inc()
		c.write(ctx, protocol.NewResOK(f.ID))
	case protocol.MethodConnect:
		c.srv.metrics.frames.WithLabelValues("connect", protocol.CodeBadRequest).Inc()
		c.write(ctx, protocol.NewErr(f.ID, protocol.CodeBadRequest, "already connected"))
	default:
		c.srv.metrics.frames.WithLabelValues("req", protocol.CodeUnknownMethod).Inc()
		c.write(ctx, protocol.NewErr(f.ID, protocol.CodeUnknownMethod, "unknown method "+f.Method+" (known: connect, facts.update)"))
	}
}

// nodeLog is the handler of a node's logger: the server's with the
// attribute node=ID, which it makes at the node's first log line after
// connect (most connections log none until they end; connect's own line
// is written by handshake). Its output is that of the server's handler's
// WithAttrs.
type nodeLog struct {
	base slog.Handler
	id   string
	once sync.Once
	with slog.Handler
}

func (n *nodeLog) handler() slog.Handler {
	n.once.Do(func() { n.with = n.base.WithAttrs([]slog.Attr{slog.String("node", n.id)}) })
	return n.with
}

func (n *nodeLog) Enabled(ctx context.Context, l slog.Level) bool { return n.base.Enabled(ctx, l) }

func (n *nodeLog) Handle(ctx context.Context, r slog.Record) error {
	return n.handler().Handle(ctx, r)
}

func (n *nodeLog) WithAttrs(as []slog.Attr) slog.Handler { return n.handler().WithAttrs(as) }

func (n *nodeLog) WithGroup(name string) slog.Handler { return n.handler().WithGroup(name) }

// factsScans holds the decoders of facts.update: one per frame being
// handled, not one per node.
var factsScans = sync.Pool{New: func() any { return new(protocol.FactsScan) }}

// connectResult is protocol.ConnectResult with the interest encoded once
// per change rather than once per connect.
type connectResult struct {
	Protocol int             `json:"protocol"`
	Interest json.RawMessage `json:"interest"`
}

// onOwnStack runs f on a goroutine of its own and waits for it. A node's
// goroutine spends its life waiting for the next frame; handling one (the
// connect, a facts.update: decoding, the registry, the recount, a log
// line) goes much deeper. Done on the node's goroutine, that grew its
// stack to 8 KiB for good (the runtime shrinks a stack only when a
// collection finds three quarters of it unused, and the library's parked
// read uses about 2 KiB): the largest part of a quiet node's memory. A
// short-lived goroutine's stack goes back to the runtime's cache when it
// ends, for the next frame of any node; the node's own stays at the 4 KiB
// its read needs (BenchmarkNodeStack: 7.8 → 3.8 KiB a node). The cost is a
// goroutine start and switch per frame, and frames are rare.
func onOwnStack(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}
