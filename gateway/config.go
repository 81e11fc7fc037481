package gateway

import (
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/store"
)

// Defaults of the gateway's settings.
const (
	DefaultListen         = config.DefaultListen
	DefaultPoll           = config.DefaultPoll
	DefaultConnectTimeout = 10 * time.Second
	// DefaultPingInterval is how long a node may be silent before the
	// gateway pings it: longer than the node agent's own ping period (30 s),
	// so that a live agent is never pinged, and a simulated or foreign node
	// that never pings is pinged every 45 s. A ping unanswered within
	// MaxPongWait drops the node; TCP keepalive (15 s) finds dead peers too.
	DefaultPingInterval = 45 * time.Second
	// MaxPongWait bounds the wait for a ping's pong.
	MaxPongWait     = 15 * time.Second
	DefaultMaxNodes = config.DefaultMaxNodes

	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

// Config is what New needs. Store is required; the rest have defaults.
type Config struct {
	Listen     string        // address to listen on; DefaultListen if empty
	Store      store.Store   // where skills are read from
	StoreName  string        // how the store is named in logs and /readyz (no secrets)
	ConfigPath string        // gateway config file (HuJSON), reloaded on change; "" for none
	Poll       time.Duration // storage and config polling interval

	// File is the config file at ConfigPath as the caller read it at
	// start (ReadConfigFile), so that the file is read once; when nil,
	// New reads ConfigPath. Reloads read ConfigPath again.
	File *config.File

	// TLSCert and TLSKey are the PEM files of the gateway's certificate
	// (with its chain) and key: with them it serves HTTPS and WSS, and
	// reads them again when their content changes. TLSClientCA is a PEM
	// file of CA certificates: with it every node must also present a
	// client certificate signed by one of them (see tls.go).
	TLSCert, TLSKey, TLSClientCA string

	// Insecure allows listening beyond loopback without tokens. The config
	// file's gateway.insecure: true allows it too, unless Flags["insecure"]
	// (then Insecure alone decides), at start and at every reload.
	Insecure bool

	// Flags names the settings given on the command line, by their key
	// under "gateway" in the config file: they win over the file, at start
	// and at every reload (where a changed one is logged as overridden).
	Flags map[string]bool

	// NodeToken is the shared token nodes present (SKILLGATE_NODE_TOKEN);
	// per-node tokens come from the config file (gateway.nodeTokens).
	NodeToken string
	// AgentToken is the bearer token of the /v1 API (SKILLGATE_AGENT_TOKEN).
	AgentToken string

	MaxNodes          int   // connected (authenticated) nodes at once; the file's gateway.maxNodes wins unless Flags["maxNodes"]
	MaxPending        int   // sockets not yet through connect, in total
	MaxPendingPerAddr int   // sockets not yet through connect, per source IP
	CacheBytes        int64 // bytes of cached prompt blocks, and of cached /skills answers

	// HTTP timeouts of the API (not of node WebSockets, which clear them).
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration // whole request, body included
	WriteTimeout      time.Duration // from the end of the request to the end of the answer
	IdleTimeout       time.Duration // keep-alive between requests

	// Replica is this process's name among the gateway's replicas, shown
	// in GET /v1/nodes ("replica"); the host name if empty. Cluster, when
	// set, makes the gateway share its nodes with the other replicas
	// (gateway.cluster, --cluster); its Replica is this one.
	Replica string
	Cluster *cluster.Config

	// FirstByteTimeout and MaxSilentPerAddr bound the connections that
	// have sent nothing yet (see connLimiter); 0: the defaults.
	FirstByteTimeout time.Duration
	MaxSilentPerAddr int

	// Version is the gateway's version, as the MCP endpoint introduces
	// itself.
	Version string

	ConnectTimeout time.Duration // how long a node has to send connect
	PingInterval   time.Duration // a node silent this long is pinged; a missed pong (within min(PingInterval, MaxPongWait)) drops it
	Logger         *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Listen == "" {
		c.Listen = DefaultListen
	}
	if c.Poll <= 0 {
		c.Poll = DefaultPoll
	}
	if c.MaxNodes <= 0 {
		c.MaxNodes = DefaultMaxNodes
	}
	if c.CacheBytes <= 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	if c.MaxPending <= 0 {
		c.MaxPending = DefaultMaxPending
	}
	if c.MaxPendingPerAddr <= 0 {
		c.MaxPendingPerAddr = DefaultMaxPendingPerAddr
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&c.ReadHeaderTimeout, DefaultReadHeaderTimeout}, {&c.ReadTimeout, DefaultReadTimeout},
		{&c.WriteTimeout, DefaultWriteTimeout}, {&c.IdleTimeout, DefaultIdleTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if c.FirstByteTimeout <= 0 {
		c.FirstByteTimeout = FirstByteTimeout
	}
	if c.MaxSilentPerAddr <= 0 {
		c.MaxSilentPerAddr = MaxSilentPerAddr
	}
	if c.ConnectTimeout <= 0 {
		c.ConnectTimeout = DefaultConnectTimeout
	}
	if c.PingInterval <= 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Replica == "" {
		c.Replica = DefaultReplica()
	}
}

// DefaultReplica is the replica name of a gateway not given one: the
// host name, or "gateway" when it has none that a replica name allows.
func DefaultReplica() string {
	h, err := os.Hostname()
	if err != nil || cluster.ValidateReplica(h) != nil {
		return "gateway"
	}
	return h
}

// ReadConfigFile reads a gateway config file and checks it (package
// config). A file the gateway would refuse is an error naming the file,
// line, column and key of every problem.
func ReadConfigFile(path string) (*config.File, error) {
	data, err := readLimited(path)
	if err != nil {
		return nil, err
	}
	return config.Parse(path, data)
}

// policy is one version of the config file in force, with the settings it
// resolves against the command line and Config's defaults.
type policy struct {
	cfg        *eligibility.Config
	settings   config.Gateway
	nodeTokens map[string]string
	auth       *authState   // the tokens of the API, for bearerAuth
	file       *config.File // nil without a config file
	sum        string       // content fingerprint, to notice changes
	maxNodes   int          // see Config.MaxNodes
	insecure   bool         // see Config.Insecure
}

// newPolicy resolves a config file (nil for none) against cfg.
// newPolicy is the policy of a config file, reading the external
// scanners' answers from the server's pool.
func (s *Server) newPolicy(f *config.File) *policy {
	p := newPolicy(f, &s.cfg)
	p.cfg.ScanResult = s.scanPool.Lookup
	return p
}

func newPolicy(f *config.File, cfg *Config) *policy {
	p := &policy{maxNodes: cfg.MaxNodes, insecure: cfg.Insecure, cfg: eligibility.NewConfig(f), file: f}
	defer func() {
		p.auth = &authState{admin: cfg.AgentToken, agents: p.settings.AgentTokens, nodes: cfg.NodeToken != "" || len(p.nodeTokens) > 0}
	}()
	if f == nil {
		p.settings.Prompt = config.Prompt{MaxChars: DefaultMaxChars, MaxSkills: DefaultMaxSkills, Hosts: HostsNone}
		p.settings.MaxLongPolls, p.settings.MaxLongPollsPerToken = config.DefaultMaxLongPolls, config.DefaultMaxLongPollsPerToken
		p.settings.MCP = config.MCP{MaxSessions: config.DefaultMCPMaxSessions, IdleTimeout: config.DefaultMCPIdleTimeout}
		return p
	}
	p.settings, p.nodeTokens, p.sum = f.Gateway, f.Gateway.NodeTokens, f.Sum
	if f.Gateway.MaxNodes > 0 && !cfg.Flags["maxNodes"] {
		p.maxNodes = f.Gateway.MaxNodes
	}
	if !cfg.Flags["insecure"] {
		p.insecure = cfg.Insecure || f.Gateway.Insecure
	}
	return p
}

// ownsAgent reports whether the config has settings of the agent's own
// (agents.<id>), so that its view differs from the global one.
func (p *policy) ownsAgent(agentID string) bool {
	if p.file == nil {
		return false
	}
	_, ok := p.file.Agents[agentID]
	return ok
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
		return tokenMatches(token, want)
	}
	if s.cfg.NodeToken != "" {
		return tokenMatches(token, s.cfg.NodeToken)
	}
	return len(s.pol.nodeTokens) == 0
}

// isLoopback reports whether a listen address only accepts local
// connections.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
