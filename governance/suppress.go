package governance

import "slices"

// Suppressed marks a finding the operator suppressed
// (skills.entries.<key>.suppress): it stays in every report, but counts
// toward neither score, verdict nor mode.
type Suppressed struct {
	Reason string `json:"reason"`
	// Expires is RFC 3339 in UTC; "" for never.
	Expires string `json:"expires,omitempty"`
}

// Suppress returns the report with each finding mark returns non-nil for
// marked suppressed, and score, band, verdict and mode derived again from
// the other findings (the declared capabilities still count). r itself is
// not changed: reports are shared by every agent's view. With no finding
// marked it returns r.
func (r *Report) Suppress(mark func(Finding) *Suppressed) *Report {
	var out *Report
	for i, f := range r.Findings {
		if s := mark(f); s != nil {
			if out == nil {
				cp := *r
				cp.Findings = slices.Clone(r.Findings)
				out = &cp
			}
			out.Findings[i].Suppressed = s
		}
	}
	if out == nil {
		return r
	}
	out.derive()
	return out
}

// derive sets score, band, verdict and mode from the findings that count
// (not suppressed), the declared capabilities, the signature (a trusted
// publisher's takes MitigationSigned off the score before the band is
// chosen) and requireSigned; the unscanned-files hold stays while a
// binary-file finding counts.
func (r *Report) derive() {
	counted := make([]Finding, 0, len(r.Findings))
	unscanned := false
	for _, f := range r.Findings {
		if f.Suppressed == nil {
			counted = append(counted, f)
			// A file not read is reported as a binary-file warn: while
			// one such finding counts, the unscanned hold stays.
			unscanned = unscanned || f.Rule == RuleBinaryFile
		}
	}
	r.Score = Score(counted, r.caps)
	if r.SignedBy != "" {
		r.Score = max(0, r.Score+MitigationSigned)
	}
	r.Band = BandOf(r.Score)
	r.Verdict = VerdictOf(counted)
	r.Mode = ModeOf(r.Band, r.Verdict, r.flagged)
	if r.Unscanned > 0 && unscanned {
		r.Mode = Stricter(r.Mode, ModeQuarantine)
	} else {
		r.Unscanned = 0
	}
	r.Unsigned = r.required && r.SignedBy == "" && r.Mode == ModeAllow
	if r.Unsigned {
		r.Mode = ModeQuarantine
	}
}

// HoldsAlone says whether a finding holds a skill by itself: a warn of a
// rule that stands for a combination a reviewer would not let through
// unread (it reaches the high band alone).
func HoldsAlone(f Finding) bool {
	r := ruleByID[f.Rule]
	return f.Severity == SeverityWarn && r != nil && r.Warn == ScoreHold
}
