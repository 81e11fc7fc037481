package governance

import (
	"strconv"
	"strings"

	"github.com/skillgate/skillgate/publisher"
)

// How the gateway applies the scanner (gateway.governance.mode).
const (
	Enforce = "enforce" // a skill in quarantine or block is not offered (the default)
	Observe = "observe" // computed, reported and logged, but nothing is hidden
	Off     = "off"     // no scan
)

// Review values (gateway.governance.review).
const (
	ReviewOff      = "off"      // the scan decides (the default)
	ReviewRequired = "required" // content no operator approved is held, awaiting review
)

// Policy is the config file's gateway.governance object (package config
// reads it).
type Policy struct {
	Mode string // Enforce, Observe or Off; Enforce when not set
	// Review is ReviewOff or ReviewRequired ("": off). Reports do not
	// depend on it: the governance stage applies it.
	Review string
	Options
	// Publishers are gateway.governance.publishers, Trust their keys
	// (nil: none); RequireSigned quarantines what none of them signed.
	Publishers    []publisher.Publisher
	Trust         *publisher.Trust
	RequireSigned bool
}

// DefaultPolicy is the policy of a config without gateway.governance.
func DefaultPolicy() Policy { return Policy{Mode: Enforce, Options: Options{Flagged: FlaggedAllow}} }

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
	r.signed(in, p.Trust, p.RequireSigned)
	return &r
}

// Fingerprint identifies what a report made under the policy depends on;
// Off has its own (no reports).
func (p Policy) Fingerprint() string {
	if p.Mode == Off {
		return Off
	}
	fp := p.Options.Fingerprint()
	if len(p.Publishers) > 0 || p.RequireSigned {
		var b strings.Builder
		for _, pub := range p.Publishers {
			b.WriteString("\x00" + pub.Name + "\x00" + strings.Join(pub.Keys, "\x00"))
		}
		fp += "\x01" + strconv.FormatBool(p.RequireSigned) + b.String()
	}
	return fp
}
