package eligibility

import (
	"strconv"

	"github.com/skillgate/skillgate/governance"
)

// Reasons of the governance stage. The others are built from a finding or
// the score: "blocked by governance: <rule> at <file>:<line>", "blocked by
// governance: critical risk <score>", "quarantined by governance: <band>
// risk <score>".
const (
	ReasonOperatorBlock      = "blocked by governance: operator"
	ReasonOperatorQuarantine = "quarantined by governance: operator"
	// ReasonUnscanned: files of the directory were not read by the scanner
	// (over its caps, or unreadable), and the band alone would not hold it.
	ReasonUnscanned = "quarantined by governance: unscanned files"
)

// Governance is what the governance stage made of a skill: the scanner's
// report with the operator's decisions applied. It is the "governance"
// object of eval --json and GET /v1/agents/{id}/skills.
type Governance struct {
	Digest  string `json:"digest"`
	Score   int    `json:"score"`
	Band    string `json:"band"`
	Verdict string `json:"verdict"`
	// Mode is the effective mode: the scanner's, allow when Approved, then
	// tightened by the operator's skills.entries mode. In observe mode it
	// says what enforce would do.
	Mode     string               `json:"mode"`
	Approved bool                 `json:"approved"` // skills.entries approve names this digest
	Findings []governance.Finding `json:"findings"`

	// Scanned is the scanner's own mode, before approval and the operator.
	Scanned string `json:"-"`
}

// governanceStage applies the skill's governance report (nil when it was
// not scanned: gateway.governance.mode off) and the operator's decisions
// in skills.entries. Under enforce, quarantine and block exclude; under
// observe and off only the operator's own mode does, as an explicit
// decision, like enabled: false. always: true does not bypass it.
func governanceStage(p *Prepared, c *prepareState) string {
	pol := c.cfg.policy()
	scanned := governance.ModeAllow
	if c.report != nil && pol.Mode != governance.Off {
		r := c.report
		g := &Governance{Digest: r.Digest, Score: r.Score, Band: r.Band, Verdict: r.Verdict,
			Scanned: r.Mode, Findings: r.Findings}
		g.Approved = c.hasEntry && c.entry.Approve == r.Digest
		if !g.Approved && pol.Mode == governance.Enforce {
			scanned = r.Mode
		}
		g.Mode = r.Mode
		if g.Approved {
			g.Mode = governance.ModeAllow
		}
		g.Mode = governance.Stricter(g.Mode, c.entry.Mode)
		p.Gov = g
	}
	operator := c.entry.Mode // "" without an entry
	switch {
	case governance.ModeRank(operator) > governance.ModeRank(scanned):
		if operator == governance.ModeBlock {
			return ReasonOperatorBlock
		}
		return ReasonOperatorQuarantine
	case scanned == governance.ModeBlock:
		for _, f := range p.Gov.Findings {
			if f.Severity == governance.SeverityError {
				return "blocked by governance: " + f.Rule + " at " + f.File + ":" + strconv.Itoa(f.Line)
			}
		}
		return "blocked by governance: critical risk " + strconv.Itoa(p.Gov.Score)
	case scanned == governance.ModeQuarantine:
		if c.report.Unscanned > 0 && p.Gov.Band != governance.BandHigh {
			return ReasonUnscanned
		}
		return "quarantined by governance: " + p.Gov.Band + " risk " + strconv.Itoa(p.Gov.Score)
	}
	return ""
}

// policy returns the governance policy in force (the default without a
// config).
func (c *Config) policy() governance.Policy {
	if c == nil || c.Governance.Mode == "" {
		return governance.DefaultPolicy()
	}
	return c.Governance
}
