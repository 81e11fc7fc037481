package gateway

import (
	"context"
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

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/mcp"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/scanners"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// Server is a skillgate gateway.
type Server struct {
	cfg     Config
	log     *slog.Logger
	store   store.Store
	loader  *catalog.Loader
	metrics *metrics
	handler http.Handler
	tls     *tlsState // nil without TLS (tls.go)
	started time.Time

	mu         sync.RWMutex // guards the fields below
	snap       *snapshot
	pol        *policy
	rejected   string // error of the last rejected config file, "" if none
	listenAddr string // the address checkExposure last checked
	health     storeHealth
	// fleet is the nodes (this replica's and the others'), the interest
	// asked of them, the host index, the matcher and the live counts
	// (fleet.go).
	fleet

	// Live eligibility (see live.go).
	prepared map[*skill.Skill]*eligibility.Prepared
	variants map[*skill.Skill]promptbuild.Variants // each skill's rendered <skill> element, whole, short and bare
	// deps is the dependency graph of each view (by view key), made at
	// the view's first evaluation after a rebuild; depsMu guards it, as
	// views are evaluated under the read lock.
	depsMu sync.Mutex
	deps   map[string]*eligibility.Dependencies

	// Governance: the poller's scan cache, and each skill's effective
	// mode at the last rebuild (skill key → mode), to log tightening.
	scans    scanCache
	govModes map[string]govState
	govFeed  *govFeed
	// scanPool runs the external scanners; scanned is poked by each
	// answer, for the poller to re-evaluate.
	scanPool *scanners.Pool
	scanned  chan struct{}
	// nextExpiry is the next suppression expiry to come (zero: none);
	// expiredLogged the expired ones logged (noteSuppressionsLocked).
	nextExpiry    time.Time
	expiredLogged map[string]bool

	loggedMu sync.Mutex
	logged   map[string]string // skill key (and "\x00" view key for a skill naming others) → last verdict logged
	// overBudget marks the view keys whose block was last built over
	// budget (noteOverBudget).
	overBudget map[string]bool

	gen       atomic.Uint64             // bumped when every cached block is stale
	prompts   *viewCache[*agentView]    // prompt blocks by view key
	feed      *changeFeed               // wakes long polls when their block may have changed
	buildsMu  sync.Mutex                // guards builds
	builds    map[string]*buildCall     // prompt block builds in progress, by view key
	reportGen atomic.Uint64             // bumped on every host or skills change
	reports   *viewCache[[]byte]        // /skills answers by view key
	reportMu  sync.Mutex                // one /skills build at a time
	now       atomic.Pointer[viewState] // s.snap and s.pol, for cache keys without s.mu

	auth      atomic.Pointer[authState] // s.pol.auth, for requests without s.mu
	exposed   atomic.Bool               // listening beyond loopback; set once by Serve
	reload    chan struct{}             // asks the poller to re-read the config file now
	sockets   atomic.Int64              // node WebSocket connections held, pending or connected
	pending   *pendingSockets           // sockets that have not completed connect
	searches  chan struct{}             // a token per search ranking now (maxSearches)
	polls     pollLimits                // long polls waiting
	fdBudget  int                       // descriptors the listener may use; 0: unknown
	conns     atomic.Pointer[connLimiter]
	nodesJSON nodesCache // the encoded GET /v1/nodes answer

	// replica is this process's replica name (Config.Replica); member is
	// its cluster membership, nil without a cluster (cluster.go).
	replica string
	member  member

	mcp *mcp.Handler // the MCP endpoint's sessions (mcp.go)

	life      lifecycle // what runs, for Close to end and wait for
	closeOnce sync.Once
	serveMu   sync.Mutex         // guards the two fields below
	httpSrv   *http.Server       // set by Serve
	stopServe context.CancelFunc // ends Serve's base context

	// notLoaded is the 503 answer of the endpoints that answer from the
	// snapshot ("store not loaded: CAUSE") until a first snapshot is in
	// service, then nil: an agent must never paste the empty block of a
	// store that was never read. Written under mu, read without it.
	notLoaded atomic.Pointer[string]
}

// MaxHTTP2Streams bounds the concurrent streams of one HTTP/2 connection.
const MaxHTTP2Streams = 100

// New checks cfg and returns a server that is not yet listening.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	if cfg.Store == nil {
		return nil, errors.New("gateway: no store configured")
	}
	file := cfg.File
	cfg.File = nil // reloads re-read ConfigPath
	switch {
	case file != nil && cfg.ConfigPath == "":
		cfg.ConfigPath = file.Name
	case file != nil && file.Name != cfg.ConfigPath:
		return nil, fmt.Errorf("gateway: Config.File was read from %s, not ConfigPath %s", file.Name, cfg.ConfigPath)
	case file == nil && cfg.ConfigPath != "":
		var err error
		if file, err = ReadConfigFile(cfg.ConfigPath); err != nil {
			return nil, fmt.Errorf("gateway config: %w", err)
		}
	}
	tlsState, err := newTLSState(&cfg)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	s := &Server{
		cfg:        cfg,
		tls:        tlsState,
		log:        cfg.Logger,
		prompts:    newViewCache[*agentView](MaxCachedAgents, cfg.CacheBytes),
		feed:       newChangeFeed(),
		builds:     map[string]*buildCall{},
		reports:    newViewCache[[]byte](MaxCachedAgents, cfg.CacheBytes),
		logged:     map[string]string{},
		overBudget: map[string]bool{},
		reload:     make(chan struct{}, 1),
		started:    time.Now(),
		pending:    newPendingSockets(cfg.MaxPending, cfg.MaxPendingPerAddr),
		searches:   make(chan struct{}, maxSearches),
	}
	s.govFeed, s.expiredLogged = newGovFeed(), map[string]bool{}
	s.scanned = make(chan struct{}, 1)
	concurrency := 0 // the pool's default
	if file != nil {
		concurrency = file.Gateway.ScanConcurrency
	}
	s.scanPool = s.newScanPool(concurrency)
	s.metrics = newMetrics(s)
	s.scans.scans = s.metrics.govScans
	s.store = instrumentStore(cfg.Store, s.metrics)
	s.loader = catalog.NewLoader(s.store)
	s.pol = s.newPolicy(file)
	s.auth.Store(s.pol.auth)
	s.fleet = newFleet(s.pol.maxNodes, s.metrics.nodesConnected)
	s.snap = &snapshot{agents: map[string][]*skill.Skill{}}
	s.notLoaded.Store(&notLoadedYet)
	s.rebuildLocked()
	s.handler = s.routes()
	s.replica = cfg.Replica
	if cfg.Cluster != nil {
		cc := *cfg.Cluster
		cc.Replica = cfg.Replica
		if cc.Logger == nil {
			cc.Logger = s.log
		}
		m, err := cluster.Join(cc, clusterHandler{s})
		if err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
		s.member = m
		s.registerClusterMetrics()
	}
	return s, nil
}

// Handler returns the gateway's HTTP handler (API, probes, metrics and the
// node WebSocket endpoint).
func (s *Server) Handler() http.Handler { return s.handler }

// Run listens on cfg.Listen and serves until ctx is done or Close is
// called. It refuses to listen beyond loopback without tokens unless
// insecure (cfg.Insecure or the config file's gateway.insecure).
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

// Serve is Run on an existing listener. It returns once ctx is done or
// Close was called, and Close has ended everything the server ran. A
// server serves once: Serve after Close, or a second Serve, closes ln and
// returns http.ErrServerClosed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if err := s.checkExposure(ln.Addr().String()); err != nil {
		ln.Close()
		return err
	}
	s.exposed.Store(!isLoopback(ln.Addr().String()))
	s.warnCleartext(ln.Addr().String())
	if n := openFileLimit(); n > fdReserve {
		s.fdBudget = n - fdReserve
	}
	cl := newConnLimiter(ln, s.fdBudget, s.cfg.MaxSilentPerAddr, s.cfg.FirstByteTimeout)
	s.conns.Store(cl)
	ln = cl
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		// A client that announces a body and never sends it, or never
		// reads an answer, must not hold a socket forever. Node WebSockets
		// clear both deadlines at the upgrade (handleNodeConnect).
		ReadTimeout:    s.cfg.ReadTimeout,
		WriteTimeout:   s.cfg.WriteTimeout,
		IdleTimeout:    s.cfg.IdleTimeout,
		MaxHeaderBytes: 64<<10 - 4096, // net/http allows 4 KiB more
		// Each HTTP/2 stream may be a long poll in its handler: bounded
		// per connection, and counted in the long polls' bounds (L2).
		HTTP2:       &http.HTTP2Config{MaxConcurrentStreams: MaxHTTP2Streams},
		BaseContext: func(net.Listener) context.Context { return ctx },
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelDebug),
	}
	// Close reads httpSrv after marking the lifecycle closed: either it
	// sees hs, or Serve sees the lifecycle closed.
	s.serveMu.Lock()
	if s.httpSrv != nil || s.life.isClosed() {
		s.serveMu.Unlock()
		ln.Close()
		return http.ErrServerClosed
	}
	s.httpSrv, s.stopServe = hs, cancel
	s.serveMu.Unlock()

	// The first snapshot, before the first request; counted like the
	// poller, since it runs gateway code Close must wait for.
	if s.life.enter() {
		s.refreshStore(ctx)
		s.life.leave()
	}
	s.log.Info("gateway listening", "addr", ln.Addr().String(), "tls", s.tls != nil, "store", s.cfg.StoreName, "poll", s.cfg.Poll.String())
	errc := make(chan error, 1)
	if !s.life.goFunc(func() { s.poll(ctx) }) || !s.life.goFunc(func() { errc <- s.serveHTTP(hs, ln) }) {
		ln.Close() // Close began meanwhile
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			s.Close()
			return err
		}
	}
	s.Close()
	return nil
}

// Close stops serving, closes every node connection (with 1001) and
// returns once every goroutine the server started, and every call into it
// (HTTP requests, node connections, timers), has ended. It may be called
// more than once, and concurrently: each call returns after that.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		// From here nothing new starts or is admitted, so conns holds
		// every node socket there will be: connected, pending or replaced.
		conns := s.life.close()
		// MCP sessions hold notification streams open: they end first,
		// as do waits on the governance feed.
		s.mcp.Close()
		s.govFeed.close()
		s.scanPool.Close() // kills the scanners' processes
		s.serveMu.Lock()
		hs, stop := s.httpSrv, s.stopServe
		s.serveMu.Unlock()
		if hs != nil {
			// Requests in progress get a moment to end; then their
			// connections are cut, which ends their handlers.
			sctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if hs.Shutdown(sctx) != nil {
				hs.Close()
			}
			cancel()
			stop() // the poller, and request contexts
		}
		// Parked long polls are not the HTTP server's either.
		s.feed.close()
		// Hijacked sockets are not the HTTP server's: close them, each with
		// its close handshake.
		var wg sync.WaitGroup
		// Each node stops counting before its close handshake, which may
		// take seconds: with a cluster its record is withdrawn at once.
		for _, c := range conns {
			wg.Go(func() {
				s.unregister(c)
				c.close(protocol.CloseGoingAway, protocol.CloseReasonGatewayStop)
			})
		}
		wg.Wait()
		s.life.wait()
		if s.member != nil {
			// Every node has been unregistered, and its record withdrawn:
			// the member writes those deletions before it leaves, so that
			// the other replicas drop the nodes now rather than after the
			// TTL.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			if err := s.member.Close(ctx); err != nil {
				s.log.Warn("cluster: leaving", "err", err)
			}
			cancel()
		}
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
// agent tokens are configured or the gateway is insecure (then it warns).
func (s *Server) checkExposure(addr string) error {
	if isLoopback(addr) {
		return nil
	}
	s.mu.Lock()
	pol := s.pol
	s.listenAddr = addr
	s.mu.Unlock()
	var missing []string
	noNode, noAgent := s.authGaps(pol)
	if noNode {
		missing = append(missing, "a node token (SKILLGATE_NODE_TOKEN, --node-token-file or gateway.nodeTokens)")
	}
	if noAgent {
		missing = append(missing, "an agent token (SKILLGATE_AGENT_TOKEN, --agent-token-file or gateway.agentTokens)")
	}
	if len(missing) == 0 {
		return nil
	}
	if !pol.insecure {
		return fmt.Errorf("refusing to listen on %s beyond loopback without %s: set them, listen on 127.0.0.1, or pass --insecure",
			addr, strings.Join(missing, " and "))
	}
	s.warnInsecure(addr, missing)
	return nil
}

// authGaps reports which tokens a gateway listening beyond loopback would
// lack under pol.
func (s *Server) authGaps(pol *policy) (noNodeToken, noAgentToken bool) {
	return !pol.auth.nodes, !pol.auth.agentAuthed()
}

func (s *Server) warnInsecure(addr string, missing []string) {
	s.log.Warn("INSECURE: listening beyond loopback without authentication; anyone who can reach this address can connect nodes or read skills",
		"addr", addr, "missing", missing)
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
			s.reloadConfig(false)
			s.refreshStore(ctx)
			s.expireSuppressions(time.Now())
			s.scheduleScans()
		case <-s.reload:
			s.reloadConfig(true)
			s.scheduleScans()
		case <-s.scanned:
			s.onScanned()
		}
	}
}

// refreshStore takes a new storage snapshot; on a storage error the last
// good snapshot stays in service, and without one the agent endpoints
// answer 503 with the cause.
func (s *Server) refreshStore(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, max(30*time.Second, 2*s.cfg.Poll))
	defer cancel()
	// Only this goroutine replaces s.snap: read without the lock.
	snap, same, err := loadSnapshot(rctx, s.store, s.loader, s.snap)
	if err == nil {
		s.mu.RLock()
		pol := s.pol.cfg.Governance
		s.mu.RUnlock()
		// Only this goroutine changes the policy, so pol stays in force
		// until the snapshot is published. An unchanged listing under an
		// unchanged policy keeps its reports: nothing to look up.
		if fp := pol.Fingerprint(); !same || fp != snap.govPolicy {
			if same {
				cp := *snap
				snap = &cp
			}
			snap.reports, snap.govPolicy = s.scans.scanSkills(snap, pol), fp
		}
	}
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.health.lastTried = now
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		s.storeFailedLocked(err, now)
		return
	}
	if s.health.lastErr != nil {
		s.log.Info("storage reachable again", "store", s.cfg.StoreName)
	}
	s.health.lastErr, s.health.problem = nil, store.Problem{}
	s.health.lastOK = now
	if snap.sum != s.snap.sum {
		for _, d := range snap.diags {
			if !slices.Contains(s.snap.diags, d) {
				// A finding about one file comes back at every start: routine
				// (info), unless it keeps a skill out (error level).
				level := slog.LevelInfo
				if d.Level == skill.LevelError {
					level = slog.LevelWarn
				}
				s.log.Log(context.Background(), level, "storage: "+d.Message, "location", d.Location, "severity", string(d.Level))
			}
		}
		s.log.Info("skills loaded", "skills", len(snap.all), "agents", len(snap.agents))
		s.snap = snap
		s.rebuildLocked()
	}
	// After the snapshot is published: a request that sees nil finds it.
	s.notLoaded.Store(nil)
}

// notLoadedYet is the cause before the first attempt has ended.
var notLoadedYet = "store not loaded: first load in progress"

// storeFailedLocked records a failed poll of the store and logs it once
// per cause, saying what failed and what to check. Before any snapshot it
// sets the 503 answer of the agent endpoints; after one, that snapshot
// keeps serving.
func (s *Server) storeFailedLocked(err error, now time.Time) {
	p := store.Explain(err)
	changed := s.health.lastErr == nil || s.health.problem.Cause != p.Cause
	s.health.lastErr, s.health.problem = err, p
	if s.health.lastOK.IsZero() {
		msg := "store not loaded: " + p.Detail
		s.notLoaded.Store(&msg)
		if changed {
			s.log.Error("store not loaded; agents get 503 until a first snapshot loads", "store", s.cfg.StoreName,
				"cause", p.Detail, "check", p.Hint, "retry_every", s.cfg.Poll.String(), "err", err)
		}
		return
	}
	if changed {
		s.log.Error("storage failing; serving the last good snapshot", "store", s.cfg.StoreName,
			"cause", p.Detail, "check", p.Hint, "snapshot_age", s.snapshotAgeLocked(now).Round(time.Second).String(), "err", err)
	}
}

func (s *Server) snapshotAgeLocked(now time.Time) time.Duration {
	if s.health.lastOK.IsZero() {
		return now.Sub(s.started)
	}
	return now.Sub(s.health.lastOK)
}

// reloadConfig re-reads the config file; when force is false it is only
// applied if the content changed. Everything in it is applied but the
// restart-only settings, which are logged; a file that is bad, or that
// would break the rule Serve enforces at start (no listening beyond
// loopback without tokens unless insecure), is rejected and the old one
// stays in force.
func (s *Server) reloadConfig(force bool) {
	path := s.cfg.ConfigPath
	if path == "" {
		return
	}
	var (
		pol     *policy
		missing []string // what pol lacks to listen beyond loopback
	)
	f, err := ReadConfigFile(path)
	var rescanned *snapshot // the snapshot scanned under pol's governance, when that changed
	if err == nil {
		pol = s.newPolicy(f)
		noNode, noAgent := s.authGaps(pol)
		if noNode {
			missing = append(missing, "no node token (gateway.nodeTokens is empty and SKILLGATE_NODE_TOKEN is unset)")
		}
		if noAgent {
			missing = append(missing, "no agent token (SKILLGATE_AGENT_TOKEN is unset and gateway.agentTokens is empty)")
		}
		if s.exposed.Load() && len(missing) > 0 && !pol.insecure {
			// The loopback-only rule holds for the gateway's whole life,
			// not only at start: a reload must not open a public port.
			err = fmt.Errorf("%s: it leaves %s while the gateway listens beyond loopback and is not insecure (gateway.insecure or --insecure)",
				path, strings.Join(missing, " and "))
		}
	}
	if err == nil && pol.cfg.Governance.Fingerprint() != s.snap.govPolicy {
		// Scanned before the lock: the prompt path never waits on a
		// scan. Only this goroutine replaces s.snap.
		gp := pol.cfg.Governance
		cp := *s.snap
		cp.reports, cp.govPolicy = s.scans.scanSkills(&cp, gp), gp.Fingerprint()
		rescanned = &cp
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if force || s.rejected != err.Error() { // log a given bad content once
			s.log.Error("config rejected; the previous config stays in force", "file", path, "err", err)
		}
		s.rejected = err.Error()
		return
	}
	s.rejected = ""
	if pol.sum == s.pol.sum && !force {
		return
	}
	// The listener, the store, the poller, the TLS files and the cluster
	// are made once: the table says which settings wait for a restart.
	for _, st := range config.Changed(s.pol.file, pol.file, config.Restart) {
		key := strings.TrimPrefix(st.Path, "gateway.")
		if st.Flag != "" && s.cfg.Flags[key] {
			s.log.Warn("config: "+st.Path+" changed; --"+st.Flag+" on the command line wins over it", "file", path, "setting", st.Path)
		} else {
			s.log.Warn("config: "+st.Path+" changed; it takes effect at the next restart", "file", path, "setting", st.Path)
		}
	}
	if pol.maxNodes != s.pol.maxNodes {
		s.log.Info("config: gateway.maxNodes changed; connected nodes stay, connects past it are refused",
			"file", path, "max_nodes", pol.maxNodes, "connected", s.nodeCountLocked())
	}
	if pol.insecure != s.pol.insecure {
		s.log.Info("config: gateway.insecure changed", "file", path, "insecure", pol.insecure)
	}
	if s.exposed.Load() && len(missing) > 0 {
		s.warnInsecure(s.listenAddr, missing) // allowed: pol.insecure
	}
	s.pol = pol
	s.auth.Store(pol.auth)
	if rescanned != nil {
		s.snap = rescanned
	}
	s.setMaxNodesLocked(pol.maxNodes)
	s.log.Info("config loaded", "file", path, "entries", len(pol.cfg.Entries), "node_tokens", len(pol.nodeTokens))
	s.rebuildLocked()
	// Nodes whose token is no longer valid must go.
	for id, c := range s.nodesLocked() {
		if !s.tokenOKLocked(id, c.token) {
			s.log.Warn("node token no longer valid after config reload; disconnecting", "node", id)
			// Out of the index now, not when the close handshake ends.
			s.unregisterLocked(c)
			// When Close has begun it closes c itself.
			s.life.goFunc(func() { c.close(protocol.ClosePolicyViolation, protocol.CloseReasonTokenRevoked) })
		}
	}
}
