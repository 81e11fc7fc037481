package governance

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// dropped is a file an earlier command downloaded (curl -o, wget, iwr
// -OutFile, certutil -urlcache): running it a few lines later is a
// fetch-and-run split over several commands.
type dropped struct {
	name   string // base name, lowercase
	line   int
	sev    string // warn for a vendor's own installer, else error
	onPath bool   // written to a directory on PATH: running it by name counts
}

// dropWindow is how many lines after a download running the file counts.
const dropWindow = 8

// The keywords of dropRun's checks (has).
var (
	kwDropRun1 = keys("curl", "wget", "iwr", "invoke-webrequest", "irm", "certutil", "bitsadmin", "bitstransfer")
	kwDropRun2 = keys(">", "tee ", "urlcache", "transfer", "destination", "remote-name")
)

// dropRun finds a download to a file and a later command (on this line or
// one of the next few) that runs it: chmod +x and ./file, sh file, nohup
// /tmp/file, Start-Process file.
func (s *scanner) dropRun(line, text, low string, off, n int, c ctx) {
	if s.drop.name != "" && (n < s.drop.line || n-s.drop.line > dropWindow) {
		s.drop = dropped{}
	}
	if s.drop.name == "" && !(s.has(low, kwDropRun1) &&
		(strings.Contains(low, "wget") || outputFlag(low) || s.has(low, kwDropRun2))) {
		return
	}
	fetched := false // the previous segment downloaded to stdout
	for _, seg := range s.shellSegments(text) {
		words := strings.Fields(seg.text)
		if name, ok := downloadTarget(words); ok {
			if name != "" {
				s.drop = dropped{strings.ToLower(baseName(name)), n, s.vendorSeverity(lowerASCII(seg.text)), onPath(name)}
			}
			fetched = name == ""
			continue
		}
		// curl … | sudo tee /usr/local/bin/x
		if k := skipPrefix(words, 0); fetched && k < len(words) && words[k] == "tee" {
			for _, a := range words[k+1:] {
				if a = unquote(a); a != "" && a[0] != '-' && a[0] != '>' && !strings.HasPrefix(a, "2>") {
					s.drop = dropped{strings.ToLower(baseName(a)), n, s.vendorSeverity(lowerASCII(text)), onPath(a)}
					break
				}
			}
			fetched = false
			continue
		}
		fetched = false
		if s.drop.name != "" && runsFile(words, s.drop.name, s.drop.onPath) {
			s.add(RuleDownloadExec, s.drop.sev, c, n, line, off+seg.off)
			s.drop = dropped{}
			return
		}
	}
}

// outputFlag reports an option with an o in it (-o, -O, -sSLo, -OutFile,
// --output): a download may go to a file.
func outputFlag(low string) bool {
	for i := 0; i+1 < len(low); i++ {
		if low[i] != '-' || i > 0 && low[i-1] != ' ' && low[i-1] != '\t' {
			continue
		}
		j := i + 1
		for j < len(low) && (low[j] >= 'a' && low[j] <= 'z' || low[j] == '-') {
			if low[j] == 'o' {
				return true
			}
			j++
		}
		i = j
	}
	return false
}

// downloadTarget reports whether words are a download command and the base
// name of the file it writes ("" for stdout or none known).
func downloadTarget(words []string) (name string, ok bool) {
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return "", false
	}
	cmd := strings.TrimSuffix(baseName(strings.ToLower(unquote(words[k]))), ".exe")
	args := words[k+1:]
	url := ""
	for _, a := range args {
		if a = unquote(a); strings.Contains(a, "://") || strings.HasPrefix(a, "$") {
			url = a
			break
		}
	}
	if url == "" {
		return "", false
	}
	next := func(i int) string {
		if i+1 < len(args) {
			return unquote(args[i+1])
		}
		return ""
	}
	switch cmd {
	case "curl", "wget":
		if cmd == "wget" {
			name = urlBase(url)
		}
		for i, a := range args {
			la := strings.ToLower(a)
			switch {
			case a == "-o" || a == "--output" || la == "-outfile" || a == ">":
				name = next(i)
			case strings.HasPrefix(a, "--output="), strings.HasPrefix(a, "--output-document="):
				name = unquote(a[strings.IndexByte(a, '=')+1:])
			case strings.HasPrefix(a, ">") && len(a) > 1 && a[1] != '&' && a[1] != '>':
				name = unquote(a[1:])
			case a == "--remote-name":
				name = urlBase(url)
			case len(a) >= 2 && a[0] == '-' && a[1] != '-':
				flags := a[1:]
				if j := strings.IndexByte(flags, 'O'); j >= 0 {
					switch {
					case cmd == "curl":
						name = urlBase(url)
					case j+1 < len(flags): // wget -O- / -Ofile
						name = unquote(flags[j+1:])
					default:
						name = next(i)
					}
				} else if cmd == "curl" && strings.HasSuffix(flags, "o") {
					name = next(i)
				}
			}
		}
	case "iwr", "invoke-webrequest", "irm", "invoke-restmethod", "start-bitstransfer":
		for i, a := range args {
			if la := strings.ToLower(a); la == "-outfile" || la == "-outf" || la == "-destination" {
				name = next(i)
			}
		}
	case "certutil", "bitsadmin":
		if last := unquote(args[len(args)-1]); !strings.Contains(last, "://") && !strings.HasPrefix(last, "-") && !strings.HasPrefix(last, "/") {
			name = last
		}
	default:
		return "", false
	}
	if b := strings.ToLower(baseName(name)); b == "-" || b == "null" || b == "nul" || b == "" {
		name = ""
	}
	return name, true
}

// pathDirs are directories on a usual PATH.
var pathDirs = []string{"/usr/local/bin/", "/usr/bin/", "/bin/", "/opt/homebrew/bin/", "/.local/bin/", "~/bin/", "$home/bin/", "/usr/local/sbin/"}

// onPath reports a file written to a directory on PATH.
func onPath(p string) bool {
	p = strings.ToLower(p)
	for _, d := range pathDirs {
		if strings.Contains(p, d) && !strings.Contains(p[strings.Index(p, d)+len(d):], "/") {
			return true
		}
	}
	return false
}

// fileRunners are commands that run the file given as an argument.
var fileRunners = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "source": true,
	".": true, "python": true, "python3": true, "perl": true, "ruby": true, "node": true, "php": true, "pwsh": true,
	"powershell": true, "cmd": true, "msiexec": true, "start-process": true, "saps": true, "start": true,
	"invoke-item": true, "ii": true, "rundll32": true, "regsvr32": true, "wscript": true, "cscript": true,
	"mshta": true, "installer": true}

// runsFile reports a command that runs the file named name (a base name):
// by a path, through an interpreter, or by its name alone when it was
// written to a directory on PATH.
func runsFile(words []string, name string, byName bool) bool {
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return false
	}
	w := unquote(words[k])
	if w == "" {
		return false
	}
	if strings.EqualFold(baseName(w), name) && (byName || strings.ContainsAny(w, `/\`) || strings.ContainsRune(".$%~", rune(w[0]))) {
		return true
	}
	if fileRunners[strings.TrimSuffix(strings.ToLower(baseName(w)), ".exe")] {
		for _, a := range words[k+1:] {
			if a = unquote(a); !strings.HasPrefix(a, "-") && strings.EqualFold(baseName(a), name) {
				return true
			}
		}
	}
	return false
}

// baseName is the last element of a / or \ separated path.
func baseName(p string) string {
	if j := strings.LastIndexAny(p, `/\`); j >= 0 {
		return p[j+1:]
	}
	return p
}

// urlBase is the last path element of a URL, without query or fragment.
func urlBase(u string) string {
	if j := strings.IndexAny(u, "?#"); j >= 0 {
		u = u[:j]
	}
	if _, rest, ok := strings.Cut(u, "://"); ok {
		if _, p, ok := strings.Cut(rest, "/"); ok {
			return baseName(p)
		}
		return ""
	}
	return baseName(u)
}

func unquote(w string) string { return strings.Trim(w, "\"'`();") }

// searchTools are commands whose quoted arguments are search patterns.
var searchTools = map[string]bool{"grep": true, "egrep": true, "fgrep": true, "zgrep": true, "rg": true, "ag": true,
	"ack": true, "findstr": true, "select-string": true}

// maskSearchPatterns blanks the quoted arguments of search commands (grep
// -E 'curl.*\| *sh', rg "ignore previous instructions"): a pattern to look
// for is not a command to run. A quoted argument holding a command
// substitution is kept. Offsets are kept, so excerpts still show the line.
func maskSearchPatterns(line, low string) string {
	var b []byte
	var words []string
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case ch == '\'' || ch == '"':
			j := strings.IndexByte(line[i+1:], ch)
			if j < 0 {
				i = len(line)
				continue
			}
			j += i + 1
			content := line[i+1 : j]
			if isSearchCommand(words) && !strings.Contains(content, "$(") && !strings.Contains(content, "`") {
				if b == nil {
					b = []byte(line)
				}
				for k := i + 1; k < j; k++ {
					b[k] = ' '
				}
			}
			words = append(words, "''")
			i = j
		case ch == '|' || ch == ';' || ch == '&' || ch == '(' || ch == '`':
			words = words[:0]
		case ch == ' ' || ch == '\t':
		default:
			j := i
			for j < len(line) && !strings.ContainsRune(" \t|;&('\"`", rune(line[j])) {
				j++
			}
			if len(words) < 16 {
				words = append(words, low[i:j])
			}
			i = j - 1
		}
	}
	if b == nil {
		return line
	}
	return string(b)
}

// The keywords of searchLine's checks (has).
var (
	kwSearchLine = keys("grep", "rg ", "ag ", "ack ", "findstr", "select-string")
)

// searchLine reports a line that may run a search command.
func (s *scanner) searchLine(low string) bool {
	return s.has(low, kwSearchLine)
}

func isSearchCommand(words []string) bool {
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return false
	}
	w := strings.TrimSuffix(baseName(words[k]), ".exe")
	return searchTools[w] || w == "git" && k+1 < len(words) && words[k+1] == "grep"
}

// confusables maps Cyrillic and Greek letters that look like Latin ones.
var confusables = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c', 'т': 't', 'у': 'y',
	'х': 'x', 'і': 'i', 'ј': 'j', 'ѕ': 's', 'һ': 'h', 'ԁ': 'd', 'ӏ': 'l', 'ԛ': 'q', 'ԝ': 'w', 'ү': 'y',
	'А': 'a', 'В': 'b', 'Е': 'e', 'К': 'k', 'М': 'm', 'Н': 'h', 'О': 'o', 'Р': 'p', 'С': 'c', 'Т': 't', 'У': 'y',
	'Х': 'x', 'І': 'i', 'Ј': 'j', 'Ѕ': 's',
	'α': 'a', 'ο': 'o', 'ρ': 'p', 'ν': 'v', 'ι': 'i', 'κ': 'k', 'υ': 'u', 'ε': 'e', 'τ': 't',
	'Α': 'a', 'Β': 'b', 'Ε': 'e', 'Ζ': 'z', 'Η': 'h', 'Ι': 'i', 'Κ': 'k', 'Μ': 'm', 'Ν': 'n', 'Ο': 'o', 'Ρ': 'p',
	'Τ': 't', 'Υ': 'y', 'Χ': 'x',
}

// skeleton maps look-alike Cyrillic and Greek letters to Latin ones in
// words that mix them with Latin letters ("сurl", "ignоre"), and in words
// made only of look-alikes on a line written mostly in Latin letters
// ("| ѕһ"). It reports whether anything was mapped.
func skeleton(line string) (string, bool) {
	greekOrCyrillic := false
	for i := 0; i < len(line); i++ {
		if c := line[i]; c >= 0xCE && c <= 0xD4 { // lead bytes of U+0380–U+053F
			greekOrCyrillic = true
			break
		}
	}
	if !greekOrCyrillic {
		return line, false
	}
	latin, other := 0, 0
	for _, r := range line {
		switch {
		case r < 0x80 && (r|0x20) >= 'a' && (r|0x20) <= 'z':
			latin++
		case r >= 0x80 && unicode.IsLetter(r):
			other++
		}
	}
	if latin == 0 || other == 0 {
		return line, false
	}
	var b strings.Builder
	changed := false
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRuneInString(line[i:])
		if !unicode.IsLetter(r) {
			b.WriteString(line[i : i+size])
			i += size
			continue
		}
		j := i
		hasLatin, allLook, n := false, true, 0
		for j < len(line) {
			q, qs := utf8.DecodeRuneInString(line[j:])
			if !unicode.IsLetter(q) {
				break
			}
			if q < 0x80 {
				hasLatin = true
			} else if _, ok := confusables[q]; !ok {
				allLook = false
			}
			j += qs
			n++
		}
		word := line[i:j]
		if hasLatin && strings.IndexFunc(word, func(q rune) bool { _, ok := confusables[q]; return ok }) >= 0 ||
			!hasLatin && allLook && n >= 2 && latin > 2*other {
			for _, q := range word {
				if m, ok := confusables[q]; ok {
					b.WriteRune(m)
					changed = true
				} else {
					b.WriteRune(q)
				}
			}
		} else {
			b.WriteString(word)
		}
		i = j
	}
	return b.String(), changed
}

// homoglyphs: a line whose look-alike letters, read as Latin ones, make a
// command or an instruction another rule catches is obfuscation (error
// when that rule's finding is an error).
func (s *scanner) homoglyphs(line string, n int, c ctx) {
	if s.depth > 0 || s.homoglyphBud <= 0 {
		return
	}
	skel, ok := skeleton(line)
	if !ok {
		return
	}
	s.homoglyphBud--
	before := map[string]bool{}
	for _, f := range s.rescan(line) {
		before[f.Rule] = true
	}
	worst := ""
	for _, f := range s.rescan(skel) {
		if before[f.Rule] || f.Rule == RuleNetworkEgress || f.Rule == RuleUndeclaredBinary || f.Rule == RuleHiddenUnicode {
			continue
		}
		worst = worse(worst, f.Severity)
	}
	if worst != "" {
		if c == ctxProse {
			c = ctxExec
		}
		s.add(RuleObfuscation, worst, c, n, line, 0)
	}
}

// Bounds of shellLines.
const (
	maxShellVars     = 64        // variables remembered per file
	maxShellVarValue = 1024      // longest value remembered
	maxExpandBytes   = 256 << 10 // bytes variables may add to one file's commands
)

// shellLines follows the shell code of one file as the shell reads it: a
// command continued over lines with a trailing backslash, and simple
// variable assignments (NAME=value, export NAME=value) whose values later
// lines use as $NAME or ${NAME}.
type shellLines struct {
	cont   strings.Builder // the continued command so far
	first  int             // its first line; 0 when no command is continued
	vars   map[string]string
	budget int // bytes expansions may still add (see maxExpandBytes)
}

// endBlock forgets a continued command at the end of a block of code.
func (sh *shellLines) endBlock() {
	sh.cont.Reset()
	sh.first = 0
}

// shell reads line n of shell code, already checked on its own, as part of
// what the shell runs: a command continued over lines is checked once
// whole, reported at its first line, and a command that uses variables
// assigned before is checked with their values in place. With vars false
// (code that is not shell: a Dockerfile, a Python script) only
// continuations are joined.
func (s *scanner) shell(line string, n int, c ctx, vars bool) {
	if s.depth > 0 {
		return
	}
	sh := &s.sh
	if t := strings.TrimRight(line, " \t"); continued(t) {
		if sh.first == 0 {
			sh.first = n
		}
		if sh.cont.Len() < maxLineScan {
			sh.cont.WriteString(t[:len(t)-1])
			sh.cont.WriteByte(' ')
		}
		return
	}
	cmd, first := line, n
	if sh.first != 0 {
		if sh.cont.Len() < maxLineScan {
			sh.cont.WriteString(line)
		}
		cmd, first = sh.cont.String(), sh.first
		sh.endBlock()
	}
	if len(cmd) > maxLineScan {
		cmd = cmd[:maxLineScan]
	}
	expanded := cmd
	if vars {
		sh.assign(cmd)
		expanded = sh.expand(cmd)
	}
	if first == n && expanded == line {
		return
	}
	s.extra(first, first, n, func() { s.checkCommand(expanded, n, c) })
}

// continued reports a line that ends in an unescaped backslash.
func continued(t string) bool {
	k := 0
	for k < len(t) && t[len(t)-1-k] == '\\' {
		k++
	}
	return k%2 == 1
}

// assign records the variables cmd assigns (at the start of each of its
// commands, after export, local, readonly, declare or typeset), their
// values unquoted and with the variables known so far in place.
func (sh *shellLines) assign(cmd string) {
	if strings.IndexByte(cmd, '=') < 0 {
		return
	}
	for i := 0; i < len(cmd); {
		i = skipBlanks(cmd, i)
		for _, kw := range []string{"export", "local", "readonly", "declare", "typeset"} {
			if strings.HasPrefix(cmd[i:], kw+" ") {
				i = skipBlanks(cmd, i+len(kw))
				for i < len(cmd) && cmd[i] == '-' { // declare -x
					i = skipBlanks(cmd, wordEnd(cmd, i))
				}
				break
			}
		}
		for {
			name, end := varName(cmd, i)
			if name == "" || end >= len(cmd) || cmd[end] != '=' {
				break
			}
			j := wordEnd(cmd, end+1)
			if _, known := sh.vars[name]; known || len(sh.vars) < maxShellVars {
				if v := sh.expand(unquoteWord(cmd[end+1 : j])); len(v) <= maxShellVarValue {
					if sh.vars == nil {
						sh.vars = map[string]string{}
					}
					sh.vars[name] = v
				}
			}
			i = skipBlanks(cmd, j)
		}
		i = commandEnd(cmd, i)
	}
}

// expand puts the values of known variables in place of $NAME and ${NAME}.
func (sh *shellLines) expand(cmd string) string {
	if len(sh.vars) == 0 || strings.IndexByte(cmd, '$') < 0 {
		return cmd
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(cmd); i++ {
		if cmd[i] != '$' || i+1 >= len(cmd) {
			continue
		}
		name, end := varName(cmd, i+1)
		if cmd[i+1] == '{' {
			if name, end = varName(cmd, i+2); end >= len(cmd) || cmd[end] != '}' {
				continue
			}
			end++
		}
		v, ok := sh.vars[name]
		if name == "" || !ok || b.Len()+len(v) > maxLineScan || len(v) > sh.budget {
			continue
		}
		sh.budget -= len(v)
		b.WriteString(cmd[last:i])
		b.WriteString(v)
		last, i = end, end-1
	}
	if last == 0 {
		return cmd
	}
	b.WriteString(cmd[last:])
	return b.String()
}

// varName returns the shell variable name at cmd[i:] and its end.
func varName(cmd string, i int) (string, int) {
	j := i
	for j < len(cmd) && (cmd[j] == '_' || isAlnum(cmd[j])) {
		j++
	}
	if j == i || cmd[i] >= '0' && cmd[i] <= '9' {
		return "", i
	}
	return cmd[i:j], j
}

func skipBlanks(cmd string, i int) int {
	for i < len(cmd) && (cmd[i] == ' ' || cmd[i] == '\t') {
		i++
	}
	return i
}

// wordEnd returns the end of the shell word at cmd[i:]: quoted strings,
// $(…) and `…` are part of it.
func wordEnd(cmd string, i int) int {
	depth := 0
	for i < len(cmd) {
		switch ch := cmd[i]; {
		case ch == '\'' || ch == '"' || ch == '`':
			k := strings.IndexByte(cmd[i+1:], ch)
			if k < 0 {
				return len(cmd)
			}
			i += k + 2
			continue
		case ch == '$' && i+1 < len(cmd) && cmd[i+1] == '(':
			depth++
			i++
		case ch == ')' && depth > 0:
			depth--
		case depth == 0 && strings.IndexByte(" \t;&|<>()", ch) >= 0:
			return i
		}
		i++
	}
	return i
}

// commandEnd returns the start of the command after the one at cmd[i:]
// (after ;, &, | or a newline outside quotes and $(…)).
func commandEnd(cmd string, i int) int {
	for i < len(cmd) {
		if ch := cmd[i]; ch == ';' || ch == '&' || ch == '|' || ch == '\n' {
			return i + 1
		}
		if j := wordEnd(cmd, i); j > i {
			i = j
		} else {
			i++
		}
	}
	return i
}

// unquoteWord removes the quotes of a shell word ("a"'b'c is abc).
func unquoteWord(w string) string {
	if !strings.ContainsAny(w, `"'`) {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if ch := w[i]; ch == '"' || ch == '\'' {
			if k := strings.IndexByte(w[i+1:], ch); k >= 0 {
				b.WriteString(w[i+1 : i+1+k])
				i += k + 1
				continue
			}
		}
		b.WriteByte(w[i])
	}
	return b.String()
}
