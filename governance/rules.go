package governance

import (
	"encoding/base64"
	"encoding/hex"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Go's regexp is linear in the input; every expression below also runs only
// on one (bounded) line, after a cheap keyword pre-check.
var (
	reSetupHeading     = regexp.MustCompile(`(?i)prerequisite|install|setup|set up|getting started|quick ?start|requirements|before you (begin|start)`)
	reHeredoc          = regexp.MustCompile(`<<-?\s*['"]?([A-Za-z_][A-Za-z0-9_]*)['"]?`)
	reCommentDirective = regexp.MustCompile(`(?i)\b(ignore|disregard|you must|you should|you are|assistant|agent|ai model|llm|claude|chatgpt|do not tell|don'?t tell|instructions?|execute|run the|send|upload|exfiltrate|always|never)\b`)

	// download-exec
	reProcSubst   = regexp.MustCompile(`\b(ba|z|k)?sh\s+<\(\s*(curl|wget)\b|\b(ba|z|k)?sh\s+-c\s+["']?\$\(\s*(curl|wget)\b|\bsource\s+<\(\s*(curl|wget)\b|\beval\s+["']?\$\(\s*(curl|wget)\b`)
	reChmodRun    = regexp.MustCompile(`\b(curl|wget)\b.*&&.*chmod\s+(\+x|[0-7]*7[0-7]*)\b.*&&\s*(sudo\s+)?\.?/`)
	rePSDownload  = regexp.MustCompile(`\b(iwr|irm|invoke-webrequest|invoke-restmethod|downloadstring|net\.webclient)\b.*(\|\s*iex\b|invoke-expression)|\b(iex|invoke-expression)\b\s*\(?\s*(\(?\s*new-object\s+(system\.)?net\.webclient|iwr|irm|invoke-webrequest|invoke-restmethod)`)
	rePythonFetch = regexp.MustCompile(`\b(python[0-9.]*|python3)\s+-c\b.*(urllib|urlopen|requests\.get|http\.client).*\b(exec|eval)\b|\b(python[0-9.]*)\s+-c\b.*\b(exec|eval)\b.*(urllib|urlopen|requests\.get)`)

	// encoded-payload
	reDecodeExec = regexp.MustCompile(`(base64\s+(-d|--decode|-di|-D)\b|\bxxd\s+(-r|-p\s+-r|-rp|-r\s*-p)\b|openssl\s+(enc\s+)?-?base64\s+-d|certutil\s+-decode|frombase64string|b64decode|atob\()[^\n]*?(\|\s*(sudo\s+)?((ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node|iex)\b|\bexec\b|\beval\b|invoke-expression)`)
	reExecDecode = regexp.MustCompile(`\b(eval|iex|invoke-expression|exec)\b[^\n]*?(base64\s+(-d|--decode|-D)\b|xxd\s+-r|frombase64string|b64decode|atob\()|\b(ba|z)?sh\s+-c\s+["']?\$\([^)]*(base64\s+(-d|--decode|-D)|xxd\s+-r)`)
	rePSEnc      = regexp.MustCompile(`\b(powershell|pwsh)(\.exe)?\b.*\s-(e|en|enc|encodedcommand)\s+[a-z0-9+/=]{16,}`)

	// obfuscation
	reANSIC    = regexp.MustCompile(`\$'([^']*\\(x[0-9a-fA-F]{1,2}|[0-7]{3}|u[0-9a-fA-F]{4})[^']*)'`)
	reIFS      = regexp.MustCompile(`\$\{?ifs\}?`)
	reRev      = regexp.MustCompile(`\|\s*rev\b`)
	reHexEsc   = regexp.MustCompile(`(\\x[0-9a-f]{2}){4,}`)
	reVarCat   = regexp.MustCompile(`(^|[;&|]\s*)\$\{?[a-z_][a-z0-9_]*\}?\$\{?[a-z_][a-z0-9_]*\}?`)
	reQuoteCat = regexp.MustCompile(`["']\s*\+\s*["']|[a-z]["'][a-z]|["']["']`)
	reExecHint = regexp.MustCompile(`\|\s*(sudo\s+)?(ba|z|da|k)?sh\b|\beval\b|\biex\b|invoke-expression|\bexec\b|\b(ba|z)?sh\s+-c\b|\bsystem\(|os\.system|subprocess`)

	// secrets-access
	reSecrets = regexp.MustCompile(`~/\.ssh/(id_[a-z0-9]+\b(\.pub)?|\*|authorized_keys|known_hosts|config)?|\$home/\.ssh|/\.ssh/id_|\.aws/credentials|\.aws/config|\.config/gcloud|application_default_credentials|security\s+(find-generic-password|find-internet-password|dump-keychain|export)|library/keychains|login\.keychain|library/application support/(google/chrome|bravesoftware|microsoft edge|firefox|exodus|electrum|atomic|ledger live)|\.mozilla/firefox|google-chrome/default|\bcookies\.sqlite\b|login data|local state|wallet\.dat|\.electrum|\.bitcoin/|ethereum/keystore|metamask|solana/id\.json|\.kube/config|\.docker/config\.json|\.netrc|\.git-credentials|\.npmrc|\.pypirc|(\.\./|~/|/home/[^/\s]+/|/users/[^/\s]+/)[^\s'"|;]*\.env\b|\b(printenv|env|set)\s*\|\s*(curl|wget|nc|ncat|netcat|base64)\b|\$\((printenv|env)\)|/etc/shadow|/etc/passwd`)

	// persistence
	rePersist = regexp.MustCompile(`\bcrontab\s+(-e|-r|-\s|-$|[^-\s|;&][^\s|;&]*)|\|\s*crontab\b|@reboot\b|/etc/cron|>>?\s*["']?(~|\$home|/home/[^/\s]+|/users/[^/\s]+|/root)?/?\.(bashrc|zshrc|bash_profile|profile|zprofile|zshenv|zlogin|bash_login|config/fish/config\.fish)\b|\btee\s+(-a\s+)?["']?(~|\$home)/\.(bashrc|zshrc|bash_profile|profile|zprofile|zshenv)\b|library/launch(agents|daemons)|\blaunchctl\s+(load|bootstrap|submit|enable)\b|\bsystemctl\s+(--user\s+)?(enable|daemon-reload)\b|/etc/systemd/|\.config/systemd/user|\bloginitems?\b|login item|lssharedfilelist|(>>?|\btee\s+(-a\s+)?|\b(cp|mv|install|ln\s+-sf?)\s+[^|;&]*\s)["']?/etc/|\b(sed|perl)\s+-i[^|;&]*\s/etc/|/etc/(rc\.local|profile\.d|init\.d|sudoers)`)

	// prompt-injection
	reInjectOverride = regexp.MustCompile(`\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+|of\s+|these\s+|those\s+)*(previous|prior|above|earlier|preceding|original|system|safety|developer|existing|other)\s+(instructions?|prompts?|rules|directions|guidelines|messages|directives|constraints)`)
	reInjectSecret   = regexp.MustCompile(`\b(do\s+not|don'?t|never)\s+(tell|inform|alert|notify|warn|let)\s+the\s+user\b|\b(hide|conceal|keep)\s+(this|it|these)\s+(secret\s+)?from\s+the\s+user\b`)
	reInjectReveal   = regexp.MustCompile(`\b(reveal|print|output|show|repeat|leak|dump|disclose)\s+(me\s+)?(your|the)\s+(full\s+|entire\s+|complete\s+)?(system\s+prompt|initial\s+instructions|hidden\s+instructions|system\s+message)`)
	reInjectTag      = regexp.MustCompile(`<\s*/?\s*system\s*>|<\|im_start\|>|<\|system\|>|\[/?inst\]|^\s*(#+\s*)?system\s*:\s|new\s+instructions\s*:`)
	reInjectWarn     = regexp.MustCompile(`\byou\s+are\s+now\b|\bfrom\s+now\s+on,?\s+you\b|\bpretend\s+(to\s+be|you\s+are)\b|\broleplay\s+as\b|(^|[.!]\s+|\byou\s+(will\s+|must\s+|should\s+)?)act\s+as\s+(a|an|the|if)\b|\bdeveloper\s+mode\b|\bjailbreak\b`)

	// password-archive
	reArchive  = regexp.MustCompile(`\.(zip|7z|rar|tar\.gz|tgz|tar|dmg|iso)\b|\b(archive|zip file)\b`)
	rePassword = regexp.MustCompile(`\b(password|passwd|passcode|passphrase|pass|pwd|kennwort|contraseña|mot de passe)\s*(is\s*)?[:=]\s*\S|\bpassword\s+is\s+\S|\bwith\s+(the\s+)?password\s+\S|\b(unzip|7z|7za|unrar)\b[^|;&]*\s-p\s*\S`)
)

var pasteHosts = []string{"pastebin.com", "paste.ee", "hastebin.com", "ghostbin", "rentry.co", "rentry.org",
	"glot.io", "transfer.sh", "webhook.site", "ngrok.io", "ngrok-free.app", "ngrok.app", "ngrok.dev", "file.io",
	"0x0.st", "termbin.com", "dpaste.com", "dpaste.org", "controlc.com", "privatebin", "justpaste.it", "paste.rs",
	"ix.io", "sprunge.us", "anonfiles", "gofile.io", "catbox.moe", "pipedream.net", "requestbin", "trycloudflare.com",
	"serveo.net", "localtunnel.me", "loca.lt", "pastes.io", "bashupload.com", "temp.sh", "tmpfiles.org",
	"interact.sh", "oast.fun", "oast.pro", "oast.me", "burpcollaborator.net", "hookbin.com", "beeceptor.com",
	"paste.c-net.org", "pastebin.pl", "mega.nz", "mediafire.com", "filebin.net", "send.exploit.in", "ufile.io"}

// injection: prompt-injection, error for overrides, warn for role play.
func (s *scanner) injection(line, low string, n int, c ctx) {
	for _, p := range []pass{
		{reInjectOverride, []string{"ignore", "disregard", "forget", "override", "bypass"}},
		{reInjectSecret, []string{"the user"}},
		{reInjectReveal, []string{"system prompt", "instructions", "system message"}},
		{reInjectTag, []string{"system", "[inst", "[/inst", "instructions"}},
	} {
		if s.has(low, p.keys...) {
			if loc := p.re.FindStringIndex(low); loc != nil {
				s.add(RulePromptInjection, SeverityError, c, n, line, loc[0])
				return
			}
		}
	}
	if s.has(low, "you are now", "from now on", "pretend", "roleplay", "act as", "developer mode", "jailbreak") {
		if loc := reInjectWarn.FindStringIndex(low); loc != nil {
			s.add(RulePromptInjection, SeverityWarn, c, n, line, loc[0])
		}
	}
}

// pass is a regexp run only on lines holding one of its keywords.
type pass struct {
	re   *regexp.Regexp
	keys []string
}

// urls: raw-ip-url, paste-host and network-egress over every http(s) URL.
func (s *scanner) urls(line, low string, n int, c ctx) {
	for off := 0; off < len(low); {
		j := strings.Index(low[off:], "://")
		if j < 0 {
			break
		}
		j += off
		off = j + 3
		if !(strings.HasSuffix(low[:j], "http") || strings.HasSuffix(low[:j], "https") ||
			strings.HasSuffix(low[:j], "ftp") || strings.HasSuffix(low[:j], "ws") || strings.HasSuffix(low[:j], "wss")) {
			continue
		}
		end := off
		for end < len(low) && !strings.ContainsRune("/?#\"'`<>()[]{} \t|\\,;*", rune(low[end])) {
			end++
		}
		if end < len(low) && low[end] == '[' { // IPv6 literal
			k := strings.IndexByte(low[end:], ']')
			if k > 0 {
				if a, err := netip.ParseAddr(low[end+1 : end+k]); err == nil && publicAddr(a) {
					s.add(RuleRawIPURL, SeverityError, c, n, line, j)
				}
			}
			continue
		}
		host := low[off:end]
		if at := strings.LastIndexByte(host, '@'); at >= 0 {
			host = host[at+1:]
		}
		if k := strings.LastIndexByte(host, ':'); k >= 0 {
			host = host[:k]
		}
		host = strings.TrimRight(host, ".")
		s.host(host, line, n, j, c)
	}
	// A bare paste host (no URL on the line: URLs were classified above).
	if c != ctxProse && len(low) >= 3 && !strings.Contains(low, "://") {
		if !s.grams.valid || s.grams.of != low {
			s.grams.build(low)
		}
		for _, p := range pasteHosts {
			if len(p) >= 3 && !s.grams.may(p) {
				continue
			}
			if k := strings.Index(low, p); k >= 0 && (k == 0 || !isAlnum(low[k-1]) && low[k-1] != '-') {
				s.add(RulePasteHost, SeverityError, c, n, line, k)
				break
			}
		}
	}
}

// host classifies one URL host.
func (s *scanner) host(host, line string, n, at int, c ctx) {
	if host == "" || s.hosts[host] {
		return
	}
	if a, ok := ipHost(host); ok {
		if publicAddr(a) {
			s.add(RuleRawIPURL, SeverityError, c, n, line, at)
		}
		return
	}
	for _, p := range pasteHosts {
		if host == p || strings.HasSuffix(host, "."+p) || (!strings.Contains(p, ".") && strings.Contains(host, p)) {
			s.add(RulePasteHost, SeverityError, c, n, line, at)
			return
		}
	}
	s.hosts[host] = true // an ordinary host: classified once
	if !plausibleHost(host) || exampleHost(host) || hostAllowed(host, s.opts.AllowedHosts) {
		return
	}
	s.add(RuleNetworkEgress, SeverityWarn, ctxExec, n, line, at)
}

// ipHost parses dotted, decimal and hex IPv4 literals.
func ipHost(h string) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(h); err == nil {
		return a, true
	}
	if v, err := strconv.ParseUint(h, 0, 32); err == nil && h != "" && h[0] >= '0' && h[0] <= '9' {
		return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
	}
	return netip.Addr{}, false
}

func publicAddr(a netip.Addr) bool {
	return a.IsGlobalUnicast() && !a.IsPrivate() && !a.IsLoopback() && !a.IsLinkLocalUnicast()
}

func plausibleHost(h string) bool {
	if !strings.Contains(h, ".") || len(h) > 253 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c >= 0x80) {
			return false
		}
	}
	tld := h[strings.LastIndexByte(h, '.')+1:]
	return len(tld) >= 2 && tld[0] >= 'a' && tld[0] <= 'z'
}

var exampleDomains = []string{"example.com", "example.org", "example.net", "localhost"}

var reservedSuffixes = []string{".example", ".test", ".invalid", ".local", ".localhost", ".internal", ".lan", ".home.arpa"}

func exampleHost(h string) bool {
	for _, e := range exampleDomains {
		if h == e || strings.HasSuffix(h, "."+e) {
			return true
		}
	}
	for _, t := range reservedSuffixes {
		if strings.HasSuffix(h, t) {
			return true
		}
	}
	return false
}

// passwordArchive: an archive and its password within three lines.
func (s *scanner) passwordArchive(line, low string, n int, c ctx) {
	if n < s.pwCheckedTo {
		s.arcLine, s.pwLine = 0, 0
	}
	s.pwCheckedTo = n
	hasArc := (strings.Contains(low, "zip") || strings.Contains(low, "7z") || strings.Contains(low, "rar") ||
		strings.Contains(low, "tar") || strings.Contains(low, "archive") || strings.Contains(low, ".dmg") || strings.Contains(low, ".iso")) && reArchive.MatchString(low)
	hasPw := (strings.Contains(low, "pass") || strings.Contains(low, "pwd") || strings.Contains(low, " -p") ||
		strings.Contains(low, "kennwort") || strings.Contains(low, "contrase") || strings.Contains(low, "mot de")) && rePassword.MatchString(low)
	if hasArc {
		s.arcLine = n
	}
	if hasPw {
		s.pwLine = n
	}
	if (hasArc || hasPw) && s.arcLine > 0 && s.pwLine > 0 && abs(s.arcLine-s.pwLine) <= 3 && s.pwReported != s.file+strconv.Itoa(s.arcLine) {
		s.pwReported = s.file + strconv.Itoa(s.arcLine)
		s.add(RulePasswordArchive, SeverityError, c, n, line, 0)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// has is containsAny for the lowercased line low, with a filter first: the
// 3-byte sequences of low are kept in a bitmap (built once per line), and
// a keyword whose first three bytes are not among them cannot be in low.
// Most keywords are absent from most lines; checking each with
// strings.Contains was a third of a scan.
func (s *scanner) has(low string, subs ...string) bool {
	if len(low) < 3 {
		return containsAny(low, subs...)
	}
	g := &s.grams
	if !g.valid || g.of != low {
		g.build(low)
	}
	for _, x := range subs {
		if len(x) >= 3 && !g.may(x) {
			continue
		}
		if strings.Contains(low, x) {
			return true
		}
	}
	return false
}

// grams is the bitmap of has: one bit per hash of a 3-byte sequence.
type grams struct {
	of    string
	valid bool
	bits  [64]uint64
}

func gramHash(a, b, c byte) uint { return (uint(a)*961 + uint(b)*31 + uint(c)) & 4095 }

func (g *grams) build(s string) {
	clear(g.bits[:])
	for i := 0; i+2 < len(s); i++ {
		h := gramHash(s[i], s[i+1], s[i+2])
		g.bits[h>>6] |= 1 << (h & 63)
	}
	g.of, g.valid = s, true
}

// may reports whether x (3 bytes or more) may be in the line: its first
// three bytes are among the line's.
func (g *grams) may(x string) bool {
	h := gramHash(x[0], x[1], x[2])
	return g.bits[h>>6]&(1<<(h&63)) != 0
}

func containsAny(s string, subs ...string) bool {
	for _, x := range subs {
		if strings.Contains(s, x) {
			return true
		}
	}
	return false
}

func (s *scanner) downloadExec(line, text, low string, off, n int, c ctx) {
	if !s.has(low, "curl", "wget", "iwr", "irm", "invoke-", "fetch", "python", "webclient", "downloadstring") {
		return
	}
	if at := fetchPipe(low); at >= 0 {
		sev := SeverityError
		if s.vendorInstall(low) {
			sev = SeverityWarn
		}
		s.add(RuleDownloadExec, sev, c, n, line, off+at)
		return
	}
	for _, p := range []pass{
		{reProcSubst, []string{"<(", "$("}},
		{reChmodRun, []string{"chmod"}},
		{rePSDownload, []string{"iex", "invoke-expression"}},
		{rePythonFetch, []string{"exec", "eval"}},
	} {
		if !s.has(low, p.keys...) {
			continue
		}
		if loc := p.re.FindStringIndex(low); loc != nil {
			sev := SeverityError
			if s.vendorInstall(low) {
				sev = SeverityWarn // the declared tool's own https install script
			}
			s.add(RuleDownloadExec, sev, c, n, line, off+loc[0])
			return
		}
	}
}

var fetchers = []string{"curl", "wget", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "fetch"}

var pipeInterpreters = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true,
	"fish": true, "perl": true, "ruby": true, "node": true, "php": true, "python": true}

// fetchPipe finds a fetcher whose output is piped (at the first pipe after
// it) into a shell or interpreter: the reFetchPipe pattern, without a
// regexp. It returns the fetcher's offset or -1.
func fetchPipe(low string) int {
	for _, f := range fetchers {
		for from := 0; from < len(low); {
			i := strings.Index(low[from:], f)
			if i < 0 {
				break
			}
			i += from
			from = i + len(f)
			if i > 0 && isWordByte(low[i-1]) || from < len(low) && isWordByte(low[from]) {
				continue
			}
			j := strings.IndexByte(low[from:], '|')
			if j < 0 {
				break
			}
			rest := strings.Fields(low[from+j+1 : min(len(low), from+j+1+200)])
			for len(rest) > 0 && (rest[0] == "sudo" || strings.HasPrefix(rest[0], "-")) {
				rest = rest[1:]
			}
			if len(rest) > 0 {
				w := strings.TrimRight(rest[0], ";)&\"'`")
				if pipeInterpreters[strings.TrimRight(w, "0123456789.")] {
					return i
				}
			}
		}
	}
	return -1
}

func isWordByte(b byte) bool { return isAlnum(b) || b == '_' }

// vendorInstall reports a fetch-and-run of an https URL on a code host
// whose path names a declared binary (e.g. the official install script of
// the tool the skill requires). It is still a finding (warn), not an error.
func (s *scanner) vendorInstall(low string) bool {
	i := strings.Index(low, "https://")
	if i < 0 || strings.Contains(low[i+8:], "http://") || strings.Count(low, "://") != 1 {
		return false
	}
	u := low[i+8:]
	end := strings.IndexAny(u, " \t\"'|)")
	if end >= 0 {
		u = u[:end]
	}
	host, p, _ := strings.Cut(u, "/")
	code := false
	for _, h := range []string{"github.com", "raw.githubusercontent.com", "objects.githubusercontent.com", "gitlab.com", "bitbucket.org"} {
		if host == h {
			code = true
		}
	}
	if !code && !hostAllowed(host, s.opts.AllowedHosts) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if s.bins[seg] {
			return true
		}
	}
	return false
}

func (s *scanner) encoded(line, low string, off, n int, c ctx) {
	if !s.has(low, "base64", "xxd", "frombase64", "b64decode", "atob(", "certutil", "-e", "-en") {
		return
	}
	for _, re := range []*regexp.Regexp{reDecodeExec, reExecDecode, rePSEnc} {
		if loc := re.FindStringIndex(low); loc != nil {
			s.add(RuleEncodedPayload, SeverityError, c, n, line, off+loc[0])
			return
		}
	}
}

func (s *scanner) obfuscation(line, text, low string, off, n int, c ctx) {
	ansi := strings.Contains(low, "$'")
	quoteCat := s.has(low, `"+`, `" +`, `'+`, `' +`, `""`, `''`)
	if !ansi && !quoteCat && !s.has(low, "ifs", "rev", `\x`, "$") {
		return
	}
	sev := SeverityWarn
	if reExecHint.MatchString(low) {
		sev = SeverityError
	}
	if m := reANSIC.FindStringSubmatchIndex(text); ansi && m != nil {
		if fetcher(unescapeANSIC(text[m[2]:m[3]])) {
			sev = SeverityError
		}
		s.add(RuleObfuscation, sev, c, n, line, off+m[0])
		return
	}
	for _, p := range []pass{
		{reIFS, []string{"ifs"}}, {reRev, []string{"rev"}}, {reHexEsc, []string{`\x`}}, {reVarCat, []string{"$"}},
	} {
		if !s.has(low, p.keys...) {
			continue
		}
		if loc := p.re.FindStringIndex(low); loc != nil {
			s.add(RuleObfuscation, sev, c, n, line, off+loc[0])
			return
		}
	}
	if !quoteCat {
		return
	}
	if loc := reQuoteCat.FindStringIndex(low); loc != nil {
		collapsed := strings.NewReplacer(`"`, "", `'`, "", "+", "", " ", "").Replace(low)
		plain := strings.ReplaceAll(low, " ", "")
		for _, w := range []string{"http://", "https://", "curl", "wget", "|sh", "|bash", "base64", "eval"} {
			if strings.Contains(collapsed, w) && !strings.Contains(plain, w) {
				s.add(RuleObfuscation, sev, c, n, line, off+loc[0])
				return
			}
		}
	}
}

func fetcher(s string) bool {
	s = strings.ToLower(s)
	return containsAny(s, "curl", "wget", "http", "bash", "sh ", "python", "nc ", "base64", "eval")
}

// unescapeANSIC decodes \xHH, \NNN and \uHHHH escapes.
func unescapeANSIC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch t := s[i+1:]; {
		case t[0] == 'x':
			j := 1
			for j < len(t) && j < 3 && isHex(t[j]) {
				j++
			}
			if v, err := strconv.ParseUint(t[1:j], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += j
				continue
			}
		case t[0] >= '0' && t[0] <= '7' && len(t) >= 3:
			if v, err := strconv.ParseUint(t[:3], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

func (s *scanner) secrets(line, low string, off, n int, c ctx) {
	if !s.has(low, ".ssh", ".aws", "gcloud", "security", "keychain", "library/", "mozilla", "chrome", "cookies",
		"login data", "local state", "wallet", "electrum", "bitcoin", "ethereum", "metamask", "solana", ".kube", ".docker",
		"netrc", "credentials", ".npmrc", ".pypirc", ".env", "printenv", "env", "/etc/") {
		return
	}
	if loc := reSecrets.FindStringIndex(low); loc != nil {
		m := low[loc[0]:loc[1]]
		if strings.HasSuffix(m, ".pub") || m == "~/.ssh/" && !strings.Contains(low, "cat") && !strings.Contains(low, "cp ") && !strings.Contains(low, "tar") {
			return // a public key, or the directory named without reading it
		}
		s.add(RuleSecretsAccess, SeverityError, c, n, line, off+loc[0])
	}
}

func (s *scanner) persistence(line, low string, off, n int, c ctx) {
	if !s.has(low, "cron", "rc", "profile", "zshenv", "zlogin", "launch", "systemd", "systemctl", "login", "/etc/") {
		return
	}
	if loc := rePersist.FindStringIndex(low); loc != nil {
		s.add(RulePersistence, SeverityError, c, n, line, off+loc[0])
	}
}

// blobs decodes base64 and hex runs (bounded) and rescans decoded text
// with the same rules; decoded executables and archives are errors; long
// opaque runs in code are warns; images are nothing.
func (s *scanner) blobs(line, text string, off, n int, c ctx) {
	tried := 0
	for i := 0; i < len(text) && tried < maxBlobsPerLine; {
		if !isB64(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isB64(text[j]) {
			j++
		}
		run := text[i:j]
		start := i
		i = j
		if len(run) < minBlobLen || !mixed(run) {
			continue
		}
		tried++
		data, ok := decodeBlob(run)
		if !ok {
			if c != ctxProse && len(run) >= opaqueBlobLen {
				s.add(RuleEncodedPayload, SeverityWarn, c, n, line, off+start)
			}
			continue
		}
		if kind, img := binaryKind("", data); kind != "" {
			if !img && len(data) >= 4 && !strings.HasPrefix(kind, "non-text") {
				s.add(RuleEncodedPayload, SeverityError, c, n, line, off+start)
			} else if !img && c != ctxProse && len(run) >= opaqueBlobLen {
				s.add(RuleEncodedPayload, SeverityWarn, c, n, line, off+start)
			}
			continue
		}
		if s.depth >= maxDecodeDepth || s.decodeBud < len(data) {
			continue
		}
		s.decodeBud -= len(data)
		inner := s.rescan(string(data))
		worst := ""
		for _, f := range inner {
			if f.Rule == RuleNetworkEgress || f.Rule == RuleUndeclaredBinary {
				continue
			}
			if worst == "" || f.Severity == SeverityError {
				worst = f.Severity
			}
		}
		if worst != "" {
			dec := strings.TrimSpace(string(data))
			s.add(RuleEncodedPayload, worst, c, n, "decodes to: "+dec, 0)
		} else if c != ctxProse && len(run) >= opaqueBlobLen {
			s.add(RuleEncodedPayload, SeverityWarn, c, n, line, off+start)
		}
	}
}

// rescan runs the line rules over decoded text in execution context and
// returns the findings instead of recording them.
func (s *scanner) rescan(text string) []Finding {
	var out []Finding
	saveSink, saveHosts := s.sink, s.hosts
	s.sink, s.hosts = &out, map[string]bool{}
	s.depth++
	for i, l := range splitLines([]byte(text)) {
		if i >= 64 {
			break
		}
		s.checkLine(l, 0, ctxExec)
	}
	s.depth--
	s.sink, s.hosts = saveSink, saveHosts
	return out
}

func isB64(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '=' || c == '-' || c == '_'
}

// mixed: a run that looks encoded, not like a word or a path.
func mixed(run string) bool {
	var up, lo, dig int
	for i := 0; i < len(run); i++ {
		switch c := run[i]; {
		case c >= 'A' && c <= 'Z':
			up++
		case c >= 'a' && c <= 'z':
			lo++
		case c >= '0' && c <= '9':
			dig++
		}
	}
	if strings.Count(run, "/") > len(run)/8 || strings.Count(run, "-") > len(run)/8 {
		return false
	}
	hexOnly := up == 0 && len(strings.Trim(run, "0123456789abcdef")) == 0 || lo == 0 && len(strings.Trim(run, "0123456789ABCDEF")) == 0
	return hexOnly && dig > 0 || up > 0 && lo > 0 && (dig > 0 || len(run) >= 40)
}

func decodeBlob(run string) ([]byte, bool) {
	if len(run)%2 == 0 && len(strings.Trim(strings.ToLower(run), "0123456789abcdef")) == 0 {
		if b, err := hex.DecodeString(run); err == nil {
			return b, true
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(run); err == nil {
			if _, isImg := binaryKind("", b); isImg || printable(b) {
				return b, true
			}
			if k, _ := binaryKind("", b); k != "" && !strings.HasPrefix(k, "non-text") {
				return b, true
			}
		}
	}
	return nil, false
}

// printable: valid UTF-8, almost all printable.
func printable(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	bad := 0
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\t' && c != '\r' || c == 0x7f {
			bad++
		}
	}
	return bad*20 <= len(b)
}
