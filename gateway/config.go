package gateway

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/r2store"
	"github.com/skillgate/skillgate/skill"
)

// Defaults of the gateway's settings.
const (
	DefaultListen         = "127.0.0.1:7780"
	DefaultPoll           = 2 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	DefaultPingInterval   = 15 * time.Second
	DefaultMaxNodes       = 20000

	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultWriteTimeout      = 60 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
)

// Config is what New needs. Store is required; the rest have defaults.
type Config struct {
	Listen     string        // address to listen on; DefaultListen if empty
	Store      r2store.Store // where skills are read from
	StoreName  string        // how the store is named in logs and /readyz (no secrets)
	ConfigPath string        // gateway config file (HuJSON), reloaded on change; "" for none
	Poll       time.Duration // storage and config polling interval

	// File is the config file at ConfigPath as the caller read it at
	// start (ReadConfigFile), so that the file is read once; when nil,
	// New reads ConfigPath. Reloads read ConfigPath again.
	File *ConfigFile

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

	ConnectTimeout time.Duration // how long a node has to send connect
	PingInterval   time.Duration // WebSocket ping period; a missed pong drops the node
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

// FileSettings are the gateway's own settings in the config file, under
// its "gateway" key. Command-line flags win over them.
type FileSettings struct {
	Listen     string            `json:"listen"`
	Store      string            `json:"store"`
	Poll       string            `json:"poll"`
	Insecure   bool              `json:"insecure"`
	NodeTokens map[string]string `json:"nodeTokens"`
	MaxNodes   int               `json:"maxNodes"`
	Governance governance.Policy `json:"governance"`
	Prompt     PromptSettings    `json:"prompt"`
	// AgentTokens are the per-agent bearer tokens: agent id → token (or
	// "sha256:<hex>" of it). Such a token reads only its agent's /prompt,
	// /skills and /read.
	AgentTokens map[string]string `json:"agentTokens"`
	// TLSCert, TLSKey and TLSClientCA are the files of --tls-cert,
	// --tls-key and --tls-client-ca; a relative path is resolved against
	// the config file's directory.
	TLSCert     string `json:"tlsCert"`
	TLSKey      string `json:"tlsKey"`
	TLSClientCA string `json:"tlsClientCA"`
	// Cluster is gateway.cluster: the replicas' shared fleet over NATS.
	Cluster ClusterSettings `json:"cluster"`
}

// ClusterSettings are gateway.cluster. They are read at start: a reload
// that changes them is logged, and applies at the next start.
type ClusterSettings struct {
	URL     string `json:"url"`     // NATS server URLs, comma-separated; "" for no cluster
	Replica string `json:"replica"` // this replica's name; the host name if empty
	Bucket  string `json:"bucket"`  // cluster.DefaultBucket if empty
	TTL     string `json:"ttl"`     // a duration; cluster.DefaultTTL if empty
	// Files (relative to the config file's directory): a NATS creds file,
	// an nkey seed, and the CA, certificate and key of tls:// servers.
	Creds string `json:"creds"`
	NKey  string `json:"nkey"`
	CA    string `json:"ca"`
	Cert  string `json:"cert"`
	Key   string `json:"key"`
}

// parseCluster reads gateway.cluster; errors name the field.
func parseCluster(path string, raw any) (ClusterSettings, error) {
	var cs ClusterSettings
	if raw == nil {
		return cs, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return cs, errors.New("gateway.cluster: must be an object")
	}
	fields := []struct {
		key  string
		v    *string
		file bool
	}{{"url", &cs.URL, false}, {"replica", &cs.Replica, false}, {"bucket", &cs.Bucket, false}, {"ttl", &cs.TTL, false},
		{"creds", &cs.Creds, true}, {"nkey", &cs.NKey, true}, {"ca", &cs.CA, true}, {"cert", &cs.Cert, true}, {"key", &cs.Key, true}}
	known := make([]string, len(fields))
	for i, f := range fields {
		known[i] = f.key
		v, ok := m[f.key]
		if !ok || v == nil {
			continue
		}
		str, ok := v.(string)
		if !ok {
			return cs, fmt.Errorf("gateway.cluster.%s: must be a string", f.key)
		}
		if f.file && str != "" && !filepath.IsAbs(str) {
			str = filepath.Join(filepath.Dir(path), str)
		}
		*f.v = str
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(known, k) {
			return cs, fmt.Errorf("gateway.cluster.%s: unknown setting (known: %s)", k, strings.Join(known, ", "))
		}
	}
	if cs.Replica != "" {
		if err := cluster.ValidateReplica(cs.Replica); err != nil {
			return cs, fmt.Errorf("gateway.cluster.replica: %w", err)
		}
	}
	if cs.Bucket != "" && !validBucket(cs.Bucket) {
		return cs, fmt.Errorf("gateway.cluster.bucket: %q: a bucket name is letters, digits, - and _", cs.Bucket)
	}
	if cs.TTL != "" {
		if d, err := time.ParseDuration(cs.TTL); err != nil || d < cluster.MinTTL {
			return cs, fmt.Errorf("gateway.cluster.ttl: %q is not a duration of at least %v, like \"10s\"", cs.TTL, cluster.MinTTL)
		}
	}
	if (cs.Cert == "") != (cs.Key == "") {
		return cs, errors.New("gateway.cluster.cert and gateway.cluster.key go together: set both, or neither")
	}
	return cs, nil
}

// validBucket reports whether name is a JetStream key-value bucket name.
func validBucket(name string) bool {
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return name != "" && len(name) <= 64
}

// ConfigFile is a gateway config file as read and checked: the whole
// object (the root requires.config paths resolve against, and
// skills.entries) and the settings under its "gateway" key.
type ConfigFile struct {
	Path     string
	Root     map[string]any
	Settings FileSettings
	Agents   map[string]AgentSettings // the top-level "agents" object
	sum      string                   // content fingerprint, to notice changes
}

// ReadConfigFile reads a gateway config file and checks its settings. A
// file the gateway would refuse is an error naming the file and field.
func ReadConfigFile(path string) (*ConfigFile, error) {
	root, sum, err := loadConfigRoot(path)
	if err != nil {
		return nil, err
	}
	settings, err := parseFileSettings(path, root)
	if err != nil {
		return nil, err
	}
	agents, err := parseAgents(root)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &ConfigFile{Path: path, Root: root, Settings: settings, Agents: agents, sum: sum}, nil
}

// Eligibility returns the pipeline's config from the file: skills.entries,
// the root requires.config paths resolve against, and gateway.governance.
// The gateway and eval both read it here, so that both run one pipeline.
func (f *ConfigFile) Eligibility() (*eligibility.Config, []skill.Diagnostic) {
	if f == nil {
		return eligibility.NewConfig(map[string]any{}, "config")
	}
	cfg, diags := eligibility.NewConfig(f.Root, f.Path)
	cfg.Governance = f.Settings.Governance
	for id, a := range f.Agents {
		if len(a.Skills.Allow)+len(a.Skills.Deny) > 0 {
			if cfg.Scopes == nil {
				cfg.Scopes = map[string]eligibility.Scope{}
			}
			cfg.Scopes[id] = a.Skills
		}
	}
	return cfg, diags
}

// policy is one version of the config file in force, with the settings it
// resolves against the command line and Config's defaults.
type policy struct {
	cfg        *eligibility.Config
	diags      []skill.Diagnostic
	settings   FileSettings
	nodeTokens map[string]string
	auth       *authState  // the tokens of the API, for bearerAuth
	file       *ConfigFile // nil without a config file
	sum        string      // content fingerprint, to notice changes
	maxNodes   int         // see Config.MaxNodes
	insecure   bool        // see Config.Insecure
}

// newPolicy resolves a config file (nil for none) against cfg.
func newPolicy(f *ConfigFile, cfg *Config) *policy {
	p := &policy{maxNodes: cfg.MaxNodes, insecure: cfg.Insecure}
	defer func() {
		p.auth = &authState{admin: cfg.AgentToken, agents: p.settings.AgentTokens, nodes: cfg.NodeToken != "" || len(p.nodeTokens) > 0}
	}()
	if f == nil {
		p.cfg, _ = eligibility.NewConfig(map[string]any{}, "config")
		return p
	}
	p.cfg, p.diags = f.Eligibility()
	p.file = f
	p.settings, p.nodeTokens, p.sum = f.Settings, f.Settings.NodeTokens, f.sum
	if f.Settings.MaxNodes > 0 && !cfg.Flags["maxNodes"] {
		p.maxNodes = f.Settings.MaxNodes
	}
	if !cfg.Flags["insecure"] {
		p.insecure = cfg.Insecure || f.Settings.Insecure
	}
	return p
}

// ownsAgent reports whether the config has settings of the agent's own
// (agents.<id>), so that its view differs from the global one.
func (p *policy) ownsAgent(agentID string) bool {
	_, ok := p.file.agent(agentID)
	return ok
}

// parseFileSettings reads the "gateway" key of a config object. Errors
// name the file and field.
func parseFileSettings(path string, root map[string]any) (FileSettings, error) {
	fs := FileSettings{Governance: governance.DefaultPolicy(), Prompt: defaultPrompt()}
	raw, ok := root["gateway"]
	if !ok || raw == nil {
		return fs, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return fs, fmt.Errorf("%s: gateway: must be an object", path)
	}
	str := func(key string) (string, error) {
		v, ok := m[key]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", fmt.Errorf("%s: gateway.%s: must be a string", path, key)
		}
		return s, nil
	}
	var err error
	if fs.Listen, err = str("listen"); err != nil {
		return fs, err
	}
	if fs.Store, err = str("store"); err != nil {
		return fs, err
	}
	if fs.Poll, err = str("poll"); err != nil {
		return fs, err
	}
	if fs.Poll != "" {
		if d, err := time.ParseDuration(fs.Poll); err != nil || d <= 0 {
			return fs, fmt.Errorf("%s: gateway.poll: %q is not a positive duration like \"2s\"", path, fs.Poll)
		}
	}
	for _, f := range []struct {
		key string
		v   *string
	}{{"tlsCert", &fs.TLSCert}, {"tlsKey", &fs.TLSKey}, {"tlsClientCA", &fs.TLSClientCA}} {
		if *f.v, err = str(f.key); err != nil {
			return fs, err
		}
		if *f.v != "" && !filepath.IsAbs(*f.v) {
			*f.v = filepath.Join(filepath.Dir(path), *f.v)
		}
	}
	if v, ok := m["insecure"]; ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return fs, fmt.Errorf("%s: gateway.insecure: must be true or false", path)
		}
		fs.Insecure = b
	}
	if v, ok := m["maxNodes"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok || f < 1 || f != float64(int(f)) {
			return fs, fmt.Errorf("%s: gateway.maxNodes: must be a positive whole number", path)
		}
		fs.MaxNodes = int(f)
	}
	if fs.Governance, err = governance.ParsePolicy(m["governance"]); err != nil {
		return fs, fmt.Errorf("%s: %w", path, err)
	}
	if fs.NodeTokens, err = parseTokens("gateway.nodeTokens", m["nodeTokens"], false); err != nil {
		return fs, fmt.Errorf("%s: %w", path, err)
	}
	if fs.AgentTokens, err = parseTokens("gateway.agentTokens", m["agentTokens"], true); err != nil {
		return fs, fmt.Errorf("%s: %w", path, err)
	}
	if fs.Prompt, err = parsePrompt("gateway.prompt", m["prompt"], true); err != nil {
		return fs, fmt.Errorf("%s: %w", path, err)
	}
	if fs.Cluster, err = parseCluster(path, m["cluster"]); err != nil {
		return fs, fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch k {
		case "listen", "store", "poll", "tlsCert", "tlsKey", "tlsClientCA", "insecure", "nodeTokens", "agentTokens", "maxNodes", "governance", "prompt", "cluster":
		default:
			return fs, fmt.Errorf("%s: gateway.%s: unknown setting (known: listen, store, poll, tlsCert, tlsKey, tlsClientCA, insecure, nodeTokens, agentTokens, maxNodes, governance, prompt, cluster)", path, k)
		}
	}
	return fs, nil
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
