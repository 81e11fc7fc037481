package governance

import (
	"regexp"
)

// Rules of issue 20 beyond data-exfiltration (flow.go). Each runs on what
// executes (execRules: code, commands, imperative lines); quoted
// documentation makes its findings info.
const (
	// RuleSystemTampering: erasing logs, audit trails or shell history,
	// switching off a security control, raising privileges (setuid, a
	// system directory opened to everyone, a user added to sudo),
	// wiping a disk or the home directory, a fork bomb.
	RuleSystemTampering = "system-tampering"
)

var (
	// reTamperErr: what a reviewer calls malicious without more
	// context.
	reTamperErr = regexp.MustCompile(
		// logs, audit trails, shell history erased
		`\brm\s+(-[a-z]+\s+)*[^|;&\n]*(/var/log(/audit)?/?\*|/var/log/audit\b|/var/audit\b|/private/var/log/?\*|\.(bash|zsh|sh)_history\b)` +
			`|(^|[;&|]\s*|\s)(>|truncate\s+-s\s*0)\s*/var/log/(auth|secure|syslog|messages|audit/audit)\S*` +
			`|\bshred\b[^|;&\n]*(/var/log|_history)|\bhistory\s+-c\b|\bunset\s+histfile\b|\bhistfile=/dev/null\b|\bhistsize=0\b` +
			`|\bwevtutil(\.exe)?\s+cl\b|\bclear-eventlog\b|\bauditctl\s+-[dD]\b|\b(systemctl|service)\s+(stop|disable|mask)\s+(auditd|rsyslog|syslog|syslog-ng|journald|systemd-journald)\b` +
			// security controls switched off
			`|\bsetenforce\s+0\b|\bufw\s+disable\b|\b(systemctl|service)\s+(stop|disable|mask)\s+(firewalld|ufw|apparmor|clamav\S*|falcon-sensor|osqueryd|crowdstrike\S*)\b` +
			`|\bspctl\s+--master-disable\b|\bcsrutil\s+disable\b|\bset-mppreference\b[^\n]*-disable\w*\s+\$?true|\badd-mppreference\b[^\n]*-exclusion` +
			`|\bdefaults\s+write\s+com\.apple\.launchservices\s+lsquarantine\s+-bool\s+(false|no)\b` +
			// privileges raised
			`|\bchmod\s+(-[a-z]+\s+)*([ugoa]*\+[a-z]*s[a-z]*|[0-7]?[4-7][0-7]{3})\s+\S` +
			`|\bnopasswd\s*:|\busermod\s+(-[a-z]+\s+)*-a?g\s+(sudo|wheel|admin|root)\b` +
			`|\bchmod\s+(-[a-z]+\s+)*[0-7]?777\s+/(\s|$|\*)` +
			// the disk or the home directory wiped, a fork bomb
			`|\brm\s+(-[a-z]+\s+)*-[a-z]*[rf][a-z]*\s+(-[a-z]+\s+)*(/|/\*|~|~/|~/\*|\$home|\$\{home\}|\$home/\*)(\s|$|;|&)` +
			`|\bmkfs(\.[a-z0-9]+)?\s+/dev/|\bdd\s+[^|;&\n]*of=/dev/(sd|nvme|disk|hd|vd)` +
			`|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)
	// reTamperHold: suspicious without more context: a system directory
	// opened to everyone, handed to root, or logs cleared.
	reTamperHold = regexp.MustCompile(`\bchmod\s+(-[a-z]+\s+)*[0-7]?777\s+/(etc|usr|bin|sbin|opt|var|lib|boot|root|srv|library|applications|system)\b` +
		`|\bchown\s+(-[a-z]+\s+)*root(:(root|wheel))?\s+/(etc|usr|bin|sbin|opt|var|lib|srv)/` +
		`|\brm\s+(-[a-z]+\s+)*[^|;&\n]*/var/log/\S*\*`)
)

// tamperKeys: a line without one of them has no system tampering.
var tamperKeys = []string{"/var/log", "/var/audit", "_history", "shred", "history", "histfile", "histsize", "wevtutil",
	"eventlog", "auditctl", "auditd", "syslog", "journald", "setenforce", "ufw", "firewalld", "apparmor", "clamav",
	"falcon", "osquery", "crowdstrike", "spctl", "csrutil", "mppreference", "lsquarantine", "chmod", "nopasswd",
	"usermod", "rm ", "mkfs", "dd ", ":()", "chown"}

// tampering: system-tampering.
func (s *scanner) tampering(line, low string, off, n int, c ctx) {
	if !s.has(low, tamperKeys...) {
		return
	}
	if loc := reTamperErr.FindStringIndex(low); loc != nil {
		s.add(RuleSystemTampering, SeverityError, c, n, line, off+loc[0])
		return
	}
	if loc := reTamperHold.FindStringIndex(low); loc != nil {
		s.add(RuleSystemTampering, SeverityWarn, c, n, line, off+loc[0])
	}
}
