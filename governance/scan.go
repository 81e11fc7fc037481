package governance

import (
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/skill"
)

// Limits that keep a scan's work and output bounded.
const (
	maxPerRuleFile  = 20        // findings of one rule in one file
	maxDecodeBytes  = 64 << 10  // decoded bytes rescanned per skill
	maxDecodeDepth  = 2         // nested encodings followed
	maxCommentBytes = 4 << 10   // an HTML comment read for directives
	maxBlobsPerLine = 8         // encoded blobs tried on one line
	minBlobLen      = 24        // shortest base64/hex run decoded
	opaqueBlobLen   = 200       // an undecodable run this long in code is a finding
	maxLineScan     = 512 << 10 // longer lines are scanned in their first part only
)

// ctx is where a piece of text sits, which decides which rules fire and
// how hard.
type ctx int

const (
	// ctxExec: a shell code block, inline code, an imperative prose line or
	// list item, a script file: everything fires at full severity.
	ctxExec ctx = iota
	// ctxProse: ordinary prose: rules that need an execution context do not
	// fire; hosts, prompt injection and the rest do.
	ctxProse
	// ctxQuoted: documentation that quotes: a table row, a blockquote, a
	// list of examples, a code block in a non-shell language. Everything
	// fires, but errors are downgraded to warn.
	ctxQuoted
)

type scanner struct {
	opts     Options
	findings []Finding
	caps     []string

	bins      map[string]bool // declared requires.bins and anyBins
	hosts     map[string]bool // hosts already reported
	undecl    map[string]bool // binaries already reported
	perRule   map[string]int  // findings per rule in the current file
	file      string
	decodeBud int
	depth     int
	sink      *[]Finding // when rescanning decoded text

	arcLine, pwLine, pwCheckedTo int
	pwReported                   string

	grams grams // of the line has last looked at

	lowOf, low string // the last lower call: a line is checked by several passes
}

func newScanner(opts Options, sk *skill.Skill) *scanner {
	s := &scanner{opts: opts, bins: map[string]bool{}, hosts: map[string]bool{},
		undecl: map[string]bool{}, perRule: map[string]int{}, decodeBud: maxDecodeBytes}
	if req, ok := sk.Requires.(map[string]any); ok {
		for _, k := range []string{"bins", "anyBins"} {
			for _, b := range stringsOf(req[k]) {
				s.bins[strings.ToLower(path.Base(b))] = true
			}
		}
	}
	return s
}

// stringsOf reads a string or a list of strings.
func stringsOf(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	case []string:
		return x
	}
	return nil
}

// add records a finding; quoted context downgrades errors to warn.
func (s *scanner) add(rule, sev string, c ctx, line int, text string, at int) {
	f := Finding{Rule: rule, Severity: sev, File: s.file, Line: line, Excerpt: excerpt(text, at)}
	if c == ctxQuoted && sev == SeverityError {
		f.Severity, f.quoted = SeverityWarn, true
	}
	if s.sink != nil {
		*s.sink = append(*s.sink, f)
		return
	}
	if s.perRule[rule] >= maxPerRuleFile {
		return
	}
	s.perRule[rule]++
	s.findings = append(s.findings, f)
}

// addFile records a finding about a whole file.
func (s *scanner) addFile(rule, sev, msg string) {
	s.findings = append(s.findings, Finding{Rule: rule, Severity: sev, File: s.file, Excerpt: excerpt(msg, 0)})
}

// splitLines splits normalized text into lines (LF, CRLF and CR ends).
func splitLines(data []byte) []string {
	text := string(data)
	text = strings.TrimPrefix(text, "\uFEFF")
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	text = strings.TrimSuffix(text, "\n")
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

func (s *scanner) startFile(name string) {
	s.file = name
	s.arcLine, s.pwLine, s.pwCheckedTo = 0, 0, 0
	s.perRule = map[string]int{}
}

// scanSkillMD scans SKILL.md: frontmatter as prose (it goes into prompts),
// the body as markdown, and the declared capabilities.
func (s *scanner) scanSkillMD(data []byte) {
	s.startFile(SkillFile)
	lines := splitLines(data)
	body := 0
	if len(lines) > 0 && strings.TrimSpace(lines[0]) == "---" {
		for i := 1; i < len(lines); i++ {
			if strings.TrimRight(lines[i], " \t") == "---" {
				body = i + 1
				break
			}
		}
	}
	for i := 0; i < body; i++ {
		s.checkLine(lines[i], i+1, ctxProse)
	}
	s.capabilities(lines[:body])
	s.scanMarkdown(lines, body, true)
}

// capabilities finds dangerous capabilities declared in the frontmatter
// (requires.capabilities and anyCapabilities, in any namespace) by their
// ids; each is an info finding and adds its category's weight once.
func (s *scanner) capabilities(fm []string) {
	for i, l := range fm {
		low := strings.ToLower(l)
		for _, c := range dangerousCaps {
			if j := strings.Index(low, c.id); j >= 0 && isIDBoundary(low, j, len(c.id)) {
				s.add(RuleDangerousCapability, SeverityInfo, ctxExec, i+1, l, j)
				s.caps = append(s.caps, c.cat)
			}
		}
	}
}

func isIDBoundary(s string, i, n int) bool {
	ok := func(b byte) bool { return !(b == '.' || b == '_' || b == '-' || isAlnum(b)) }
	return (i == 0 || ok(s[i-1])) && (i+n == len(s) || ok(s[i+n]))
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

var dangerousCaps = []struct{ id, cat string }{
	{"shell.exec", capShell}, {"process.exec", capShell}, {"shell.run", capShell},
	{"code.eval", capEval}, {"code.exec", capEval}, {"code.execute", capEval},
	{"filesystem.write", capFSWrite}, {"fs.write", capFSWrite},
	{"secrets.read", capSecrets}, {"keychain.read", capSecrets}, {"credentials.read", capSecrets},
	{"network.egress", capEgress}, {"network.http", capEgress}, {"network.external", capEgress}, {"net.egress", capEgress},
}

// scanFile scans one other file of the directory.
func (s *scanner) scanFile(f File) {
	s.startFile(f.Path)
	if f.Err != "" {
		s.addFile(RuleBinaryFile, SeverityWarn, "not scanned: "+f.Err)
		return
	}
	if kind, isImage := binaryKind(f.Path, f.Data); kind != "" {
		sev := SeverityError
		if isImage {
			sev = SeverityInfo
		}
		s.addFile(RuleBinaryFile, sev, kind)
		return
	}
	lines := splitLines(f.Data)
	if isScript(f.Path, lines) {
		for i, l := range lines {
			s.checkLine(l, i+1, ctxExec)
		}
		return
	}
	s.scanMarkdown(lines, 0, false)
}

var scriptExt = map[string]bool{".sh": true, ".bash": true, ".zsh": true, ".fish": true, ".ps1": true,
	".psm1": true, ".bat": true, ".cmd": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true,
	".ts": true, ".rb": true, ".pl": true, ".php": true, ".lua": true, ".command": true}

func isScript(p string, lines []string) bool {
	if scriptExt[strings.ToLower(path.Ext(p))] {
		return true
	}
	return len(lines) > 0 && strings.HasPrefix(lines[0], "#!")
}

// binaryKind says what a non-text file is ("" for text) and whether it is
// an image.
func binaryKind(p string, data []byte) (kind string, image bool) {
	magic := []struct {
		prefix string
		kind   string
		image  bool
	}{
		{"\x89PNG", "PNG image", true}, {"\xff\xd8\xff", "JPEG image", true}, {"GIF8", "GIF image", true},
		{"BM", "", true}, {"\x00\x00\x01\x00", "ICO image", true},
		{"\x7fELF", "ELF executable", false}, {"MZ", "Windows executable", false},
		{"\xcf\xfa\xed\xfe", "Mach-O executable", false}, {"\xce\xfa\xed\xfe", "Mach-O executable", false},
		{"\xca\xfe\xba\xbe", "Mach-O universal binary or Java class", false},
		{"PK\x03\x04", "zip archive", false}, {"\x1f\x8b", "gzip archive", false},
		{"7z\xbc\xaf\x27\x1c", "7z archive", false}, {"Rar!", "RAR archive", false},
		{"\xfd7zXZ", "xz archive", false}, {"BZh", "bzip2 archive", false}, {"\x28\xb5\x2f\xfd", "zstd archive", false},
		{"%PDF", "PDF document", false}, {"\x00asm", "WebAssembly module", false},
	}
	for _, m := range magic {
		if strings.HasPrefix(string(data[:min(len(data), 8)]), m.prefix) && m.kind != "" {
			return m.kind + " (binary file)", m.image
		}
	}
	if len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP" {
		return "WebP image (binary file)", true
	}
	if len(data) > 262 && string(data[257:262]) == "ustar" {
		return "tar archive (binary file)", false
	}
	head := data[:min(len(data), 8192)]
	bad := 0
	for i := 0; i < len(head); {
		r, n := utf8.DecodeRune(head[i:])
		if r == 0 || (r == utf8.RuneError && n == 1 && len(head)-i >= utf8.UTFMax) {
			bad++
		}
		i += n
	}
	if bad == 0 {
		return "", false
	}
	switch strings.ToLower(path.Ext(p)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".tif", ".tiff", ".heic", ".avif":
		return "image (binary file)", true
	}
	return "non-text file (binary file)", false
}

// scanMarkdown scans lines[from:] as markdown.
func (s *scanner) scanMarkdown(lines []string, from int, isSkillMD bool) {
	var (
		inFence      bool
		fenceChar    byte
		fenceLen     int
		fenceCtx     ctx
		fenceShell   bool
		fenceCmds    bool // a fence labeled as shell: its commands are checked against requires
		heredoc      string
		continued    bool
		section      bool // under a Prerequisites/Install/Setup heading
		inComment    bool
		comment      strings.Builder
		commentStart int
		commentLine  string
	)
	for i := from; i < len(lines); i++ {
		line := lines[i]
		if len(line) > maxLineScan {
			line = line[:maxLineScan]
		}
		n := i + 1
		trim := strings.TrimLeft(line, " \t>")
		if inFence {
			if c, l, _ := fenceOpen(trim); l >= fenceLen && c == fenceChar && strings.TrimSpace(trim[l:]) == "" {
				inFence = false
				continue
			}
			s.checkLine(line, n, fenceCtx)
			if fenceCmds && isSkillMD {
				switch {
				case heredoc != "":
					if strings.TrimSpace(line) == heredoc {
						heredoc = ""
					}
				case !continued:
					heredoc = s.commands(line, n, false)
				}
				continued = strings.HasSuffix(strings.TrimRight(line, " \t"), "\\")
			}
			continue
		}
		if c, l, info := fenceOpen(trim); l >= 3 {
			inFence, fenceChar, fenceLen = true, c, l
			lang := strings.ToLower(strings.Trim(strings.Fields(info + " x")[0], "{}."))
			if info == "" {
				lang = ""
			}
			fenceShell = shellLangs[lang]
			fenceCmds = fenceShell && lang != ""
			fenceCtx = ctxQuoted
			if fenceShell {
				fenceCtx = ctxExec
			}
			heredoc, continued = "", false
			continue
		}
		// HTML comments (prose only).
		rest := line
		for {
			if inComment {
				j := strings.Index(rest, "-->")
				part := rest
				if j >= 0 {
					part = rest[:j]
				}
				if comment.Len() < maxCommentBytes {
					comment.WriteString(part[:min(len(part), maxCommentBytes)])
					comment.WriteByte('\n')
				}
				if j < 0 {
					break
				}
				inComment = false
				if loc := reCommentDirective.FindStringIndex(comment.String()); loc != nil {
					s.add(RuleHTMLComment, SeverityWarn, ctxProse, commentStart, commentLine, 0)
				}
				comment.Reset()
				rest = rest[j+3:]
				continue
			}
			j := strings.Index(rest, "<!--")
			if j < 0 || insideCode(line, len(line)-len(rest)+j) {
				break
			}
			inComment, commentStart, commentLine = true, n, line
			rest = rest[j+4:]
		}

		if strings.HasPrefix(trim, "#") {
			section = reSetupHeading.MatchString(trim)
		}
		s.checkMarkdownLine(line, n, section, isSkillMD)
	}
}

var shellLangs = map[string]bool{"": true, "sh": true, "bash": true, "zsh": true, "shell": true,
	"console": true, "shell-session": true, "shellsession": true, "terminal": true, "fish": true,
	"powershell": true, "ps1": true, "pwsh": true, "ps": true, "cmd": true, "bat": true, "batch": true, "ksh": true}

// fenceOpen reports a code fence opener: its character, length and info
// string.
func fenceOpen(t string) (c byte, n int, info string) {
	if len(t) < 3 || (t[0] != '`' && t[0] != '~') {
		return 0, 0, ""
	}
	c = t[0]
	for n < len(t) && t[n] == c {
		n++
	}
	if n < 3 {
		return 0, 0, ""
	}
	info = strings.TrimSpace(t[n:])
	if c == '`' && strings.IndexByte(info, '`') >= 0 {
		return 0, 0, ""
	}
	return c, n, info
}

// insideCode reports whether byte i of line is inside an inline code span.
func insideCode(line string, i int) bool {
	return strings.Count(line[:i], "`")%2 == 1
}

// checkMarkdownLine classifies a markdown line outside code fences and
// scans its prose and inline code.
func (s *scanner) checkMarkdownLine(line string, n int, section, isSkillMD bool) {
	t := strings.TrimLeft(line, " \t")
	quoted, imperative := false, false
	item := t
	switch {
	case strings.HasPrefix(t, "|"):
		quoted = true
	case strings.HasPrefix(t, ">"):
		quoted = true
	case isBullet(t):
		item = strings.TrimLeft(t[1:], " \t")
		imperative = section || imperativeStart(item)
		quoted = !imperative
	case isNumbered(t):
		imperative = true
	default:
		imperative = imperativeStart(t)
	}
	c := ctxProse
	switch {
	case quoted:
		c = ctxQuoted
	case imperative:
		c = ctxExec
	}
	// Hidden Unicode, prompt injection and hosts over the whole line;
	// execution rules over inline code spans (and the whole line when it
	// is imperative).
	s.checkLine(line, n, c)
	for _, sp := range codeSpans(line) {
		if c == ctxProse {
			s.checkExec(line, sp.text, sp.off, n, ctxExec)
		}
		if isSkillMD && !strings.HasPrefix(t, "|") {
			if commandLike(sp.text) {
				s.commands(sp.text, n, true)
			}
		}
	}
}

// commandLike reports an inline code span that reads as a command line, not
// a phrase: at least two words, and an argument that is a flag, a path, a
// variable, a quoted string, a pipe or an assignment.
func commandLike(t string) bool {
	f := strings.Fields(t)
	if len(f) < 2 {
		return false
	}
	for _, a := range f[1:] {
		if strings.HasPrefix(a, "-") || strings.ContainsAny(a, "/$\"'|=~") {
			return true
		}
	}
	return false
}

type span struct {
	text string
	off  int
}

// codeSpans returns the inline code spans of a line (backtick runs of
// equal length).
func codeSpans(line string) []span {
	var out []span
	for i := 0; i < len(line); {
		if line[i] != '`' {
			i++
			continue
		}
		j := i
		for j < len(line) && line[j] == '`' {
			j++
		}
		run := line[i:j]
		k := strings.Index(line[j:], run)
		if k < 0 {
			break
		}
		out = append(out, span{strings.TrimSpace(line[j : j+k]), j})
		i = j + k + len(run)
	}
	return out
}

func isBullet(t string) bool {
	return len(t) >= 2 && (t[0] == '-' || t[0] == '*' || t[0] == '+') && (t[1] == ' ' || t[1] == '\t')
}

func isNumbered(t string) bool {
	i := 0
	for i < len(t) && i < 4 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return i > 0 && i+1 < len(t) && (t[i] == '.' || t[i] == ')') && (t[i+1] == ' ' || t[i+1] == '\t')
}

var imperativeVerbs = map[string]bool{"run": true, "execute": true, "exec": true, "paste": true, "type": true,
	"enter": true, "copy": true, "download": true, "install": true, "launch": true, "start": true,
	"invoke": true, "call": true, "first": true, "then": true, "next": true, "now": true, "please": true,
	"always": true, "must": true, "setup": true, "prerequisite": true, "prerequisites": true, "step": true,
	"important": true, "required": true, "note": true, "before": true, "open": true, "use": true}

// imperativeStart reports a line that tells the reader (the agent) to do
// something: its first word is an imperative verb or a step marker.
func imperativeStart(t string) bool {
	t = strings.TrimLeft(t, "*_ \t")
	end := 0
	for end < len(t) && end < 16 && (t[end] >= 'a' && t[end] <= 'z' || t[end] >= 'A' && t[end] <= 'Z') {
		end++
	}
	return end > 0 && imperativeVerbs[strings.ToLower(t[:end])]
}

// checkLine runs the line rules over one line in context c.
func (s *scanner) checkLine(line string, n int, c ctx) {
	s.hiddenUnicode(line, n)
	low := s.lower(line)
	s.injection(line, low, n, c)
	s.urls(line, low, n, c)
	s.passwordArchive(line, low, n, c)
	if c == ctxExec || c == ctxQuoted {
		s.checkExec(line, line, 0, n, c)
	} else {
		s.blobs(line, line, 0, n, c)
	}
}

// lower is lowerASCII, remembering the last line it lowercased.
func (s *scanner) lower(t string) string {
	if t != s.lowOf || s.low == "" && t != "" {
		s.lowOf, s.low = t, lowerASCII(t)
	}
	return s.low
}

// lowerASCII lowercases ASCII letters only, keeping byte offsets.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// hiddenUnicode reports format characters, bidi controls and tag
// characters. Zero-width joiners inside emoji sequences and joiners between
// letters of scripts that need them (Persian, Indic) are text, not hiding.
func (s *scanner) hiddenUnicode(line string, n int) {
	var prev rune
	for i, r := range line {
		if r < 0x80 {
			prev = r
			continue
		}
		if hidden(r) && !legitJoiner(line, i, r, prev) {
			s.add(RuleHiddenUnicode, SeverityError, ctxExec, n, line, i)
			return
		}
		prev = r
	}
}

func hidden(r rune) bool {
	return unicode.Is(unicode.Cf, r) || (r >= 0xE0000 && r <= 0xE007F)
}

func legitJoiner(line string, i int, r, prev rune) bool {
	if r == 0xFEFF && i == 0 {
		return true
	}
	if r == 0xAD { // soft hyphen: a typographic hint
		return true
	}
	next, _ := utf8.DecodeRuneInString(line[i+utf8.RuneLen(r):])
	switch {
	case r == 0x200D:
		return emojiish(prev) && (emojiish(next) || next == 0x2640 || next == 0x2642)
	case r == 0x200C:
		return unicode.IsLetter(prev) && prev > 0x2FF && (unicode.IsLetter(next) || unicode.Is(unicode.M, next))
	case r >= 0xE0020 && r <= 0xE007F: // subdivision flag tag sequence
		return prev == 0x1F3F4 || (prev >= 0xE0020 && prev <= 0xE007E)
	}
	return false
}

func emojiish(r rune) bool {
	return r >= 0x1F000 || unicode.Is(unicode.So, r) || r == 0xFE0F || (r >= 0x1F3FB && r <= 0x1F3FF)
}

// checkExec runs the rules that need an execution context over text (a
// line or an inline code span at offset off of line).
func (s *scanner) checkExec(line, text string, off, n int, c ctx) {
	low := s.lower(text)
	s.downloadExec(line, text, low, off, n, c)
	s.encoded(line, low, off, n, c)
	s.obfuscation(line, text, low, off, n, c)
	s.secrets(line, low, off, n, c)
	s.persistence(line, low, off, n, c)
	s.blobs(line, text, off, n, c)
}

// commands reports binaries run by a shell line (or an inline code span)
// that requires.bins/anyBins do not declare. It returns a heredoc
// terminator when the line opens one.
func (s *scanner) commands(line string, n int, inline bool) (heredoc string) {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || t == "" {
		return ""
	}
	t = strings.TrimPrefix(strings.TrimPrefix(t, "$ "), "> ")
	if m := reHeredoc.FindStringSubmatch(t); m != nil {
		heredoc = m[1]
	}
	segs := splitShell(t)
	if inline {
		segs = segs[:1]
	}
	for _, seg := range segs {
		w := commandWord(seg)
		if w == "" || s.bins[w] || knownCommands[w] || s.undecl[w] {
			continue
		}
		s.undecl[w] = true
		// The excerpt names the binary first (the line may run several),
		// then the line from a little before it.
		text := strings.TrimLeft(line, " \t")
		if at := strings.Index(text, w); at > 40 {
			from := at - 30
			for from < at && !utf8.RuneStart(text[from]) {
				from++
			}
			text = "…" + text[from:]
		}
		s.add(RuleUndeclaredBinary, SeverityWarn, ctxExec, n, w+": "+text, 0)
	}
	return heredoc
}

// splitShell splits a command line at |, ||, &&, ; and $( outside quotes.
func splitShell(t string) []string {
	var out []string
	var sq, dq bool
	start := 0
	for i := 0; i < len(t); i++ {
		switch ch := t[i]; {
		case ch == '\'' && !dq:
			sq = !sq
		case ch == '"' && !sq:
			dq = !dq
		case sq:
		case dq && !(ch == '(' && i > 0 && t[i-1] == '$'):
			// Inside double quotes only a command substitution runs a command.
		case ch == '|' || ch == ';' || ch == '&' || (ch == '(' && i > 0 && t[i-1] == '$'):
			out = append(out, t[start:i])
			start = i + 1
		}
	}
	return append(out, t[start:])
}

var prefixWords = map[string]bool{"sudo": true, "env": true, "time": true, "nohup": true, "exec": true,
	"command": true, "builtin": true, "then": true, "do": true, "else": true, "elif": true, "if": true,
	"while": true, "until": true, "!": true, "{": true, "(": true, "caffeinate": true, "nice": true}

// commandWord returns the binary a shell segment runs, or "".
func commandWord(seg string) string {
	afterPrefix := false
	for _, w := range strings.Fields(seg) {
		w = strings.TrimLeft(w, "({")
		if w == "" || prefixWords[w] {
			afterPrefix = true
			continue
		}
		if strings.HasPrefix(w, "-") {
			if !afterPrefix {
				return ""
			}
			continue
		}
		if eq := strings.IndexByte(w, '='); eq > 0 && !strings.Contains(w[:eq], "/") {
			continue // VAR=value
		}
		if strings.HasPrefix(w, "/") {
			w = path.Base(w)
		}
		if !validBin(w) {
			return ""
		}
		return w
	}
	return ""
}

func validBin(w string) bool {
	if len(w) == 0 || len(w) > 64 || w[0] < 'a' || w[0] > 'z' {
		return false
	}
	for i := 0; i < len(w); i++ {
		c := w[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '+') {
			return false
		}
	}
	return !strings.HasSuffix(w, ".") && !strings.Contains(w, "..")
}

// knownCommands are shell builtins, keywords, coreutils and common base
// system tools, and the package managers that install requirements: they
// are not undeclared binaries.
var knownCommands = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`cd echo ls cat pwd mkdir rmdir rm cp mv touch export source . test [ [[ true false
	printf read set unset alias unalias grep egrep fgrep sed awk head tail sort uniq wc cut tr tee find xargs which type
	sleep date chmod chown chgrp ln basename dirname realpath readlink stat du df kill killall ps uname whoami id
	hostname exit return eval local declare let shift wait trap umask ulimit history jobs fg bg pushd popd dirs
	for case esac fi done in function select break continue diff cmp less more file tar gzip gunzip zip unzip
	open xdg-open clear man help seq yes nl od hexdump base64 md5sum sha256sum shasum mktemp install tput stty
	printenv getopts hash times logout bash sh zsh fish dash env sudo su nohup time watch top free uptime
	mount umount sync tac rev fold fmt expand paste join split csplit comm column iconv true timeout
	brew apt apt-get dpkg yum dnf pacman apk zypper snap flatpak port winget choco scoop
	npm npx pnpm yarn bun pip pip3 pipx uv uvx gem cargo go conda mamba nix`) {
		m[w] = true
	}
	return m
}()
