package governance

import (
	"encoding/binary"
	"html"
	"iter"
	"math/bits"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/skillgate/skillgate/internal/textsafe"
	"github.com/skillgate/skillgate/skill"
	"mvdan.cc/sh/v3/syntax"
)

// Limits that keep a scan's work and output bounded.
const (
	maxPerRuleFile    = 20        // findings of one rule in one file
	maxDecodeBytes    = 64 << 10  // decoded bytes rescanned per skill
	maxDecodeDepth    = 2         // nested encodings followed
	maxCommentBytes   = 4 << 10   // an HTML comment read for directives
	maxBlobsPerLine   = 8         // encoded blobs tried on one line
	minBlobLen        = 24        // shortest base64/hex run decoded
	opaqueBlobLen     = 200       // an undecodable run this long in code is a finding
	maxLineScan       = 512 << 10 // longer lines are scanned in their first part only
	maxHomoglyphLines = 256       // lines of one file read again with look-alike letters mapped
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
	pwPending                    []pwCandidate // lines that may name a password, for an archive to come

	drop dropped // a file downloaded by an earlier line, not yet run

	sh   shellLines // continued commands and variables of the current file's shell code
	unit shellUnit  // the block of shell code being read (shellparse.go)
	// The arrays of the last block's acts and parsed lines, used again by
	// the next block.
	unitActs   []shellAct
	unitParsed []bool

	bashParser, zshParser *syntax.Parser          // made on first use
	parsed                map[shellKey]shellParse // texts parsed this scan (parseShell)
	parsedBytes           int
	actsImpure            bool // a statement read by stmtActs may run a string or reads a here-document

	splitOf    string         // the last command line split (splitParse)
	splitStmts []*syntax.Stmt // its statements
	splitOK    bool           // whether it parsed

	lines []string // the current file's lines
	md    *mdLine  // what goldmark says of the markdown line being read (nil: none)
	mdDoc *mdDoc   // the parse md is a line of

	homoglyphBud int // lines of the current file still checked for look-alike letters
	deobfBud     int // lines of the current file still read again deobfuscated
	keyBlock     int // the line of a private key's BEGIN line, for its body on the next

	frontmatter bool   // reading SKILL.md's frontmatter lines
	mention     bool   // the line mentions attacks: what runs in it is quoted (see attackTalk)
	container   bool   // the file is a Dockerfile: what it runs runs inside an image being built
	comment     string // how a line comment starts in the current file or code block ("" unknown)
	code        bool   // reading code or data (a script, a data file, a code block), not prose
	codeFile    bool   // the current file is code or data throughout
	flowOn      bool   // the code read is a program's (not shell's): follow its data (flow.go)
	dataFile    bool   // the current file is configuration or data (dataExt)

	flow flowState // what the current file's code reads and sends (flow.go)

	envDeclared map[string]bool // the environment variables the frontmatter declares (nil: no requirements block)
	envReported map[string]bool // undeclared credentials already reported

	kw  kwCache // the rules' keywords of the last texts has looked at (keywords.go)
	pkw kwCache // the prefilters' keywords of the last texts may looked at

	lowOf, low string // the last lower call: a line is checked by several passes
	// lowLines are the current file's lines lowercased (lines[k] is
	// lowLines[k] but for ASCII capitals), cut from one lowercased copy
	// of the file; cur is the line being read: lower answers for it
	// without a copy of its own.
	lowLines []string
	cur      int
	// lineKw are the sets of the rules' keywords each of lowLines holds
	// (kwLineWords words a line), found in one pass when the file is
	// read: has answers for the line being read from them. Read
	// line by line as the rules ask, the automaton's table was out of
	// the cache at every line.
	lineKw []uint64
	// The text has asked of last and its words of lineKw or kw (keywords.go).
	hasPtr   *byte
	hasLen   int
	hasWords *[kwLineWords]uint64

	arc arcState // what the skill's archives have used of their bounds (archive.go)
}

func newScanner(opts Options, sk *skill.Skill) *scanner {
	keywordAutomata() // the rules' keywords and prefilters, made at the first scan
	s := &scanner{opts: opts, bins: map[string]bool{}, hosts: map[string]bool{},
		undecl: map[string]bool{}, perRule: map[string]int{}, decodeBud: maxDecodeBytes, hasWords: &noWords}
	if req, ok := sk.Requires.(map[string]any); ok {
		for _, k := range []string{"bins", "anyBins"} {
			for _, b := range stringsOf(req[k]) {
				s.bins[strings.ToLower(path.Base(b))] = true
			}
		}
		// The environment it declares (requires.env, primaryEnv): what
		// it reads beyond that is not proportionate (undeclaredEnv).
		s.envDeclared = map[string]bool{}
		for _, e := range stringsOf(req["env"]) {
			s.envDeclared[strings.ToLower(e)] = true
		}
		if ns, ok := sk.Metadata[sk.Namespace].(map[string]any); ok {
			for _, e := range stringsOf(ns["primaryEnv"]) {
				s.envDeclared[strings.ToLower(e)] = true
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

// reAttackTalk: words of a text that describes attacks or their detection
// (a security tutorial, an advisory, a detection rule's documentation)
// rather than asks for one.
var reAttackTalk = mustRx(`\b(attack(s|ers?|ed|ing)?|exploit\w*|vulnerab\w*|malicious|malware|pocs?|proof[- ]of[- ]concept|exfiltrat\w*|adversar\w*|arbitrary\s+(code|commands?)|(prompt|command|code|sql|shell|template)\s+injection|backdoor\w*|compromis\w*|cve-\d{4}|stealers?|infostealers?|weaponi[sz]\w*|rce|threat\s+actors?|ransomware|trojans?|red[- ]team\w*|ioc|iocs|indicators?\s+of)\b`)

// attackWords are the keywords of reAttackTalk, a cheap check first.
var attackWords = keys("attack", "exploit", "vulnerab", "malicious", "malware", "poc", "proof", "exfiltrat", "adversar",
	"arbitrary", "injection", "backdoor", "compromis", "cve-", "stealer", "weaponi", "rce", "threat", "ransomware",
	"trojan", "red team", "red-team", "ioc", "indicator")

// attackTalk reports a line (lowercased) whose words, outside its code
// spans and its URLs, host names and paths, talk about attacks.
func (s *scanner) attackTalk(low string, spans []span) bool {
	b := []byte(low)
	for _, sp := range spans {
		for k := sp.off; k < sp.off+len(sp.text) && k < len(b); k++ {
			b[k] = ' '
		}
	}
	// Words with a dot or a slash inside: "attacker.example.com" is a
	// name, not a word of the sentence.
	for i := 0; i < len(b); {
		if b[i] == ' ' || b[i] == '\t' {
			i++
			continue
		}
		j := i
		name := false
		for j < len(b) && b[j] != ' ' && b[j] != '\t' {
			if (b[j] == '.' || b[j] == '/' || b[j] == '@') && j+1 < len(b) && b[j+1] != ' ' && b[j+1] != '\t' {
				name = true
			}
			j++
		}
		if name {
			for k := i; k < j; k++ {
				b[k] = ' '
			}
		}
		i = j
	}
	// b is not written again: the string shares its bytes.
	return s.match(reAttackTalk, unsafe.String(unsafe.SliceData(b), len(b)))
}

// add records a finding. In quoted context (documentation that quotes an
// attack: a table row, a list of examples, a code block nobody is told to
// run) a match is evidence of nothing: an info finding, kept for the
// reviewer and the score's record but neither flagged nor held.
func (s *scanner) add(rule, sev string, c ctx, line int, text string, at int) {
	// The excerpt is made only for a finding that is kept (most of a
	// long file's are past the rule's cap).
	f := Finding{Rule: rule, Severity: sev, File: s.file, Line: line}
	r := ruleByID[rule]
	if r == nil {
		r = &Rule{} // not in the registry: TestRuleIDs fails first
	}
	if s.mention && r.mention {
		c = ctxQuoted
	}
	if s.container && rule == RulePersistence {
		// A Dockerfile's commands run inside the image it builds: a
		// shell profile written there is the image's, not the user's.
		// (What it fetches and runs still runs, in the build.)
		c = ctxQuoted
	}
	if c == ctxQuoted && sev != SeverityInfo {
		f.Severity, f.quoted = SeverityInfo, true
	}
	// A rule several passes match (Rule.perLine) reports a line once, at
	// its worst severity.
	dst := &s.findings
	if s.sink != nil {
		dst = s.sink
	}
	if r.perLine {
		for k := len(*dst) - 1; k >= 0 && k >= len(*dst)-8; k-- {
			if g := &(*dst)[k]; g.Rule == rule && g.File == f.File && g.Line == f.Line {
				if g.Severity != SeverityError && f.Severity == SeverityError {
					f.Excerpt = excerpt(text, at)
					*g = f
				}
				return
			}
		}
	}
	if s.sink != nil {
		f.Excerpt = excerpt(text, at)
		*s.sink = append(*s.sink, f)
		return
	}
	if s.perRule[rule] >= maxPerRuleFile {
		return
	}
	s.perRule[rule]++
	f.Excerpt = excerpt(text, at)
	s.findings = append(s.findings, f)
}

// addFile records a finding about a whole file.
func (s *scanner) addFile(rule, sev, msg string) {
	s.findings = append(s.findings, Finding{Rule: rule, Severity: sev, File: s.file, Excerpt: excerpt(msg, 0)})
}

// splitLines splits normalized text into lines (LF, CRLF and CR ends).
func splitLines(data []byte) []string {
	text := normalizeLines(data)
	if text == "" {
		return nil
	}
	return strings.Split(text, "\n")
}

// normalizeLines is text with LF line ends, without a byte order mark or
// a last line end.
func normalizeLines(data []byte) string {
	text := string(data)
	text = strings.TrimPrefix(text, "\uFEFF")
	if strings.IndexByte(text, '\r') >= 0 {
		text = strings.ReplaceAll(text, "\r\n", "\n")
		text = strings.ReplaceAll(text, "\r", "\n")
	}
	return strings.TrimSuffix(text, "\n")
}

// readLines splits a file into lines as splitLines does and makes them
// the current file's, with their lowercased forms (lowLines).
func (s *scanner) readLines(data []byte) []string {
	s.hasPtr, s.hasLen, s.hasWords = nil, 0, &noWords // the last file's lines and their words go
	text := normalizeLines(data)
	if text == "" {
		s.lines, s.lowLines = nil, nil
		return nil
	}
	s.lines = strings.Split(text, "\n")
	// lowerASCII keeps every byte's place, so the lowercased text splits
	// at the same offsets.
	low := lowerASCII(text)
	s.lowLines = make([]string, len(s.lines))
	off := 0
	for k, l := range s.lines {
		s.lowLines[k] = low[off : off+len(l)]
		off += len(l) + 1
	}
	s.lineKeywords()
	return s.lines
}

func (s *scanner) startFile(name string) {
	s.flowFlush("", ctxExec) // a statement the last file left open
	s.flow.reset()
	s.file = name
	s.arcLine, s.pwLine, s.pwCheckedTo, s.pwPending = 0, 0, 0, s.pwPending[:0]
	s.perRule = map[string]int{}
	s.drop = dropped{}
	s.sh = shellLines{budget: maxExpandBytes}
	s.unit = shellUnit{}
	s.lines, s.lowLines, s.cur, s.md, s.mdDoc = nil, nil, -1, nil, nil
	s.hasPtr, s.hasLen, s.hasWords = nil, 0, &noWords
	s.homoglyphBud = maxHomoglyphLines
	s.deobfBud = maxDeobfLines
	s.keyBlock = 0
	base := strings.ToLower(path.Base(name))
	s.container = base == "dockerfile" || base == "containerfile" || strings.HasPrefix(base, "dockerfile.") ||
		strings.HasSuffix(base, ".dockerfile") || strings.HasSuffix(base, ".containerfile")
	ext := strings.ToLower(path.Ext(name))
	s.comment = commentMark[ext]
	s.codeFile = scriptExt[ext] || execFiles[ext] || execFiles[base] || dataExt[ext] || s.container
	s.code = s.codeFile
	s.dataFile = dataExt[ext]
	s.flowOn = flowExt[ext]
}

// flowExt are the files (by extension) and flowLangs the code blocks (by
// language) whose data the flow analysis follows: programs. Shell is read
// command by command (exfilShell).
var (
	flowExt = map[string]bool{".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".tsx": true,
		".jsx": true, ".rb": true, ".pl": true, ".php": true, ".ps1": true, ".psm1": true, ".lua": true, ".go": true}
	flowLangs = map[string]bool{"python": true, "py": true, "python3": true, "js": true, "javascript": true,
		"node": true, "mjs": true, "cjs": true, "ts": true, "typescript": true, "ruby": true, "rb": true, "perl": true,
		"pl": true, "php": true, "powershell": true, "ps1": true, "pwsh": true, "lua": true, "go": true, "jsx": true, "tsx": true}
)

// reEndpointKey: a configuration key whose value is an address the code
// connects to (base_url:, "endpoint":, webhook =).
var reEndpointKey = mustRx(`^\s*(-\s*)?["']?[a-z0-9_.-]*(url|uri|endpoint|host|server|webhook|callback|proxy|upstream|remote|origin)[a-z0-9_]*["']?\s*[:=]`)

// commentMark is how a line comment starts in the files (by extension)
// and code blocks (by language) whose comments the scanner knows; "" for
// the others, markdown above all (# is a heading there).
var commentMark = map[string]string{".sh": "#", ".bash": "#", ".zsh": "#", ".ksh": "#", ".fish": "#", ".py": "#",
	".rb": "#", ".pl": "#", ".ps1": "#", ".psm1": "#", ".r": "#", ".command": "#", ".envrc": "#",
	".js": "//", ".mjs": "//", ".cjs": "//", ".ts": "//", ".tsx": "//", ".jsx": "//", ".go": "//", ".java": "//",
	".c": "//", ".cc": "//", ".cpp": "//", ".rs": "//", ".swift": "//", ".kt": "//", ".php": "//", ".cs": "//",
	"sh": "#", "bash": "#", "zsh": "#", "shell": "#", "ksh": "#", "fish": "#", "python": "#", "py": "#", "python3": "#",
	"ruby": "#", "rb": "#", "perl": "#", "pl": "#", "powershell": "#", "ps1": "#", "pwsh": "#", "r": "#",
	"js": "//", "javascript": "//", "node": "//", "mjs": "//", "cjs": "//", "ts": "//", "typescript": "//",
	"go": "//", "java": "//", "c": "//", "cpp": "//", "rust": "//", "rs": "//", "php": "//", "csharp": "//", "cs": "//"}

// commentLine reports a line that is only a comment (mark "#" or "//"): it
// does not run. A "#!" first line is not one.
func commentLine(line, mark string) bool {
	t := strings.TrimLeft(line, " \t")
	return mark != "" && strings.HasPrefix(t, mark) && !strings.HasPrefix(t, "#!")
}

// scanSkillMD scans SKILL.md: frontmatter as prose (it goes into prompts),
// the body as markdown, and the declared capabilities. Where the
// frontmatter ends is the parser's (at.Body): a line the agent reads as
// the body is scanned as the body.
func (s *scanner) scanSkillMD(data []byte, sk *skill.Skill, at skill.TextLines) {
	s.startFile(SkillFile)
	lines := s.readLines(data)
	body := min(max(at.Body-1, 0), len(lines))
	s.frontmatter = true
	for i := 0; i < body; i++ {
		s.cur = i
		s.checkLine(lines[i], i+1, ctxProse)
		s.strongProse(lines[i], lines[i], i+1)
	}
	s.frontmatter = false
	s.capabilities(lines[:body])
	s.scanMarkdown(lines, body, true)
	// A name the frontmatter does not give is the directory's: not the
	// content's, and a report depends on the content alone (the gateway
	// keeps reports by digest; its loader's skills carry their real
	// directory names, Scan's own parse "skill").
	if at.Name > 0 {
		s.promptText(sk.Name, at.Name, 1, body)
		s.discoveryAbuse(sk.Name, at.Name)
		s.impersonation(sk.Name, at.Name, data)
	}
	s.discoveryAbuse(sk.Description, at.Description)
	if at.DescriptionFromBody {
		// The paragraph it was taken from.
		last := at.Description
		for last < len(lines) && strings.TrimSpace(lines[last]) != "" {
			last++
		}
		s.promptText(sk.Description, at.Description, at.Description, last)
	} else {
		s.promptText(sk.Description, at.Description, 1, body)
	}
}

// promptText scans a name or description as Parse read it, the text every
// agent's prompt holds: YAML unescaped and unfolded, or a body paragraph
// out of its markdown (a blockquote, table row or code block there is
// plain description in the prompt). Each of its lines and the whole text
// on one line are read as a body line is, never as quoted documentation.
// Findings point at line (where the text was read); one that lines
// first..last (where it was written) already report is not repeated.
func (s *scanner) promptText(text string, line, first, last int) {
	if line == 0 || text == "" {
		return
	}
	parts := strings.Split(text, "\n")
	if len(parts) > 1 {
		parts = append(parts, strings.Join(strings.Fields(text), " "))
	}
	save, saveDoc := s.md, s.mdDoc
	defer func() { s.md, s.mdDoc = save, saveDoc }()
	s.extra(line, first, last, func() {
		for _, p := range parts {
			// Out of a blockquote, a table or a bulleted list: the
			// prompt holds the text, not its markdown.
			t := strings.TrimLeft(p, " \t>|")
			s.mdDoc = parseMarkdown([]string{t}, 0)
			s.md = &s.mdDoc.lines[0]
			if s.md.item == mdBullet {
				t = strings.TrimLeft(t[1:], " \t")
				s.mdDoc = parseMarkdown([]string{t}, 0)
				s.md = &s.mdDoc.lines[0]
			}
			s.md.quote, s.md.table = false, false
			s.checkMarkdownLine(t, line, false, false, false, false)
		}
	})
}

// extra runs scan, which looks again at lines first..last of the current
// file in another form (a name or description as the prompt holds it, a
// continued command joined, variables substituted), and keeps what it
// finds at line, except a rule those lines already report at the same or
// a worse severity. Within scan each rule counts once, at its worst.
func (s *scanner) extra(line, first, last int, scan func()) {
	var out []Finding
	save := s.sink
	s.sink = &out
	scan()
	s.sink = save
	var keep []Finding
next:
	for _, f := range out {
		for k := range keep {
			if keep[k].Rule == f.Rule {
				if rank(f) > rank(keep[k]) {
					keep[k] = f
				}
				continue next
			}
		}
		keep = append(keep, f)
	}
	dst := &s.findings
	if s.sink != nil {
		dst = s.sink
	}
	for _, f := range keep {
		f.File, f.Line = s.file, line
		dup := false
		for k := len(*dst) - 1; k >= 0 && !dup; k-- {
			g := (*dst)[k]
			if g.File != s.file {
				break
			}
			dup = g.Rule == f.Rule && g.Line >= first && g.Line <= last && rank(g) >= rank(f)
		}
		if dup {
			continue
		}
		if s.sink != nil {
			*s.sink = append(*s.sink, f)
		} else if s.perRule[f.Rule] < maxPerRuleFile {
			s.perRule[f.Rule]++
			s.findings = append(s.findings, f)
		}
	}
}

// rank orders findings by weight: info, quoted (info), warn, error.
func rank(f Finding) int {
	switch {
	case f.Severity == SeverityError:
		return 3
	case f.Severity == SeverityWarn:
		return 2
	case f.quoted:
		return 1
	}
	return 0
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
	if s.bundled(f) { // not text: media, executable, archive (filetype.go, archive.go)
		return
	}
	lines := s.readLines(f.Data)
	switch {
	case isScript(f.Path, lines):
		if variant := shellScript(f.Path, lines); variant != "" {
			// A shell script: parsed (shellparse.go).
			s.shellBegin(lines, 1, ctxExec, variant, false)
			for i, l := range lines {
				s.cur = i
				s.checkLine(l, i+1, ctxExec)
				s.shellLine(l, i+1)
			}
			s.shellEnd()
			return
		}
		for i, l := range lines {
			s.cur = i
			s.checkLine(l, i+1, ctxExec)
			s.shell(l, i+1, ctxExec, false)
		}
	case dataExt[strings.ToLower(path.Ext(f.Path))]:
		s.scanData(lines)
	default:
		s.scanMarkdown(lines, 0, false)
	}
}

// dataExt are configuration and data files: their lines are quoted
// (documentation-like) except the values of keys that hold commands.
var dataExt = map[string]bool{".json": true, ".jsonc": true, ".json5": true, ".yaml": true, ".yml": true, ".toml": true,
	".xml": true, ".ini": true, ".cfg": true, ".conf": true, ".csv": true, ".tsv": true, ".lock": true, ".svg": true,
	".properties": true, ".yar": true, ".yara": true}

// reCmdKey is a key whose value is a command: package.json scripts (the
// install hooks run by npm install), devcontainer and CI commands, systemd
// Exec lines.
var reCmdKey = mustRx(`^(-\s*)?["']?((pre|post)?(install|uninstall|prepare|publish|pack|version|start|test|build|dev|serve|run)|command|commands|cmd|exec|execstart\w*|execstop\w*|entrypoint|script|scripts|shell|hooks?|postcreatecommand|oncreatecommand|poststartcommand|postattachcommand|initializecommand|updatecontentcommand|before_script|after_script|before_install)["']?\s*[:=]`)

// scanData scans a data file: quoted context, but a command key's value
// (and a block under it: "run: |", "scripts:") in execution context.
func (s *scanner) scanData(lines []string) {
	block := -1
	for i, l := range lines {
		s.cur = i
		t := strings.TrimLeft(l, " \t")
		ind := len(l) - len(t)
		c := ctxQuoted
		if block >= 0 {
			if strings.TrimSpace(t) == "" || ind > block {
				c = ctxExec
			} else {
				block = -1
			}
		}
		if block < 0 {
			if m := s.find(reCmdKey, lowerASCII(t)); m != nil {
				c = ctxExec
				if rest := strings.TrimSpace(t[m[1]:]); rest == "" || rest[0] == '|' || rest[0] == '>' {
					block = ind
				}
			}
		}
		s.checkLine(l, i+1, c)
	}
}

var scriptExt = map[string]bool{".sh": true, ".bash": true, ".zsh": true, ".fish": true, ".ps1": true,
	".psm1": true, ".bat": true, ".cmd": true, ".py": true, ".js": true, ".mjs": true, ".cjs": true,
	".ts": true, ".rb": true, ".pl": true, ".php": true, ".lua": true, ".command": true}

// execFiles are files whose lines are commands or code that runs without
// being asked to: Python .pth files (run at interpreter start), makefiles,
// unit files, launchd plists, desktop entries, registry files.
var execFiles = map[string]bool{".pth": true, ".mk": true, ".service": true, ".timer": true, ".desktop": true,
	".plist": true, ".reg": true, ".vbs": true, ".vbe": true, ".wsf": true, ".hta": true, ".applescript": true,
	".jxa": true, ".nu": true, ".psd1": true, ".envrc": true,
	"makefile": true, "gnumakefile": true, "dockerfile": true, "containerfile": true, "justfile": true,
	"procfile": true, "crontab": true, ".bashrc": true, ".zshrc": true, ".profile": true, ".bash_profile": true}

func isScript(p string, lines []string) bool {
	if scriptExt[strings.ToLower(path.Ext(p))] || execFiles[strings.ToLower(path.Ext(p))] || execFiles[strings.ToLower(path.Base(p))] {
		return true
	}
	return len(lines) > 0 && strings.HasPrefix(lines[0], "#!")
}

// shellScript reports a script the shell runs — by its name, or by its
// first line (#!/bin/sh, #!/usr/bin/env bash) — as the variant the parser
// reads it in ("bash", "zsh"; "fish" is read by the heuristics only), or
// "" for a file that is no shell script.
func shellScript(p string, lines []string) string {
	switch strings.ToLower(path.Ext(p)) {
	case ".zsh":
		return "zsh"
	case ".sh", ".bash", ".ksh", ".command", ".envrc":
		return "bash"
	}
	switch strings.ToLower(path.Base(p)) {
	case ".zshrc":
		return "zsh"
	case ".bashrc", ".profile", ".bash_profile", ".envrc":
		return "bash"
	}
	if len(lines) == 0 || !strings.HasPrefix(lines[0], "#!") {
		return ""
	}
	words := strings.Fields(strings.TrimPrefix(lines[0], "#!"))
	if len(words) > 1 && path.Base(words[0]) == "env" {
		words = words[1:]
	}
	if len(words) == 0 || !shellNames[path.Base(words[0])] {
		return ""
	}
	switch path.Base(words[0]) {
	case "zsh", "fish":
		return path.Base(words[0])
	}
	return "bash"
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

// scanMarkdown scans lines[from:] as markdown. goldmark says what each
// line is (parseMarkdown); every line is read, in the context its kind
// gives it.
func (s *scanner) scanMarkdown(lines []string, from int, isSkillMD bool) {
	doc := parseMarkdown(lines, from)
	s.mdDoc = doc
	defer func() { s.md, s.mdDoc = nil, nil }()
	var (
		fenceCtx     ctx
		fenceCmds    bool // a fence labeled as shell: its commands are checked against requires
		fenceRun     bool // a fence of shell commands (or plain text to run): read as the shell reads it
		fenceDiagram bool // an unlabelled or plain-text fence: it may hold a diagram
		preCtx       ctx
		preRun       bool // the <pre> block holds shell commands
		section      bool // under a Prerequisites/Install/Setup heading
		negSection   bool // under a "What this skill does not do" heading
		inComment    bool
		comment      strings.Builder
		commentStart int
		commentLine  string
		lastText     string // the last non-blank line
		lastOrdered  bool   // it opens an item of an ordered list
		lastSpans    []span // its code spans
	)
	// endFence ends a fenced block: after its closing line, or after its
	// last line when its blockquote or list item (or the file) ends first.
	endFence := func(line string) {
		s.flowFlush(line, fenceCtx)
		s.comment, s.flowOn = "", false
		s.shellEnd()
	}
	for i := from; i < len(lines); i++ {
		line := lines[i]
		if len(line) > maxLineScan {
			line = line[:maxLineScan]
		}
		n := i + 1
		s.cur = i
		ml := doc.line(i)
		s.md = ml
		switch ml.kind {
		case mdFenceEnd:
			endFence(line)
			lastText, lastOrdered, lastSpans = line, false, nil
			continue
		case mdFenceOpen:
			blk := &doc.blocks[ml.block]
			info := strings.TrimSpace(blk.info)
			lang := ""
			for w := range strings.FieldsSeq(info) { // its first word
				lang = strings.ToLower(strings.Trim(w, "{}."))
				break
			}
			fenceShell := shellLangs[lang]
			fenceDiagram = lang == "" || plainLangs[lang]
			s.comment = commentMark[lang]
			s.flowOn = flowLangs[lang]
			fenceCmds = fenceShell && lang != ""
			fenceCtx = ctxQuoted
			// A shell block runs; a block of code in another language, or
			// of plain text, runs when the text introduces it as something
			// to run ("Run this:") or it is under a setup heading.
			intro := s.introducesCode(lastText, lastOrdered)
			if fenceShell || (codeLangs[lang] || plainLangs[lang]) && !negSection && (section || intro) {
				fenceCtx = ctxExec
			}
			// A block the text shows as an example of an attack or of what
			// not to do (under a "Malicious patterns" or "What this skill
			// does not do" heading, or after "a stealer looks like this:")
			// quotes it, shell included, unless the line before tells the
			// reader to run it.
			lt := s.lower(lastText)
			shown := negSection || strings.Contains(lt, "❌") ||
				s.has(lt, badExampleWords) && s.match(reBadExample, lt) ||
				s.has(lt, attackWords) && s.attackTalk(lt, lastSpans)
			if shown && !intro {
				fenceCtx = ctxQuoted
			}
			// In SKILL.md a block of code is what the agent runs or writes
			// from, unless the text shows it as an example.
			if isSkillMD && codeLangs[lang] && !shown {
				fenceCtx = ctxExec
			}
			fenceRun = fenceShell || plainLangs[lang] && fenceCtx == ctxExec
			// The info string is text the agent reads, not code.
			if info != "" {
				s.checkLine(line, n, ctxProse)
			}
			s.shellEnd()
			if fenceRun {
				s.shellBegin(blockCode(lines, doc, blk, i+1), i+2, fenceCtx, shellLang(lang), fenceCmds && isSkillMD)
			}
			if blk.last == i {
				endFence(line)
			}
			continue
		case mdFenceBody:
			// A line of a diagram in a block of plain text ("-> shell
			// evaluates $(env)") shows a step, it is not one.
			s.mention = fenceDiagram && diagramLine(line)
			s.code = true
			s.checkLine(line, n, fenceCtx)
			s.mention, s.code = false, s.codeFile
			if fenceRun {
				s.shellLine(line[min(int(ml.col), len(line)):], n)
			}
			if doc.blocks[ml.block].last == i {
				endFence(line) // not closed: its container or the file ended
			}
			continue
		case mdPre:
			// An HTML <pre> block is code the way an unlabeled fence is.
			blk := &doc.blocks[ml.block]
			content := line[min(int(ml.col), len(line)):]
			if blk.first == i {
				var lang string
				content, lang, _ = preOpen(content)
				preCtx, preRun = ctxExec, true
				if lang != "" && !shellLangs[lang] && !plainLangs[lang] {
					preCtx, preRun = ctxQuoted, false
					if codeLangs[lang] && !negSection && (section || s.introducesCode(lastText, lastOrdered)) {
						preCtx = ctxExec
					}
				}
				s.shellEnd()
				if preRun {
					s.shellBegin(preCode(lines, doc, blk), i+1, preCtx, shellLang(lang), false)
				}
			}
			content, _ = preClose(content)
			s.preLine(line, content, n, preCtx, preRun)
			if blk.last == i {
				s.shellEnd()
			}
			lastText, lastOrdered, lastSpans = line, false, nil
			continue
		case mdIndented:
			blk := &doc.blocks[ml.block]
			if blk.first == i {
				s.shellBegin(blockCode(lines, doc, blk, i), i+1, ctxExec, "bash", false)
			}
			s.code = true
			s.checkLine(line, n, ctxExec)
			s.code = s.codeFile
			s.shellLine(line[min(int(ml.col), len(line)):], n)
			if blk.last == i {
				s.shellEnd()
			}
			lastText, lastOrdered, lastSpans = line, false, nil
			continue
		}
		blank := strings.TrimSpace(line) == ""
		// HTML comments: a "<!--" outside code to the next "-->". A
		// comment is hidden from whoever reads the rendered page, not
		// from the agent: a line holding one is read in execution
		// context.
		hadComment := inComment
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
				s.commentDirective(comment.String(), commentStart, commentLine)
				comment.Reset()
				rest = rest[j+3:]
				continue
			}
			j := strings.Index(rest, "<!--")
			if j < 0 || doc.inSpan(ml, len(line)-len(rest)+j) {
				break
			}
			inComment, commentStart, commentLine, hadComment = true, n, line, true
			rest = rest[j+4:]
		}
		if ml.heading > 0 {
			section, negSection = s.headingKind(doc.headings[ml.heading-1])
		}
		s.checkMarkdownLine(line, n, section, negSection, hadComment, isSkillMD)
		if !blank {
			lastText, lastOrdered, lastSpans = line, ml.item == mdOrdered, doc.spans(ml)
		}
	}
	if inComment {
		// A comment left open hides the rest of the file from a reader.
		s.commentDirective(comment.String(), commentStart, commentLine)
	}
	s.shellEnd()
}

// commentDirective reports an HTML comment that speaks to the agent.
func (s *scanner) commentDirective(text string, line int, excerpt string) {
	if text = rePragma.ReplaceAllString(text, ""); reCommentDirective.MatchString(text) {
		sev := SeverityInfo
		if reCommentAddress.MatchString(text) {
			sev = SeverityWarn
		}
		s.add(RuleHTMLComment, sev, ctxProse, line, excerpt, 0)
	}
}

// The keywords of headingKind's checks (has).
var (
	kwHeadingKind1 = keys("prerequisite", "install", "setup", "set up", "getting started", "quick", "requirements", "before you")
	kwHeadingKind2 = keys("not", "n't", "doesnt", "wont", "dont", "never", "scope", "non-goal", "limitations")
	kwHeadingKind3 = keys("malicious", "attack", "flag", "indicator", "ioc", "detect", "suspicious", "threat", "example", "warning", "pattern", "looks")
)

// headingKind says what a heading opens: a setup section (its steps are
// steps), or one about what the skill does not do or what attacks look
// like (its blocks and bullets are examples). Each expression runs only
// when one of its words is there.
func (s *scanner) headingKind(h string) (section, neg bool) {
	lh := lowerASCII(h)
	section = s.has(lh, kwHeadingKind1) &&
		s.may(reSetupHeading, lh) && reSetupHeading.MatchString(h)
	neg = s.has(lh, kwHeadingKind2) &&
		s.match(reNegHeading, lh) && !s.match(reNotNegHeading, lh) ||
		!section && s.has(lh, kwHeadingKind3) && s.match(reDocHeading, lh)
	return section, neg
}

var (
	// rePragma: tool directives in comments (prettier-ignore,
	// markdownlint-disable MD013, eslint-disable-next-line).
	rePragma = mustRx(`(?i)\b[a-z]+-(ignore|disable|enable)[a-z0-9-]*\b`)
	// reDocHeading: a section that describes attacks or what a scanner
	// flags; its steps and bullets are examples, not instructions.
	reDocHeading    = mustRx(`\b(malicious|attacks?|attackers?|red\s+flags?|indicators?|iocs?|detects?|detection|detected|flags|flagged|suspicious|threats?|examples?\s+of|warning\s+signs|anti-?patterns?|looks\s+for)\b`)
	reNegHeading    = mustRx(`\b(does\s+not|doesn'?t|will\s+not|won'?t|do\s+not|don'?t|never|out\s+of\s+scope|non-goals?|limitations)\b`)
	reNotNegHeading = mustRx(`\b(forget|skip|ignore|optional|required|must|important|work|working|load|loading|start|found|open|connect|respond|show|appear|fail|error|troubleshoot\w*)\b|\?`)
	// reBadExample: a line that introduces a block of code as what not to
	// do, or as an attack shown.
	reBadExample = mustRx(`\b(vulnerable|insecure|unsafe|bad|wrong|incorrect|don'?t|do\s+not|avoid|never|anti-?pattern|malicious|attack\w*|exploit\w*|before|dangerous)\b|❌`)
	// badExampleWords: a line without one of them is no reBadExample.
	badExampleWords = keys("vulnerab", "insecure", "unsafe", "bad", "wrong", "incorrect", "don't", "dont", "do not",
		"avoid", "never", "pattern", "malicious", "attack", "exploit", "before", "dangerous")
	reIntroRun = mustRx(`\b(run|execute|paste|install|save|register|set ?up|enter|type|launch|start|once|first)\b`)
)

// codeLangs are code-fence languages whose code an agent can run.
var codeLangs = map[string]bool{"python": true, "py": true, "python3": true, "js": true, "javascript": true, "node": true,
	"mjs": true, "cjs": true, "ts": true, "typescript": true, "ruby": true, "rb": true, "perl": true, "pl": true, "php": true,
	"lua": true, "applescript": true, "osascript": true, "vbscript": true, "vbs": true, "jxa": true}

// introducesCode reports a line that presents the code block after it as
// something to run: an imperative line, a step (it opens an item of an
// ordered list), or one ending in a colon that says to run, paste or
// install.
func (s *scanner) introducesCode(l string, step bool) bool {
	t := strings.TrimLeft(l, " \t>")
	if imperativeStart(t) || step {
		return true
	}
	t = strings.TrimRight(t, " \t*_")
	return strings.HasSuffix(t, ":") && s.match(reIntroRun, lowerASCII(t))
}

// plainLangs are code-fence languages of plain text: a block of them runs
// when the text introduces it as something to run.
var plainLangs = map[string]bool{"text": true, "txt": true, "plaintext": true, "plain": true, "none": true,
	"nohighlight": true, "no-highlight": true, "raw": true, "code": true, "cli": true, "command": true, "commands": true}

// preOpen reports a line that opens an HTML <pre> block, the text after its
// opening tag and the language its attributes name (lang="…",
// class="language-…", or class="…" when that is a language's name),
// lowercased.
func preOpen(line string) (content, lang string, ok bool) {
	t := strings.TrimLeft(line, " \t")
	if len(t) < 4 || !strings.EqualFold(t[:4], "<pre") || len(t) > 4 && t[4] != '>' && t[4] != ' ' && t[4] != '\t' {
		return "", "", false
	}
	end := strings.IndexByte(t, '>')
	if end < 0 {
		return "", "", true // the tag goes on: its attributes are not read
	}
	tag := lowerASCII(t[4:end])
	switch {
	case strings.Contains(tag, "language-"):
		lang = tag[strings.Index(tag, "language-")+len("language-"):]
	case strings.Contains(tag, "lang="):
		lang = tag[strings.Index(tag, "lang=")+len("lang="):]
	case strings.Contains(tag, "class="):
		lang = tag[strings.Index(tag, "class=")+len("class="):]
	}
	lang = strings.TrimLeft(lang, `"' `)
	if k := strings.IndexAny(lang, `"' `); k >= 0 {
		lang = lang[:k]
	}
	if !strings.Contains(tag, "language-") && !strings.Contains(tag, "lang=") && !shellLangs[lang] && !plainLangs[lang] && !codeLangs[lang] {
		lang = "" // a class that names a style, not a language
	}
	return t[end+1:], lang, true
}

// preClose cuts a line of a <pre> block at its closing tag, if it has one.
func preClose(line string) (content string, closed bool) {
	if k := strings.Index(lowerASCII(line), "</pre"); k >= 0 {
		return line[:k], true
	}
	return line, false
}

// preLine checks a line of a <pre> block: as written, and as the browser
// shows it and a person copies it (tags dropped, entities decoded), which
// is what runs.
func (s *scanner) preLine(line, content string, n int, c ctx, run bool) {
	s.code = true
	defer func() { s.code = s.codeFile }()
	s.checkLine(line, n, c)
	code := preText(content)
	if code != content {
		s.extra(n, n, n, func() { s.checkExec(code, code, 0, n, c) })
	}
	if run {
		s.shellLine(code, n)
	}
}

// preText drops the HTML tags of a line of a <pre> block and decodes its
// character references.
func preText(t string) string {
	if strings.IndexByte(t, '<') < 0 && strings.IndexByte(t, '&') < 0 {
		return t
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '<' && i+1 < len(t) && (t[i+1] == '/' || t[i+1] >= 'a' && t[i+1] <= 'z' || t[i+1] >= 'A' && t[i+1] <= 'Z') {
			if k := strings.IndexByte(t[i:], '>'); k >= 0 {
				i += k
				continue
			}
		}
		b.WriteByte(t[i])
	}
	return html.UnescapeString(b.String())
}

var shellLangs = map[string]bool{"": true, "sh": true, "bash": true, "zsh": true, "shell": true,
	"console": true, "shell-session": true, "shellsession": true, "terminal": true, "fish": true,
	"powershell": true, "ps1": true, "pwsh": true, "ps": true, "cmd": true, "bat": true, "batch": true, "ksh": true}

// checkMarkdownLine classifies a markdown line outside code blocks (by
// what goldmark says it is: s.md) and scans its prose and inline code.
func (s *scanner) checkMarkdownLine(line string, n int, section, negSection, inComment, isSkillMD bool) {
	t := strings.TrimLeft(line, " \t")
	ml := s.md
	quoted, imperative := false, false
	// The line is what its first marker opens: a blockquote's ">" (a lazy
	// continuation line has none, and reads as the text it is), a table
	// row, a list item.
	table := false
	switch {
	case ml.quote && strings.HasPrefix(t, ">"):
		// A blockquote quotes, unless it is a callout telling the reader
		// to do something ("> **Required:** run …", "> [!IMPORTANT]").
		inner := strings.TrimLeft(t, "> \t")
		imperative = ml.item != mdNoItem || imperativeStart(inner)
		quoted = !imperative
	case ml.table:
		quoted, table = true, true
	case ml.item == mdBullet:
		item := strings.TrimLeft(t[min(1, len(t)):], " \t")
		imperative = section || imperativeStart(item)
		quoted = !imperative
	case ml.item == mdOrdered:
		imperative = true
	default:
		imperative = imperativeStart(t)
	}
	if negSection && imperative {
		quoted, imperative = true, false
	}
	if inComment {
		quoted, imperative = false, true
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
	spans := s.mdDoc.spans(ml)
	// A descriptive line that talks about attacks (a security tutorial,
	// an advisory, a scanner's documentation) mentions the commands it
	// shows: what runs in it is quoted. Instructions (imperative lines)
	// are not excused by their words.
	if c == ctxProse && s.has(s.lower(line), attackWords) && s.attackTalk(s.lower(line), spans) {
		s.mention = true
		defer func() { s.mention = false }()
	}
	s.checkLine(line, n, c)
	// An instruction is one in prose too: prose reads as ctxExec here.
	pc := c
	if pc == ctxProse {
		pc = ctxExec
	}
	s.exfilProse(line, s.lower(line), n, pc)
	s.covertInstruction(line, s.lower(line), n, pc)
	if c == ctxProse {
		s.proseSecrets(line, s.lower(line), n)
		// Fetch-and-run, decode-and-run and reverse shells are commands
		// wherever they are written, prose included.
		masked := line
		if len(spans) > 0 {
			b := []byte(line)
			for _, sp := range spans {
				for k := sp.off; k < sp.off+len(sp.text) && k < len(b); k++ {
					b[k] = ' '
				}
			}
			masked = unsafe.String(unsafe.SliceData(b), len(b)) // b is not written again
		}
		s.strongProse(line, masked, n)
	}
	for _, sp := range spans {
		if c == ctxExec {
			// A download and its run in one span of a step ("1. Run `curl
			// -o x URL && ./x`"): the line's first words are prose.
			s.dropRun(line, sp.text, s.lower(sp.text), sp.off, n, c)
		}
		if c == ctxProse {
			// Inline code in prose runs, unless it only names a path
			// ("credentials live in `~/.aws/credentials`") or its clause
			// says not to ("never pipe `curl … | sh`").
			sc := ctxExec
			if barePath(sp.text) || s.negatedBefore(s.lower(line), sp.off) {
				sc = ctxQuoted
			}
			s.checkExec(line, sp.text, sp.off, n, sc)
		}
		if isSkillMD && !table && !negSection {
			if commandLike(sp.text) {
				s.spanCommand(sp.text, n)
			}
		}
	}
}

// strongProse runs the rules whose matches are commands wherever they are
// written (fetch-and-run, decode-and-run, reverse shells) over a prose
// line; text is the line with its code spans blanked out.
func (s *scanner) strongProse(line, text string, n int) {
	low := s.lower(text)
	s.downloadExec(line, text, low, 0, n, ctxExec, true)
	s.encoded(line, low, 0, n, ctxExec, true)
	s.revShell(line, low, 0, n, ctxExec, true)
}

// barePath reports inline code that is one path or file name, not a
// command.
func barePath(t string) bool {
	return t != "" && !strings.ContainsAny(t, " \t|;&<>`") && !strings.Contains(t, "$(")
}

var reNegation = mustRx(`\b(never|not|no|avoid|avoiding|without|instead\s+of|rather\s+than)\b|n't\b`)

// negatedBefore reports a negation in the clause before offset at of low
// ("never pipe …", "does not edit …", "avoid …"), unless the clause is a
// "don't forget to" or "don't skip".
func (s *scanner) negatedBefore(low string, at int) bool {
	clause := clauseBefore(low, min(at, len(low)), 120)
	if k := strings.LastIndex(clause, "—"); k >= 0 {
		clause = clause[k:]
	}
	return s.match(reNegation, clause) && !containsAny(clause, "forget", "skip", "fail", "hesitate", "omit", "miss")
}

// commandLike reports an inline code span that reads as a command line, not
// a phrase: at least two words, and an argument that is a flag, a path, a
// variable, a quoted string, a pipe or an assignment.
func commandLike(t string) bool {
	first := true
	for a := range strings.FieldsSeq(t) {
		if first {
			first = false
			continue
		}
		if strings.HasPrefix(a, "-") || strings.ContainsAny(a, "/$\"'|=~") {
			return true
		}
	}
	return false
}

// span is a piece of a line: an inline code span's text (trimmed), where
// it starts (after the opening backticks) and where it ends (before the
// closing ones); a command of a line.
type span struct {
	text     string
	off, end int
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
	// Leading symbols and emoji ("⚠️ Run …", "[!IMPORTANT]").
	for k := 0; k < 4 && t != ""; k++ {
		r, size := utf8.DecodeRuneInString(t)
		if r < 0x80 && r != '[' && r != '!' && r != '(' || unicode.IsLetter(r) {
			break
		}
		t = strings.TrimLeft(t[size:], "*_ \t")
	}
	end := 0
	for end < len(t) && end < 16 && (t[end] >= 'a' && t[end] <= 'z' || t[end] >= 'A' && t[end] <= 'Z') {
		end++
	}
	var word [16]byte // the word lowercased, without a copy on the heap
	for i := 0; i < end; i++ {
		c := t[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		word[i] = c
	}
	return end > 0 && imperativeVerbs[string(word[:end])]
}

// checkLine runs the line rules over one line in context c.
func (s *scanner) checkLine(line string, n int, c ctx) {
	if c != ctxProse && commentLine(line, s.comment) {
		// A comment in code does not run; it is read like prose (an
		// instruction to the agent in it still counts).
		c = ctxProse
	} else if s.code && s.depth == 0 && c != ctxProse {
		if s.flowOn {
			s.flowLine(line, n, c)
		}
		s.undeclaredEnv(line, n)
	}
	s.hiddenUnicode(line, n)
	s.homoglyphs(line, n, c)
	if s.depth == 0 {
		s.keyBody(line, n, c)
		s.hardcodedCredential(line, n, c)
	}
	text := line
	if c != ctxProse && s.searchLine(s.lower(line)) {
		text = maskSearchPatterns(line, s.lower(line))
	}
	low := s.lower(text)
	s.injection(line, low, n, c)
	uc := c
	if s.dataFile && c == ctxQuoted && s.match(reEndpointKey, low) {
		// A configuration's endpoint is where the code connects, not an
		// example: a paste host or an address there counts in full.
		uc = ctxExec
	}
	s.urls(line, low, n, uc)
	s.passwordArchive(line, low, n, c)
	if c == ctxExec || c == ctxQuoted {
		s.checkExec(line, text, 0, n, c)
	} else {
		s.blobs(line, line, 0, n, c)
	}
}

// lower is lowerASCII, remembering the last line it lowercased.
func (s *scanner) lower(t string) string {
	if k := s.cur; k >= 0 && k < len(s.lines) && len(t) == len(s.lines[k]) && t == s.lines[k] {
		return s.lowLines[k]
	}
	if t != s.lowOf || s.low == "" && t != "" {
		s.lowOf, s.low = t, lowerASCII(t)
	}
	return s.low
}

// lowerASCII lowercases ASCII letters only, keeping byte offsets.
func lowerASCII(s string) string {
	i := firstUpper(s)
	if i < 0 {
		return s
	}
	b := []byte(s)
	// Eight bytes at a time, without a branch (a branch a byte, taken at
	// random in prose, cost more than the copy): 0x20 added to each
	// capital.
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		binary.LittleEndian.PutUint64(b[i:], w|upperMask(w)>>2)
	}
	for ; i < len(b); i++ {
		if b[i] >= 'A' && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	// b is not written again: the string can share its bytes
	// (string(b) would copy them, a second copy of every line).
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// firstUpper returns where s's first ASCII capital is, eight bytes at a
// time, or -1.
func firstUpper(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if m := upperMask(uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if s[i] >= 'A' && s[i] <= 'Z' {
			return i
		}
	}
	return -1
}

// upperMask has the high bit (0x80) of each byte of w that is an ASCII
// capital, and no other bit: each byte is compared without a carry into
// the next (its high bit held apart).
func upperMask(w uint64) uint64 {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	low7 := w &^ high               // each byte's low seven bits
	geA := low7 + (0x80-'A')*ones   // high bit: the byte's low 7 bits ≥ 'A'
	gtZ := low7 + (0x80-'Z'-1)*ones // high bit: … > 'Z'
	return geA &^ gtZ &^ w & high
}

// hiddenUnicode reports format characters, bidi controls, tag characters,
// runs of variation selectors (data smuggled after an emoji) and Hangul
// fillers. Zero-width joiners inside emoji sequences and between letters of
// scripts that need them (Persian, Indic), bidi marks next to right-to-left
// text, and the visible Arabic number signs are text, not hiding.
func (s *scanner) hiddenUnicode(line string, n int) {
	// Every character it looks for is beyond ASCII; most lines have none.
	ascii := true
	for i := 0; i < len(line) && ascii; i++ {
		ascii = line[i] < 0x80
	}
	if ascii {
		return
	}
	var prev rune
	vs := 0 // variation selectors in a row
	for i, r := range line {
		if r < 0x80 {
			prev, vs = r, 0
			continue
		}
		bad := false
		switch {
		case textsafe.IsFormat(r):
			bad = !legitJoiner(line, i, r, prev)
		case textsafe.IsVariationSelector(r):
			vs++
			// One selector picks a glyph variant; the supplementary ones
			// only of an ideograph.
			bad = vs > 1 || r >= 0xE0100 && !unicode.Is(unicode.Han, prev)
		case r == 0x3164 || r == 0xFFA0:
			bad = true
		}
		if bad {
			s.add(RuleHiddenUnicode, SeverityError, ctxExec, n, line, i)
			return
		}
		if !textsafe.IsVariationSelector(r) {
			vs = 0
		}
		prev = r
	}
}

// diagramLine reports a line that starts with an arrow or a box-drawing
// character: a step of a diagram, not a command.
func diagramLine(line string) bool {
	t := strings.TrimLeft(line, " \t")
	for _, p := range []string{"->", "=>", "<-", "|--", "+--", "`--", "\u2192", "\u21d2", "\u2190", "\u2193", "\u25bc"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	r, _ := utf8.DecodeRuneInString(t)
	return r >= 0x2500 && r <= 0x257F // box drawing
}

func legitJoiner(line string, i int, r, prev rune) bool {
	if r == 0xFEFF && i == 0 {
		return true
	}
	if r == 0xAD { // soft hyphen: a typographic hint
		return true
	}
	// One zero-width character or direction mark before a code fence at
	// the start of a line keeps the fence from opening or closing: how
	// markdown shows a fence inside a fence.
	if (r >= 0x200B && r <= 0x200F || r == 0x2060 || r == 0xFEFF) && strings.TrimLeft(line[:i], " \t>") == "" {
		if rest := line[i+utf8.RuneLen(r):]; strings.HasPrefix(rest, "```") || strings.HasPrefix(rest, "~~~") {
			return true
		}
	}
	if r >= 0x600 && r <= 0x605 || r == 0x6DD || r == 0x70F || r == 0x890 || r == 0x891 || r == 0x8E2 || r == 0x110BD || r == 0x110CD {
		return true // prepended concatenation marks: visible signs
	}
	next, _ := utf8.DecodeRuneInString(line[i+utf8.RuneLen(r):])
	switch {
	case r == 0x200D:
		return emojiish(prev) && (emojiish(next) || next == 0x2640 || next == 0x2642) || scriptLetter(prev) && scriptLetter(next)
	case r == 0x200C:
		return scriptLetter(prev) && (unicode.IsLetter(next) || unicode.Is(unicode.M, next))
	case r == 0x200E || r == 0x200F || r == 0x61C: // LRM, RLM, ALM in right-to-left text
		return strings.IndexFunc(line, rtl) >= 0
	case r >= 0xE0020 && r <= 0xE007F: // subdivision flag tag sequence
		return prev == 0x1F3F4 || (prev >= 0xE0020 && prev <= 0xE007E)
	}
	return false
}

// scriptLetter: a letter or combining mark of a script beyond Latin (the
// joiners shape Arabic, Persian and Indic text, never ASCII commands).
func scriptLetter(r rune) bool {
	return r > 0x2FF && (unicode.IsLetter(r) || unicode.Is(unicode.M, r))
}

func rtl(r rune) bool {
	return unicode.In(r, unicode.Hebrew, unicode.Arabic, unicode.Syriac, unicode.Thaana, unicode.Nko)
}

func emojiish(r rune) bool {
	return r >= 0x1F000 || unicode.Is(unicode.So, r) || r == 0xFE0F || (r >= 0x1F3FB && r <= 0x1F3FF)
}

// checkExec runs the rules that need an execution context over text (a
// line or an inline code span at offset off of line).
func (s *scanner) checkExec(line, text string, off, n int, c ctx) {
	low := s.lower(text)
	if s.searchLine(low) {
		if m := maskSearchPatterns(text, low); m != text {
			text, low = m, s.lower(m)
		}
	}
	s.execRules(line, text, low, off, n, c, true)
	s.blobs(line, text, off, n, c)
	s.deobfuscate(line, text, low, off, n, c)
}

// execRules runs checkExec's rules but the blob decoder. A command read
// again as the shell runs it (its continued lines joined, its variables in
// place; see checkCommand) is checked without obfuscation either: the
// marks of obfuscation and the encoded blobs are on its lines as written,
// which were checked one by one.
func (s *scanner) execRules(line, text, low string, off, n int, c ctx, obfuscation bool) {
	s.downloadExec(line, text, low, off, n, c, false)
	s.revShell(line, low, off, n, c, false)
	s.dropRun(line, text, low, off, n, c)
	s.encoded(line, low, off, n, c, false)
	if obfuscation {
		s.obfuscation(line, text, low, off, n, c)
	}
	s.secrets(line, low, off, n, c)
	s.credentialSend(line, low, off, n, c)
	s.exfilShell(line, low, off, n, c)
	s.tampering(line, low, off, n, c)
	s.supplyChain(line, low, off, n, c)
	s.cryptoMining(line, low, off, n, c)
	s.persistence(line, low, off, n, c)
	s.bareIPs(line, low, off, n, c)
}

// checkCommand checks a whole command as the shell runs it (see
// execRules).
func (s *scanner) checkCommand(cmd string, n int, c ctx) {
	low := s.lower(cmd)
	if s.searchLine(low) {
		if m := maskSearchPatterns(cmd, low); m != cmd {
			cmd, low = m, s.lower(m)
		}
	}
	s.execRules(cmd, cmd, low, 0, n, c, false)
}

// commands reports binaries run by a shell line (or an inline code span)
// that requires.bins/anyBins do not declare, as the heuristics read a
// line the shell parser could not (shellparse.go). It returns a heredoc
// terminator when the line opens one.
func (s *scanner) commands(line string, n int, inline bool) (heredoc string) {
	t := strings.TrimSpace(line)
	if strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || t == "" {
		return ""
	}
	t = strings.TrimPrefix(strings.TrimPrefix(t, "$ "), "> ")
	if strings.Contains(t, "<<") {
		if m := reHeredoc.FindStringSubmatch(t); m != nil {
			heredoc = m[1]
		}
	}
	segs := splitShellAt(t)
	if inline {
		segs = segs[:1]
	}
	for _, sp := range segs {
		s.undeclared(commandWord(sp.text), line, n)
	}
	return heredoc
}

// undeclared reports the binary w, run on line n (its text line), when
// requires.bins/anyBins do not declare it; each binary once.
func (s *scanner) undeclared(w, line string, n int) {
	if w == "" || s.bins[w] || knownCommands[w] || s.undecl[w] {
		return
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
	// A tool the frontmatter does not list is drift, not a threat:
	// info (what the tool is made to do is for the other rules).
	s.add(RuleUndeclaredBinary, SeverityInfo, ctxExec, n, w+": "+text, 0)
}

// splitShellAt splits a command line at |, ||, &&, ; and $( outside
// quotes, with each segment's offset in t.
func splitShellAt(t string) []span {
	var out []span
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
			out = append(out, span{t[start:i], start, i})
			start = i + 1
		}
	}
	return append(out, span{t[start:], start, len(t)})
}

var prefixWords = map[string]bool{"sudo": true, "env": true, "time": true, "nohup": true, "exec": true,
	"command": true, "builtin": true, "then": true, "do": true, "else": true, "elif": true, "if": true,
	"while": true, "until": true, "!": true, "{": true, "(": true, "caffeinate": true, "nice": true}

// commandWord returns the binary a shell segment runs, or "".
func commandWord(seg string) string {
	return commandNameOf(strings.FieldsSeq(seg), true)
}

// commandName returns the binary a command of these words runs (after
// sudo, env, nohup … and VAR=value), or "". With split, the words are a
// line's fields, where "(" and "{" may open a word; else they are the
// shell parser's, quotes removed.
func commandName(words []string, split bool) string {
	return commandNameOf(slices.Values(words), split)
}

// commandNameOf is commandName of a sequence of words (strings.FieldsSeq's:
// no slice of them).
func commandNameOf(words iter.Seq[string], split bool) string {
	afterPrefix := false
	for w := range words {
		if split {
			w = strings.TrimLeft(w, "({")
		}
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
