// Package node is the node agent library, what cmd/skillgate-node runs on
// an execution host: it gathers the host's facts, probes for the binaries
// and env-var names the gateway asks about (facts.go, path.go), and keeps
// one WebSocket connection to the gateway alive — connect, report, answer
// interest events, reconnect with backoff (client.go, backoff.go), over
// TLS for https:// and wss:// gateways (tls.go) — from a checked
// configuration (config.go).
//
// It never sends an env value, nor a name the gateway did not ask about.
// It speaks to the gateway only through protocol's frames, and so never
// imports gateway, store, catalog, eligibility, skill or an AWS package: the
// binary installed on every host links no storage code and no server.
// Besides the standard library it imports protocol, api (the gateway's
// error body), the WebSocket library, and of this module's internals only
// cli (the gateway URL and HuJSON rules shared with the command line) and
// version.
package node

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/internal/cli"
	"github.com/skillgate/skillgate/internal/version"
	"github.com/skillgate/skillgate/protocol"
)

// Version is the node agent's version, sent as "skillgate-node/<Version>"
// in connect: the binary's version (see internal/version).
var Version = version.String()

// DefaultRecheck is how often the node re-probes its binaries and env names.
const DefaultRecheck = 10 * time.Second

// MinRecheck is the shortest re-check interval accepted; shorter ones would
// only burn CPU on stat calls.
const MinRecheck = 10 * time.Millisecond

// ConnectPath is the gateway's WebSocket endpoint for nodes.
const ConnectPath = cli.ConnectPath

// Config configures a Client. Zero fields take the defaults listed.
type Config struct {
	// Gateway is the gateway's base URL: http://, https://, ws:// or wss://.
	// Required.
	Gateway string
	// ID is the node id. Default: os.Hostname().
	ID string
	// Roles are the host roles. Default: [execution].
	Roles []string
	// Capabilities are the capability ids. Default: the four baseline ones.
	Capabilities []string
	// Path is the list of absolute directories searched for binaries.
	// Default: DefaultPath().
	Path []string
	// Recheck is how often binaries and env names are re-probed. Default:
	// DefaultRecheck.
	Recheck time.Duration
	// Token is presented in connect. Empty means no token, which only a
	// gateway without tokens (listening on loopback) accepts.
	Token string
	// CAFile is a PEM file of the CA certificates that verify the
	// gateway's certificate, instead of the system's roots. CertFile and
	// KeyFile are the PEM files of the node's client certificate and key,
	// for a gateway that requires one (mTLS). They are read again at each
	// dial, and are only for https:// and wss:// gateway URLs.
	CAFile, CertFile, KeyFile string
	// MoveBack is how long a replica the node prefers to the one it is
	// connected to (an earlier one in ReplicaOrder) must answer its
	// /readyz with 200 before the node moves back to it, after a random
	// extra wait in [0, MoveBackWindow). Default: DefaultMoveBack; at
	// least MinMoveBack; negative: never move back.
	MoveBack time.Duration
	// MoveBackWindow spreads the moves back of many nodes: the extra
	// wait is drawn from [0, MoveBackWindow). Default:
	// DefaultMoveBackWindow; negative: no extra wait.
	MoveBackWindow time.Duration
	// Logger receives the client's logs. Default: slog.Default().
	Logger *slog.Logger
}

// ConfigError is an invalid configuration value. Field is the name of the
// config-file key it came from, which is also the flag's ("gateway", "id",
// "roles", "capabilities", "path", "recheck", "cert", "key"; "caFile" is
// --ca-file, "moveBack" --move-back), so that a caller can name the flag
// or the file.
type ConfigError struct {
	Field string
	Err   error
}

// Error implements the error interface.
func (e *ConfigError) Error() string { return e.Field + ": " + e.Err.Error() }

// Unwrap returns the underlying error.
func (e *ConfigError) Unwrap() error { return e.Err }

// withDefaults returns a copy of c with defaults filled in and every value
// checked, so that a misconfigured node fails at start instead of being
// refused by the gateway.
func (c Config) withDefaults() (Config, error) {
	if strings.TrimSpace(c.Gateway) == "" {
		return c, &ConfigError{"gateway", errors.New("is required (the gateway's base URL, e.g. http://127.0.0.1:7780)")}
	}
	if _, err := c.Gateways(); err != nil {
		return c, &ConfigError{"gateway", err}
	}
	for g := range strings.SplitSeq(c.Gateway, ",") {
		one := c
		one.Gateway = strings.TrimSpace(g)
		if err := one.checkTLS(); err != nil {
			return c, err
		}
	}
	if c.ID == "" {
		h, err := os.Hostname()
		if err != nil {
			return c, &ConfigError{"id", fmt.Errorf("not set and the hostname is unknown: %w", err)}
		}
		c.ID = h
	}
	if err := protocol.ValidateID(c.ID); err != nil {
		return c, &ConfigError{"id", err}
	}
	if len(c.Roles) == 0 {
		c.Roles = []string{protocol.RoleExecution}
	}
	if len(c.Capabilities) == 0 {
		c.Capabilities = slices.Clone(protocol.BaselineCapabilities)
	}
	if err := checkIdentity(c.ID, c.Roles, c.Capabilities); err != nil {
		return c, err
	}
	for _, d := range c.Path {
		if !filepath.IsAbs(d) {
			return c, &ConfigError{"path", fmt.Errorf("%q is not an absolute directory", d)}
		}
	}
	// An empty Path is left for New, which asks the login shell.
	c.Path = cleanPath(c.Path)
	switch {
	case c.Recheck == 0:
		c.Recheck = DefaultRecheck
	case c.Recheck < MinRecheck:
		return c, &ConfigError{"recheck", fmt.Errorf("%v is shorter than %v", c.Recheck, MinRecheck)}
	}
	switch {
	case c.MoveBack == 0:
		c.MoveBack = DefaultMoveBack
	case c.MoveBack > 0 && c.MoveBack < MinMoveBack:
		return c, &ConfigError{"moveBack", fmt.Errorf("%v is shorter than %v (0 turns moving back off)", c.MoveBack, MinMoveBack)}
	}
	if c.MoveBackWindow == 0 {
		c.MoveBackWindow = DefaultMoveBackWindow
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return c, nil
}

// checkIdentity validates roles and capabilities with the gateway's own rule
// (protocol.HostFacts.Validate) and attributes the error to its field.
func checkIdentity(id string, roles, caps []string) error {
	h := protocol.HostFacts{ID: id, OS: runtime.GOOS, Roles: roles, Capabilities: caps}
	err := h.Validate()
	if err == nil {
		return nil
	}
	msg := err.Error()
	field := "roles"
	if strings.HasPrefix(msg, "capabilities") {
		field = "capabilities"
	}
	return &ConfigError{field, err}
}

// CheckIdentity validates a node's roles and capabilities as the gateway
// will (the id is not checked). The error is a *ConfigError.
func CheckIdentity(roles, caps []string) error {
	return checkIdentity("x", roles, caps)
}

// ConnectURL turns the gateway's base URL into the WebSocket URL of the node
// endpoint: http → ws, https → wss, ws and wss kept, ConnectPath appended to
// the base path (a trailing slash is allowed). The query is kept. The rules
// are those of every --gateway (cli.ParseGateway).
func ConnectURL(base string) (string, error) {
	u, err := cli.ParseGateway(base)
	if err != nil {
		return "", err
	}
	return cli.ConnectURL(u), nil
}

// FileConfig is the node's HuJSON config file: an object with the same keys
// as the flags. Zero fields are unset.
type FileConfig struct {
	Gateway      string
	ID           string
	Roles        []string
	Capabilities []string
	Path         []string
	Recheck      time.Duration
	// MoveBack and MoveBackWindow (keys moveBack, moveBackWindow) are
	// durations as Config's; "0s" turns moving back, or its extra wait,
	// off (Set tells it from unset).
	MoveBack, MoveBackWindow time.Duration
	// TokenFile is absolute, or resolved against the config file's
	// directory, so that the file can sit next to its token.
	TokenFile string
	// CAFile, CertFile and KeyFile (keys caFile, cert, key) are resolved
	// like TokenFile.
	CAFile, CertFile, KeyFile string
	// Set records which keys the file set, by key name.
	Set map[string]bool
}

// LoadFile reads a HuJSON node config file. Keys: gateway, id, roles,
// capabilities, path, recheck ("10s"), moveBack ("30s"), moveBackWindow
// ("60s"), tokenFile, caFile, cert, key. roles, capabilities and
// path are lists of strings, or one string split like the flag value.
// Unknown keys are errors (a typo must not silently fall back to a
// default). Errors name the file and the key.
func LoadFile(name string) (FileConfig, error) {
	var fc FileConfig
	std, err := cli.ReadHuJSON(name)
	if err != nil {
		return fc, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(std, &m); err != nil || m == nil {
		return fc, fmt.Errorf("%s: must be one JSON object", name)
	}
	fc.Set = map[string]bool{}
	for _, key := range slices.Sorted(maps.Keys(m)) {
		raw := m[key]
		fail := func(format string, args ...any) (FileConfig, error) {
			return FileConfig{}, fmt.Errorf("%s: %s: %s", name, key, fmt.Sprintf(format, args...))
		}
		switch key {
		case "gateway", "id", "recheck", "moveBack", "moveBackWindow", "tokenFile", "caFile", "cert", "key":
			var s string
			if json.Unmarshal(raw, &s) != nil {
				return fail("must be a string")
			}
			if msg := fc.setString(name, key, s); msg != "" {
				return fail("%s", msg)
			}
		case "roles", "capabilities", "path":
			sep := ","
			if key == "path" {
				sep = string(os.PathListSeparator)
			}
			l, err := stringList(raw, sep)
			if err != nil {
				return fail("%v", err)
			}
			switch key {
			case "roles":
				fc.Roles = l
			case "capabilities":
				fc.Capabilities = l
			case "path":
				fc.Path = l
			}
		case "token":
			return fail("secrets do not belong in the config file; put the token in a file and set tokenFile, or use SKILLGATE_NODE_TOKEN")
		default:
			return fail("unknown key (expected gateway, id, roles, capabilities, path, recheck, moveBack, moveBackWindow, tokenFile, caFile, cert or key)")
		}
		fc.Set[key] = true
	}
	return fc, nil
}

// setString sets the string-valued key of a node config file, file
// paths resolved against the file's directory; it returns what is wrong
// with the value ("" when nothing).
func (fc *FileConfig) setString(name, key, s string) string {
	switch key {
	case "gateway":
		fc.Gateway = s
	case "id":
		fc.ID = s
	case "recheck":
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Sprintf("%q is not a positive duration (e.g. \"10s\")", s)
		}
		fc.Recheck = d
	case "moveBack", "moveBackWindow":
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return fmt.Sprintf("%q is not a duration of 0 or more (e.g. \"30s\"; \"0s\" turns it off)", s)
		}
		if key == "moveBack" {
			fc.MoveBack = d
		} else {
			fc.MoveBackWindow = d
		}
	case "tokenFile", "caFile", "cert", "key":
		if s != "" && !filepath.IsAbs(s) {
			s = filepath.Join(filepath.Dir(name), s)
		}
		switch key {
		case "tokenFile":
			fc.TokenFile = s
		case "caFile":
			fc.CAFile = s
		case "cert":
			fc.CertFile = s
		case "key":
			fc.KeyFile = s
		}
	}
	return ""
}

// stringList decodes a list of strings, or one string split at sep.
func stringList(raw json.RawMessage, sep string) ([]string, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return SplitList(s, sep), nil
	}
	var l []string
	if json.Unmarshal(raw, &l) != nil {
		return nil, errors.New("must be a list of strings or one string")
	}
	return l, nil
}

// SplitList splits a flag value at sep, trimming spaces and dropping empty
// items.
func SplitList(s, sep string) []string {
	var out []string
	for _, item := range strings.Split(s, sep) {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

// Gateways returns the WebSocket URLs of Gateway: one base URL, or several
// separated by commas (the replicas of a gateway), in the order given.
func (c Config) Gateways() ([]string, error) {
	var out []string
	for part := range strings.SplitSeq(c.Gateway, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return nil, fmt.Errorf("%q has an empty URL between its commas", c.Gateway)
		}
		u, err := ConnectURL(part)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	return out, nil
}
