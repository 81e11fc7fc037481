package scanners

import (
	"strconv"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/publisher"
)

// RuleFailed is the rule of the warn finding a failed scanner leaves when
// it is not fail-closed (Effect.Finding).
const RuleFailed = "scanner-failed"

// RuleName is the name an external scanner's rule goes by outside its
// Result, for suppressions and logs: "<scanner>:<rule>" ("yara:clawhavoc_c2").
func RuleName(scanner, rule string) string { return scanner + ":" + rule }

// Suppressed reports whether a finding no longer counts. rule is the
// finding's RuleName ("<scanner>:<rule>"), file and line the finding's.
type Suppressed func(rule, file string, line int) bool

// Effect is what one scanner's Result does to a skill's governance mode.
// The gateway combines it with the built-in scanner's mode and the other
// scanners' effects, the strictest winning: a scanner never relaxes
// another (Strictest).
type Effect struct {
	Mode   string // governance.ModeAllow, ModeQuarantine or ModeBlock
	Reason string // the governance stage's reason when Mode is not allow, else ""
	// Finding, for a failed scanner that is not fail-closed, is the warn
	// finding of rule RuleFailed saying why ("scanner yara failed: timed
	// out after 30s"): it is reported and does not hold the skill.
	Finding *governance.Finding
}

// Effect maps the Result to a governance mode and reason, failClosed
// being the scanner's Config.IsFailClosed and suppressed (may be nil) the
// skill's suppressions.
//
//   - block → block, reason "blocked by governance: scanner <name>: <rule>
//     at <file>:<line>"; warn → quarantine, reason "quarantined by
//     governance: scanner <name>: <rule> at <file>:<line>". The finding
//     named is the first counted one whose severity matches the verdict
//     ("error" for block, "warn" or "warning" for warn), else the first
//     counted one; without a file the reason ends at the rule, and without
//     findings at the scanner's name.
//   - error, fail-closed → quarantine, reason "quarantined by governance:
//     scanner <name> failed: <why>"; not fail-closed → allow with Finding.
//   - allow → allow.
//
// Suppressions: a suppressed finding does not count. When every finding is
// suppressed the scanner's effect is allow. When some are, and every one
// left has a severity error, warn (warning) or info (note, none), the
// verdict is lowered to what the strongest of them gives (error → block,
// warn → warn, info → allow); with another severity the scanner's verdict
// stands. A verdict given with no findings cannot be suppressed.
func (r *Result) Effect(failClosed bool, suppressed Suppressed) Effect {
	switch r.Verdict {
	case VerdictAllow:
		return Effect{Mode: governance.ModeAllow}
	case VerdictWarn, VerdictBlock:
	default: // VerdictError, or a verdict Run never gives
		why := r.Error
		if r.Verdict != VerdictError {
			why = "unknown verdict " + strconv.Quote(r.Verdict)
		}
		msg := "scanner " + r.Name + " failed: " + why
		if failClosed {
			return Effect{Mode: governance.ModeQuarantine, Reason: "quarantined by governance: " + msg}
		}
		return Effect{Mode: governance.ModeAllow, Finding: &governance.Finding{
			Rule: RuleFailed, Severity: governance.SeverityWarn, Excerpt: msg}}
	}
	level := r.Verdict
	counted := make([]*Finding, 0, len(r.Findings))
	for i := range r.Findings {
		f := &r.Findings[i]
		if suppressed != nil && suppressed(RuleName(r.Name, f.Rule), f.File, f.Line) {
			continue
		}
		counted = append(counted, f)
	}
	if len(counted) < len(r.Findings) {
		if len(counted) == 0 {
			return Effect{Mode: governance.ModeAllow}
		}
		if l, known := levelOf(counted); known && verdictRank(l) < verdictRank(level) {
			level = l
		}
		if level == VerdictAllow {
			return Effect{Mode: governance.ModeAllow}
		}
	}
	mode, prefix, want := governance.ModeQuarantine, "quarantined by governance: ", "warn"
	if level == VerdictBlock {
		mode, prefix, want = governance.ModeBlock, "blocked by governance: ", "error"
	}
	var named *Finding
	for _, f := range counted {
		if severityLevel(f.Severity) == want {
			named = f
			break
		}
	}
	if named == nil && len(counted) > 0 {
		named = counted[0]
	}
	reason := prefix + "scanner " + r.Name
	if named != nil {
		reason += ": " + named.Rule
		if named.File != "" {
			reason += " at " + named.File + ":" + strconv.Itoa(named.Line)
		}
	}
	return Effect{Mode: mode, Reason: reason}
}

// severityLevel maps a finding's severity to "error", "warn", "info", or
// "" for one of no known level.
func severityLevel(s string) string {
	switch s {
	case "error":
		return "error"
	case "warn", "warning":
		return "warn"
	case "info", "note", "none":
		return "info"
	}
	return ""
}

// levelOf returns the verdict the findings' strongest severity gives, and
// whether every severity is of a known level.
func levelOf(fs []*Finding) (string, bool) {
	v := VerdictAllow
	for _, f := range fs {
		switch severityLevel(f.Severity) {
		case "error":
			v = VerdictBlock
		case "warn":
			if v == VerdictAllow {
				v = VerdictWarn
			}
		case "info":
		default:
			return "", false
		}
	}
	return v, true
}

func verdictRank(v string) int {
	switch v {
	case VerdictBlock:
		return 2
	case VerdictWarn:
		return 1
	}
	return 0
}

// Strictest returns the effect of the strictest mode, the first of them on
// a tie (so put the built-in scanner's first); the zero Effect for none.
func Strictest(effects ...Effect) Effect {
	var out Effect
	for i, e := range effects {
		if i == 0 || governance.ModeRank(e.Mode) > governance.ModeRank(out.Mode) {
			out = e
		}
	}
	return out
}

// FilesOf returns the files of a skill directory a scanner is given: its
// SKILL.md and every file read (Err == "") but its signature (SKILL.sig,
// which the digest leaves out too). Files not read are left out: the
// built-in scanner already holds a skill with any (Report.Unscanned). The
// bytes are shared, not copied.
func FilesOf(in *governance.Input) map[string][]byte {
	files := make(map[string][]byte, 1+len(in.Files))
	files[governance.SkillFile] = in.SkillMD
	for _, f := range in.Files {
		if f.Err == "" && f.Path != publisher.FileName {
			files[f.Path] = f.Data
		}
	}
	return files
}
