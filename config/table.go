package config

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/ident"
	"github.com/skillgate/skillgate/scanners"
)

// Defaults of the gateway's settings that the table documents.
const (
	DefaultListen    = "127.0.0.1:7780"
	DefaultPoll      = 2 * time.Second
	DefaultMaxNodes  = 20000
	DefaultMaxChars  = 30000
	DefaultMaxSkills = 150
	// Long polls waiting at once, in all and per token (or address).
	DefaultMaxLongPolls         = 10000
	DefaultMaxLongPollsPerToken = 1000
	// The MCP endpoint's sessions: at once, and idle before they close.
	DefaultMCPMaxSessions = 1000
	DefaultMCPIdleTimeout = 10 * time.Minute
)

// Host hints of gateway.prompt.hosts.
const (
	HostsNone  = "none"
	HostsCount = "count"
	HostsNames = "names"
)

// Type is the JSON type a setting's value must have.
type Type int

// The types of settings.
const (
	String       Type = iota
	Bool              // true or false
	Int               // a whole number (Min and Max bound it)
	Duration          // a string holding a Go duration such as "2s"
	Strings           // an array of strings
	TokenMap          // an object of id → non-empty string
	Object            // an object, kept as it is for another stage to read
	Objects           // an array of objects (each one is the object at Path + "[]")
	StringOrList      // a string, or an array of strings (decoded as []string)
)

// Apply says when a changed setting takes effect.
type Apply string

const (
	Reload  Apply = "reload"  // a reload (file change or SIGHUP) applies it
	Restart Apply = "restart" // read at start; a change is logged and waits for a restart
)

// Setting is one key skillgate reads. Path is dotted from the root; a
// segment "<id>" stands for any agent id, "<key>" for any skills.entries
// key, and a trailing "[]" for each element of an array of objects.
type Setting struct {
	Path string
	Type Type
	// Default is the value when the key is absent: JSON when it is a
	// literal value ("2s" quoted, 30000), else a description ("the host
	// name"); "" for none.
	Default string
	Apply   Apply
	Flag    string // the `skillgate serve` flag that wins over it, if any
	Doc     string
	Enum    []string // the allowed values of a String setting
	Min     int      // an Int's bounds (Max 0: none)
	Max     int
	// OpenClaw marks a key OpenClaw documents that skillgate also reads.
	OpenClaw bool
	// check validates the decoded value (string, bool, int, time.Duration,
	// []string or map[string]string) after the type check; its error
	// completes "<path>: ".
	check func(v any) error
	// set stores the checked value; keys are the concrete values of the
	// path's "<id>", "<key>" and "[]" segments, in order.
	set func(f *File, keys []string, v any)
}

// object is an object of the file: its known keys are the settings and
// objects below it. Owned objects are skillgate's alone, and an unknown key
// in them is refused; in the others it is kept unless it looks like a typo.
type object struct {
	Path  string
	Owned bool
	Doc   string
	// wild is the pattern segment ("<id>", "<key>") standing for the keys
	// not known by name; "" when the object has none.
	wild string
	// required are the keys each element of an array of these objects
	// must set, with why.
	required []requiredKey
}

type requiredKey struct{ key, msg string }

// objects are the objects of the file the walker descends into.
var objects = []object{
	{Path: "", Doc: "the root: the operator's; requires.config paths resolve against it"},
	{Path: "gateway", Doc: "the gateway's own settings (shared with OpenClaw's gateway object)"},
	{Path: "gateway.prompt", Owned: true, Doc: "the prompt block's budget and host hint"},
	{Path: "gateway.governance", Owned: true, Doc: "how the governance scanner is applied"},
	{Path: "gateway.governance.scanners[]", Owned: true, Doc: "one external scanner",
		required: []requiredKey{{"name", "a scanner needs a name"}, {"exec", "a scanner needs exec: its program's absolute path and arguments"}}},
	{Path: "gateway.governance.publishers[]", Owned: true, Doc: "one trusted publisher of signed skills",
		required: []requiredKey{{"name", "a publisher needs a name"}, {"keys", "a publisher needs keys"}}},
	{Path: "gateway.cluster", Owned: true, Doc: "gateway replicas sharing the fleet over NATS JetStream"},
	{Path: "gateway.mcp", Owned: true, Doc: "the MCP endpoint (/mcp): its sessions' bounds"},
	{Path: "agents", wild: "<id>", Doc: "per-agent settings: skillgate's agents.<id>, OpenClaw's defaults and list"},
	{Path: "agents.<id>", Doc: "one agent's settings, keyed by its id"},
	{Path: "agents.<id>.prompt", Owned: true, Doc: "the agent's own budget"},
	{Path: "agents.<id>.skills", Owned: true, Doc: "the agent's skill scope as globs"},
	{Path: "agents.defaults", Doc: "OpenClaw's defaults of every agent"},
	{Path: "agents.list[]", Doc: "one agent of OpenClaw's agent list",
		required: []requiredKey{{"id", "an agent of agents.list needs an id"}}},
	{Path: "agents.entries", wild: "<id>", Doc: "OpenClaw's agents keyed by id (2026.8 on)"},
	{Path: "agents.entries.<id>", Doc: "one agent of OpenClaw's keyed agents"},
	{Path: "skills", Doc: "skill policy (shared with OpenClaw's skills object)"},
	{Path: "skills.limits", Doc: "OpenClaw's skill limits"},
	{Path: "skills.entries", wild: "<key>", Doc: "per-skill policy, keyed by skill name, directory or location"},
	{Path: "skills.entries.<key>", Doc: "one skill's policy"},
	{Path: "skills.entries.<key>.suppress[]", Owned: true, Doc: "one suppressed governance finding",
		required: []requiredKey{{"rule", "a suppression needs the rule it suppresses"},
			{"reason", "a suppression needs a reason (why the finding is not a risk here)"}}},
}

// Settings is the table: every setting skillgate reads, in the order the
// documentation lists them.
var Settings = []Setting{
	// gateway
	{Path: "gateway.listen", Type: String, Default: `"` + DefaultListen + `"`, Apply: Restart, Flag: "listen",
		Doc: "address the HTTP API and node WebSockets listen on",
		set: func(f *File, _ []string, v any) { f.Gateway.Listen = v.(string) }},
	{Path: "gateway.store", Type: String, Apply: Restart, Flag: "store",
		Doc: "where skills are read from: a directory, or s3://BUCKET?endpoint=…&region=…",
		set: func(f *File, _ []string, v any) { f.Gateway.Store = v.(string) }},
	{Path: "gateway.poll", Type: Duration, Default: `"2s"`, Apply: Restart, Flag: "poll",
		Doc: "how often the store and this file are polled for changes", check: positiveDuration,
		set: func(f *File, _ []string, v any) { f.Gateway.Poll = v.(time.Duration) }},
	{Path: "gateway.insecure", Type: Bool, Default: "false", Apply: Reload, Flag: "insecure",
		Doc: "allow listening beyond loopback without tokens",
		set: func(f *File, _ []string, v any) { f.Gateway.Insecure = v.(bool) }},
	{Path: "gateway.maxNodes", Type: Int, Min: 1, Default: "20000", Apply: Reload,
		Doc: "nodes connected to this replica at once; connects past it are refused with 1013",
		set: func(f *File, _ []string, v any) { f.Gateway.MaxNodes = v.(int) }},
	{Path: "gateway.maxLongPolls", Type: Int, Min: 1, Max: 1 << 20, Default: "10000", Apply: Reload,
		Doc: "long polls (prompt?wait=) waiting at once; more are answered 429 (also bounded by half the descriptors left)",
		set: func(f *File, _ []string, v any) { f.Gateway.MaxLongPolls = v.(int) }},
	{Path: "gateway.maxLongPollsPerToken", Type: Int, Min: 1, Max: 1 << 20, Default: "1000", Apply: Reload,
		Doc: "long polls waiting at once per bearer token (per source address without tokens); more are answered 429",
		set: func(f *File, _ []string, v any) { f.Gateway.MaxLongPollsPerToken = v.(int) }},
	{Path: "gateway.nodeTokens", Type: TokenMap, Apply: Reload,
		Doc: "per-node tokens: node id → token, or \"sha256:<hex>\" of it; binds the id", check: checkTokens(false),
		set: func(f *File, _ []string, v any) { f.Gateway.NodeTokens = v.(map[string]string) }},
	{Path: "gateway.agentTokens", Type: TokenMap, Apply: Reload,
		Doc: "per-agent bearer tokens: agent id → token, or \"sha256:<hex>\" of it; each reads only its agent", check: checkTokens(true),
		set: func(f *File, _ []string, v any) { f.Gateway.AgentTokens = v.(map[string]string) }},
	{Path: "gateway.tlsCert", Type: String, Apply: Restart, Flag: "tls-cert",
		Doc: "PEM certificate (with chain) to serve HTTPS and WSS; relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.TLSCert = f.rel(v.(string)) }},
	{Path: "gateway.tlsKey", Type: String, Apply: Restart, Flag: "tls-key",
		Doc: "PEM key of gateway.tlsCert; relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.TLSKey = f.rel(v.(string)) }},
	{Path: "gateway.tlsClientCA", Type: String, Apply: Restart, Flag: "tls-client-ca",
		Doc: "PEM CAs that node client certificates must chain to (mTLS); relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.TLSClientCA = f.rel(v.(string)) }},

	// gateway.prompt
	{Path: "gateway.prompt.maxChars", Type: Int, Min: 1, Max: 1 << 30, Default: "30000", Apply: Reload,
		Doc: "bytes of the whole block (default: skills.limits.maxSkillsPromptChars when set)",
		set: func(f *File, _ []string, v any) { f.Gateway.Prompt.MaxChars, f.maxCharsSet = v.(int), true }},
	{Path: "gateway.prompt.maxSkills", Type: Int, Min: 1, Max: 1 << 30, Default: "150", Apply: Reload,
		Doc: "skills in the block",
		set: func(f *File, _ []string, v any) { f.Gateway.Prompt.MaxSkills = v.(int) }},
	{Path: "gateway.prompt.hosts", Type: String, Enum: []string{HostsNone, HostsCount, HostsNames}, Default: `"` + HostsNone + `"`, Apply: Reload,
		Doc: "host hint after each entry with host requirements",
		set: func(f *File, _ []string, v any) { f.Gateway.Prompt.Hosts = v.(string) }},

	// gateway.governance
	{Path: "gateway.governance.mode", Type: String, Enum: []string{governance.Enforce, governance.Observe, governance.Off}, Default: `"` + governance.Enforce + `"`, Apply: Reload,
		Doc: "enforce: held skills are not offered; observe: reported only; off: no scan",
		set: func(f *File, _ []string, v any) { f.Gateway.Governance.Mode = v.(string) }},
	{Path: "gateway.governance.allowedHosts", Type: Strings, Apply: Reload,
		Doc: "host globs that are not network-egress findings", check: checkHostGlobs,
		set: func(f *File, _ []string, v any) {
			hosts := v.([]string)
			for i := range hosts {
				hosts[i] = strings.ToLower(hosts[i])
			}
			f.Gateway.Governance.AllowedHosts = hosts
		}},
	{Path: "gateway.governance.flagged", Type: String, Enum: []string{governance.FlaggedAllow, governance.FlaggedQuarantine}, Default: `"` + governance.FlaggedAllow + `"`, Apply: Reload,
		Doc: "what a flagged verdict does",
		set: func(f *File, _ []string, v any) { f.Gateway.Governance.Flagged = v.(string) }},
	{Path: "gateway.governance.review", Type: String, Enum: []string{governance.ReviewOff, governance.ReviewRequired}, Default: `"` + governance.ReviewOff + `"`, Apply: Reload,
		Doc: "required: a skill whose content no skills.entries approve lists is held, awaiting review",
		set: func(f *File, _ []string, v any) { f.Gateway.Governance.Review = v.(string) }},
	{Path: "gateway.governance.scanners", Type: Objects, Apply: Reload,
		Doc: "external scanners run on each new skill content; a scanner never relaxes the built-in one"},
	{Path: "gateway.governance.scanners[].name", Type: String, Apply: Reload,
		Doc: "the scanner's name, in reports, reasons and suppressions (<name>:<rule>)",
		set: func(f *File, k []string, v any) { f.scanner(k[0]).Name = v.(string) }},
	{Path: "gateway.governance.scanners[].exec", Type: Strings, Apply: Reload,
		Doc: "the program's absolute path and its arguments; the argument \"{dir}\" is the skill directory's read-only copy",
		set: func(f *File, k []string, v any) { f.scanner(k[0]).Exec = v.([]string) }},
	{Path: "gateway.governance.scanners[].timeout", Type: Duration, Default: `"30s"`, Apply: Reload,
		Doc: "how long a run may take; past it the run failed",
		set: func(f *File, k []string, v any) { f.scanner(k[0]).Timeout = v.(time.Duration) }},
	{Path: "gateway.governance.scanners[].failClosed", Type: Bool, Default: "true", Apply: Reload,
		Doc: "true: a failed run quarantines the skill; false: it is a warn finding (scanner-failed)",
		set: func(f *File, k []string, v any) { b := v.(bool); f.scanner(k[0]).FailClosed = &b }},
	{Path: "gateway.governance.scanners[].format", Type: String, Enum: []string{scanners.FormatVerdict, scanners.FormatSARIF}, Default: `"` + scanners.FormatVerdict + `"`, Apply: Reload,
		Doc: "the answer's format on stdout: a verdict object, or SARIF 2.1.0",
		set: func(f *File, k []string, v any) { f.scanner(k[0]).Format = v.(string) }},
	{Path: "gateway.governance.scanners[].passEnv", Type: Strings, Apply: Reload,
		Doc: "environment variables passed to the scanner besides PATH",
		set: func(f *File, k []string, v any) { f.scanner(k[0]).PassEnv = v.([]string) }},
	{Path: "gateway.governance.scanConcurrency", Type: Int, Min: 1, Max: 1024, Default: "2", Apply: Restart,
		Doc: "external scanner runs at once",
		set: func(f *File, _ []string, v any) { f.Gateway.ScanConcurrency = v.(int) }},
	{Path: "gateway.governance.publishers", Type: Objects, Apply: Reload,
		Doc: "trusted publishers: a SKILL.sig by one of their keys lowers the score by 10 and reports signedBy"},
	{Path: "gateway.governance.publishers[].name", Type: String, Apply: Reload,
		Doc: "the publisher's name, reported as signedBy",
		set: func(f *File, k []string, v any) { f.publisher(k[0]).Name = v.(string) }},
	{Path: "gateway.governance.publishers[].keys", Type: Strings, Apply: Reload,
		Doc: "its SSH public keys, one authorized_keys line each (ed25519, ECDSA, RSA of 2048 bits or more)",
		set: func(f *File, k []string, v any) { f.publisher(k[0]).Keys = v.([]string) }},
	{Path: "gateway.governance.requireSigned", Type: Bool, Default: "false", Apply: Reload,
		Doc: "true: a skill no trusted publisher signed is quarantined",
		set: func(f *File, _ []string, v any) { f.Gateway.Governance.RequireSigned = v.(bool) }},

	// gateway.cluster
	{Path: "gateway.cluster.url", Type: String, Apply: Restart, Flag: "cluster",
		Doc: "NATS server URLs, comma-separated; none: no cluster",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.URL = v.(string) }},
	{Path: "gateway.cluster.replica", Type: String, Default: "the host name", Apply: Restart, Flag: "replica",
		Doc: "this replica's name", check: func(v any) error {
			if s := v.(string); s != "" {
				return cluster.ValidateReplica(s)
			}
			return nil
		},
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.Replica = v.(string) }},
	{Path: "gateway.cluster.bucket", Type: String, Default: `"` + cluster.DefaultBucket + `"`, Apply: Restart,
		Doc: "the JetStream key-value bucket of node records", check: checkBucket,
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.Bucket = v.(string) }},
	{Path: "gateway.cluster.ttl", Type: Duration, Default: `"10s"`, Apply: Restart,
		Doc: "how long a replica's nodes stay counted elsewhere without its heartbeat, written every ttl/3 (at least 1s)", check: func(v any) error {
			if v.(time.Duration) < cluster.MinTTL {
				return fmt.Errorf("must be a duration of at least %v, like \"10s\"", cluster.MinTTL)
			}
			return nil
		},
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.TTL = v.(time.Duration) }},
	{Path: "gateway.cluster.secretFile", Type: String, Apply: Restart, Flag: "cluster-secret-file",
		Doc: "file holding the cluster secret that signs every record (the same on every replica, at least 32 bytes; else $SKILLGATE_CLUSTER_SECRET; required with a cluster); relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.SecretFile = f.rel(v.(string)) }},
	{Path: "gateway.cluster.maxRemoteNodes", Type: Int, Min: 1, Max: cluster.MaxRemoteLimit, Default: fmt.Sprint(cluster.DefaultMaxRemote), Apply: Restart,
		Doc: "other replicas' nodes held at most; records of new ones past it are refused and counted",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.MaxRemote = v.(int) }},
	{Path: "gateway.cluster.creds", Type: String, Apply: Restart, Doc: "NATS creds file; relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.Creds = f.rel(v.(string)) }},
	{Path: "gateway.cluster.nkey", Type: String, Apply: Restart, Doc: "NATS nkey seed file; relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.NKey = f.rel(v.(string)) }},
	{Path: "gateway.cluster.ca", Type: String, Apply: Restart, Doc: "CA file of tls:// NATS servers; relative to this file",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.CA = f.rel(v.(string)) }},
	{Path: "gateway.cluster.cert", Type: String, Apply: Restart, Doc: "client certificate for NATS (with gateway.cluster.key)",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.Cert = f.rel(v.(string)) }},
	{Path: "gateway.cluster.key", Type: String, Apply: Restart, Doc: "client key for NATS (with gateway.cluster.cert)",
		set: func(f *File, _ []string, v any) { f.Gateway.Cluster.Key = f.rel(v.(string)) }},

	// gateway.mcp
	{Path: "gateway.mcp.maxSessions", Type: Int, Min: 1, Max: 1 << 20, Default: "1000", Apply: Reload,
		Doc: "MCP sessions open at once; a new one past it is answered 429",
		set: func(f *File, _ []string, v any) { f.Gateway.MCP.MaxSessions = v.(int) }},
	{Path: "gateway.mcp.idleTimeout", Type: Duration, Default: `"10m"`, Apply: Reload,
		Doc: "an MCP session without a request (or an open notification stream) for this long is closed (at least 1s)", check: func(v any) error {
			if v.(time.Duration) < time.Second {
				return errors.New("must be a duration of at least 1s, like \"10m\"")
			}
			return nil
		},
		set: func(f *File, _ []string, v any) { f.Gateway.MCP.IdleTimeout = v.(time.Duration) }},

	// agents (skillgate's form)
	{Path: "agents.<id>.prompt.maxChars", Type: Int, Min: 1, Max: 1 << 30, Default: "gateway.prompt.maxChars", Apply: Reload,
		Doc: "the agent's block budget in bytes",
		set: func(f *File, k []string, v any) { f.agent(k[0], "agents."+k[0]).Prompt.MaxChars = v.(int) }},
	{Path: "agents.<id>.prompt.maxSkills", Type: Int, Min: 1, Max: 1 << 30, Default: "gateway.prompt.maxSkills", Apply: Reload,
		Doc: "the agent's skill count budget",
		set: func(f *File, k []string, v any) { f.agent(k[0], "agents."+k[0]).Prompt.MaxSkills = v.(int) }},
	{Path: "agents.<id>.skills", Type: Strings, Default: "agents.defaults.skills", Apply: Reload,
		Doc: "as a list: the names of the skills the agent may be offered ([]: none), as OpenClaw's lists", check: checkNames,
		set: func(f *File, k []string, v any) {
			f.agent(k[0], "agents."+k[0]).Skills = Scope{Names: v.([]string), Listed: true, Set: true}
		}},
	{Path: "agents.<id>.skills.allow", Type: Strings, Default: "every skill", Apply: Reload,
		Doc: "globs of the skill names or directories the agent may be offered", check: checkGlobs,
		set: func(f *File, k []string, v any) {
			sc := &f.agent(k[0], "agents."+k[0]).Skills
			sc.Allow, sc.Set = v.([]string), true
		}},
	{Path: "agents.<id>.skills.deny", Type: Strings, Apply: Reload,
		Doc: "globs of skills the agent is never offered (deny wins)", check: checkGlobs,
		set: func(f *File, k []string, v any) {
			sc := &f.agent(k[0], "agents."+k[0]).Skills
			sc.Deny, sc.Set = v.([]string), true
		}},

	// agents (OpenClaw's form)
	{Path: "agents.defaults.skills", Type: Strings, Default: "every skill", Apply: Reload, OpenClaw: true,
		Doc: "skill names every agent without its own list may be offered ([]: none)", check: checkNames,
		set: func(f *File, _ []string, v any) { f.DefaultSkills, f.HasDefaultSkills = v.([]string), true }},
	{Path: "agents.list", Type: Objects, Apply: Reload, OpenClaw: true,
		Doc: "OpenClaw's agent list"},
	{Path: "agents.list[].id", Type: String, Apply: Reload, OpenClaw: true,
		Doc: "the agent's id (required)", check: func(v any) error {
			if err := ident.Validate(v.(string)); err != nil {
				return fmt.Errorf("agent id %v", err)
			}
			return nil
		},
		set: func(f *File, k []string, v any) { f.listID[k[0]] = v.(string) }},
	{Path: "agents.list[].skills", Type: Strings, Default: "agents.defaults.skills", Apply: Reload, OpenClaw: true,
		Doc: "skill names the agent may be offered ([]: none)", check: checkNames,
		set: func(f *File, k []string, v any) { f.listSkills[k[0]] = v.([]string) }},
	{Path: "agents.entries.<id>.skills", Type: Strings, Default: "agents.defaults.skills", Apply: Reload, OpenClaw: true,
		Doc: "skill names the agent may be offered ([]: none)", check: checkNames,
		set: func(f *File, k []string, v any) { f.keyedSkills[k[0]] = v.([]string) }},

	// skills
	{Path: "skills.limits.maxSkillsPromptChars", Type: Int, Min: 1, Max: 1 << 30, Apply: Reload, OpenClaw: true,
		Doc: "the default of gateway.prompt.maxChars",
		set: func(f *File, _ []string, v any) { f.limitChars = v.(int) }},
	{Path: "skills.entries.<key>.enabled", Type: Bool, Default: "true", Apply: Reload, OpenClaw: true,
		Doc: "false: the skill is never offered (stage config)",
		set: func(f *File, k []string, v any) { b := v.(bool); f.entry(k[0]).Enabled = &b }},
	{Path: "skills.entries.<key>.always", Type: Bool, Apply: Reload,
		Doc: "overrides the frontmatter's always",
		set: func(f *File, k []string, v any) { b := v.(bool); f.entry(k[0]).Always = &b }},
	{Path: "skills.entries.<key>.requires", Type: Object, Apply: Reload,
		Doc: "overrides the frontmatter's requirements field by field",
		set: func(f *File, k []string, v any) { f.entry(k[0]).Requires = v }},
	{Path: "skills.entries.<key>.priority", Type: Int, Min: -1000000, Max: 1000000, Default: "0", Apply: Reload,
		Doc: "order in the prompt budget: higher first",
		set: func(f *File, k []string, v any) { f.entry(k[0]).Priority = v.(int) }},
	{Path: "skills.entries.<key>.approve", Type: StringOrList, Apply: Reload,
		Doc: "governance digests \"sha256:<64 hex>\" (one, or a list): exactly that content is allowed", check: checkDigests,
		set: func(f *File, k []string, v any) { f.entry(k[0]).Approve = v.([]string) }},
	{Path: "skills.entries.<key>.mode", Type: String, Enum: []string{governance.ModeQuarantine, governance.ModeBlock}, Apply: Reload,
		Doc: "the operator's governance mode: only tightens",
		set: func(f *File, k []string, v any) { f.entry(k[0]).Mode = v.(string) }},
	{Path: "skills.entries.<key>.reason", Type: String, Apply: Reload,
		Doc: "why the operator set mode (skillgate governance hold writes it)",
		set: func(f *File, k []string, v any) { f.entry(k[0]).Reason = v.(string) }},
	{Path: "skills.entries.<key>.suppress", Type: Objects, Apply: Reload,
		Doc: "governance findings that do not count: reported, but not toward score, verdict or mode"},
	{Path: "skills.entries.<key>.suppress[].rule", Type: String, Apply: Reload,
		Doc: "the finding's rule (an external scanner's as \"<scanner>:<rule>\"); alone it covers every finding of the rule", check: nonEmpty,
		set: func(f *File, k []string, v any) { f.entry(k[0]).suppression(k[1]).Rule = v.(string) }},
	{Path: "skills.entries.<key>.suppress[].file", Type: String, Apply: Reload,
		Doc: "narrows it to findings in this file (relative to the skill directory)",
		set: func(f *File, k []string, v any) { f.entry(k[0]).suppression(k[1]).File = v.(string) }},
	{Path: "skills.entries.<key>.suppress[].line", Type: Int, Min: 1, Max: 1 << 30, Apply: Reload,
		Doc: "narrows it to findings at this line",
		set: func(f *File, k []string, v any) { f.entry(k[0]).suppression(k[1]).Line = v.(int) }},
	{Path: "skills.entries.<key>.suppress[].reason", Type: String, Apply: Reload,
		Doc: "why the finding is not a risk here (required)", check: nonEmpty,
		set: func(f *File, k []string, v any) { f.entry(k[0]).suppression(k[1]).Reason = v.(string) }},
	{Path: "skills.entries.<key>.suppress[].expires", Type: String, Apply: Reload,
		Doc:   "an RFC 3339 date-time, or a date (the end of that day, UTC): after it the finding counts again",
		check: func(v any) error { _, err := ParseExpiry(v.(string)); return err },
		set: func(f *File, k []string, v any) {
			t, _ := ParseExpiry(v.(string))
			f.entry(k[0]).suppression(k[1]).Expires = t
		}},
	{Path: "skills.entries.<key>.version", Type: String, Apply: Reload,
		Doc: "a semver constraint (\">=1.2.0 <2\", \"^1.4\"; v optional) the skill's version must satisfy, else it is not offered (stage config)", check: checkConstraint,
		set: func(f *File, k []string, v any) {
			e := f.entry(k[0])
			e.Version = v.(string)
			e.VersionConstraint, _ = semver.NewConstraint(v.(string))
		}},
}

func positiveDuration(v any) error {
	if v.(time.Duration) <= 0 {
		return errors.New("must be a positive duration like \"2s\"")
	}
	return nil
}

func checkTokens(agentIDs bool) func(v any) error {
	return func(v any) error {
		for _, id := range slices.Sorted(maps.Keys(v.(map[string]string))) {
			tok := v.(map[string]string)[id]
			if agentIDs {
				if err := ident.Validate(id); err != nil {
					return &keyError{key: id, err: fmt.Errorf("agent id %v", err)}
				}
			}
			if h, ok := strings.CutPrefix(tok, "sha256:"); ok {
				if b, err := hex.DecodeString(h); err != nil || len(b) != sha256.Size {
					return &keyError{key: id, err: errors.New("\"sha256:\" must be followed by the 64 hex digits of the token's SHA-256 (e.g. printf %s \"$TOKEN\" | sha256sum)")}
				}
				v.(map[string]string)[id] = "sha256:" + strings.ToLower(h)
			}
		}
		return nil
	}
}

// keyError is a problem of one key of a map setting: the walker adds the
// key to the path.
type keyError struct {
	key string
	err error
}

func (e *keyError) Error() string { return e.key + ": " + e.err.Error() }

// indexError is a problem of one element of a list setting.
type indexError struct {
	i   int
	err error
}

func (e *indexError) Error() string { return fmt.Sprintf("[%d]: %v", e.i, e.err) }

func checkHostGlobs(v any) error {
	for i, s := range v.([]string) {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, "/: ") {
			return &indexError{i, fmt.Errorf("must be a host glob such as \"*.github.com\" (no scheme, port or path), got %q", s)}
		}
	}
	return nil
}

func checkGlobs(v any) error {
	for i, g := range v.([]string) {
		if g == "" {
			return &indexError{i, errors.New("must be a non-empty glob string")}
		}
		if _, err := path.Match(g, ""); err != nil {
			return &indexError{i, fmt.Errorf("%q does not compile: %v", g, err)}
		}
	}
	return nil
}

func checkNames(v any) error {
	for i, n := range v.([]string) {
		if strings.TrimSpace(n) == "" {
			return &indexError{i, errors.New("must be a skill name, not empty")}
		}
	}
	return nil
}

// checkDigests checks approve's digests: one, or a list.
func checkDigests(v any) error {
	list := v.([]string)
	for i, d := range list {
		if err := CheckDigest(d); err != nil {
			if len(list) == 1 {
				return err // a string, or a list of one: no index to name
			}
			return &indexError{i, err}
		}
	}
	return nil
}

func checkConstraint(v any) error {
	if _, err := semver.NewConstraint(v.(string)); err != nil {
		return fmt.Errorf("must be a semver constraint such as \">=1.2.0 <2\" or \"^1.4\", got %q", v.(string))
	}
	return nil
}

// CheckDigest checks a governance digest as approve takes it.
func CheckDigest(d string) error {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	valid := ok && len(hexPart) == 64
	for _, c := range hexPart {
		valid = valid && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f')
	}
	if !valid {
		return errors.New("must be a governance digest \"sha256:\" followed by 64 lowercase hex digits (copy it from eval --json or GET /v1/governance)")
	}
	return nil
}

func nonEmpty(v any) error {
	if strings.TrimSpace(v.(string)) == "" {
		return errors.New("must not be empty")
	}
	return nil
}

// ParseExpiry reads a suppression's expiry: an RFC 3339 date-time, or a
// date YYYY-MM-DD, which stands for the end of that day in UTC (the
// suppression applies through the whole day, and stops at the next
// midnight UTC).
func ParseExpiry(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d.AddDate(0, 0, 1), nil
	}
	return time.Time{}, fmt.Errorf("must be an RFC 3339 date-time (2027-01-31T18:00:00Z) or a date (2027-01-31), got %q", s)
}

func checkBucket(v any) error {
	name := v.(string)
	ok := name != "" && len(name) <= 64
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok = ok && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_')
	}
	if !ok {
		return errors.New("a bucket name is 1 to 64 letters, digits, - and _")
	}
	return nil
}

// rel resolves a file setting against the config file's directory.
func (f *File) rel(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(filepath.Dir(f.Name), p)
}
