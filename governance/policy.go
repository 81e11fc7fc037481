package governance

import (
	"fmt"
	"slices"
	"strings"
)

// How the gateway applies the scanner (gateway.governance.mode).
const (
	Enforce = "enforce" // a skill in quarantine or block is not offered (the default)
	Observe = "observe" // computed, reported and logged, but nothing is hidden
	Off     = "off"     // no scan
)

// Policy is the config file's gateway.governance object.
type Policy struct {
	Mode string // Enforce, Observe or Off; Enforce when not set
	Options
}

// DefaultPolicy is the policy of a config without gateway.governance.
func DefaultPolicy() Policy { return Policy{Mode: Enforce, Options: Options{Flagged: FlaggedAllow}} }

// ParsePolicy reads a decoded gateway.governance value (JSON-compatible;
// nil for none). Errors name the field under gateway.governance and what
// was expected.
func ParsePolicy(v any) (Policy, error) {
	p := DefaultPolicy()
	if v == nil {
		return p, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return p, fmt.Errorf("gateway.governance: must be an object with mode, allowedHosts and flagged")
	}
	for k := range m {
		if !slices.Contains([]string{"mode", "allowedHosts", "flagged"}, k) {
			return p, fmt.Errorf("gateway.governance.%s: unknown setting (known: mode, allowedHosts, flagged)", k)
		}
	}
	oneOf := func(key string, allowed ...string) (string, error) {
		x, ok := m[key]
		if !ok || x == nil {
			return "", nil
		}
		s, ok := x.(string)
		if !ok || !slices.Contains(allowed, s) {
			return "", fmt.Errorf("gateway.governance.%s: must be one of %q, got %v", key, allowed, x)
		}
		return s, nil
	}
	mode, err := oneOf("mode", Enforce, Observe, Off)
	if err != nil {
		return p, err
	}
	if mode != "" {
		p.Mode = mode
	}
	flagged, err := oneOf("flagged", FlaggedAllow, FlaggedQuarantine)
	if err != nil {
		return p, err
	}
	if flagged != "" {
		p.Flagged = flagged
	}
	if x, ok := m["allowedHosts"]; ok && x != nil {
		list, ok := x.([]any)
		if !ok {
			return p, fmt.Errorf("gateway.governance.allowedHosts: must be a list of host globs such as \"api.github.com\" or \"*.github.com\"")
		}
		for i, e := range list {
			s, ok := e.(string)
			if !ok || strings.TrimSpace(s) == "" || strings.ContainsAny(s, "/: ") {
				return p, fmt.Errorf("gateway.governance.allowedHosts[%d]: must be a host glob such as \"*.github.com\" (no scheme, port or path), got %v", i, e)
			}
			p.AllowedHosts = append(p.AllowedHosts, strings.ToLower(s))
		}
	}
	return p, nil
}

// Fingerprint identifies the options a report depends on: reports made
// under equal fingerprints are interchangeable.
func (o Options) Fingerprint() string {
	fl := o.Flagged
	if fl == "" {
		fl = FlaggedAllow
	}
	return fl + "\x00" + strings.Join(o.AllowedHosts, "\x00")
}

// Scan scans a skill directory under the policy: nil when the policy is
// Off, as the gateway and eval both leave a skill unscanned then.
func (p Policy) Scan(in *Input) *Report {
	if p.Mode == Off {
		return nil
	}
	r := Scan(in, p.Options)
	return &r
}

// Fingerprint identifies what a report made under the policy depends on;
// Off has its own (no reports).
func (p Policy) Fingerprint() string {
	if p.Mode == Off {
		return Off
	}
	return p.Options.Fingerprint()
}
