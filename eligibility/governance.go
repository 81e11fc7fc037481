package eligibility

import (
	"slices"
	"strconv"
	"time"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/scanners"
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
	// ReasonAwaitingReview: gateway.governance.review is required and no
	// skills.entries approve lists the skill's digest.
	ReasonAwaitingReview = "quarantined by governance: awaiting review"
	// ReasonUnsigned: gateway.governance.requireSigned, and no trusted
	// publisher signed the content.
	ReasonUnsigned = "quarantined by governance: not signed by a trusted publisher"
)

// ScannerPending is the verdict reported for an external scanner that has
// not answered for the skill's content yet. A fail-closed one holds the
// skill meanwhile: "quarantined by governance: scanner <name> pending".
const ScannerPending = "pending"

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
	Mode     string `json:"mode"`
	Approved bool   `json:"approved"` // skills.entries approve names this digest
	// SignedBy names the trusted publisher whose key signed the content
	// (SKILL.sig); absent when none did.
	SignedBy string `json:"signedBy,omitempty"`
	// Reason says what holds the skill in Mode, as the stage's reason
	// would (also under observe, where nothing is enforced); absent for
	// allow.
	Reason   string               `json:"reason,omitempty"`
	Findings []governance.Finding `json:"findings"`
	// Scanners are the external scanners' answers, in config order
	// (absent without gateway.governance.scanners).
	Scanners []scanners.Result `json:"scanners,omitempty"`

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
	scanned := governance.ModeAllow // the scan's mode as enforced
	why := ""                       // what the scan's mode is told by
	if c.report != nil && pol.Mode != governance.Off {
		r := c.report
		if len(c.entry.Suppress) > 0 {
			r = r.Suppress(suppressor(c.entry.Suppress, c.cfg.now()))
		}
		g := &Governance{Digest: r.Digest, Score: r.Score, Band: r.Band, Verdict: r.Verdict,
			Scanned: r.Mode, Findings: r.Findings, SignedBy: r.SignedBy}
		g.Approved = c.hasEntry && slices.Contains(c.entry.Approve, r.Digest)
		g.Mode = r.Mode
		if c.cfg != nil && len(c.cfg.Scanners) > 0 {
			// A scanner never relaxes the built-in one: the strictest
			// effect wins, the built-in one on a tie.
			eff := externalScans(g, r, c)
			g.Mode, why = eff.Mode, eff.Reason
		}
		switch {
		case g.Approved:
			g.Mode = governance.ModeAllow
		case pol.Review == governance.ReviewRequired && g.Mode == governance.ModeAllow:
			// Zero trust: unreviewed content is held whatever the scan
			// says; a block stays a block.
			g.Mode, why = governance.ModeQuarantine, ReasonAwaitingReview
		}
		if why == "" || g.Mode == governance.ModeAllow {
			why = scanReason(r, g.Mode)
		}
		if pol.Mode == governance.Enforce {
			scanned = g.Mode
		}
		g.Reason = why
		if governance.ModeRank(c.entry.Mode) > governance.ModeRank(g.Mode) {
			g.Reason = operatorReason(c.entry)
		}
		g.Mode = governance.Stricter(g.Mode, c.entry.Mode)
		p.Gov = g
	}
	switch {
	case governance.ModeRank(c.entry.Mode) > governance.ModeRank(scanned):
		return operatorReason(c.entry)
	case scanned != governance.ModeAllow:
		return why
	}
	return ""
}

// externalScans reports each external scanner's answer for the skill's
// content in g and returns the strictest of their effects and the
// built-in scanner's (r's mode, g.Mode, with its reason). A scanner's findings are
// suppressed as "<scanner>:<rule>"; a failed one that is not fail-closed
// adds its scanner-failed warn to the findings, which holds nothing.
func externalScans(g *Governance, r *governance.Report, c *prepareState) scanners.Effect {
	now := c.cfg.now()
	sup := func(rule, file string, line int) bool {
		for i := range c.entry.Suppress {
			if c.entry.Suppress[i].Covers(rule, file, line, now) {
				return true
			}
		}
		return false
	}
	eff := scanners.Effect{Mode: g.Mode, Reason: scanReason(r, g.Mode)}
	g.Scanners = make([]scanners.Result, len(c.cfg.Scanners))
	for i := range c.cfg.Scanners {
		sc := &c.cfg.Scanners[i]
		res, ok := scanners.Result{}, false
		if c.cfg.ScanResult != nil {
			res, ok = c.cfg.ScanResult(g.Digest, sc)
		}
		var e scanners.Effect
		switch {
		case !ok:
			res = scanners.Result{Name: sc.Name, Verdict: ScannerPending, Findings: []scanners.Finding{}}
			e.Mode = governance.ModeAllow
			if sc.IsFailClosed() {
				e = scanners.Effect{Mode: governance.ModeQuarantine, Reason: "quarantined by governance: scanner " + sc.Name + " pending"}
			}
		default:
			e = res.Effect(sc.IsFailClosed(), sup)
			if e.Finding != nil {
				g.Findings = append(slices.Clip(g.Findings), *e.Finding)
			}
		}
		g.Scanners[i] = res
		eff = scanners.Strictest(eff, e)
	}
	return eff
}

// operatorReason is the reason of the operator's own mode.
func operatorReason(e Entry) string {
	reason := ReasonOperatorQuarantine
	if e.Mode == governance.ModeBlock {
		reason = ReasonOperatorBlock
	}
	if e.Reason != "" {
		reason += ": " + e.Reason
	}
	return reason
}

// scanReason says what holds a report (suppressions applied) in mode:
// its first counted error finding, or the finding or band behind a
// quarantine; "" for allow.
func scanReason(r *governance.Report, mode string) string {
	switch mode {
	case governance.ModeBlock:
		for _, f := range r.Findings {
			if f.Severity == governance.SeverityError && f.Suppressed == nil {
				return "blocked by governance: " + f.Rule + " at " + f.File + ":" + strconv.Itoa(f.Line)
			}
		}
		return "blocked by governance: critical risk " + strconv.Itoa(r.Score)
	case governance.ModeQuarantine:
		if r.Unsigned {
			return ReasonUnsigned
		}
		if r.Unscanned > 0 && r.Band != governance.BandHigh {
			return ReasonUnscanned
		}
		if f, ok := firstHold(r.Findings); ok {
			return "quarantined by governance: " + f.Rule + " at " + f.File + ":" + strconv.Itoa(f.Line)
		}
		return "quarantined by governance: " + r.Band + " risk " + strconv.Itoa(r.Score)
	}
	return ""
}

// firstHold returns the finding a quarantine is told by: the first
// counted warn of a rule that holds a skill by itself, else the first
// counted warn.
func firstHold(fs []governance.Finding) (governance.Finding, bool) {
	var first *governance.Finding
	for i, f := range fs {
		if f.Severity != governance.SeverityWarn || f.Suppressed != nil {
			continue
		}
		if governance.HoldsAlone(f) {
			return f, true
		}
		if first == nil {
			first = &fs[i]
		}
	}
	if first == nil {
		return governance.Finding{}, false
	}
	return *first, true
}

// suppressor marks the findings the entry's suppressions cover at now.
func suppressor(list []Suppression, now time.Time) func(governance.Finding) *governance.Suppressed {
	return func(f governance.Finding) *governance.Suppressed {
		for i := range list {
			if s := &list[i]; s.Covers(f.Rule, f.File, f.Line, now) {
				out := &governance.Suppressed{Reason: s.Reason}
				if !s.Expires.IsZero() {
					out.Expires = s.Expires.UTC().Format(time.RFC3339)
				}
				return out
			}
		}
		return nil
	}
}

// now is the time suppressions are judged at.
func (c *Config) now() time.Time {
	if c != nil && !c.Now.IsZero() {
		return c.Now
	}
	return time.Now()
}

// policy returns the governance policy in force (the default without a
// config).
func (c *Config) policy() governance.Policy {
	if c == nil || c.Governance.Mode == "" {
		return governance.DefaultPolicy()
	}
	return c.Governance
}
