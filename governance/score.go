package governance

// Capability weights: a declared dangerous capability adds its weight once
// (the seed's weights).
const (
	WeightShellExec     = 30 // shell execution (shell.exec)
	WeightCodeEval      = 30 // arbitrary code evaluation (code.eval, code.exec)
	WeightFSWrite       = 25 // filesystem write outside the workspace (filesystem.write)
	WeightSecretsRead   = 25 // secrets read (secrets.read, keychain.read, …)
	WeightNetworkEgress = 20 // external network egress (network.*)
)

// Finding weights: each finding adds its category's weight, and each
// category is capped. Info findings (weak signals: a host named, a tool
// not declared, an attack pattern quoted in documentation) weigh
// nothing: they neither flag nor hold a skill.
//
// The tiers: an error blocks (what a reviewer would call malicious
// without more context); a hold-class warn alone reaches the high band,
// which quarantines (a suspicious combination: a credential sent to
// another service, obfuscated code that runs); the other warns flag
// (weak signals, rare on ordinary skills) and reach the high band only
// in numbers.
const (
	WeightError      = 25  // any error finding
	CapError         = 100 // errors block anyway; the score shows how many
	WeightHold       = 60  // a warn of a hold-class rule (Rule.Warn ScoreHold): quarantine by itself
	CapHold          = 75
	WeightInjection  = 10 // prompt-injection warn, html-comment-directive warn
	CapInjection     = 20
	WeightEvasion    = 10 // obfuscation or encoded-payload warn
	CapEvasion       = 20
	WeightUnscanned  = 10 // a file that could not be scanned
	CapUnscanned     = 20
	WeightOtherWarn  = 5 // any other warn
	CapOtherWarn     = 10
	MitigationNoErrs = -5 // no error finding
)

// Bands, by score (inclusive upper bounds).
const (
	BandLow      = "low"      // 0–25
	BandMedium   = "medium"   // 26–50
	BandHigh     = "high"     // 51–75
	BandCritical = "critical" // 76–100

	BandLowMax    = 25
	BandMediumMax = 50
	BandHighMax   = 75
)

// Verdicts.
const (
	VerdictClean   = "clean"
	VerdictFlagged = "flagged"
	VerdictBlocked = "blocked"
)

// Modes, from least to most strict.
const (
	ModeAllow      = "allow"
	ModeQuarantine = "quarantine"
	ModeBlock      = "block"
)

// Capability categories.
const (
	capShell   = "shell-exec"
	capEval    = "code-eval"
	capFSWrite = "fs-write"
	capSecrets = "secrets-read"
	capEgress  = "network-egress"
)

// capabilityWeight is the weight of each capability category.
var capabilityWeight = map[string]int{
	capShell:   WeightShellExec,
	capEval:    WeightCodeEval,
	capFSWrite: WeightFSWrite,
	capSecrets: WeightSecretsRead,
	capEgress:  WeightNetworkEgress,
}

// category returns a finding's score category, its weight and its cap:
// errors and info findings by severity, a warn by its rule's score class
// in the registry (a hold, an injection, …).
func category(f Finding) (name string, weight, limit int) {
	switch f.Severity {
	case SeverityError:
		return "error", WeightError, CapError
	case SeverityInfo:
		return "info", 0, 0
	}
	name = ScoreOther
	if r := ruleByID[f.Rule]; r != nil {
		name = r.Warn
	}
	c := scoreClasses[name]
	return name, c.weight, c.cap
}

// Score is the additive risk score 0–100: the weight of every declared
// capability category (caps lists them, each once), plus each finding's
// category weight with each category capped, minus 5 when no finding is an
// error.
func Score(findings []Finding, caps []string) int {
	score := 0
	seen := map[string]bool{}
	for _, c := range caps {
		if !seen[c] {
			seen[c] = true
			score += capabilityWeight[c]
		}
	}
	sums := map[string]int{}
	limits := map[string]int{}
	hasError := false
	for _, f := range findings {
		hasError = hasError || f.Severity == SeverityError
		name, w, limit := category(f)
		sums[name] += w
		limits[name] = limit
	}
	for name, sum := range sums {
		score += min(sum, limits[name])
	}
	if !hasError {
		score += MitigationNoErrs
	}
	return max(0, min(100, score))
}

// BandOf maps a score to its band.
func BandOf(score int) string {
	switch {
	case score <= BandLowMax:
		return BandLow
	case score <= BandMediumMax:
		return BandMedium
	case score <= BandHighMax:
		return BandHigh
	}
	return BandCritical
}

// VerdictOf: any error → blocked, else any warn → flagged, else clean.
func VerdictOf(findings []Finding) string {
	v := VerdictClean
	for _, f := range findings {
		switch f.Severity {
		case SeverityError:
			return VerdictBlocked
		case SeverityWarn:
			v = VerdictFlagged
		}
	}
	return v
}

// ModeOf is the stricter of the band's mode (low/medium → allow, high →
// quarantine, critical → block) and the verdict's (blocked → block,
// flagged → quarantine only when flagged is FlaggedQuarantine).
func ModeOf(band, verdict, flagged string) string {
	m := ModeAllow
	switch band {
	case BandHigh:
		m = ModeQuarantine
	case BandCritical:
		m = ModeBlock
	}
	v := ModeAllow
	switch {
	case verdict == VerdictBlocked:
		v = ModeBlock
	case verdict == VerdictFlagged && flagged == FlaggedQuarantine:
		v = ModeQuarantine
	}
	return Stricter(m, v)
}

// ModeRank orders modes: allow (and "") 0, quarantine 1, block 2.
func ModeRank(m string) int {
	switch m {
	case ModeBlock:
		return 2
	case ModeQuarantine:
		return 1
	}
	return 0
}

// Stricter returns the stricter of two modes ("" counts as allow).
func Stricter(a, b string) string {
	if ModeRank(b) > ModeRank(a) {
		return b
	}
	return a
}
