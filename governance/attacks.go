package governance

import (
	"math"
	"slices"
	"strings"
)

func log2(x float64) float64 { return math.Log2(x) }

var (
	// reTamperErr: what a reviewer calls malicious without more
	// context.
	reTamperErr = mustRx(
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
			`|\bchmod\s+(-[a-z]+\s+)*((u|ug|ugo|a)?\+[rwx]*s[rwx]*|[0-7]?[4-7][0-7]{3})\s+\S` +
			`|\bnopasswd\s*:|\busermod\s+(-[a-z]+\s+)*-a?g\s+(sudo|wheel|admin|root)\b` +
			`|\bchmod\s+(-[a-z]+\s+)*[0-7]?777\s+/(\s|$|\*)` +
			// the disk or the home directory wiped, a fork bomb
			`|\brm\s+(-[a-z]+\s+)*-[a-z]*[rf][a-z]*\s+(-[a-z]+\s+)*(/|/\*|~|~/|~/\*|\$home|\$\{home\}|\$home/\*)(\s|$|;|&)` +
			`|\bmkfs(\.[a-z0-9]+)?\s+/dev/|\bdd\s+[^|;&\n]*of=/dev/(sd|nvme|disk|hd|vd)` +
			`|:\(\)\s*\{\s*:\s*\|\s*:\s*&\s*\}\s*;\s*:`)
	// reTamperHold: suspicious without more context: a system directory
	// opened to everyone, handed to root, or logs cleared.
	reTamperHold = mustRx(`\bchmod\s+(-[a-z]+\s+)*[0-7]?777\s+/(etc|usr|bin|sbin|opt|var|lib|boot|root|srv|library|applications|system)\b` +
		`|\bchown\s+(-[a-z]+\s+)*root(:(root|wheel))?\s+/(etc|usr|bin|sbin|opt|var|lib|srv)/` +
		`|\brm\s+(-[a-z]+\s+)*[^|;&\n]*/var/log/\S*\*`)
)

// tamperKeys: a line without one of them has no system tampering.
var tamperKeys = keys("/var/log", "/var/audit", "_history", "shred", "history -c", "histfile", "histsize", "wevtutil",
	"eventlog", "auditctl", "auditd", "syslog", "journald", "setenforce", "ufw", "firewalld", "apparmor", "clamav",
	"falcon", "osquery", "crowdstrike", "spctl", "csrutil", "mppreference", "lsquarantine", "chmod", "nopasswd",
	"usermod", "rm -", "mkfs", "of=/dev", ":()", "chown")

// tampering: system-tampering.
func (s *scanner) tampering(line, low string, off, n int, c ctx) {
	if !s.has(low, tamperKeys) {
		return
	}
	if loc := s.find(reTamperErr, low); loc != nil {
		s.add(RuleSystemTampering, SeverityError, c, n, line, off+loc[0])
		return
	}
	if loc := s.find(reTamperHold, low); loc != nil {
		s.add(RuleSystemTampering, SeverityWarn, c, n, line, off+loc[0])
	}
}

// Bounds of deobfuscation.
const (
	maxDeobfLines = 256     // lines of one file read again deobfuscated
	maxCharCodes  = 4096    // character codes decoded from one line
	maxJoinBytes  = 8 << 10 // bytes of one line's literals joined
)

var (
	// reCharCodes: character codes turned into text (JavaScript,
	// PowerShell, Python, Perl, PHP).
	reCharCodes = mustRx(`fromcharcode\s*\(|\[char\[\]\]\s*\(|\[char\]\s*\d|\bchr\s*\(\s*\d|\bbytes\s*\(\s*\[\s*\d|\bbytearray\s*\(\s*\[\s*\d|map\s*\(\s*chr\s*,|\bpack\s*\(\s*["']c\*|implode\s*\(|\.map\s*\(\s*\w+\s*=>\s*string\.fromcharcode`)
	// reJoin: strings split and joined again.
	reJoin = mustRx(`["']\s*\.join\s*\(|\]\s*\.join\s*\(\s*["']|-join\s*[("'$]|["']\s*\+\s*["']|["']\s*\.\s*["']|["']\s*&\s*["']|\bconcat\s*\(`)
	// reDecoder32: a base32 or base85 decoder.
	reDecoder85 = mustRx(`(b85decode|a85decode|base85|ascii85|b32decode|base32\s+(-d|--decode))`)
	// reStagedExec: code read back from a hidden or temporary file and
	// run (a payload staged on disk).
	reStagedExec = mustRx(`\b(exec|eval)\s*\(\s*(compile\s*\(\s*)?open\s*\(\s*["'](/tmp/|/var/tmp/|/dev/shm/|~?/?\.)[^"']*["']\s*\)\s*\.read\s*\(|\b(source|\.)\s+["']?(/tmp|/var/tmp|/dev/shm)/\.[a-z0-9_.-]+|\b(ba)?sh\s+["']?(/tmp|/var/tmp|/dev/shm)/\.[a-z0-9_.-]+|\brequire\s*\(\s*["'](/tmp|/dev/shm)/\.`)
	// reDecodeToNet: text decoded and handed to a network tool, or a
	// network listener's input decoded (a hidden channel).
	reDecodeToNet = mustRx(`(base64|base32|xxd|openssl\s+(enc|base64))\s+(-[a-z]*d|--decode|-r)\b[^|;&\n]*\|\s*(xargs\s+)?(curl|wget|nc|ncat|netcat|socat|telnet)\b|\b(nc|ncat|netcat)\s+(-[a-z]+\s+)*-l[a-z]*\b[^|;&\n]*\|\s*(base64|xxd|openssl)\b`)
)

// The keywords of deobfuscate's checks (has).
var (
	kwDeobfuscate1 = keys("open(", "/tmp/.", "/var/tmp/.", "/dev/shm/.")
	kwDeobfuscate2 = keys("exec", "eval", "source", "sh ", ". /", "require")
	kwDeobfuscate3 = keys("base64", "base32", "xxd", "openssl", "nc ", "ncat", "netcat")
	kwDeobfuscate4 = keys("fromcharcode", "[char", "chr", "bytes", "bytearray", "pack", "implode")
	kwDeobfuscate5 = keys("b85", "a85", "base85", "ascii85", "b32", "base32")
	kwDeobfuscate6 = keys("join", "concat")
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
	if s.has(low, kwDeobfuscate1) && s.has(low, kwDeobfuscate2) {
		if loc := s.find(reStagedExec, low); loc != nil {
			s.add(RuleObfuscatedCode, SeverityWarn, c, n, line, off+loc[0])
		}
	}
	if s.has(low, kwDeobfuscate3) && strings.IndexByte(low, '|') >= 0 {
		if loc := s.find(reDecodeToNet, low); loc != nil {
			s.add(RuleObfuscatedCode, SeverityWarn, c, n, line, off+loc[0])
		}
	}
	if s.deobfBud <= 0 {
		return
	}
	var forms []string
	hidden := 0 // forms[:hidden] are decoded (codes, base85), the rest rearranged
	if s.has(low, kwDeobfuscate4) && s.match(reCharCodes, low) {
		if t := charCodes(low); t != "" {
			forms = append(forms, t)
		}
	}
	if s.has(low, kwDeobfuscate5) && s.match(reDecoder85, low) {
		forms = append(forms, decodeLiterals85(text)...)
	}
	hidden = len(forms)
	joined := false
	if strings.IndexByte(low, '"') >= 0 || strings.IndexByte(low, '\'') >= 0 { // strings.ContainsAny builds its set at every call
		if (quoteJoin(low) || s.has(low, kwDeobfuscate6)) && s.match(reJoin, low) {
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
	loc := s.find(reRunCall, low)
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
var reRunCall = mustRx(`\b(eval|exec|execsync|spawnsync|os\.system|os\.popen|subprocess\.(run|call|popen|check_output)|iex|invoke-expression|new\s+function|function)\s*\(`)

// quoteJoin reports two string literals joined by an operator ("cu" +
// "rl", 'cu' . 'rl', "cu" & "rl") in one pass over the line.
func quoteJoin(low string) bool {
	for i := 0; i < len(low); i++ {
		if low[i] != '"' && low[i] != '\'' {
			continue
		}
		j := i + 1
		for j < len(low) && low[j] == ' ' {
			j++
		}
		if j >= len(low) || low[j] != '+' && low[j] != '.' && low[j] != '&' {
			continue
		}
		j++
		for j < len(low) && low[j] == ' ' {
			j++
		}
		if j < len(low) && (low[j] == '"' || low[j] == '\'') {
			return true
		}
	}
	return false
}

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
	// Most lines have nothing to remove: look before copying.
	changed := false
	for i := 1; i+1 < len(text) && !changed; i++ {
		ch := text[i]
		changed = (ch == '\'' || ch == '"') && text[i+1] == ch && isAlnum(text[i-1]) ||
			ch == '\\' && isAlnum(text[i+1]) && isAlnum(text[i-1])
	}
	if !changed {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); i++ {
		ch := text[i]
		if (ch == '\'' || ch == '"') && i+1 < len(text) && text[i+1] == ch && i > 0 && isAlnum(text[i-1]) {
			i++ // '' or "" inside a word
			continue
		}
		if ch == '\\' && i+1 < len(text) && isAlnum(text[i+1]) && i > 0 && isAlnum(text[i-1]) {
			continue
		}
		b.WriteByte(ch)
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

var (
	// reIndexURL: an install from another index or registry.
	reIndexURL = mustRx(`\b(pip3?|uv\s+pip|python[0-9.]*\s+-m\s+pip|pipx|poetry|pdm)\b[^|;&\n]*\s(--index-url|--extra-index-url|-i|--trusted-host)[\s=]+["']?(\S+)` +
		`|\b(npm|pnpm|yarn|bun|npx)\b[^|;&\n]*\s--registry[\s=]+["']?(\S+)` +
		`|\b(npm|pnpm|yarn)\s+config\s+set\s+(@[a-z0-9_-]+:)?registry[\s=]+["']?(\S+)` +
		`|\bpip3?\s+config\s+set\s+global\.(extra-)?index-url\s+["']?(\S+)` +
		`|\bgem\s+(install|sources)\b[^|;&\n]*\s(--source|-s|--add|-a)\s+["']?(\S+)`)
	// reInstall: a package manager's install and what follows it.
	reInstall = mustRx(`\b(pip3?|uv\s+pip|uv\s+add|pipx|poetry\s+add|pdm\s+add|npm|pnpm|yarn|bun|npx|gem|cargo)\s+(install|i|add|-y|--yes|run)?\b([^|;&\n]*)`)
)

// officialIndexes are the package indexes a default install or a
// project's documented one uses.
var officialIndexes = []string{"pypi.org", "files.pythonhosted.org", "pypi.python.org", "download.pytorch.org",
	"pypi.nvidia.com", "pypi.ngc.nvidia.com", "data.pyg.org", "storage.googleapis.com/jax-releases",
	"registry.npmjs.org", "registry.yarnpkg.com", "npm.pkg.github.com", "rubygems.org", "wheels.myhloli.com",
	"dl.fbaipublicfiles.com", "developer.download.nvidia.com", "anaconda.org", "conda.anaconda.org",
	"mirrors.aliyun.com", "pypi.tuna.tsinghua.edu.cn", "registry.npmmirror.com", "download.openmmlab.com",
	"test.pypi.org", "pypi.douban.com", "mirrors.cloud.tencent.com", "repo.huaweicloud.com", "mirrors.ustc.edu.cn",
	"pypi.mirrors.ustc.edu.cn", "mirror.baidu.com", "download.pytorch-geometric.com", "pypi.ngc.nvidia.com"}

// popularPackages are names typosquats imitate (PyPI and npm).
var popularPackages = strings.Fields(`requests numpy pandas scipy matplotlib seaborn scikit-learn tensorflow torch
torchvision keras flask django fastapi uvicorn pydantic boto3 botocore urllib3 certifi setuptools wheel
pillow beautifulsoup4 lxml pyyaml jinja2 click rich typer httpx aiohttp openai anthropic langchain
transformers datasets tokenizers sqlalchemy psycopg2 pymongo redis celery pytest selenium playwright
cryptography paramiko colorama tqdm python-dotenv dotenv jsonschema protobuf grpcio docker kubernetes
express react react-dom lodash axios moment chalk commander debug request webpack typescript eslint
prettier jquery vue next nodemon dotenv-cli yargs uuid async underscore body-parser cors mongoose
socket.io jsonwebtoken bcrypt bcryptjs puppeteer cheerio discord.js node-fetch electron vite
tailwindcss babel-core crypto-js coffee-script cross-env event-stream colors faker ua-parser-js preact color
pyyaml ruamel.yaml`)

// typosquat returns the popular package name is one edit from (a letter
// swapped with its neighbour, dropped, doubled or replaced), or "".
func typosquat(name string) string {
	if len(name) < 5 {
		return ""
	}
	for _, p := range popularPackages {
		if p == name {
			return ""
		}
	}
	for _, p := range popularPackages {
		// A letter more or less at the end is a variant (color and
		// colors), as for names: typoOf.
		if len(p) >= 5 && typoOf(name, p) {
			return p
		}
	}
	return ""
}

// oneEdit reports a and b (a ≠ b) one edit apart: an adjacent swap, an
// insertion, a deletion or a substitution; a substitution of a digit or a
// separator is a version or a variant, not a typo (boto/boto3, py-yaml).
func oneEdit(a, b string) bool {
	if a == b || abs(len(a)-len(b)) > 1 {
		return false
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	j, k := len(a), len(b)
	for j > i && k > i && a[j-1] == b[k-1] {
		j--
		k--
	}
	da, db := a[i:j], b[i:k]
	switch {
	case len(da) == 2 && len(db) == 2:
		return da[0] == db[1] && da[1] == db[0] // swapped
	case len(da)+len(db) == 1:
		d := da + db
		return d[0] >= 'a' && d[0] <= 'z' && (i == 0 || i >= len(a) && i >= len(b) || true)
	case len(da) == 1 && len(db) == 1:
		return isLetter(da[0]) && isLetter(db[0])
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// The keywords of supplyChain's checks (has).
var (
	kwSupplyChain1 = keys("pip", "npm", "pnpm", "yarn", "bun", "npx", "gem", "cargo", "uv ", "poetry", "pdm")
	kwSupplyChain2 = keys("index-url", "-i ", "trusted-host", "registry", "--source", "sources")
	kwSupplyChain3 = keys("install", " add ", " i ", "npx", "bunx", "pipx")
)

// supplyChain: supply-chain.
func (s *scanner) supplyChain(line, low string, off, n int, c ctx) {
	if !s.has(low, kwSupplyChain1) {
		return
	}
	if s.has(low, kwSupplyChain2) {
		for _, m := range s.findAllSubmatch(reIndexURL, low, 4) {
			u := ""
			for g := len(m) - 2; g >= 2; g -= 2 {
				if m[g] >= 0 {
					u = low[m[g]:m[g+1]]
					break
				}
			}
			u = strings.Trim(u, `"'`)
			if u == "" || strings.HasPrefix(u, "$") || strings.HasPrefix(u, "<") || strings.HasPrefix(u, "{") || !strings.Contains(u, ".") && !strings.Contains(u, "://") {
				continue
			}
			official := false
			for _, o := range officialIndexes {
				official = official || strings.Contains(u, o)
			}
			if h := urlHost(u); official || h != "" && (exampleHost(h) || hostAllowed(h, s.opts.AllowedHosts)) || strings.HasPrefix(u, "file:") || strings.HasPrefix(u, "./") || strings.HasPrefix(u, "/") {
				continue
			}
			s.add(RuleSupplyChain, SeverityWarn, c, n, line, off+m[0])
			return
		}
	}
	if !s.has(low, kwSupplyChain3) {
		return
	}
	for _, m := range s.findAllSubmatch(reInstall, low, 4) {
		for _, w := range strings.Fields(low[m[6]:m[7]]) {
			w = strings.Trim(w, `"'`+"`")
			if w == "" || w[0] == '-' || strings.ContainsAny(w, "/:$<>{}") {
				continue
			}
			if k := strings.IndexAny(w, "=<>~!@["); k > 0 && w[0] != '@' {
				w = w[:k]
			}
			if p := typosquat(w); p != "" || cmdNpx(low[m[0]:m[1]]) && nameTypo(w) != "" {
				s.add(RuleSupplyChain, SeverityWarn, c, n, line, off+m[0])
				return
			}
		}
	}
}

// cmdNpx reports an install that runs the package at once (npx, bunx,
// pipx run, uvx): a typo in any part of its name runs someone else's.
func cmdNpx(cmd string) bool {
	return strings.HasPrefix(cmd, "npx") || strings.HasPrefix(cmd, "bun") || strings.HasPrefix(cmd, "pipx")
}

// urlHost returns the host of a URL, or "".
func urlHost(u string) string {
	_, rest, ok := strings.Cut(u, "://")
	if !ok {
		return ""
	}
	h, _, _ := strings.Cut(rest, "/")
	if k := strings.LastIndexByte(h, '@'); k >= 0 {
		h = h[k+1:]
	}
	if k := strings.LastIndexByte(h, ':'); k >= 0 {
		h = h[:k]
	}
	return h
}

// reMining: a miner, a mining pool or a miner's options.
var reMining = mustRx(`\bstratum(\+(tcp|ssl|tls))?://|\b(xmrig|xmr-stak|minerd|cpuminer|cgminer|bfgminer|ethminer|t-rex|nbminer|lolminer|phoenixminer|nanominer|gminer|srbminer|teamredminer)\b|--donate-level\b|\b(pool\.)?(supportxmr|minexmr|moneroocean|hashvault|c3pool|herominers|nanopool|f2pool|2miners|nicehash|ethermine|unmineable)\.(com|org|net|pro|stream)\b|\bcoinhive\b|\bcryptonight\b`)

// The keywords of cryptoMining's checks (has).
var (
	kwCryptoMining = keys("stratum", "xmr", "miner", "donate-level", "pool", "coinhive", "cryptonight", "nicehash", "ethermine", "unmineable", "2miners", "f2pool", "nanopool")
)

// cryptoMining: crypto-mining.
func (s *scanner) cryptoMining(line, low string, off, n int, c ctx) {
	if !s.has(low, kwCryptoMining) {
		return
	}
	if loc := s.find(reMining, low); loc != nil {
		s.add(RuleCryptoMining, SeverityError, c, n, line, off+loc[0])
	}
}

// reCredential: credentials in the formats their issuers give them.
var reCredential = mustRx(`\b(AKIA|ASIA)[0-9A-Z]{16}\b|\bgh[pousr]_[A-Za-z0-9]{36}\b|\bgithub_pat_[A-Za-z0-9_]{60,}|\bxox[abposr]-[0-9]{8,}-[0-9A-Za-z-]{16,}|hooks\.slack\.com/services/T[A-Z0-9]{6,}/B[A-Z0-9]{6,}/[A-Za-z0-9]{20,}|\bsk-ant-(api|admin)[0-9]{2}-[A-Za-z0-9_-]{40,}|\bsk-(proj-)?[A-Za-z0-9_-]{40,}\b|\b(sk|rk)_live_[0-9A-Za-z]{20,}|\bAIza[0-9A-Za-z_-]{35}\b|\bSG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{40,}|\bnpm_[A-Za-z0-9]{36}\b|\bhf_[A-Za-z0-9]{34,}\b|\bglpat-[A-Za-z0-9_-]{20}\b|\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b|-----BEGIN (RSA |EC |DSA |OPENSSH |ENCRYPTED )?PRIVATE KEY-----`)

// The keywords of hardcodedCredential's checks (has).
var (
	kwHardcodedCredential = keys("akia", "asia", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "xox", "hooks.slack.com", " sk-", "\"sk-", "'sk-", "=sk-", "`sk-", "sk-proj", "sk-ant", "_live_", "aiza", "sg.", "npm_", "hf_", "glpat-", ":aa", "private key-----")
)

// hardcodedCredential: hardcoded-credential. Placeholders (EXAMPLE,
// xxxx, your-key, 1234…) and low-entropy strings are not credentials; a
// private key block counts with its body on the next line (see
// scanner.keyBlock).
func (s *scanner) hardcodedCredential(line string, n int, c ctx) {
	low := s.lower(line)
	if !s.has(low, kwHardcodedCredential) || !longToken(line) && !strings.Contains(low, "private key-----") {
		return
	}
	if containsAny(lowerASCII(line), "example", "e.g.", "sample", "fake", "placeholder", "dummy", "redacted") {
		return // a credential shown as an example
	}
	for _, loc := range s.findAllIn(reCredential, line, low, 4) {
		tok := line[loc[0]:loc[1]]
		if strings.HasPrefix(tok, "-----BEGIN") {
			s.keyBlock = n
			continue
		}
		if placeholder(tok) {
			continue
		}
		s.add(RuleHardcodedCredential, SeverityWarn, c, n, redactAt(line, loc[0], loc[1]), loc[0])
		return
	}
}

// longToken reports a run of 20 or more token characters (letters,
// digits, _ - . : +): a credential has one, most lines do not.
func longToken(line string) bool {
	run := 0
	for i := 0; i < len(line); i++ {
		if c := line[i]; isAlnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || c == '+' || c == '/' || c == '=' {
			run++
			if run >= 20 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// keyBody: the line after a private key's BEGIN line is its body (base64)
// when the key is real.
func (s *scanner) keyBody(line string, n int, c ctx) {
	if s.keyBlock == 0 || n != s.keyBlock+1 {
		return
	}
	s.keyBlock = 0
	t := strings.TrimSpace(line)
	if len(t) >= 40 && strings.Trim(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=") == "" && !placeholder(t) {
		s.add(RuleHardcodedCredential, SeverityWarn, c, n-1, "-----BEGIN PRIVATE KEY----- (a key's body follows)", 0)
	}
}

// placeholder reports a credential-shaped string that is an example:
// EXAMPLE, xxxx, your/my/fake/dummy/test/sample, a run of one character,
// a counting sequence, or too little entropy.
func placeholder(tok string) bool {
	low := strings.ToLower(tok)
	if containsAny(low, "example", "xxxx", "your", "fake", "dummy", "sample", "placeholder", "redacted", "0000", "1234", "abcd", "test", "****", "....", "<", "replace", "insert", "changeme") {
		return true
	}
	run, best := 1, 1
	for i := 1; i < len(tok); i++ {
		if tok[i] == tok[i-1] {
			run++
			best = max(best, run)
		} else {
			run = 1
		}
	}
	return best >= 5 || entropy(tok) < 3.3
}

// entropy is the Shannon entropy of s in bits per character.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, k := range counts {
		if k > 0 {
			p := float64(k) / float64(len(s))
			h -= p * log2(p)
		}
	}
	return h
}

// redactAt shows a credential's first characters only: a report must not
// copy it.
func redactAt(line string, a, b int) string {
	keep := min(b, a+8)
	return line[:keep] + "…(redacted)" + line[b:]
}

var (
	// reHijack: a description that claims every request.
	reHijack = mustRx(`\b(use|invoke|call|load|activate|trigger|run|apply)\s+(this\s+skill\s+|me\s+)?(for|on|with|in|to)\s+(all|every|any)\s+(single\s+)?(requests?|tasks?|queries|query|questions?|messages?|prompts?|conversations?|inputs?|turns?|interactions?)\b|\balways\s+(use|invoke|call|load|activate|run|trigger|prefer|select|choose)\s+this\s+skill\b|\b(before|instead\s+of|over|above|ahead\s+of)\s+(any|all|every)\s+other\s+skills?\b|\b(takes|has|have|gets?)\s+(precedence|priority)\s+over\s+(all|any|every|other)\b|\bregardless\s+of\s+(the\s+)?(user'?s?\s+)?(request|task|query|question|topic|intent|context)\b|\b(ignore|disable|do\s+not\s+use|don'?t\s+use|never\s+use|bypass|replace)\s+(all\s+|any\s+|the\s+)?other\s+skills?\b`)
	// reQualified: what narrows "any task" to a kind of task.
	reQualified = mustRx(`^\s*(involving|related|relating|about|that|with|where|which|regarding|concerning|on|for|in|using|when|if|where|of|like|around|to)\b`)
)

// discoveryAbuse: discovery-abuse, over a name or description as the
// prompt holds it.
func (s *scanner) discoveryAbuse(text string, n int) {
	low := lowerASCII(text)
	if !containsAny(low, "all", "every", "any", "always", "other skill", "precedence", "priority", "regardless") {
		return
	}
	for _, loc := range reHijack.FindAllStringIndex(low, 4) {
		if reQualified.MatchString(low[loc[1]:]) && !strings.Contains(low[loc[0]:loc[1]], "other skill") && !strings.Contains(low[loc[0]:loc[1]], "regardless") {
			continue // "for any task involving PDFs"
		}
		if strings.Contains(low[loc[0]:loc[1]], "always") && reQualified.MatchString(low[loc[1]:]) {
			continue // "always use this skill when …"
		}
		if s.negatedBefore(low, loc[0]) {
			continue
		}
		s.add(RuleDiscoveryAbuse, SeverityWarn, ctxExec, n, text, loc[0])
		return
	}
}

// nameWords are words skill and package names are made of: a name part
// one letter off one of them (reqeusts, parsre, confg, webbapp) imitates
// it.
var nameWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`parser config configuration validator validate diagnostics diagnostic requests
	request webapp helper helpers formatter linter checker converter analyzer analyser generator manager monitor
	reporter scanner tracker viewer runner builder installer updater uploader downloader extractor merger splitter
	summarizer translator assistant client server utils utility utilities tools toolkit github gitlab docker
	kubernetes python pytest javascript typescript markdown testing deploy deployer deployment security database
	search browser calendar weather notes email slack discord telegram twitter youtube spotify notion google
	openai claude anthropic openclaw clawhub wallet crypto bitcoin ethereum solana trading finance stocks invoice
	report document documents spreadsheet excel powerpoint image video audio transcribe translate summarize
	research scraper crawler fetcher agent memory scheduler reminder backup cleaner optimizer performance metrics
	logger logging health status inspector auditor license version release changelog commit review refactor
	format coverage benchmark profiler debugger tester schema migration query export import mirror proxy gateway
	router network password secret vault session cookie oauth account profile contact weather market stock
	polymarket airdrop token tokens sniper tracker whatsapp instagram facebook linkedin reddit amazon shopify
	stripe paypal jira confluence trello asana figma canva dropbox drive sheets gmail outlook teams zoom`) {
		m[w] = true
	}
	for _, p := range popularPackages {
		m[p] = true
	}
	return m
}()

// nameTypo returns the word a name imitates: one of its parts (split at
// - _ . and spaces) is one edit from a word of nameWords (a swap, a
// dropped, doubled or inserted letter, a vowel for a vowel) and is not a
// word itself; "" when none.
func nameTypo(name string) string {
	for p := range strings.FieldsFuncSeq(lowerASCII(name), func(r rune) bool { return r == '-' || r == '_' || r == '.' || r == ' ' || r == '/' || r == '@' }) {
		if len(p) < 5 || nameWords[p] || strings.HasSuffix(p, "s") && nameWords[p[:len(p)-1]] {
			continue
		}
		for w := range nameWords {
			if len(w) >= 5 && typoOf(p, w) {
				return w
			}
		}
	}
	return ""
}

// typoOf reports p one typing slip from w: letters swapped, one dropped,
// doubled or added, or a vowel written for another.
func typoOf(p, w string) bool {
	if realWords[p] || !oneEdit(p, w) {
		return false
	}
	i := 0
	for i < len(p) && i < len(w) && p[i] == w[i] {
		i++
	}
	// An edit at the end is an inflection or a variant (update and
	// updater, networkx), not a slip.
	if i >= max(len(p), len(w))-1 {
		return false
	}
	if len(p) != len(w) {
		return true
	}
	// Same length: letters swapped, or in a long word a vowel for a vowel.
	if p[i] == w[i+1] && p[i+1] == w[i] {
		return true
	}
	return len(w) >= 8 && strings.IndexByte("aeiouy", p[i]) >= 0 && strings.IndexByte("aeiouy", w[i]) >= 0
}

// realWords are words one slip from a word of nameWords that are words
// themselves.
var realWords = map[string]bool{"stats": true, "state": true, "states": true, "expert": true, "report": true,
	"import": true, "parse": true, "notes": true, "score": true, "store": true, "scope": true, "share": true,
	"check": true, "checks": true, "sheet": true, "tokens": true, "memos": true, "agents": true, "query": true,
	"queue": true, "server": true, "serve": true, "proxy": true, "secrets": true, "sessions": true, "monitors": true}

// reImpersonate: a skill that says it stands in for another.
var reImpersonate = mustRx(`\bdrop-?in(\s+replacement)?\b|\breplacement\s+for\b|\b(the\s+)?(official|legitimate|original|real)\s+(\w+\s+)?(skill|helper|tool|package|version|client|cli)\b|\breplaces\s+the\b`)

// impersonation: discovery-abuse for a name one letter off a known word
// (a typosquat) in a skill that says it replaces another: a hold; the
// typo alone is info.
func (s *scanner) impersonation(name string, line int, data []byte) {
	w := nameTypo(name)
	if w == "" {
		return
	}
	sev := SeverityInfo
	// The skill's text (its first 64 KiB), lowercased only now: most
	// names imitate nothing.
	if reImpersonate.MatchString(lowerASCII(string(data[:min(len(data), 64<<10)]))) {
		sev = SeverityWarn
	}
	s.add(RuleDiscoveryAbuse, sev, ctxExec, line, name+" (imitates "+w+")", 0)
}

// covertPasses are covert-instruction's expressions, each run only on
// lines holding all of its keyword groups (one keyword of each).
var covertPasses = []struct {
	keys []*keySet
	re   *rx
}{
	// acting unseen
	{[]*keySet{keys("silently", "quietly", "secretly", "covertly", "invisibly", "stealthily")},
		mustRx(`\b(silently|quietly|secretly|covertly|invisibly|stealthily)\s+(run|execute|install|download|delete|remove|modify|disable|overwrite|launch|start|schedule|add)\b`)},
	{[]*keySet{keys("the user"), keys("hide", "conceal", "suppress", "mask")},
		mustRx(`\b(hide|conceal|suppress|mask)\s+(this|these|the|any|all|its|their|your)?\s*(commands?|steps?|actions?|output|requests?|network\s+(calls?|requests?)|uploads?|downloads?|activity|operations?|process(es)?|changes?)\s+(from|to)\s+the\s+user\b`)},
	{[]*keySet{keys("the user"), keys("not", "n't", "never")},
		mustRx(`\b(do\s+not|don'?t|never)\s+(show|display|print|output|log|report|reveal|mention)\s+(this|these|the|any|its)\s+(commands?|steps?|actions?|output|requests?|network\s+(calls?|requests?)|uploads?|downloads?|activity|operations?|changes?)\s+(to|with)\s+the\s+user\b`)},
	// instructions persisted into the agent
	{[]*keySet{keys("memory", "soul.md", "system prompt", "global", "claude.md", "user settings", "user instructions"), keys("add", "append", "write", "save", "store", "insert", "put", "inject")},
		mustRx(`\b(add|append|write|save|store|insert|put|inject)\s+(this|these|the\s+following|it|them)\s+(instructions?\s+|rules?\s+|lines?\s+|text\s+)?(permanently\s+)?(to|into|in)\s+(your\s+)?(long-term\s+)?(memory|memory\.md|soul\.md|system\s+prompt|global\s+(config|configuration|settings|instructions)|~/\.claude/claude\.md|user\s+(settings|instructions))\b`)},
	{[]*keySet{keys("remember"), keys("permanently", "forever", "future")},
		mustRx(`\bremember\s+(this|these|that|it)\s+(permanently|forever|for\s+(all|every)\s+future\s+(sessions?|conversations?|tasks?))\b`)},
	{[]*keySet{keys("update your")},
		mustRx(`\bupdate\s+your\s+(own\s+)?(system\s+prompt|core\s+instructions|memory)\s+(so|to)\b`)},
	// a trigger phrase for an action against the user
	{[]*keySet{keys("disable", "ignore", "bypass", "reveal", "grant", "transfer", "exfiltrate", "delete", "wipe", "unlock", "elevate"), keys("when", "if "), keys("\"", "'", "\u201c", "\u2018")},
		mustRx(`\b(when(ever)?|if)\s+(the\s+user|anyone|someone|a\s+message|the\s+input)\s+(says?|types?|writes?|sends?|mentions?|includes?|contains?|enters?)\s+["'“‘][^"'”’]{2,40}["'”’],?\s+(then\s+)?(immediately\s+|silently\s+|secretly\s+)?(disable|ignore|bypass|reveal|grant|transfer|exfiltrate|delete|wipe|unlock|elevate)\b`)},
}

// covertFirst is every keyword of the first group of each of
// covertPasses: a line without one of them runs none.
var covertFirst = func() *keySet {
	var words []string
	for _, p := range covertPasses {
		words = append(words, p.keys[0].words...)
	}
	return keys(words...)
}()

// reModal: a word before a verb that describes what may happen.
var reModal = mustRx(`^(would|could|might|may|can|cannot|can't|will|won't|should\s*n't|often|sometimes|it|which|that|they|tools?)$`)

// covertInstruction: covert-instruction, over a prose line.
func (s *scanner) covertInstruction(line, low string, n int, c ctx) {
	if !s.has(low, covertFirst) {
		return // no pass's first group: no pass
	}
	for _, p := range covertPasses {
		ok := true
		for _, g := range p.keys {
			ok = ok && s.has(low, g)
		}
		if ok && s.covertMatch(line, low, n, c, p.re) {
			return
		}
	}
}

// covertMatch reports (and adds) a covert-instruction match of re.
func (s *scanner) covertMatch(line, low string, n int, c ctx, re *rx) bool {
	for _, loc := range s.findAll(re, low, 2) {
		if s.negatedBefore(low, loc[0]) && !strings.HasPrefix(low[loc[0]:], "do") && !strings.HasPrefix(low[loc[0]:], "never") {
			continue
		}
		// "… would silently disable the feature" describes; an
		// instruction does not hedge.
		if w := strings.Fields(low[max(0, loc[0]-24):loc[0]]); len(w) > 0 && reModal.MatchString(w[len(w)-1]) {
			continue
		}
		s.add(RuleCovertInstruction, SeverityWarn, c, n, line, loc[0])
		return true
	}
	return false
}

// The keywords of undeclaredEnv's checks (has).
var (
	kwUndeclaredEnv1 = keys("token", "secret", "key", "pass", "pwd", "cred", "dsn", "cookie", "jwt", "bearer", "pat", "database_url", "db_url", "webhook_url", "connection_string")
	kwUndeclaredEnv2 = keys("environ", "getenv", "process.env", "env[", "env.fetch", "$env:")
)

// undeclaredEnv: undeclared-credential over a line of code.
func (s *scanner) undeclaredEnv(line string, n int) {
	if s.envDeclared == nil {
		return
	}
	low := s.lower(line)
	if !s.has(low, kwUndeclaredEnv1) {
		return
	}
	var names []string
	if strings.IndexByte(low, '$') >= 0 && s.may(reShellVar, low) {
		for _, m := range reShellVar.FindAllStringSubmatch(low, 8) {
			names = append(names, m[1]+m[2])
		}
	}
	if s.has(low, kwUndeclaredEnv2) && s.may(reEnvName, low) {
		for _, m := range reEnvName.FindAllStringSubmatch(low, 8) {
			for _, g := range m[1:] {
				if g != "" {
					names = append(names, g)
				}
			}
		}
	}
	for _, name := range names {
		if !secretName(name) || s.envDeclared[name] || s.envReported[name] {
			continue
		}
		if s.envReported == nil {
			s.envReported = map[string]bool{}
		}
		s.envReported[name] = true
		declared := make([]string, 0, len(s.envDeclared))
		for d := range s.envDeclared {
			declared = append(declared, strings.ToUpper(d))
		}
		slices.Sort(declared)
		what := "declares no environment"
		if len(declared) > 0 {
			what = "declares " + strings.Join(declared, ", ")
		}
		s.add(RuleUndeclaredCredential, SeverityInfo, ctxExec, n, "reads "+strings.ToUpper(name)+"; "+what, 0)
	}
}
