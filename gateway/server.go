package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/r2store"
	"github.com/skillgate/skillgate/skill"
)

// Server is a skillgate gateway.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   r2store.Store
	loader  *r2store.Loader
	metrics *metrics
	handler http.Handler
	started time.Time

	mu       sync.RWMutex // guards the fields below
	snap     *snapshot
	pol      *policy
	rejected string // error of the last rejected config file, "" if none
	health   storeHealth
	nodes    map[string]*session
	interest protocol.Interest
	// interestJSON and interestEvt are interest encoded, for connect
	// answers and evt pushes.
	interestJSON json.RawMessage
	interestEvt  []byte
	interestCut  int // names left out of the interest by its limits

	// Live eligibility (see live.go).
	prepared   map[*skill.Skill]*eligibility.Prepared
	fragments  map[*skill.Skill]string       // each skill's rendered <skill> element
	hostSkills []*eligibility.Prepared       // reach runtime, have host requirements
	matches    map[*eligibility.Prepared]int // hosts satisfying all host requirements
	index      *eligibility.Index            // nodes that reported facts

	loggedMu sync.Mutex
	logged   map[string]string // skill key → last verdict logged

	gen       atomic.Uint64            // bumped when every cached block is stale
	prompts   *viewCache[*agentView]   // prompt blocks by view key
	reportGen atomic.Uint64            // bumped on every host or skills change
	reports   *viewCache[[]byte]       // /skills answers by view key
	reportMu  sync.Mutex               // one /skills build at a time
	snapNow   atomic.Pointer[snapshot] // s.snap, for cache keys without s.mu

	exposed   atomic.Bool     // listening beyond loopback; set once by Serve
	reload    chan struct{}   // asks the poller to re-read the config file now
	sockets   atomic.Int64    // node WebSocket connections held, pending or connected
	nodesGen  uint64          // bumped on every registry change; guarded by mu
	pending   *pendingSockets // sockets that have not completed connect
	nodesJSON nodesCache      // the encoded GET /v1/nodes answer

	closeOnce sync.Once
	httpSrv   *http.Server
}

// New checks cfg and returns a server that is not yet listening.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if cfg.Store == nil {
		return nil, errors.New("gateway: no store configured")
	}
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		nodes:   map[string]*session{},
		prompts: newViewCache[*agentView](MaxCachedAgents, cfg.CacheBytes),
		reports: newViewCache[[]byte](MaxCachedAgents, cfg.CacheBytes),
		logged:  map[string]string{},
		reload:  make(chan struct{}, 1),
		started: time.Now(),
		pending: newPendingSockets(cfg.MaxPending, cfg.MaxPendingPerAddr),
	}
	s.metrics = newMetrics(s)
	s.store = instrumentStore(cfg.Store, s.metrics)
	s.loader = r2store.NewLoader(s.store)
	pol, err := loadPolicy(cfg.ConfigPath)
	if err != nil {
		return nil, fmt.Errorf("gateway config: %w", err)
	}
	s.pol = pol
	s.snap = &snapshot{agents: map[string][]*skill.Skill{}}
	s.interest = protocol.Interest{Bins: []string{}, Env: []string{}}
	s.index = eligibility.NewIndex()
	s.rebuildLocked()
	s.handler = s.routes()
	return s, nil
}

// Handler returns the gateway's HTTP handler (API, probes, metrics and the
// node WebSocket endpoint).
func (s *Server) Handler() http.Handler { return s.handler }

// Run listens on cfg.Listen and serves until ctx is done or Close is
// called. It refuses to listen beyond loopback without tokens unless
// cfg.Insecure is set.
func (s *Server) Run(ctx context.Context) error {
	if err := s.checkExposure(s.cfg.Listen); err != nil {
		return err // before binding: nothing was reachable
	}
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen %s: %w", s.cfg.Listen, err)
	}
	return s.Serve(ctx, ln)
}

// Serve is Run on an existing listener.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.checkExposure(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	s.exposed.Store(!isLoopback(ln.Addr().String()))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.refresh(ctx) // first snapshot before the first request
	s.httpSrv = &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		// A client that announces a body and never sends it, or never
		// reads an answer, must not hold a socket forever. Node WebSockets
		// clear both deadlines at the upgrade (handleNodeConnect).
		ReadTimeout:    s.cfg.ReadTimeout,
		WriteTimeout:   s.cfg.WriteTimeout,
		IdleTimeout:    s.cfg.IdleTimeout,
		MaxHeaderBytes: 64<<10 - 4096, // net/http allows 4 KiB more
		BaseContext:    func(net.Listener) context.Context { return ctx },
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	s.log.Info("gateway listening", "addr", ln.Addr().String(), "store", s.cfg.StoreName, "poll", s.cfg.Poll.String())
	var wg sync.WaitGroup
	wg.Go(func() { s.poll(ctx) })
	errc := make(chan error, 1)
	go func() { errc <- s.httpSrv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err := <-errc:
		cancel()
		wg.Wait()
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	s.Close()
	wg.Wait()
	return nil
}

// Close stops serving and drops every node connection.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		if s.httpSrv != nil {
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			s.httpSrv.Shutdown(sctx)
			cancel()
		}
		s.mu.Lock()
		nodes := make([]*session, 0, len(s.nodes))
		for _, n := range s.nodes {
			nodes = append(nodes, n)
		}
		s.mu.Unlock()
		var wg sync.WaitGroup
		for _, n := range nodes {
			wg.Go(func() { n.close(websocket.StatusGoingAway, "gateway shutting down") })
		}
		wg.Wait()
	})
	return nil
}

// Reload asks the gateway to re-read its config file now (SIGHUP).
func (s *Server) Reload() {
	select {
	case s.reload <- struct{}{}:
	default:
	}
}

// checkExposure refuses an address beyond loopback unless both node and
// agent tokens are configured or cfg.Insecure is set (then it warns).
func (s *Server) checkExposure(addr string) error {
	if isLoopback(addr) {
		return nil
	}
	s.mu.Lock()
	hasNodeAuth := s.cfg.NodeToken != "" || len(s.pol.nodeTokens) > 0
	s.mu.Unlock()
	hasAgentAuth := s.cfg.AgentToken != ""
	if hasNodeAuth && hasAgentAuth {
		return nil
	}
	var missing []string
	if !hasNodeAuth {
		missing = append(missing, "a node token (SKILLGATE_NODE_TOKEN or gateway.nodeTokens)")
	}
	if !hasAgentAuth {
		missing = append(missing, "an agent token (SKILLGATE_AGENT_TOKEN)")
	}
	if !s.cfg.Insecure {
		return fmt.Errorf("refusing to listen on %s beyond loopback without %s: set them, listen on 127.0.0.1, or pass --insecure",
			addr, strings.Join(missing, " and "))
	}
	s.log.Warn("INSECURE: listening beyond loopback without authentication; anyone who can reach this address can connect nodes or read skills",
		"addr", addr, "missing", missing)
	return nil
}

// poll refreshes the storage snapshot and the config file every Poll.
func (s *Server) poll(ctx context.Context) {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.refresh(ctx)
		case <-s.reload:
			s.reloadConfig(true)
		}
	}
}

// refresh reloads the config file if it changed and takes a new storage
// snapshot; on a storage error the last good snapshot stays in service.
func (s *Server) refresh(ctx context.Context) {
	s.reloadConfig(false)
	rctx, cancel := context.WithTimeout(ctx, max(30*time.Second, 2*s.cfg.Poll))
	defer cancel()
	snap, err := loadSnapshot(rctx, s.store, s.loader)
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health.lastTried = now
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		if s.health.lastErr == nil {
			s.log.Error("storage unreachable; serving the last good snapshot", "store", s.cfg.StoreName, "err", err,
				"snapshot_age", s.snapshotAgeLocked(now).Round(time.Second).String())
		}
		s.health.lastErr = err
		return
	}
	if s.health.lastErr != nil {
		s.log.Info("storage reachable again", "store", s.cfg.StoreName)
	}
	s.health.lastErr = nil
	s.health.lastOK = now
	if snap.sum == s.snap.sum {
		return
	}
	for _, d := range snap.diags {
		if !slices.Contains(s.snap.diags, d) {
			s.log.Warn("storage: "+d.Message, "location", d.Location, "severity", string(d.Level))
		}
	}
	s.log.Info("skills loaded", "skills", len(snap.all), "agents", len(snap.agents))
	s.snap = snap
	s.rebuildLocked()
}

func (s *Server) snapshotAgeLocked(now time.Time) time.Duration {
	if s.health.lastOK.IsZero() {
		return now.Sub(s.started)
	}
	return now.Sub(s.health.lastOK)
}

// reloadConfig re-reads the config file; when force is false it is only
// applied if the content changed. A bad file is rejected and the old
// policy stays in force.
func (s *Server) reloadConfig(force bool) {
	if s.cfg.ConfigPath == "" {
		return
	}
	pol, err := loadPolicy(s.cfg.ConfigPath)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil && s.exposed.Load() && !s.cfg.Insecure && s.cfg.NodeToken == "" && len(pol.nodeTokens) == 0 {
		// The loopback-only rule holds for the gateway's whole life, not
		// only at start: a reload must not open node auth on a public port.
		err = fmt.Errorf("%s: it leaves no node token (gateway.nodeTokens is empty and SKILLGATE_NODE_TOKEN is unset) while the gateway listens beyond loopback", s.cfg.ConfigPath)
	}
	if err != nil {
		if force || s.rejected != err.Error() { // log a given bad content once
			s.log.Error("config rejected; the previous config stays in force", "file", s.cfg.ConfigPath, "err", err)
		}
		s.rejected = err.Error()
		return
	}
	s.rejected = ""
	if pol.sum == s.pol.sum && !force {
		return
	}
	if pol.settings.Listen != s.pol.settings.Listen || pol.settings.Store != s.pol.settings.Store || pol.settings.Poll != s.pol.settings.Poll {
		s.log.Warn("config: gateway.listen, gateway.store and gateway.poll take effect at the next restart", "file", s.cfg.ConfigPath)
	}
	for _, d := range pol.diags {
		s.log.Warn("config: "+d.Message, "file", d.Location)
	}
	s.pol = pol
	s.log.Info("config loaded", "file", s.cfg.ConfigPath, "entries", len(pol.cfg.Entries), "node_tokens", len(pol.nodeTokens))
	s.rebuildLocked()
	// Nodes whose token is no longer valid must go.
	for id, n := range s.nodes {
		if !s.tokenOKLocked(id, n.token) {
			s.log.Warn("node token no longer valid after config reload; disconnecting", "node", id)
			// Out of the index now, not when the close handshake ends.
			s.unregisterLocked(n)
			go n.close(websocket.StatusPolicyViolation, "token revoked")
		}
	}
}
