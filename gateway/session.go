package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/bitset"
	"github.com/skillgate/skillgate/protocol"
)

// writeTimeout bounds every frame write, so a stuck node cannot hold a
// goroutine forever.
const writeTimeout = 10 * time.Second

// preConnectReadLimit is the frame limit before a successful connect.
const preConnectReadLimit = 16 << 10

// statusTryAgainLater is the WebSocket close code 1013.
const statusTryAgainLater websocket.StatusCode = 1013

// session is one node's WebSocket connection.
type session struct {
	srv   *Server
	conn  *websocket.Conn
	log   *slog.Logger
	id    string
	token string
	done  chan struct{}
	once  sync.Once

	// One goroutine per node (the read loop) is all a quiet node costs:
	// pings run from a timer and interest pushes from short-lived
	// goroutines, serialized by pushMu so the last push sends the latest.
	pingTimer *time.Timer
	pushing   atomic.Bool
	pushMu    sync.Mutex

	// Guarded by srv.mu. The reported binaries are kept as two bitsets
	// over the (shared, sorted) interest list they answered: a map per node
	// over hundreds of asked names would dominate the gateway's memory.
	info        protocol.NodeInfo
	env         []string
	binNames    []string // the interest.Bins the bitsets index
	binReported bitset.Set
	binTrue     bitset.Set
	host        *eligibility.Host // nil until the first facts.update
	connectedAt time.Time
	factsAt     time.Time
	warned      bool // an unasked name was already logged
}

// handleNodeConnect serves GET /v1/nodes/connect.
func (s *Server) handleNodeConnect(w http.ResponseWriter, r *http.Request) {
	// maxNodes bounds connected nodes, checked at connect (where the id
	// is known: a node replacing its own stale connection is let in on a
	// full gateway). Sockets still waiting for their connect have caps of
	// their own (pending.go) and never take a node's slot. This total is
	// only a backstop on file descriptors.
	if s.sockets.Load() >= int64(s.cfg.MaxNodes+2*s.cfg.MaxPending) {
		s.metrics.frames.WithLabelValues("upgrade", "over_limit").Inc()
		writeError(w, http.StatusServiceUnavailable, "too many node connections; raise gateway.maxNodes or add a gateway")
		return
	}
	s.sockets.Add(1)
	defer s.sockets.Add(-1)
	// The HTTP server's read and write deadlines are for requests; a node's
	// socket lives for days and is bounded by pings and per-write timeouts.
	rc := http.NewResponseController(w)
	rc.SetReadDeadline(time.Time{})
	rc.SetWriteDeadline(time.Time{})
	c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: websocket.CompressionDisabled})
	if err != nil {
		s.metrics.frames.WithLabelValues("upgrade", "error").Inc()
		return // Accept has answered
	}
	// Until connect succeeds a peer is unauthenticated: it may not make
	// the gateway buffer megabytes (connect params are a few KiB).
	c.SetReadLimit(preConnectReadLimit)
	sess := &session{srv: s, conn: c, log: s.log, done: make(chan struct{})}
	// Made stopped now, armed after connect, so close never races its
	// creation.
	sess.pingTimer = time.AfterFunc(time.Hour, sess.ping)
	sess.pingTimer.Stop()
	for _, old := range s.pending.add(sess, r.RemoteAddr) {
		s.metrics.frames.WithLabelValues("upgrade", "evicted").Inc()
		// No close handshake: a silent peer would hold the socket for
		// its timeout, and an attacker's sockets deserve no wait.
		old.closeNow()
	}
	// The session outlives the server's base context on purpose: on
	// shutdown Close ends it with a 1001 close frame rather than the
	// library dropping the connection.
	sess.serve(context.WithoutCancel(r.Context()))
}

func (n *session) close(code websocket.StatusCode, reason string) {
	n.once.Do(func() {
		close(n.done)
		n.pingTimer.Stop()
		n.conn.Close(code, reason)
	})
}

// closeNow drops the connection without a close handshake.
func (n *session) closeNow() {
	n.once.Do(func() {
		close(n.done)
		n.pingTimer.Stop()
		n.conn.CloseNow()
	})
}

// notifyInterest pushes the current interest to the node, coalescing
// changes that come while a push is pending.
func (n *session) notifyInterest() {
	if n.pushing.Swap(true) {
		return
	}
	go func() {
		n.pushMu.Lock()
		defer n.pushMu.Unlock()
		n.pushing.Store(false) // a change from now on schedules another push
		n.srv.mu.RLock()
		evt := n.srv.interestEvt
		n.srv.mu.RUnlock()
		select {
		case <-n.done:
			return
		default:
		}
		if err := n.write(context.Background(), evt); err != nil {
			n.close(websocket.StatusGoingAway, "write failed")
		}
	}()
}

// ping runs from pingTimer; a missed pong drops the node at once.
func (n *session) ping() {
	ctx, cancel := context.WithTimeout(context.Background(), n.srv.cfg.PingInterval)
	err := n.conn.Ping(ctx)
	cancel()
	select {
	case <-n.done:
		return
	default:
	}
	if err != nil {
		n.log.Warn("node missed a ping; dropping it", "err", err)
		n.srv.unregister(n) // now, not after the close handshake times out
		n.close(websocket.StatusPolicyViolation, "ping timeout")
		return
	}
	n.pingTimer.Reset(n.srv.cfg.PingInterval)
}

func (n *session) write(ctx context.Context, frame []byte) error {
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return n.conn.Write(ctx, websocket.MessageText, frame)
}

// refuse answers a frame with an error and closes with 1008, as for every
// failure before a successful connect.
func (n *session) refuse(ctx context.Context, id, code, msg string) {
	n.refuseWith(ctx, id, code, msg, websocket.StatusPolicyViolation, code)
}

// refuseWith is refuse with a close status and reason of its own.
func (n *session) refuseWith(ctx context.Context, id, code, msg string, status websocket.StatusCode, reason string) {
	n.srv.metrics.frames.WithLabelValues("req", code).Inc()
	n.log.Warn("node refused", "code", code, "reason", msg)
	n.write(ctx, protocol.NewErr(id, code, msg))
	n.close(status, reason)
}

func (n *session) serve(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer n.close(websocket.StatusNormalClosure, "")
	if !n.handshake(ctx) {
		return
	}
	defer n.srv.unregister(n)
	n.pingTimer.Reset(n.srv.cfg.PingInterval)
	pace := newPacer(time.Now())
	for {
		typ, data, err := n.conn.Read(ctx)
		if err != nil {
			n.logClosed(err)
			return
		}
		// A frame that came too early waits here, before processing; the
		// next is not read meanwhile, so TCP pushes back on a node that
		// floods, while a close is still noticed at once after the last.
		if wait := pace.delay(time.Now()); wait > 0 {
			n.srv.metrics.frames.WithLabelValues("any", "paced").Inc()
			select {
			case <-time.After(wait):
			case <-ctx.Done():
				return
			case <-n.done:
				return
			}
		}
		start := time.Now()
		pace.start(start)
		if typ != websocket.MessageText {
			n.srv.metrics.frames.WithLabelValues("binary", "error").Inc()
			n.close(websocket.StatusUnsupportedData, "binary frames are not part of the protocol")
			return
		}
		n.handleFrame(ctx, data)
		pace.charge(time.Since(start))
	}
}

func (n *session) logClosed(err error) {
	switch {
	case errors.Is(err, websocket.ErrMessageTooBig):
		n.srv.metrics.frames.WithLabelValues("oversize", "error").Inc()
		n.log.Warn("node sent a frame over the read limit; closed with 1009", "limit", protocol.ReadLimit)
	case errors.Is(err, context.Canceled):
	default:
		n.log.Info("node disconnected", "reason", err.Error())
	}
}

// handshake waits for req connect and answers it. It returns false when
// the node was refused (the socket is then closed).
func (n *session) handshake(ctx context.Context) bool {
	// Not a Read deadline: the library drops the TCP connection when a
	// Read's context ends, and the node must get a 1008 close.
	timer := time.AfterFunc(n.srv.cfg.ConnectTimeout, func() {
		n.srv.metrics.frames.WithLabelValues("connect", "timeout").Inc()
		n.log.Warn("node sent no connect in time; closing", "timeout", n.srv.cfg.ConnectTimeout.String())
		n.close(websocket.StatusPolicyViolation, "connect timeout")
	})
	typ, data, err := n.conn.Read(ctx)
	stillPending := n.srv.pending.done(n)
	if !timer.Stop() {
		return false // timed out: closed above
	}
	if !stillPending {
		return false // evicted for a newer socket: closed by the evictor
	}
	if err != nil {
		if errors.Is(err, websocket.ErrMessageTooBig) {
			n.srv.metrics.frames.WithLabelValues("oversize", "error").Inc()
		}
		return false
	}
	if typ != websocket.MessageText {
		// Like any frame before a successful connect: answered, then 1008.
		n.srv.metrics.frames.WithLabelValues("binary", "error").Inc()
		n.refuse(ctx, "", protocol.CodeBadRequest, "binary frames are not part of the protocol; send req connect as a JSON text frame")
		return false
	}
	f, err := protocol.DecodeFrame(data)
	if err != nil {
		n.refuse(ctx, "", protocol.CodeBadRequest, err.Error())
		return false
	}
	if f.Type != protocol.TypeReq || f.Method != protocol.MethodConnect {
		n.refuse(ctx, f.ID, protocol.CodeNotConnected, "the first frame must be req connect")
		return false
	}
	p, err := protocol.ParseConnectParams(f.Params)
	if err != nil {
		var pe *protocol.Error
		if errors.As(err, &pe) {
			n.refuse(ctx, f.ID, pe.Code, pe.Message)
		} else {
			n.refuse(ctx, f.ID, protocol.CodeBadRequest, err.Error())
		}
		return false
	}
	n.id = p.Node.ID
	n.token = p.Token
	n.log = n.srv.log.With("node", n.id)
	if !n.srv.tokenOK(n.id, p.Token) {
		n.refuse(ctx, f.ID, protocol.CodeUnauthorized, "token not valid for node "+n.id)
		return false
	}
	// An interest push must not overtake the connect answer: the node
	// would drop it and keep the older interest of the answer.
	n.pushMu.Lock()
	interest, err := n.srv.register(n, p.Node)
	if err != nil {
		n.pushMu.Unlock()
		if errors.Is(err, errGatewayFull) {
			// Not final for the node: it retries with backoff.
			n.refuseWith(ctx, f.ID, protocol.CodeUnavailable, err.Error(), statusTryAgainLater, "gateway full")
			return false
		}
		n.refuse(ctx, f.ID, protocol.CodeUnauthorized, "token not valid for node "+n.id)
		return false
	}
	res, err := protocol.NewRes(f.ID, connectResult{Protocol: protocol.Version, Interest: interest})
	if err == nil {
		n.srv.metrics.frames.WithLabelValues("connect", "ok").Inc()
		err = n.write(ctx, res)
	}
	n.pushMu.Unlock()
	if err != nil {
		n.srv.unregister(n)
		n.close(websocket.StatusInternalError, "connect answer failed")
		return false
	}
	n.conn.SetReadLimit(protocol.ReadLimit)
	n.log.Info("node connected", "os", p.Node.OS, "roles", p.Node.Roles, "client", p.Client)
	return true
}

func (n *session) handleFrame(ctx context.Context, data []byte) {
	f, err := protocol.DecodeFrame(data)
	if err != nil {
		n.srv.metrics.frames.WithLabelValues("invalid", protocol.CodeBadRequest).Inc()
		n.write(ctx, protocol.NewErr("", protocol.CodeBadRequest, err.Error()))
		return
	}
	if f.Type != protocol.TypeReq {
		// Nodes have nothing to answer or announce in version 1.
		n.srv.metrics.frames.WithLabelValues(f.Type, "ignored").Inc()
		return
	}
	switch f.Method {
	case protocol.MethodFactsUpdate:
		u, err := protocol.ParseFactsUpdate(f.Params)
		if err != nil {
			code := protocol.CodeBadRequest
			var pe *protocol.Error
			if errors.As(err, &pe) {
				code = pe.Code
			}
			msg := err.Error()
			if pe != nil {
				msg = pe.Message // the code is in its own field
			}
			n.srv.metrics.frames.WithLabelValues("facts.update", code).Inc()
			n.write(ctx, protocol.NewErr(f.ID, code, msg))
			return
		}
		n.srv.updateFacts(n, u)
		n.srv.metrics.frames.WithLabelValues("facts.update", "ok").Inc()
		res, _ := protocol.NewRes(f.ID, nil)
		n.write(ctx, res)
	case protocol.MethodConnect:
		n.srv.metrics.frames.WithLabelValues("connect", protocol.CodeBadRequest).Inc()
		n.write(ctx, protocol.NewErr(f.ID, protocol.CodeBadRequest, "already connected"))
	default:
		n.srv.metrics.frames.WithLabelValues("req", protocol.CodeUnknownMethod).Inc()
		n.write(ctx, protocol.NewErr(f.ID, protocol.CodeUnknownMethod, "unknown method "+f.Method+" (known: connect, facts.update)"))
	}
}

// tokenOK checks a node's token: a per-node token binds the id; otherwise
// the shared token; with neither configured any token is accepted (the
// gateway then only listens on loopback, or was told --insecure).
func (s *Server) tokenOK(id, token string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.tokenOKLocked(id, token)
}

func (s *Server) tokenOKLocked(id, token string) bool {
	if want, ok := s.pol.nodeTokens[id]; ok {
		return tokenEqual(token, want)
	}
	if s.cfg.NodeToken != "" {
		return tokenEqual(token, s.cfg.NodeToken)
	}
	return len(s.pol.nodeTokens) == 0
}

// errGatewayFull refuses a connect past maxNodes.
var errGatewayFull = errors.New("gateway full: it holds gateway.maxNodes nodes; retry later or connect to another gateway")

// errTokenRevoked refuses a connect whose token a reload revoked since it
// was checked.
var errTokenRevoked = errors.New("token revoked")

// register adds a node, replacing a connection with the same id at once,
// and returns the current interest.
func (s *Server) register(n *session, info protocol.NodeInfo) (json.RawMessage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.tokenOKLocked(n.id, n.token) {
		return nil, errTokenRevoked // revoked by a reload since the check
	}
	if _, replaces := s.nodes[n.id]; !replaces && len(s.nodes) >= s.cfg.MaxNodes {
		return nil, errGatewayFull
	}
	info.OS = protocol.NormalizeOS(info.OS) // validated in this form
	n.info = info
	n.connectedAt = time.Now().UTC()
	old := s.nodes[n.id]
	s.nodes[n.id] = n
	if old != nil {
		old.log.Info("node replaced by a new connection with the same id")
		go old.close(websocket.StatusPolicyViolation, "replaced")
	}
	if old != nil && old.host != nil {
		s.hostChangedLocked(old.id, old.host, nil)
	}
	s.nodesChangedLocked()
	return s.interestJSON, nil
}

// connectResult is protocol.ConnectResult with the interest encoded once
// per change rather than once per connect.
type connectResult struct {
	Protocol int             `json:"protocol"`
	Interest json.RawMessage `json:"interest"`
}

// unregister removes a node unless a newer connection replaced it.
func (s *Server) unregister(n *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unregisterLocked(n)
}

// unregisterLocked removes a node now: it stops counting before any close
// handshake. s.mu must be held for writing.
func (s *Server) unregisterLocked(n *session) {
	if s.nodes[n.id] != n {
		return
	}
	delete(s.nodes, n.id)
	if n.host != nil {
		s.hostChangedLocked(n.id, n.host, nil)
	}
	s.nodesChangedLocked()
}

// nodesChangedLocked records a change of the node registry (a node came,
// went, or reported): the cached /v1/nodes answer is stale.
func (s *Server) nodesChangedLocked() {
	s.metrics.nodesConnected.Set(float64(len(s.nodes)))
	s.nodesGen++
}

// updateFacts applies a facts.update, keeping only the names the gateway
// asked for.
func (s *Server) updateFacts(n *session, u protocol.FactsUpdate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.nodes[n.id] != n {
		return
	}
	var unasked []string
	env := make([]string, 0, len(u.Env))
	for _, e := range u.Env {
		if _, ok := slices.BinarySearch(s.interest.Env, e); ok {
			env = append(env, e)
		} else {
			unasked = append(unasked, e)
		}
	}
	slices.Sort(env)
	env = slices.Compact(env)
	names := s.interest.Bins
	var reported, present bitset.Set
	for b, ok := range u.HostBinStatus {
		i, asked := slices.BinarySearch(names, b)
		if !asked {
			unasked = append(unasked, b)
			continue
		}
		reported.Add(i)
		if ok {
			present.Add(i)
		}
	}
	if len(unasked) > 0 && !n.warned {
		n.warned = true
		slices.Sort(unasked)
		if len(unasked) > 20 {
			unasked = unasked[:20]
		}
		n.log.Warn("protocol: node reported names the gateway did not ask for; ignored", "names", unasked)
	}
	n.factsAt = time.Now().UTC()
	s.nodesGen++
	if n.host != nil && slices.Equal(n.env, env) && sameStrings(n.binNames, names) &&
		n.binReported.Equal(reported) && n.binTrue.Equal(present) {
		return // nothing changed: keep the caches
	}
	old := n.host
	n.env, n.binNames, n.binReported, n.binTrue = env, names, reported, present
	facts := n.factsLocked()
	n.host = eligibility.NewHost(&facts)
	s.hostChangedLocked(n.id, old, n.host)
}

// factsLocked returns the node's host facts as reported. srv.mu must be held.
func (n *session) factsLocked() protocol.HostFacts {
	f := n.info.HostFacts()
	if n.env != nil {
		f.Env = n.env
	}
	n.binReported.Each(func(i int) { f.HostBinStatus[n.binNames[i]] = n.binTrue.Has(i) })
	return f
}

// sameStrings reports whether a and b are the same slice (interest lists
// are replaced, never changed, so identity is equality).
func sameStrings(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
