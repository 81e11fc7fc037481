package mcp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults of the session bounds (gateway.mcp).
const (
	DefaultMaxSessions = 1000
	DefaultIdleTimeout = 10 * time.Minute
	// MaxRequestBytes bounds the body of a request to /mcp: a tool call's
	// arguments are a name, a path and a query of at most 512 bytes.
	MaxRequestBytes = 64 << 10
	// sessionRetry is the Retry-After (seconds) of a session refused by
	// the bound.
	sessionRetry = 5
)

// sessionHeader is the Streamable HTTP transport's session header.
const sessionHeader = "Mcp-Session-Id"

// Options configure a Handler.
type Options struct {
	// Name and Version are the server's in the initialize answer.
	Name, Version string
	// Limits returns the bounds in force (gateway.mcp.maxSessions and
	// idleTimeout; read at each new session and each idle check, so that
	// a reload applies them); nil or values ≤ 0: the defaults.
	Limits func() (maxSessions int, idle time.Duration)
	Logger *slog.Logger

	sdkLogger *slog.Logger // Logger from warn up, for the SDK
}

// Handler serves the MCP Streamable HTTP transport for agents the caller
// authenticated (ServeAgent). Each session is one agent's, for its whole
// life: a request naming a session of another agent is refused (403).
// Sessions are bounded in number (a new one past the bound is answered
// 429) and closed after their idle time without a request (an open GET
// stream, which carries the notifications, is not idle).
type Handler struct {
	b      Backend
	opts   Options
	http   *sdk.StreamableHTTPHandler
	proto  *sdk.Server // what the transport checks the protocol version of existing sessions' requests against
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup // the sessions' goroutines and the idle sweeper

	mu       sync.Mutex
	closed   bool
	sessions map[string]*session // by session id, once the transport gave it one
	count    int                 // sessions counted against the bound, ids or not yet
}

// session is one MCP session of an agent.
type session struct {
	agent  string
	srv    *sdk.Server
	id     string             // "" until the transport asks for one
	ss     *sdk.ServerSession // nil until its first request ended
	active int                // requests in progress (a GET stream for as long as it is open)
	last   time.Time          // when the last request ended
}

type serverKey struct{}

// NewHandler returns a Handler answering from b.
func NewHandler(b Backend, opts Options) *Handler {
	opts = opts.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	h := &Handler{b: b, opts: opts, ctx: ctx, cancel: cancel, sessions: map[string]*session{}}
	h.proto = sdk.NewServer(&sdk.Implementation{Name: opts.Name, Version: opts.Version}, &sdk.ServerOptions{Logger: opts.sdkLogger})
	h.http = sdk.NewStreamableHTTPHandler(func(r *http.Request) *sdk.Server {
		if srv, ok := r.Context().Value(serverKey{}).(*sdk.Server); ok {
			return srv
		}
		return h.proto
	}, &sdk.StreamableHTTPOptions{
		// The gateway checks Host values itself (loopback names only when
		// it has no token), as for its other endpoints.
		DisableLocalhostProtection: true,
		JSONResponse:               true,
		MaxRequestBodyBytes:        MaxRequestBytes,
		Logger:                     opts.sdkLogger,
	})
	h.wg.Add(1)
	go h.sweep()
	return h
}

// withDefaults fills in the name and the logger; the SDK's own lines
// (a line per session opened and closed at info) are kept from warn up.
func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Name == "" {
		o.Name = "skillgate"
	}
	o.sdkLogger = slog.New(minLevel{o.Logger.Handler(), slog.LevelWarn})
	return o
}

// minLevel drops the records below a level.
type minLevel struct {
	slog.Handler
	level slog.Level
}

func (m minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.level && m.Handler.Enabled(ctx, l)
}

func (m minLevel) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(as), m.level}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.level}
}

// limits returns the bounds in force.
func (h *Handler) limits() (int, time.Duration) {
	maxSessions, idle := DefaultMaxSessions, DefaultIdleTimeout
	if h.opts.Limits != nil {
		m, d := h.opts.Limits()
		if m > 0 {
			maxSessions = m
		}
		if d > 0 {
			idle = d
		}
	}
	return maxSessions, idle
}

// Sessions returns the number of sessions open (or being opened).
func (h *Handler) Sessions() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.count
}

// crossOrigin refuses requests a browser sends from another origin: a
// page must not drive a loopback gateway's agent through its user.
var crossOrigin = http.NewCrossOriginProtection()

// ServeAgent serves one request of the MCP endpoint for agentID, whom the
// caller has authenticated.
func (h *Handler) ServeAgent(w http.ResponseWriter, r *http.Request, agentID string) {
	if err := crossOrigin.Check(r); err != nil {
		writeError(w, http.StatusForbidden, "cross-origin request refused: "+err.Error())
		return
	}
	if sid := r.Header.Get(sessionHeader); sid != "" {
		h.mu.Lock()
		s := h.sessions[sid]
		if s != nil && s.agent != agentID {
			h.mu.Unlock()
			writeError(w, http.StatusForbidden, "MCP session "+strconv.Quote(sid)+" is not a session of agent "+agentID)
			return
		}
		if s != nil {
			s.active++
		}
		h.mu.Unlock()
		if s != nil {
			defer h.ended(s)
		}
		if r.Method == http.MethodGet {
			// The session's notification stream stays open as long as the
			// session: the API's read and write timeouts are not its.
			rc := http.NewResponseController(w)
			rc.SetReadDeadline(time.Time{})
			rc.SetWriteDeadline(time.Time{})
		}
		h.http.ServeHTTP(w, r) // an unknown session: the transport's 404
		return
	}
	if r.Method != http.MethodPost {
		h.http.ServeHTTP(w, r) // the transport's 400: no session named
		return
	}
	// A request without a session opens one (initialize).
	s, ok := h.reserve(agentID)
	if !ok {
		max, _ := h.limits()
		w.Header().Set("Retry-After", strconv.Itoa(sessionRetry))
		writeError(w, http.StatusTooManyRequests, "too many MCP sessions open ("+strconv.Itoa(max)+
			", gateway.mcp.maxSessions); close one (DELETE /mcp) or retry later")
		return
	}
	s.srv = newServer(h.b, agentID, serverConfig{name: h.opts.Name, version: h.opts.Version, logger: h.opts.sdkLogger,
		getSessionID: func() string {
			id := rand.Text()
			h.mu.Lock()
			s.id = id
			h.sessions[id] = s
			h.mu.Unlock()
			return id
		}})
	// What the session starts from: any change after this is notified.
	fp, _ := fingerprint(r.Context(), h.b, agentID)
	h.http.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), serverKey{}, s.srv)))
	h.settle(s, fp)
}

// reserve counts a new session of agentID in, unless the bound is reached.
func (h *Handler) reserve(agentID string) (*session, bool) {
	max, _ := h.limits()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || h.count >= max {
		return nil, false
	}
	h.count++
	return &session{agent: agentID, last: time.Now()}, true
}

// settle follows a session the transport opened in its first request
// until it ends (closed by the client, by the idle sweep or by Close),
// watching the agent's resources meanwhile; a first request that opened
// none (not an initialize, or a failed one) releases it at once.
func (h *Handler) settle(s *session, fp string) {
	h.mu.Lock()
	id := s.id
	h.mu.Unlock()
	var ss *sdk.ServerSession
	if id != "" {
		for x := range s.srv.Sessions() {
			if x.ID() == id {
				ss = x
			}
		}
	}
	if ss == nil {
		h.release(s)
		return
	}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		ss.Close()
		h.release(s)
		return
	}
	s.ss, s.last = ss, time.Now()
	h.wg.Add(2)
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(h.ctx)
	go func() {
		defer h.wg.Done()
		ss.Wait()
		cancel()
		h.release(s)
	}()
	go func() {
		defer h.wg.Done()
		watch(ctx, h.b, s.agent, s.srv, fp)
	}()
}

// ended marks the end of one request of s.
func (h *Handler) ended(s *session) {
	h.mu.Lock()
	s.active--
	s.last = time.Now()
	h.mu.Unlock()
}

// release counts s out.
func (h *Handler) release(s *session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.id != "" && h.sessions[s.id] == s {
		delete(h.sessions, s.id)
	}
	h.count--
}

// sweep closes the sessions idle for longer than the idle timeout, until
// Close.
func (h *Handler) sweep() {
	defer h.wg.Done()
	for {
		_, idle := h.limits()
		t := time.NewTimer(min(max(idle/8, 50*time.Millisecond), 15*time.Second))
		select {
		case <-h.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		now := time.Now()
		var stale []*sdk.ServerSession
		h.mu.Lock()
		for _, s := range h.sessions {
			if s.ss != nil && s.active == 0 && now.Sub(s.last) > idle {
				stale = append(stale, s.ss)
			}
		}
		h.mu.Unlock()
		for _, ss := range stale {
			h.opts.Logger.Debug("mcp: closing an idle session", "session", ss.ID(), "idle_timeout", idle.String())
			ss.Close()
		}
	}
}

// Close closes every session and returns once their goroutines have
// ended. New sessions are refused from then on.
func (h *Handler) Close() {
	h.mu.Lock()
	h.closed = true
	var open []*sdk.ServerSession
	for _, s := range h.sessions {
		if s.ss != nil {
			open = append(open, s.ss)
		}
	}
	h.mu.Unlock()
	h.cancel()
	for _, ss := range open {
		ss.Close()
	}
	h.wg.Wait()
}

func writeError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
