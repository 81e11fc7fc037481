package governance

import (
	"regexp"
	"strings"
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

// RuleObfuscatedCode: code that assembles or decodes text at run time
// and runs it or sends it, where what it decodes is not itself caught:
// exec(b64decode(…)) of an opaque payload, a decoded address handed to a
// network tool, code read back from a hidden temporary file and run. A
// warn that holds the skill (quarantine): obfuscated code that runs.
// (What decodes to a known attack is an encoded-payload or obfuscation
// error.)
const RuleObfuscatedCode = "obfuscated-code"

// Bounds of deobfuscation.
const (
	maxDeobfLines = 256     // lines of one file read again deobfuscated
	maxCharCodes  = 4096    // character codes decoded from one line
	maxJoinBytes  = 8 << 10 // bytes of one line's literals joined
)

var (
	// reCharCodes: character codes turned into text (JavaScript,
	// PowerShell, Python, Perl, PHP).
	reCharCodes = regexp.MustCompile(`fromcharcode\s*\(|\[char\[\]\]\s*\(|\[char\]\s*\d|\bchr\s*\(\s*\d|\bbytes\s*\(\s*\[\s*\d|\bbytearray\s*\(\s*\[\s*\d|map\s*\(\s*chr\s*,|\bpack\s*\(\s*["']c\*|implode\s*\(|\.map\s*\(\s*\w+\s*=>\s*string\.fromcharcode`)
	// reJoin: strings split and joined again.
	reJoin = regexp.MustCompile(`["']\s*\.join\s*\(|\]\s*\.join\s*\(\s*["']|-join\s*[("'$]|["']\s*\+\s*["']|["']\s*\.\s*["']|["']\s*&\s*["']|\bconcat\s*\(`)
	// reDecoder32: a base32 or base85 decoder.
	reDecoder85 = regexp.MustCompile(`(b85decode|a85decode|base85|ascii85|b32decode|base32\s+(-d|--decode))`)
	// reStagedExec: code read back from a hidden or temporary file and
	// run (a payload staged on disk).
	reStagedExec = regexp.MustCompile(`\b(exec|eval)\s*\(\s*(compile\s*\(\s*)?open\s*\(\s*["'](/tmp/|/var/tmp/|/dev/shm/|~?/?\.)[^"']*["']\s*\)\s*\.read\s*\(|\b(source|\.)\s+["']?(/tmp|/var/tmp|/dev/shm)/\.[a-z0-9_.-]+|\b(ba)?sh\s+["']?(/tmp|/var/tmp|/dev/shm)/\.[a-z0-9_.-]+|\brequire\s*\(\s*["'](/tmp|/dev/shm)/\.`)
	// reDecodeToNet: text decoded and handed to a network tool, or a
	// network listener's input decoded (a hidden channel).
	reDecodeToNet = regexp.MustCompile(`(base64|base32|xxd|openssl\s+(enc|base64))\s+(-[a-z]*d|--decode|-r)\b[^|;&\n]*\|\s*(xargs\s+)?(curl|wget|nc|ncat|netcat|socat|telnet)\b|\b(nc|ncat|netcat)\s+(-[a-z]+\s+)*-l[a-z]*\b[^|;&\n]*\|\s*(base64|xxd|openssl)\b`)
)

// deobfuscate reads a line of code again with what hides its text undone
// (character codes decoded, split strings joined, quotes inside shell
// words removed, base32 and base85 literals decoded): when that text
// holds something the line as written does not, the line is obfuscation
// (error when the hidden thing is an error). Code that decodes and runs
// or sends what it decoded is obfuscated-code (a hold).
func (s *scanner) deobfuscate(line, text, low string, off, n int, c ctx) {
	if s.depth > 0 {
		return
	}
	if s.has(low, "exec", "eval", "source", "sh ", "require") {
		if loc := reStagedExec.FindStringIndex(low); loc != nil {
			s.add(RuleObfuscatedCode, SeverityWarn, c, n, line, off+loc[0])
		}
	}
	if s.has(low, "base64", "base32", "xxd", "openssl", "nc ", "ncat", "netcat") && strings.IndexByte(low, '|') >= 0 {
		if loc := reDecodeToNet.FindStringIndex(low); loc != nil {
			s.add(RuleObfuscatedCode, SeverityWarn, c, n, line, off+loc[0])
		}
	}
	if s.deobfBud <= 0 {
		return
	}
	var forms []string
	hidden := 0 // forms[:hidden] are decoded (codes, base85), the rest rearranged
	if s.has(low, "fromcharcode", "[char", "chr", "bytes", "bytearray", "pack", "implode") && reCharCodes.MatchString(low) {
		if t := charCodes(low); t != "" {
			forms = append(forms, t)
		}
	}
	if s.has(low, "b85", "a85", "base85", "ascii85", "b32", "base32") && reDecoder85.MatchString(low) {
		forms = append(forms, decodeLiterals85(text)...)
	}
	hidden = len(forms)
	joined := false
	if strings.ContainsAny(low, `"'`) {
		if s.has(low, "join", "+", "concat", ".", "&") && reJoin.MatchString(low) {
			if t := joinLiterals(text); t != text {
				forms = append(forms, t)
				joined = true
			}
		}
		if t := unquoteWords(text); t != text {
			forms = append(forms, t)
		}
	}
	if len(forms) == 0 {
		return
	}
	s.deobfBud--
	before := map[string]bool{}
	for _, f := range s.rescan(text) {
		if f.Severity != SeverityInfo {
			before[f.Rule] = true
		}
	}
	worst := ""
	for _, form := range forms {
		for _, f := range s.rescan(form) {
			if before[f.Rule] || f.Rule == RuleNetworkEgress || f.Rule == RuleUndeclaredBinary || f.Rule == RuleHiddenUnicode {
				continue
			}
			worst = worse(worst, f.Severity)
		}
	}
	if worst != "" {
		s.add(RuleObfuscation, worst, c, n, line, off)
		return
	}
	// Decoded or joined text given to a call that runs it, whatever it
	// says: obfuscated code that runs.
	loc := reRunCall.FindStringIndex(low)
	if loc == nil {
		return
	}
	args := callArgs(low, loc[1]-1)
	for i, form := range forms {
		if i >= hidden && !(joined && reJoin.MatchString(args)) {
			break
		}
		if i < hidden && !reCharCodes.MatchString(args) && !reDecoder85.MatchString(args) {
			continue
		}
		if len(strings.TrimSpace(form)) >= 8 && looksLikeCode(form) {
			s.add(RuleObfuscatedCode, SeverityWarn, c, n, line, off+loc[0])
			return
		}
	}
}

// reRunCall: a call that runs the code or command it is given.
var reRunCall = regexp.MustCompile(`\b(eval|exec|execsync|spawnsync|os\.system|os\.popen|subprocess\.(run|call|popen|check_output)|iex|invoke-expression|new\s+function|function)\s*\(`)

// looksLikeCode reports decoded text that reads as a command or code
// rather than a word or a number.
func looksLikeCode(t string) bool {
	return strings.ContainsAny(t, " ()/|;=.$") && hasLetters(t)
}

// charCodes decodes the runs of character codes of a line (numbers 9..126
// separated by commas, pluses or spaces; [char]99+[char]117) into text,
// the runs joined.
func charCodes(low string) string {
	var b strings.Builder
	run, num, have := 0, 0, false
	flush := func() {
		if have && num >= 9 && num <= 126 {
			b.WriteByte(byte(num))
			run++
		}
		num, have = 0, false
	}
	for i := 0; i < len(low) && b.Len() < maxCharCodes; i++ {
		ch := low[i]
		switch {
		case ch >= '0' && ch <= '9':
			// a number inside an identifier (x86, b64) is not a code
			if !have && i > 0 && (isAlnum(low[i-1]) && !strings.HasSuffix(low[:i], "]") || low[i-1] == '.') {
				for i < len(low) && isAlnum(low[i]) {
					i++
				}
				continue
			}
			num = num*10 + int(ch-'0')
			have = num < 1000
		default:
			flush()
		}
	}
	flush()
	if run < 4 {
		return ""
	}
	return b.String()
}

// joinLiterals joins the string literals of a line that are split and
// joined again ("cu" + "rl", ['cu', 'rl'].join(”), 'cu' . 'rl'): the
// quotes and the joining operators between literals are dropped.
func joinLiterals(text string) string {
	var b strings.Builder
	for i := 0; i < len(text) && b.Len() < maxJoinBytes; i++ {
		ch := text[i]
		if ch != '"' && ch != '\'' {
			b.WriteByte(ch)
			continue
		}
		// A literal: copy its content, then skip a joiner and the next
		// literal's opening quote.
		j := strings.IndexByte(text[i+1:], ch)
		if j < 0 {
			b.WriteString(text[i:])
			break
		}
		b.WriteString(text[i+1 : i+1+j])
		i += j + 1
		k := i + 1
		for k < len(text) && (text[k] == ' ' || text[k] == '+' || text[k] == ',' || text[k] == '.' || text[k] == '&') {
			k++
		}
		if k < len(text) && (text[k] == '"' || text[k] == '\'') && k > i+1 {
			i = k - 1 // the next literal follows at once
			for i+1 < len(text) && text[i+1] != '"' && text[i+1] != '\'' {
				i++
			}
		}
	}
	return b.String()
}

// unquoteWords removes the quotes inside shell words (c”u""rl,
// "cu"rl, b\ash): the shell runs curl and bash.
func unquoteWords(text string) string {
	var b strings.Builder
	changed := false
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if (ch == '\'' || ch == '"') && i+1 < len(text) && text[i+1] == ch && i > 0 && isAlnum(text[i-1]) {
			i++ // '' or "" inside a word
			changed = true
			continue
		}
		if ch == '\\' && i+1 < len(text) && isAlnum(text[i+1]) && i > 0 && isAlnum(text[i-1]) {
			changed = true
			continue
		}
		b.WriteByte(ch)
	}
	if !changed {
		return text
	}
	return b.String()
}

// decodeLiterals85 decodes the quoted literals of a line as base32 and as
// base85 (RFC 1924, Python's b85) and Ascii85 (a85), keeping what decodes
// to text.
func decodeLiterals85(text string) []string {
	var out []string
	for i := 0; i < len(text) && len(out) < 4; i++ {
		ch := text[i]
		if ch != '"' && ch != '\'' {
			continue
		}
		j := strings.IndexByte(text[i+1:], ch)
		if j < 0 {
			break
		}
		lit := text[i+1 : i+1+j]
		i += j + 1
		if len(lit) < 16 {
			continue
		}
		for _, dec := range []func(string) ([]byte, bool){decodeB32, decodeB85, decodeA85} {
			if b, ok := dec(lit); ok && printable(b) && hasLetters(string(b)) {
				out = append(out, string(b))
				break
			}
		}
	}
	return out
}
