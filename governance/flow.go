package governance

import (
	"encoding/base64"
	"strings"
)

// Bounds of the flow analysis.
const (
	maxFlowNames = 256      // tainted names remembered per code unit
	maxStmt      = 16 << 10 // a statement joined over lines
	maxStmtLines = 64       // lines one statement may span
)

// taint is what a name holds.
type taint struct {
	env     bool     // the whole environment, or an iteration of it
	enc     bool     // encoded (base64, hex, compressed) after it was read
	secrets []string // the credential variables read into it (their names, lowercase)
	decoded bool     // text decoded from a literal (an endpoint hidden in base64)
}

func (t *taint) merge(o *taint) {
	t.env = t.env || o.env
	t.enc = t.enc || o.enc
	t.decoded = t.decoded || o.decoded
	for _, s := range o.secrets {
		if len(t.secrets) < 8 && !contains(t.secrets, s) {
			t.secrets = append(t.secrets, s)
		}
	}
}

func (t *taint) empty() bool { return !t.env && len(t.secrets) == 0 }

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// flowState follows one unit of code (a code block, a script file) as it
// is read, statement by statement: which names hold secrets or the
// environment, which hold URLs, and which calls send them. It is
// flow-insensitive within the unit (a name once tainted stays tainted),
// which is how a reviewer reads a short script.
type flowState struct {
	names map[string]*taint
	urls  map[string]string // name → the URL (or decoded text) assigned to it
	stmt  strings.Builder
	first int // first line of the statement being joined (0: none)
	depth int // open brackets of the statement being joined
	lines int
	found bool // a finding was made in this unit: one is enough
	// inTriple: inside a triple-quoted string (Python), which is text
	inTriple bool
	harvest  map[string]bool // names that gathered several credentials
}

func (f *flowState) reset() {
	f.names, f.urls, f.harvest = nil, nil, nil
	f.stmt.Reset()
	f.first, f.depth, f.lines, f.found, f.inTriple = 0, 0, 0, false, false
}

// flowKeys: a line without one of them neither reads a secret nor sends
// one, nor carries a tainted name on (when nothing is tainted yet).
var flowKeys = keys("environ", "getenv", "process.env", "env[", "env.fetch", "$env:", "token", "secret", "passw",
	"api_key", "apikey", "credential", "http://", "https://", "b64decode", "fromhex", "unhexlify", "atob(", "b85decode", "a85decode")

// flowLine reads one line of code of the current unit.
func (s *scanner) flowLine(line string, n int, c ctx) {
	f := &s.flow
	low := s.lower(line)
	// Python's triple-quoted strings (docstrings, prompts) are text.
	if k := strings.Count(low, `"""`) + strings.Count(low, "'''"); k > 0 || f.inTriple {
		if k%2 == 1 {
			f.inTriple = !f.inTriple
		}
		if k == 0 || f.inTriple || k%2 == 1 {
			return
		}
	}
	if f.first == 0 {
		if f.names == nil && !s.has(low, flowKeys) {
			return
		}
		f.first = n
	}
	if f.stmt.Len() < maxStmt {
		f.stmt.WriteString(line[:min(len(line), maxStmt-f.stmt.Len())])
		f.stmt.WriteByte(' ')
	}
	f.depth = max(0, f.depth+bracketDelta(low))
	f.lines++
	if f.depth > 0 && f.lines < maxStmtLines {
		return
	}
	s.flowFlush(line, c)
}

// flowFlush reads the statement joined so far (at its end, or at the end
// of its code block); line is the last line read, for the excerpt.
func (s *scanner) flowFlush(line string, c ctx) {
	f := &s.flow
	if f.first == 0 {
		return
	}
	stmt, first := f.stmt.String(), f.first
	f.stmt.Reset()
	f.first, f.depth, f.lines = 0, 0, 0
	s.flowStmt(lowerASCII(stmt), stmt, first, line, c)
}

// bracketDelta counts ( [ { opened less those closed on a line, outside
// string literals (roughly: quotes are skipped pairwise).
func bracketDelta(low string) int {
	d := 0
	var q byte
	for i := 0; i < len(low); i++ {
		ch := low[i]
		switch {
		case q != 0:
			if ch == '\\' {
				i++
			} else if ch == q {
				q = 0
			}
		case ch == '"' || ch == '\'' || ch == '`':
			q = ch
		case ch == '#' && (i == 0 || low[i-1] == ' '):
			return d // a comment
		case ch == '(' || ch == '[' || ch == '{':
			d++
		case ch == ')' || ch == ']' || ch == '}':
			d--
		}
	}
	return d
}

// netCallKeys: a statement without one of them has no reNetCall.
var netCallKeys = []string{"post", "put", "patch", "request", "get", "urlopen", "fetch", "axios", "send", "image()"}

var (
	// reForIn: for k, v in …: / for (const [k, v] of …)
	reForIn = mustRx(`\bfor\s*\(?\s*(?:(?:const|let|var)\s+)?\[?\s*([a-z_][a-z0-9_]*)(?:\s*,\s*([a-z_][a-z0-9_]*))?\s*\]?\s+(?:in|of)\s+(.+)$`)
	// reMutate: NAME.update(…), NAME.append(…), NAME.push(…), NAME.extend(…)
	reMutate = mustRx(`\b([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)\.(update|append|extend|push|setdefault|add|write)\((.*)`)
	// reEncode: what encodes or packs data on its way out.
	reEncode = mustRx(`b(64|32|16|85)encode|base64\.(standard_b64|urlsafe_b64)?encode|hexlify|\.hex\(\)|encode\(\s*['"](hex|base64|rot13)|btoa\(|\.tostring\(\s*['"](base64|hex)|zlib\.compress|gzip\.compress|\bbase64\b[^|]*\|`)
	// reDecodeLit: a literal decoded in code.
	reDecodeLit = mustRx(`(b64decode|b32decode|b85decode|a85decode|unhexlify|fromhex|atob|buffer\.from)\(\s*b?["']([a-z0-9+/=_-]{8,})["']`)
	// reNetCall: a call that sends data over the network.
	reNetCall = mustRx(`\b(requests|httpx|session|sess|client|http|https|axios|aiohttp|s)\.(post|put|patch|request|get)\s*\(|\burlopen\s*\(|\burllib\.request\.request\s*\(|\bfetch\s*\(|\baxios\s*\(|\bsendbeacon\s*\(|\.sendall?\s*\(|\.sendto\s*\(|\.sendmail\s*\(|\bnew\s+image\(\)\.src\s*=`)
	// reShellCall: code that runs a command line.
	reShellCall = mustRx(`\b(os\.system|os\.popen|subprocess\.(run|call|popen|check_output|check_call|getoutput|getstatusoutput)|exec(sync)?|spawn(sync)?|system|popen|shell_exec|passthru|%x|qx)\s*\(`)
	// reDNSCall: code that resolves a name it built.
	reDNSCall = mustRx(`\b(gethostbyname(_ex)?|getaddrinfo|dns\.resolve\w*|dns\.lookup|resolver\.(resolve|query)|dnspython|nslookup|dig)\s*\(`)
	// reEnvName: a variable of the environment read by name.
	reEnvName = mustRx(`os\.environ\s*\[\s*f?["']([a-z0-9_]+)["']|os\.environ\.get\(\s*["']([a-z0-9_]+)["']|os\.getenv\(\s*["']([a-z0-9_]+)["']|process\.env\.([a-z0-9_]+)|process\.env\[\s*["']([a-z0-9_]+)["']|\benv\[\s*["']([a-z0-9_]+)["']|env\.fetch\(\s*["']([a-z0-9_]+)["']|\$env:([a-z0-9_]+)|getenv\(\s*["']([a-z0-9_]+)["']`)
	// reEnvWhole: the whole environment as a value.
	reEnvWhole = mustRx(`os\.environ(\.copy\(\)|\.items\(\)|\.keys\(\)|\.values\(\)|\s*[),}\]]|\s*$)|dict\(\s*os\.environ|\*\*os\.environ|process\.env\s*[),}\]]|\.\.\.process\.env|object\.(entries|keys|values)\(\s*process\.env|json\.stringify\(\s*process\.env|\benv\.to_h\b|\benv\.to_hash\b|get-childitem\s+env:|\bgci\s+env:`)
)

// flowStmt reads one statement of code (lowercased; orig as written).
func (s *scanner) flowStmt(stmt, orig string, n int, line string, c ctx) {
	f := &s.flow
	if f.found {
		return
	}
	// Only a statement that reads a secret, uses a tainted name, names a
	// URL or decodes a literal can matter; the others are most of the
	// code.
	// What the statement's value holds.
	val := stmt
	var lhs []string
	if strings.Contains(stmt, "for") && (strings.Contains(stmt, " in ") || strings.Contains(stmt, " of ")) {
		if m := reForIn.FindStringSubmatch(stmt); m != nil {
			lhs, val = []string{m[1], m[2]}, m[3]
		}
	}
	if lhs == nil {
		if names, v, ok := assignment(stmt); ok {
			lhs, val = names, v
		} else if containsAny(stmt, ".update(", ".append(", ".extend(", ".push(", ".setdefault(", ".add(", ".write(") {
			if m := reMutate.FindStringSubmatch(stmt); m != nil {
				lhs, val = []string{m[1]}, m[3]
			}
		}
	}
	// What a request returns is the server's data, not what it was
	// signed in with; a credential in a header or auth value is used, not
	// carried on.
	var t taint
	if lhs != nil && !(containsAny(val, netCallKeys...) && reNetCall.MatchString(val)) {
		t = s.taintOf(stripAuth(val))
	}
	for _, name := range lhs {
		if name == "" || t.empty() && !t.decoded {
			continue
		}
		if f.names == nil {
			f.names = map[string]*taint{}
		}
		if old := f.names[name]; old != nil {
			old.merge(&t)
		} else if len(f.names) < maxFlowNames {
			tt := t
			f.names[name] = &tt
		}
	}
	// Several credentials read into one structure, then serialized or
	// written out: credential harvesting.
	if len(lhs) == 1 && len(t.secrets) >= 2 && countSecretReads(val) >= 2 {
		if f.harvest == nil {
			f.harvest = map[string]bool{}
		}
		f.harvest[lhs[0]] = true
	}
	for name := range f.harvest {
		if hasWord(stmt, name) && reSerialize.MatchString(stmt) && !f.found {
			f.found = true
			s.add(RuleCredentialHarvest, SeverityWarn, c, n, line, 0)
			break
		}
	}
	if len(lhs) == 1 {
		if u := firstURL(val); u != "" {
			if f.urls == nil {
				f.urls = map[string]string{}
			}
			f.urls[lhs[0]] = u
		} else if m := reDecodeLit.FindStringSubmatchIndex(val); m != nil {
			// The literal as written: base64 is case-sensitive. val is a
			// suffix of stmt, which has orig's offsets.
			off := len(stmt) - len(val)
			if d, ok := decodeLiteral(val[m[2]:m[3]], orig[off+m[4]:off+m[5]]); ok {
				if f.urls == nil {
					f.urls = map[string]string{}
				}
				f.urls[lhs[0]] = "decoded:" + d
			}
		}
	}
	s.flowSinks(stmt, n, line, c)
}

// assignment parses "NAME = value" (also NAME.attr, NAME[…], a, b =,
// +=, :=, and const/let/var/local/my/export before it) and returns the
// names assigned and the value.
func assignment(stmt string) (names []string, val string, ok bool) {
	t := strings.TrimLeft(stmt, " \t")
	for _, kw := range []string{"const ", "let ", "var ", "local ", "my ", "export "} {
		if strings.HasPrefix(t, kw) {
			t = strings.TrimLeft(t[len(kw):], " \t")
			break
		}
	}
	i := 0
	for {
		// One target: $?name(.name)*([…])?
		if i < len(t) && t[i] == '$' {
			i++
		}
		start := i
		for i < len(t) && (isIdentByte(t[i]) || t[i] == '.' && i > start) {
			i++
		}
		if i == start || t[start] >= '0' && t[start] <= '9' {
			return nil, "", false
		}
		names = append(names, t[start:i])
		if i < len(t) && t[i] == '[' {
			k := strings.IndexByte(t[i:], ']')
			if k < 0 {
				return nil, "", false
			}
			i += k + 1
		}
		for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
			i++
		}
		if i < len(t) && t[i] == ',' {
			i++
			for i < len(t) && (t[i] == ' ' || t[i] == '\t') {
				i++
			}
			continue
		}
		break
	}
	if i < len(t) && (t[i] == '+' || t[i] == '|' || t[i] == ':') {
		i++
	}
	if i >= len(t) || t[i] != '=' || i+1 < len(t) && (t[i+1] == '=' || t[i+1] == '>') {
		return nil, "", false
	}
	return names, t[i+1:], true
}

// taintOf returns what an expression holds: secrets read by name, the
// environment, tainted names, encoding.
func (s *scanner) taintOf(expr string) taint {
	var t taint
	if containsAny(expr, "environ", "process.env", "env.to_h", "env:") && reEnvWhole.MatchString(expr) {
		t.env = true
	}
	if containsAny(expr, "environ", "getenv", "process.env", "env[", "env.fetch", "$env:") {
		for _, m := range reEnvName.FindAllStringSubmatch(expr, 8) {
			for _, g := range m[1:] {
				if g != "" && secretName(g) && !contains(t.secrets, g) {
					t.secrets = append(t.secrets, g)
				}
			}
		}
	}
	if len(s.flow.names) > 0 {
		for name, nt := range s.flow.names {
			if hasWord(expr, name) {
				t.merge(nt)
			}
		}
	}
	if !t.empty() && reEncode.MatchString(expr) {
		t.enc = true
	}
	if reDecodeLit.MatchString(expr) {
		t.decoded = true
	}
	return t
}

// reSerialize: data turned into text or written out.
var reSerialize = mustRx(`\b(json\.dumps?|pickle\.dumps?|yaml\.dump|b64encode|base64|str|repr|print|json\.stringify|btoa|tostring)\s*\(|\.write\s*\(|\bwritefile(sync)?\s*\(`)

// countSecretReads counts the credential variables an expression reads by
// name.
func countSecretReads(expr string) int {
	n := 0
	for _, m := range reEnvName.FindAllStringSubmatch(expr, 16) {
		for _, g := range m[1:] {
			if g != "" && secretName(g) {
				n++
			}
		}
	}
	return n
}

// hasWord reports name in expr as a whole identifier.
func hasWord(expr, name string) bool {
	for from := 0; from < len(expr); {
		i := strings.Index(expr[from:], name)
		if i < 0 {
			return false
		}
		i += from
		j := i + len(name)
		if (i == 0 || !isIdentByte(expr[i-1])) && (j == len(expr) || !isIdentByte(expr[j])) {
			return true
		}
		from = j
	}
	return false
}

func isIdentByte(b byte) bool { return isWordByte(b) }

// secretParts are the words of a variable name that say it holds a
// credential.
var secretParts = map[string]bool{"token": true, "tokens": true, "secret": true, "secrets": true, "password": true,
	"passwd": true, "pwd": true, "pass": true, "passphrase": true, "apikey": true, "credential": true, "credentials": true,
	"creds": true, "cookie": true, "cookies": true, "dsn": true, "pat": true, "jwt": true,
	"bearer": true, "privatekey": true}

// secretName reports a variable name (lowercase) of a credential:
// GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DOCKER_PASSWORD, OPENAI_API_KEY,
// DATABASE_URL, SSH_PRIVATE_KEY, GCP_SERVICE_ACCOUNT_KEY.
func secretName(name string) bool {
	parts := strings.Split(strings.Trim(name, "_"), "_")
	for i, p := range parts {
		if secretParts[p] {
			return true
		}
		if p == "key" && (i > 0 || len(parts) == 1) {
			return true // API_KEY, ACCESS_KEY, ACCOUNT_KEY; not KEY_PATH
		}
		if i > 0 && (parts[i-1] == "database" || parts[i-1] == "db" || parts[i-1] == "webhook") && p == "url" {
			return true
		}
		if i > 0 && parts[i-1] == "connection" && p == "string" {
			return true
		}
	}
	return false
}

// vendorWords are the words of credential names that name no service.
var vendorWords = map[string]bool{"api": true, "key": true, "token": true, "secret": true, "access": true, "auth": true,
	"bot": true, "user": true, "client": true, "id": true, "service": true, "account": true, "app": true,
	"personal": true, "private": true, "password": true, "pass": true, "session": true, "url": true, "the": true,
	"my": true, "prod": true, "staging": true, "dev": true, "test": true, "default": true, "env": true, "bearer": true,
	"refresh": true, "oauth": true, "pat": true, "credentials": true, "credential": true, "ssh": true, "jwt": true}

// vendorAlias: a credential name's word and the host words of its
// service.
var vendorAlias = map[string][]string{"aws": {"amazonaws", "aws"}, "gcp": {"googleapis", "google"}, "google": {"googleapis", "google"},
	"gh": {"github"}, "hf": {"huggingface", "hf.co"}, "azure": {"azure", "microsoft", "windows.net"}, "ms": {"microsoft"},
	"gemini": {"googleapis", "google"}, "claude": {"anthropic"}, "npm": {"npmjs"}, "pypi": {"pypi", "pythonhosted"},
	"docker": {"docker"}, "gitlab": {"gitlab"}, "openai": {"openai", "azure"}}

// ownService reports a destination (URL or host) that belongs to the
// service a credential is named after (OPENROUTER_API_KEY and
// openrouter.ai, NCBI_API_KEY and eutils.ncbi.nlm.nih.gov).
func ownServiceOf(secret, dest string) bool {
	if dest == "" || strings.HasPrefix(dest, "decoded:") {
		return false
	}
	for _, w := range strings.Split(secret, "_") {
		if len(w) < 2 || vendorWords[w] {
			continue
		}
		if al, ok := vendorAlias[w]; ok {
			for _, a := range al {
				if strings.Contains(dest, a) {
					return true
				}
			}
		}
		if len(w) >= 3 && strings.Contains(dest, w) {
			return true
		}
	}
	return false
}

// firstURL returns the first http(s) URL of text, lowercase, or "".
func firstURL(text string) string {
	i := strings.Index(text, "http://")
	if j := strings.Index(text, "https://"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	if i < 0 {
		return ""
	}
	end := i
	for end < len(text) && !strings.ContainsRune(" \t\"'`<>(){}[],;|\\", rune(text[end])) {
		end++
	}
	return text[i:end]
}

// decodeLiteral decodes a base64 or hex literal of the named function.
func decodeLiteral(fn, lit string) (string, bool) {
	var b []byte
	var err error
	switch fn {
	case "unhexlify", "fromhex":
		lit = lowerASCII(lit)
		if len(lit)%2 != 0 {
			return "", false
		}
		b = make([]byte, len(lit)/2)
		for i := 0; i < len(b); i++ {
			hi, lo := unhex(lit[2*i]), unhex(lit[2*i+1])
			if hi < 0 || lo < 0 {
				return "", false
			}
			b[i] = byte(hi<<4 | lo)
		}
	default:
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			if b, err = enc.DecodeString(lit); err == nil {
				break
			}
		}
		if err != nil {
			return "", false
		}
	}
	if !printable(b) {
		return "", false
	}
	return string(b), true
}

func unhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	}
	return -1
}

// flowSinks finds the calls of a statement that send tainted data: over
// HTTP in a request's body (not in its headers or auth, where a
// credential goes to be used), through a command line, or in a DNS name.
func (s *scanner) flowSinks(stmt string, n int, line string, c ctx) {
	f := &s.flow
	if len(f.names) == 0 && !containsAny(stmt, "environ", "getenv", "process.env", "env[", "env.fetch", "$env:", "env.to_h", "env:") ||
		!containsAny(stmt, "post", "put", "patch", "request", "get(", "urlopen", "fetch", "axios", "send", "image()",
			"system", "popen", "subprocess", "exec", "spawn", "shell_exec", "passthru", "%x", "qx", "gethostby", "getaddrinfo",
			"resolve", "lookup", "query", "nslookup", "dig") {
		return
	}
	for _, loc := range reNetCall.FindAllStringIndex(stmt, 4) {
		args := callArgs(stmt, loc[1]-1)
		body := stripAuth(args)
		t := s.taintOf(body)
		if t.empty() {
			continue
		}

		get := strings.Contains(stmt[loc[0]:loc[1]], ".get")
		dest := firstURL(args)
		if dest == "" {
			// The first argument named: a URL assigned before; or a name
			// holding one used in it (f"{self.base_url}/search").
			if name := firstIdent(args); name != "" {
				dest = f.urls[name]
			}
			for name, u := range f.urls {
				if dest == "" && hasWord(args, name) {
					dest = u
				}
			}
		}
		s.flowAdd(exfilSeverity(t, dest, get), n, line, c)
		return
	}
	for _, re := range []*rx{reShellCall, reDNSCall} {
		for _, loc := range re.FindAllStringIndex(stmt, 4) {
			args := callArgs(stmt, loc[1]-1)
			t := s.taintOf(args)
			if t.empty() {
				continue
			}
			if re == reDNSCall || dnsCommand(args) {
				// A secret in a name looked up: the DNS server of that
				// domain receives it.
				s.flowAdd(SeverityError, n, line, c)
				return
			}
			if netCommandIn(args) {
				s.flowAdd(exfilSeverity(t, firstURL(args), false), n, line, c)
				return
			}
		}
	}
}

// exfilSeverity: tainted data sent to dest. The environment, an encoded
// secret, or one sent to an address decoded at run time, is an error; a
// named secret in a request to another service than its own holds the
// skill (warn); a credential in a GET's parameters is how many APIs take
// one ("").
func exfilSeverity(t taint, dest string, get bool) string {
	switch {
	case t.env || t.enc || strings.HasPrefix(dest, "decoded:"):
		return SeverityError
	case get:
	default:
		for _, sec := range t.secrets {
			if !ownServiceOf(sec, dest) {
				return SeverityWarn
			}
		}
	}
	return ""
}

// flowAdd reports a code unit's finding (one per unit).
func (s *scanner) flowAdd(sev string, n int, line string, c ctx) {
	if sev == "" {
		return
	}
	s.flow.found = true
	s.add(RuleDataExfiltration, sev, c, n, line, 0)
}

// callArgs returns the argument text of the call whose "(" is at open.
func callArgs(stmt string, open int) string {
	if open < 0 || open >= len(stmt) || stmt[open] != '(' {
		// new Image().src = …: the rest of the statement.
		return stmt[min(open+1, len(stmt)):]
	}
	d := 0
	for i := open; i < len(stmt); i++ {
		switch stmt[i] {
		case '(':
			d++
		case ')':
			d--
			if d == 0 {
				return stmt[open+1 : i]
			}
		}
	}
	return stmt[open+1:]
}

// reAuthArg: the parts of a call's arguments where a credential is used,
// not sent as data: headers, auth, an Authorization value.
var reAuthArg = mustRx(`\b(headers|auth|cert|verify)\s*[=:]\s*(\{[^{}]*\}|\([^()]*\)|[a-z_][a-z0-9_.]*(\([^()]*\))?)|["']?authorization["']?\s*:\s*[^,}]*|["']?x-[a-z-]*(key|token|auth)[a-z-]*["']?\s*:\s*[^,}]*`)

func stripAuth(args string) string {
	if !strings.Contains(args, "header") && !strings.Contains(args, "auth") && !strings.Contains(args, "x-") {
		return args
	}
	return reAuthArg.ReplaceAllString(args, " ")
}

// firstIdent returns the first argument when it is a bare name.
func firstIdent(args string) string {
	a := strings.TrimSpace(args)
	end := 0
	for end < len(a) && isIdentByte(a[end]) {
		end++
	}
	if end == 0 || end < len(a) && a[end] != ',' && a[end] != ' ' && a[end] != ')' {
		return ""
	}
	return a[:end]
}

// dnsCommand reports a command line that looks a name up.
func dnsCommand(cmd string) bool {
	for _, w := range []string{"dig ", "nslookup ", "host ", "drill ", "resolvectl query", "ping "} {
		if strings.Contains(cmd, w) {
			return true
		}
	}
	return false
}

// netCommandIn reports a command line that runs a network tool.
func netCommandIn(cmd string) bool {
	for seg := range strings.SplitSeq(cmd, "|") {
		if netCommand(strings.Trim(seg, "\"'` f")) {
			return true
		}
	}
	return false
}

// reShellVar: a variable used in a command line: $NAME, ${NAME}, and
// $(NAME), which some write for one.
var reShellVar = mustRx(`\$\{?([a-z_][a-z0-9_]*)\}?|\$\(([a-z_][a-z0-9_]*)\)`)

// reKVSecret: data that names what it carries ("token=$X",
// "credential=${v}").
var reKVSecret = mustRx(`\b(credentials?|token|secret|password|passwd|api_?key|apikey|session|cookie)s?=["']?\$`)

// shellTaint returns what command text carries: the environment dumped
// (a substitution of env or printenv), credential variables, key=value
// data naming a credential, and whether it is encoded on the way.
func shellTaint(text string) taint {
	var t taint
	if containsAny(text, "$(env", "$(printenv", "`env", "`printenv", "/proc/self/environ", "/proc/1/environ", "$(set)", "$(export -p") {
		t.env = true
	}
	if strings.IndexByte(text, '$') >= 0 {
		for _, m := range reShellVar.FindAllStringSubmatch(text, 16) {
			name := m[1] + m[2]
			if secretName(name) && !contains(t.secrets, name) {
				t.secrets = append(t.secrets, name)
			}
		}
		if len(t.secrets) == 0 && reKVSecret.MatchString(text) {
			t.secrets = append(t.secrets, "credential")
		}
	}
	if !t.empty() && containsAny(text, "base64", "xxd", "openssl enc", "| od", "gzip", "basenc", "uuencode") {
		t.enc = true
	}
	return t
}

// pipeSegments splits a command at single "|" outside quotes and $( ).
func pipeSegments(stmt string) []string {
	var out []string
	var q byte
	start, depth := 0, 0
	for i := 0; i < len(stmt); i++ {
		ch := stmt[i]
		switch {
		case q == '\'':
			if ch == q {
				q = 0
			}
		case ch == '$' && i+1 < len(stmt) && stmt[i+1] == '(':
			depth++
			i++
		case ch == ')' && depth > 0:
			depth--
		case q != 0:
			if ch == q {
				q = 0
			}
		case ch == '"' || ch == '\'':
			q = ch
		case depth > 0:
		case ch == '|' && (i+1 >= len(stmt) || stmt[i+1] != '|') && (i == 0 || stmt[i-1] != '|'):
			out = append(out, stmt[start:i])
			start = i + 1
		}
	}
	return append(out, stmt[start:])
}

// shellStatements splits a command line at ;, && and || outside quotes
// (a $( … ) stays whole).
func shellStatements(low string) []string {
	var out []string
	var q byte
	depth, start := 0, 0
	for i := 0; i < len(low); i++ {
		ch := low[i]
		switch {
		case q != 0:
			if ch == q {
				q = 0
			}
		case ch == '"' || ch == '\'':
			q = ch
		case ch == '$' && i+1 < len(low) && low[i+1] == '(':
			depth++
			i++
		case ch == ')' && depth > 0:
			depth--
		case depth > 0:
		case ch == ';' || ch == '&' && i+1 < len(low) && low[i+1] == '&' || ch == '|' && i+1 < len(low) && low[i+1] == '|':
			out = append(out, low[start:i])
			if ch != ';' {
				i++
			}
			start = i + 1
		}
	}
	return append(out, low[start:])
}

// reCurlAuth: the parts of a network command where a credential is used
// to sign in, not sent as data: headers, user:password, bearer options.
var reCurlAuth = mustRx(`(\s-h|--header|-u|--user|--oauth2-bearer|-headers|--proxy-user)\s*(=\s*)?("[^"]*"|'[^']*'|\S+)`)

// The keywords of exfilShell's checks (has).
var (
	kwExfilShell1 = keys("printenv", "environ", "export -p", "env |", "env|", "(env", "`env", "env)")
	kwExfilShell2 = keys("curl", "wget", "nc ", "ncat", "netcat", "socat", "telnet", "dig ", "nslookup", "host ", "drill ", "http ", "https ", "invoke-webrequest", "invoke-restmethod", "iwr ", "irm ", "ping ", "xh ")
)

// exfilShell: a command line that sends the environment or a credential
// out: piped into a network tool that sends what it reads (curl -d @-,
// nc), put in a network tool's data (curl --data "$(env)", -d
// "token=$KEY"), or looked up in a DNS name (dig $(echo $KEY | base64).x).
func (s *scanner) exfilShell(line, low string, off, n int, c ctx) {
	if strings.IndexByte(low, '$') < 0 && !s.has(low, kwExfilShell1) || !s.has(low, kwExfilShell2) {
		return
	}
	for _, p := range s.shellPipes(low) {
		stmt := p.text
		var src taint
		echoedVar, encoded := false, false // a variable echoed, then encoded
		for i, seg := range p.stages {
			words := strings.Fields(seg)
			k := skipPrefix(words, 0)
			if k >= len(words) {
				continue
			}
			cmd := strings.TrimSuffix(baseName(strings.Trim(words[k], "\"'`(){}")), ".exe")
			args := strings.Join(words[k+1:], " ")
			switch {
			case cmd == "env" || cmd == "printenv" || cmd == "set" && args == "" || cmd == "export" && args == "-p":
				src.env = true
			case cmd == "echo" || cmd == "printf" || cmd == "cat" || cmd == "print":
				t := shellTaint(args)
				src.merge(&t)
				echoedVar = echoedVar || cmd != "cat" && strings.IndexByte(args, '$') >= 0
			case containsAny(cmd, "base64", "xxd", "basenc", "uuencode", "gzip", "openssl", "od"):
				src.enc = src.enc || !src.empty()
				encoded = encoded || echoedVar
			case cmd == "dig" || cmd == "nslookup" || cmd == "host" || cmd == "drill" || cmd == "ping":
				if t := shellTaint(args); !t.empty() && strings.Contains(args, ").") || !t.empty() && regexpDNSVar.MatchString(args) {
					s.add(RuleDataExfiltration, SeverityError, c, n, line, off+max(0, strings.Index(low, seg)))
					return
				}
			case netTools[cmd] || cmd == "xargs" && netCommand(seg) || cmd == "xh":
				reads := i > 0 && (containsAny(args, "@-", "-t -", "--upload-file -", "/dev/stdin", "--post-file=-") ||
					cmd == "nc" || cmd == "ncat" || cmd == "netcat" || cmd == "socat" || cmd == "telnet" || cmd == "xargs")
				data := " " + args
				if s.may(reCurlAuth, data) { // else there is nothing to replace
					data = reCurlAuth.ReplaceAllString(data, " ")
				}
				t := shellTaint(data)
				if reads {
					t.merge(&src)
				}
				if t.empty() {
					if reads && encoded {
						// A variable's value encoded on its way out: what
						// leaves is hidden from whoever reads the command.
						s.add(RuleObfuscatedCode, SeverityWarn, c, n, line, off+max(0, strings.Index(low, seg)))
						return
					}
					continue
				}
				dest := firstURL(stmt)
				get := !reads && !containsAny(data, "-d ", "-d\"", "-d'", "--data", "-f ", "--form", "--post-", "-t ", "--upload", "-body", "-x post", "-x put", "--request post", "-request post")
				if sev := exfilSeverity(t, dest, get); sev != "" {
					s.add(RuleDataExfiltration, sev, c, n, line, off+max(0, strings.Index(low, seg)))
					return
				}
			}
		}
	}
}

// regexpDNSVar: a variable inside a name to look up ($KEY.example.org).
var regexpDNSVar = mustRx(`\$\{?[a-z_][a-z0-9_]*\}?\.[a-z0-9-]+\.`)

var (
	// reSendVerb: an instruction's verb of sending (the base form: "sends"
	// describes, "send" tells).
	reSendVerb = mustRx(`\b(send|forward|upload|post|transmit|exfiltrate|relay|sync|email|mail|share|submit|leak|beacon|copy|pipe|report)\b`)
	// reSecretObject: what must not leave: credentials, the environment,
	// the conversation, everything.
	reSecretObject = mustRx(`\b(all|any|every)\s+(of\s+the\s+)?(data|files|information|info|content|contents|credentials|keys|tokens|secrets|messages|conversations?|history)\b|\beverything\b|\b(session|api|access|auth|bearer|refresh|oauth)\s+(tokens?|keys?)\b|\bapi[_-]?keys?\b|\bcredentials?\b|\bpasswords?\b|\bsecrets\b|\bprivate\s+keys?\b|\bssh\s+keys?\b|\bcookies\b|\benvironment\s+variables\b|\benv\s+vars?\b|\.env\b|\b(conversation|chat|browser|shell|command)\s+history\b|\bsystem\s+prompt\b|\bclipboard\b|\bkeystrokes\b|\bseed\s+phrases?\b|\bwallet\s+(keys?|files?)\b|\bkeychain\b`)
	// reUserObject: the user's own files and data.
	reUserObject = mustRx(`\b(the\s+)?(user'?s?|their|your|his|her)\s+([a-z]+\s+){0,3}(files|data|documents|emails|contacts|photos|notes|messages|home\s+directory|workspace|repositor(y|ies)|code\s*base|source\s+code)\b|~/`)
	// reOutside: an address outside: a URL, a host name, an e-mail
	// address, "our server".
	reOutside = mustRx(`\b(to|into|at|via)\s+(https?://\S+|[a-z0-9][a-z0-9.-]*\.(com|net|org|io|dev|app|xyz|ru|cn|top|site|online|info|biz|cc|me|co|ai|sh|link|live|tk|ml|ga|cf|gq|pw|su|to)\b|\S+@\S+\.[a-z]{2,}|(our|my|this|the\s+following|the\s+external|an\s+external|a\s+remote|the\s+remote)\s+(own\s+)?(server|endpoint|api|webhook|url|address|collector|host|bucket|analytics(\s+server)?|backend|inbox))`)
	// reReveal: an instruction to put a credential in the reply, where
	// whoever controls the conversation reads it.
	reReveal = mustRx(`\b(echo|print|output|include|reveal|show|display|repeat|return|paste|write)\s+(back\s+)?(out\s+)?(the\s+|your\s+|its\s+)?(full\s+|raw\s+|exact\s+)?(value\s+of\s+(the\s+)?|contents?\s+of\s+(the\s+)?)?(authorization\s+header|api[_ -]?keys?|(access|auth|bearer|session|api)\s+tokens?|tokens?|passwords?|secrets?|credentials?|private\s+keys?|environment\s+variables|env\s+vars)\b[^.!?]{0,60}\b(in|into|to|as)\s+(your|the|a)\s+(next\s+|final\s+)?(response|reply|answer|output|chat|message|comment)`)
)

// The keywords of exfilProse's checks (has).
var (
	kwExfilProse1 = keys("send", "forward", "upload", "post", "transmit", "exfiltrat", "relay", "sync", "mail", "share", "submit", "leak", "beacon", "copy", "pipe", "report", "echo", "print", "output", "include", "reveal", "show", "display", "repeat", "return", "paste", "write")
	kwExfilProse2 = keys("response", "reply", "answer", "chat", "message", "comment", "output")
	kwExfilProse3 = keys("header", "key", "token", "password", "secret", "credential", "env")
	kwExfilProse4 = keys("all ", "any ", "every", "token", "key", "credential", "password", "secret", "cookie", "env", "history", "prompt", "clipboard", "keystroke", "seed", "wallet", "keychain", "user", "their", "your", "his ", "her ", "~/")
	kwExfilProse5 = keys("://", "@", "server", "endpoint", "webhook", " api", " url", "address", "collector", "host", "bucket", "analytics", "backend", "inbox", ".com", ".net", ".org", ".io", ".dev", ".app", ".xyz", ".ru", ".cn", ".top", ".site", ".online", ".info", ".biz", ".cc", ".me", ".co", ".ai", ".sh", ".link", ".live", ".to")
)

// exfilProse: an instruction to the agent, in prose, to send secrets or
// the user's data to an outside address, or to put a credential in its
// reply. A secret (credentials, the environment, the conversation,
// everything) is an error; the user's files to an outside address hold
// the skill. A line that talks about attacks, a negated one ("never send
// your API key to …") and quoted documentation are not instructions.
func (s *scanner) exfilProse(line, low string, n int, c ctx) {
	if !s.has(low, kwExfilProse1) {
		return
	}
	if s.has(low, kwExfilProse2) &&
		s.has(low, kwExfilProse3) {
		if loc := s.find(reReveal, low); loc != nil && !s.negatedBefore(low, loc[0]) {
			s.add(RuleDataExfiltration, SeverityError, c, n, line, loc[0])
			return
		}
	}
	// Something to send and somewhere outside, before the expressions.
	if !s.has(low, kwExfilProse4) ||
		!s.has(low, kwExfilProse5) {
		return
	}
	for _, v := range s.findAll(reSendVerb, low, 4) {
		rest := low[v[1]:]
		if k := strings.IndexAny(rest, ".!?;"); k >= 0 {
			// The sentence: up to a stop followed by a space or the end
			// (a dot inside a URL or a host name does not end it).
			for k >= 0 && k+1 < len(rest) && rest[k+1] != ' ' && rest[k+1] != '\t' {
				j := strings.IndexAny(rest[k+1:], ".!?;")
				if j < 0 {
					k = -1
					break
				}
				k += j + 1
			}
			if k >= 0 {
				rest = rest[:k]
			}
		}
		rest = rest[:min(len(rest), 240)]
		out := reOutside.FindStringIndex(rest)
		if out == nil || s.negatedBefore(low, v[0]) {
			continue
		}
		obj := rest[:out[0]]
		switch {
		case reSecretObject.MatchString(obj):
			s.add(RuleDataExfiltration, SeverityError, c, n, line, v[0])
			return
		case reUserObject.MatchString(obj):
			s.add(RuleDataExfiltration, SeverityWarn, c, n, line, v[0])
			return
		}
	}
}
