package governance

import (
	"cmp"
	"errors"
	"path"
	"slices"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Shell code is parsed with mvdan.cc/sh (bash, or zsh for zsh blocks): the
// parser says where each command starts and ends (continued lines,
// strings over several lines, pipelines and lists, command substitution),
// which words are variables, which lines are a here-document's data, and
// which strings run again as code (sh -c, bash -c, eval, a here-document
// fed to a shell). Every line is still checked as written (checkLine);
// the parser adds the commands as the shell runs them. Code that does not
// parse (a placeholder like <your-key> that is not shell, a console
// session's output), PowerShell, cmd and fish are read by the line
// heuristics of shell.go instead.

// Bounds of the shell parser's work.
const (
	maxShellDepth  = 2        // strings given to sh -c or eval and here-documents fed to a shell, parsed again
	maxShellUnit   = 64 << 10 // a block or script longer is read by the heuristics: no skill of the public sets has one past 32 KiB, and the parser costs ~160 ns a word part (BenchmarkShellExpansion)
	maxShellRetry  = 64       // parses of one block after an error (each skips the line that failed)
	maxShellSubSrc = 16 << 10 // bytes of a string parsed again
)

// shellUnit is the block of shell code being read: a fenced or indented
// code block, a <pre> block, a script.
type shellUnit struct {
	on      bool
	c       ctx
	cmds    bool // report the binaries it runs that requires does not declare
	first   int  // its first file line (1-based)
	parsed  []bool
	acts    []shellAct // by line, then by position
	next    int        // the first act not run yet
	heredoc string     // heuristics: the terminator of a here-document being read
	cont    bool       // heuristics: the last line was continued
}

// shellAct is what happens at a file line once it has been checked: a
// command (a statement without compound parts) run as the shell runs it,
// or a binary named.
type shellAct struct {
	line  int // where it runs: the statement's last line
	first int // the statement's first line (findings are reported there)
	stmt  *syntax.Stmt
	text  *shellText
	call  *syntax.CallExpr // a command whose binary is named (with cmds), read when its line is: its words may be variables
	sub   bool             // a command of a string parsed again: always checked
}

// shellText is a text the parser read: a block, or a string parsed again.
type shellText struct {
	src    string
	starts []int // file line of each line of src is first+k; nil: every offset is at line
	first  int
	line   int
}

func (t *shellText) lineOf(p syntax.Pos) int {
	if t.starts == nil {
		return t.line
	}
	return t.first + sort.SearchInts(t.starts, int(p.Offset())+1) - 1
}

func (t *shellText) slice(a, b syntax.Pos) string {
	i, j := int(a.Offset()), int(b.Offset())
	if i < 0 || j > len(t.src) || i > j {
		return ""
	}
	return t.src[i:j]
}

// shellLang says how code of a fence language is parsed: the variant, and
// false for the languages the parser does not read (PowerShell, cmd,
// fish).
func shellLang(lang string) string {
	switch lang {
	case "powershell", "ps1", "pwsh", "ps", "cmd", "bat", "batch", "fish":
		return ""
	case "zsh":
		return "zsh"
	}
	return "bash"
}

// parser returns the scanner's shell parser for a variant.
func (s *scanner) shParser(variant string) *syntax.Parser {
	if variant == "zsh" {
		if s.zshParser == nil {
			s.zshParser = syntax.NewParser(syntax.Variant(syntax.LangZsh))
		}
		return s.zshParser
	}
	if s.bashParser == nil {
		s.bashParser = syntax.NewParser(syntax.Variant(syntax.LangBash))
	}
	return s.bashParser
}

// shellBegin starts a block of shell code whose lines, from file line
// first on, are code (the code of each line, after blockquote markers or
// a <pre> tag). variant "" reads it by the heuristics only.
func (s *scanner) shellBegin(code []string, first int, c ctx, variant string, cmds bool) {
	s.shellEnd()
	u := s.startUnit(len(code), first, c, cmds)
	defer func() { s.unitActs = u.acts }()
	if variant != "bash" && variant != "zsh" || s.depth > 0 || len(code) == 0 {
		return
	}
	// The block's text, with a console prompt ("$ ") blanked: offsets
	// stay those of the lines.
	var b strings.Builder
	size := 0
	for _, l := range code {
		size += len(l) + 1
	}
	b.Grow(min(size, maxShellUnit+1))
	starts := make([]int, len(code))
	for k, l := range code {
		starts[k] = b.Len()
		if t := strings.TrimLeft(l, " \t"); strings.HasPrefix(t, "$ ") {
			l = l[:len(l)-len(t)] + " " + t[1:]
		}
		b.WriteString(l)
		b.WriteByte('\n')
		if b.Len() > maxShellUnit {
			break
		}
	}
	src := b.String()
	if len(src) > maxShellUnit {
		return
	}
	// Parse from the block's first line; where a statement does not
	// parse, its lines are left to the heuristics and parsing starts again
	// on the next line.
	from := 0 // line of the block where the parse starts
	for retry := 0; from < len(code) && retry <= maxShellRetry; retry++ {
		t := &shellText{src: src[starts[from]:], first: first + from}
		t.starts = make([]int, len(code)-from)
		for k := range t.starts {
			t.starts[k] = starts[from+k] - starts[from]
		}
		stmts, err := s.parseShell(variant, t.src)
		good := len(code) // lines of the block the statements read cover, from from
		bad := -1
		if err != nil {
			var pe syntax.ParseError
			if !errors.As(err, &pe) {
				return // not a syntax error: leave the rest to the heuristics
			}
			bad = from + int(pe.Pos.Line()) - 1
			good = from
			if len(stmts) > 0 {
				good = t.lineOf(stmts[len(stmts)-1].End()) - first + 1
			}
		}
		for k := from; k < min(good, len(code)); k++ {
			u.parsed[k] = true
		}
		s.stmtActs(variant, t, stmts)
		if bad < 0 {
			break
		}
		// The lines from the end of the last statement read through the
		// line of the error are the heuristics'.
		from = max(bad+1, good)
	}
	slices.SortStableFunc(u.acts, func(a, b shellAct) int { return cmp.Compare(a.line, b.line) })
}

// stmtActs records the acts of the statements of t, a block's text from
// one of its lines on, as shellStmt does. What a text's statements do
// depends on the text alone unless one may run a string (sh -c, eval)
// or reads a here-document (the variables known then decide): the acts
// of the others are kept with the text's parse, by line within it, and
// the text met again (an install line in several blocks) takes them.
func (s *scanner) stmtActs(variant string, t *shellText, stmts []*syntax.Stmt) {
	u := &s.unit
	key := shellKey{variant, t.src}
	p, cached := s.parsed[key]
	if cached && p.actsOK && p.actsCmds == u.cmds {
		for _, a := range p.acts {
			a.line += t.first
			if a.first != 0 { // a statement's, 1 + its line in t
				a.first += t.first - 1
			}
			a.text = t
			u.acts = append(u.acts, a)
		}
		return
	}
	n := len(u.acts)
	s.actsImpure = false
	for _, st := range stmts {
		s.shellStmt(st, t, 0)
	}
	if !cached || s.actsImpure {
		return
	}
	p.acts = make([]shellAct, 0, len(u.acts)-n)
	for _, a := range u.acts[n:] {
		a.line -= t.first
		if a.first != 0 {
			a.first -= t.first - 1
		}
		a.text = nil
		p.acts = append(p.acts, a)
	}
	p.actsOK, p.actsCmds = true, u.cmds
	s.parsed[key] = p
}

// startUnit starts a block of n lines of shell code from file line first
// on. The last block's acts and parsed lines are done with (shellEnd):
// their arrays are used again.
func (s *scanner) startUnit(n, first int, c ctx, cmds bool) *shellUnit {
	parsed := s.unitParsed[:0]
	if cap(parsed) < n {
		parsed = make([]bool, n)
	} else {
		parsed = parsed[:n]
		clear(parsed)
	}
	s.unitParsed = parsed
	s.unit = shellUnit{on: true, c: c, cmds: cmds, first: first, parsed: parsed, acts: s.unitActs[:0]}
	return &s.unit
}

// shellStmt records the acts of a statement of the top level of t (or of
// a string parsed again, depth > 0): each command it runs as the shell
// runs it, and with cmds the binaries it names.
func (s *scanner) shellStmt(st *syntax.Stmt, t *shellText, depth int) {
	u := &s.unit
	s.flatStmts(st, t, depth)
	syntax.Walk(st, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if u.cmds && len(n.Args) > 0 {
				u.acts = append(u.acts, shellAct{line: t.lineOf(n.Pos()), call: n, text: t})
			}
			if depth < maxShellDepth && mayRun(n) {
				s.actsImpure = true
				if code, ok := runsString(s.callWords(n, t)); ok && len(code) <= maxShellSubSrc {
					s.shellSub(code, &shellText{src: code, line: t.lineOf(n.Pos())}, t.lineOf(n.Pos()), t.lineOf(n.End()), "bash", depth+1)
				}
			}
		case *syntax.Stmt:
			call, ok := n.Cmd.(*syntax.CallExpr)
			if !ok || depth >= maxShellDepth || !hasHeredoc(n) {
				return true
			}
			s.actsImpure = true
			if words := s.callWords(call, t); !feedsShell(words) && !writesScript(n, words, t) {
				return true
			}
			for _, r := range n.Redirs {
				if r.Hdoc == nil || r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc {
					continue
				}
				body := t.slice(r.Hdoc.Pos(), r.Hdoc.End())
				if len(body) > maxShellSubSrc {
					continue
				}
				sub := &shellText{src: body, first: t.lineOf(r.Hdoc.Pos())}
				if t.starts == nil {
					sub.line = t.line
				} else {
					for k := 0; k < len(body); k++ {
						if k == 0 || body[k-1] == '\n' {
							sub.starts = append(sub.starts, k)
						}
					}
				}
				s.shellSub(body, sub, -1, -1, "bash", depth+1)
			}
		}
		return true
	})
}

// shellSub parses code again (a string given to sh -c or eval, a
// here-document fed to a shell) and records its commands. With first and
// last ≥ 0 every command is reported on those lines (a string on a
// command's line); else on its own lines (a here-document).
func (s *scanner) shellSub(code string, t *shellText, first, last int, variant string, depth int) {
	stmts, err := s.parseShell(variant, code)
	if err != nil {
		if first >= 0 {
			// Not shell: the string is checked as it is.
			s.unit.acts = append(s.unit.acts, shellAct{line: last, first: first, text: &shellText{src: code, line: last}, sub: true})
		}
		return
	}
	n := len(s.unit.acts)
	for _, st := range stmts {
		s.shellStmt(st, t, depth)
	}
	for k := n; k < len(s.unit.acts); k++ {
		a := &s.unit.acts[k]
		a.sub = a.sub || first >= 0
		if first >= 0 && a.call == nil {
			a.first, a.line = first, last
		}
	}
}

// flatStmts records st as a command run as the shell runs it, or, when it
// is compound (if, for, while, case, a function, a block, a subshell),
// the statements inside it.
func (s *scanner) flatStmts(st *syntax.Stmt, t *shellText, depth int) {
	if flat(st) {
		s.unit.acts = append(s.unit.acts, shellAct{line: t.lineOf(st.End()), first: t.lineOf(st.Pos()), stmt: st, text: t})
		return
	}
	syntax.Walk(st.Cmd, func(n syntax.Node) bool {
		if in, ok := n.(*syntax.Stmt); ok {
			s.flatStmts(in, t, depth)
			return false
		}
		return true
	})
}

// flat reports a statement without compound commands: simple commands,
// declarations, tests and the pipelines and lists of them.
func flat(st *syntax.Stmt) bool {
	switch c := st.Cmd.(type) {
	case nil, *syntax.CallExpr, *syntax.DeclClause, *syntax.LetClause, *syntax.TestClause, *syntax.ArithmCmd:
		return true
	case *syntax.BinaryCmd:
		return flat(c.X) && flat(c.Y)
	case *syntax.TimeClause:
		return c.Stmt == nil || flat(c.Stmt)
	}
	return false
}

// callWords returns a command's words as the shell reads them: quotes
// removed, the variables known substituted; a word with other expansions
// as written.
func (s *scanner) callWords(call *syntax.CallExpr, t *shellText) []string {
	words := make([]string, 0, len(call.Args))
	for _, w := range call.Args {
		words = append(words, s.wordValue(w, t))
	}
	return words
}

// wordValue is a word without its quotes, with the values of the variables
// known in place of simple expansions; other expansions are as written.
func (s *scanner) wordValue(w *syntax.Word, t *shellText) string {
	if w == nil {
		return ""
	}
	if len(w.Parts) == 1 { // most words: one piece, as it is
		switch p := w.Parts[0].(type) {
		case *syntax.Lit:
			return p.Value
		case *syntax.SglQuoted:
			return p.Value
		}
	}
	var b strings.Builder
	var part func(p syntax.WordPart)
	part = func(p syntax.WordPart) {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				part(q)
			}
		case *syntax.ParamExp:
			if v, ok := s.varValue(p); ok {
				b.WriteString(v)
				return
			}
			b.WriteString(t.slice(p.Pos(), p.End()))
		default:
			b.WriteString(t.slice(p.Pos(), p.End()))
		}
	}
	for _, p := range w.Parts {
		part(p)
	}
	return b.String()
}

// callName is the binary a command runs (commandName of its words), read
// from its first word alone when that is a plain word that is not a
// prefix (most commands are).
func (s *scanner) callName(call *syntax.CallExpr, t *shellText) string {
	if len(call.Args[0].Parts) == 1 {
		if lit, ok := call.Args[0].Parts[0].(*syntax.Lit); ok && !prefixWords[lit.Value] && !strings.HasPrefix(lit.Value, "-") &&
			strings.IndexByte(lit.Value, '=') < 0 && strings.IndexByte(lit.Value, '\\') < 0 {
			return commandName([]string{lit.Value}, false)
		}
	}
	return commandName(s.callWords(call, t), false)
}

// varValue is the value of a simple expansion ($NAME, ${NAME}) of a known
// variable.
func (s *scanner) varValue(p *syntax.ParamExp) (string, bool) {
	if p.Param == nil || p.Flags != nil || p.Excl || p.Length || p.Width || p.IsSet || p.NestedParam != nil ||
		p.Index != nil || len(p.Modifiers) > 0 || p.Slice != nil || p.Repl != nil || p.Names != 0 || p.Exp != nil {
		return "", false
	}
	v, ok := s.sh.vars[p.Param.Value]
	return v, ok
}

// mayRun reports a command that may run a string or its input as shell
// code (runsString, feedsShell), by its first word: a shell, eval, a
// prefix (sudo, env …), or a word not known before the run (a variable).
func mayRun(call *syntax.CallExpr) bool {
	if len(call.Args) == 0 {
		return false
	}
	w := call.Args[0].Lit()
	return w == "" || w == "eval" || shellNames[path.Base(w)] || prefixWords[w]
}

// hasHeredoc reports a statement that reads a here-document.
func hasHeredoc(st *syntax.Stmt) bool {
	for _, r := range st.Redirs {
		if r.Hdoc != nil {
			return true
		}
	}
	return false
}

// runsString reports a command that runs a string as shell code — sh -c
// STRING, bash -lc STRING, eval WORDS — and the string.
func runsString(words []string) (string, bool) {
	k := skipPrefix(words, 0)
	if k >= len(words) {
		return "", false
	}
	cmd := path.Base(words[k])
	if cmd == "eval" {
		return strings.Join(words[k+1:], " "), k+1 < len(words)
	}
	if !shellNames[cmd] {
		return "", false
	}
	for i := k + 1; i+1 < len(words); i++ {
		a := words[i]
		if !strings.HasPrefix(a, "-") || strings.HasPrefix(a, "--") {
			if strings.HasPrefix(a, "--") {
				continue
			}
			return "", false
		}
		if strings.IndexByte(a, 'c') > 0 {
			return words[i+1], true
		}
	}
	return "", false
}

// feedsShell reports a command that reads its code from its input: a
// shell without a script argument (bash, sh -s, sudo bash -).
func feedsShell(words []string) bool {
	k := skipPrefix(words, 0)
	if k >= len(words) || !shellNames[path.Base(words[k])] {
		return false
	}
	for _, a := range words[k+1:] {
		if a != "-" && !strings.HasPrefix(a, "-") {
			return false
		}
		if strings.IndexByte(a, 'c') > 0 && !strings.HasPrefix(a, "--") {
			return false
		}
	}
	return true
}

// writesScript reports a command that writes its input to a shell script
// (cat > setup.sh, tee -a ~/.bashrc): a here-document it reads is code
// to be run.
func writesScript(st *syntax.Stmt, words []string, t *shellText) bool {
	var files []string
	for _, r := range st.Redirs {
		if (r.Op == syntax.RdrOut || r.Op == syntax.AppOut || r.Op == syntax.RdrClob) && r.Word != nil {
			files = append(files, r.Word.Lit())
		}
	}
	if k := skipPrefix(words, 0); k < len(words) && path.Base(words[k]) == "tee" {
		for _, a := range words[k+1:] {
			if !strings.HasPrefix(a, "-") {
				files = append(files, a)
			}
		}
	}
	for _, f := range files {
		if shellScript(f, nil) != "" {
			return true
		}
	}
	return false
}

// shellLine runs what the block does at file line n (already checked as
// written; code is its code): the commands that end there, as the shell
// runs them, and the binaries named there. A line the parser did not read
// is read by the heuristics.
func (s *scanner) shellLine(code string, n int) {
	u := &s.unit
	if !u.on {
		return
	}
	k := n - u.first
	if k < 0 || k >= len(u.parsed) || !u.parsed[k] {
		s.shell(code, n, u.c, true)
		if u.cmds {
			switch {
			case u.heredoc != "":
				if strings.TrimSpace(code) == u.heredoc {
					u.heredoc = ""
				}
			case !u.cont:
				u.heredoc = s.commands(code, n, false)
			}
			u.cont = strings.HasSuffix(strings.TrimRight(code, " \t"), "\\")
		}
		return
	}
	s.sh.endBlock() // a continued line of the heuristics does not continue into parsed code
	u.heredoc, u.cont = "", false
	var namesBuf [4]shellAct
	names := namesBuf[:0]
	for u.next < len(u.acts) && u.acts[u.next].line <= n {
		a := u.acts[u.next]
		u.next++
		if a.call != nil {
			names = append(names, a)
			continue
		}
		s.runAct(a, code, n)
	}
	// After the line's commands: a variable they assign may name the
	// binary ("T=tool; $T").
	for _, a := range names {
		s.undeclared(s.callName(a.call, a.text), s.lineText(a.line), a.line)
	}
}

// runAct checks a command as the shell runs it, when that differs from
// the line as written: continued over lines, a variable's value in place,
// or a string run again.
func (s *scanner) runAct(a shellAct, code string, n int) {
	if a.stmt == nil {
		s.extra(a.first, a.first, a.line, func() { s.checkCommand(a.text.src, a.line, s.unit.c) })
		return
	}
	src := a.text.slice(a.stmt.Pos(), a.stmt.End())
	if strings.IndexByte(src, '=') >= 0 {
		s.assignStmt(a.stmt, a.text)
	}
	if !a.sub && strings.IndexByte(src, '$') < 0 && strings.IndexByte(src, '\n') < 0 {
		return // as written: the line was checked
	}
	cmd, changed := s.render(a.stmt, a.text)
	if !changed && !a.sub {
		return
	}
	if len(cmd) > maxLineScan {
		cmd = cmd[:maxLineScan]
	}
	s.extra(a.first, a.first, a.line, func() { s.checkCommand(cmd, a.line, s.unit.c) })
}

// render returns a statement as the shell runs it: continued lines joined,
// a string over several lines on one, the values of the known variables
// in place of their simple expansions; and whether that differs from the
// text as written.
func (s *scanner) render(st *syntax.Stmt, t *shellText) (string, bool) {
	i, j := int(st.Pos().Offset()), int(st.End().Offset())
	if i < 0 || j > len(t.src) || i >= j {
		return "", false
	}
	type edit struct {
		a, b int
		v    string
	}
	var edits []edit
	syntax.Walk(st, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok {
			if v, ok := s.varValue(p); ok && len(v) <= s.sh.budget {
				s.sh.budget -= len(v)
				edits = append(edits, edit{int(p.Pos().Offset()), int(p.End().Offset()), v})
			}
			return false
		}
		return true
	})
	src := t.src[i:j]
	if len(edits) == 0 && strings.IndexByte(src, '\n') < 0 {
		return src, false
	}
	sort.Slice(edits, func(x, y int) bool { return edits[x].a < edits[y].a })
	var b strings.Builder
	last := i
	for _, e := range edits {
		if e.a < last || e.b > j {
			continue
		}
		b.WriteString(t.src[last:e.a])
		b.WriteString(e.v)
		last = e.b
		if b.Len() > maxLineScan {
			break
		}
	}
	b.WriteString(t.src[last:j])
	out := strings.ReplaceAll(b.String(), "\\\n", " ")
	out = strings.ReplaceAll(out, "\n", " ")
	return out, true
}

// assignStmt records the variables a command assigns (NAME=value, export,
// local, declare, readonly, typeset), with the values known so far in
// place.
func (s *scanner) assignStmt(st *syntax.Stmt, t *shellText) {
	sh := &s.sh
	set := func(as *syntax.Assign) {
		if as == nil || as.Name == nil || as.Value == nil || as.Index != nil || as.Append {
			return
		}
		name := as.Name.Value
		if _, known := sh.vars[name]; !known && len(sh.vars) >= maxShellVars {
			return
		}
		if v := s.wordValue(as.Value, t); len(v) <= maxShellVarValue {
			if sh.vars == nil {
				sh.vars = map[string]string{}
			}
			sh.vars[name] = v
		}
	}
	syntax.Walk(st, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			for _, as := range n.Assigns {
				set(as)
			}
		case *syntax.DeclClause:
			for _, as := range n.Args {
				set(as)
			}
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.Subshell:
			return false // its assignments are its own
		}
		return true
	})
}

// shellEnd ends the block being read.
func (s *scanner) shellEnd() {
	s.sh.endBlock()
	s.unit = shellUnit{}
}

// lineText is file line n of the current file as the scan reads it.
func (s *scanner) lineText(n int) string {
	if n >= 1 && n <= len(s.lines) {
		l := s.lines[n-1]
		if len(l) > maxLineScan {
			l = l[:maxLineScan]
		}
		return l
	}
	return ""
}

// spanCommand reports the binary an inline code span runs (its first
// command) when requires does not declare it.
func (s *scanner) spanCommand(code string, n int) {
	if indexByteIn(code, &shellMetaSet) < 0 {
		// Plain words: one command, the words it splits into.
		s.undeclared(commandNameOf(strings.FieldsSeq(code), false), code, n)
		return
	}
	t := &shellText{src: code, line: n}
	stmts, err := s.parseShell("bash", code)
	var first *syntax.CallExpr
	for _, st := range stmts {
		syntax.Walk(st, func(nd syntax.Node) bool {
			if c, ok := nd.(*syntax.CallExpr); ok && first == nil && len(c.Args) > 0 {
				first = c
			}
			return first == nil
		})
	}
	if err != nil {
		s.commands(code, n, true) // not shell: the heuristics
		return
	}
	if first != nil {
		if w := commandName(s.callWords(first, t), false); w != "" {
			s.undeclared(w, code, n)
		}
	}
}

// shellMeta are the characters that make a command line more than the
// words it splits into at blanks.
const shellMeta = "\"'`$|&;<>()\\#\n{}*?[]~="

// shellMetaSet is shellMeta as a table (strings.ContainsAny builds one at
// every call).
var shellMetaSet = byteSet(shellMeta)

// Bounds of the parse cache (scanner.parseShell): a parse takes tens of
// times its text's size, and a scan keeps the cached ones to its end.
const (
	maxCachedSrc   = 4 << 10  // a longer text is parsed each time
	maxCachedBytes = 64 << 10 // texts kept per scan
)

// shellKey is what a parse depends on: the variant and the text.
type shellKey struct{ variant, src string }

// shellParse is a text's parse, kept for the scan, and the acts of its
// statements when they depend on the text alone (stmtActs).
type shellParse struct {
	stmts    []*syntax.Stmt
	err      error
	acts     []shellAct // lines relative to the text's first (first: 1 + that; 0 unset)
	actsOK   bool
	actsCmds bool // whether acts were recorded with unit.cmds
}

// parseShell parses src as variant ("bash", "zsh"), once per scan: a
// skill repeats its commands (the same install line in several blocks,
// the same span in a table), and what the parser makes of a text
// depends on the text alone. The statements are only read afterwards
// (their offsets are the text's; a shellText places them in a file).
func (s *scanner) parseShell(variant, src string) ([]*syntax.Stmt, error) {
	if len(src) > maxCachedSrc {
		return parseStmts(s.shParser(variant), src)
	}
	key := shellKey{variant, src}
	if p, ok := s.parsed[key]; ok {
		return p.stmts, p.err
	}
	stmts, err := parseStmts(s.shParser(variant), src)
	if s.parsedBytes+len(src) <= maxCachedBytes {
		if s.parsed == nil {
			s.parsed = map[shellKey]shellParse{}
		}
		s.parsed[key] = shellParse{stmts: stmts, err: err}
		s.parsedBytes += len(src)
	}
	return stmts, err
}

// parseStmts parses src: its statements, up to the first error. The
// loop never stops early: mvdan.cc/sh v3.14.1's iterator yields the error
// again after a statement that failed, and panics if the loop has ended.
func parseStmts(p *syntax.Parser, src string) ([]*syntax.Stmt, error) {
	var stmts []*syntax.Stmt
	var first error
	for st, err := range p.StmtsSeq(strings.NewReader(src)) {
		if err != nil {
			if first == nil {
				first = err
			}
			continue
		}
		if first == nil && st != nil {
			stmts = append(stmts, st)
		}
	}
	return stmts, first
}

// A command line as the rules read it (dropRun, exfilShell): its simple
// commands and its pipelines, from the parser when the line parses, else
// from the heuristic splitters (splitShellAt, shellStatements,
// pipeSegments).

// maxSplitSrc bounds the text a rule has parsed to split it.
const maxSplitSrc = 4 << 10

// shellSegments returns the simple commands of text in order (a command
// substitution's after the command holding it), each as its words and
// its redirections as written, at its offset in text.
func (s *scanner) shellSegments(text string) []span {
	stmts, ok := s.splitParse(text)
	if !ok {
		return splitShellAt(text)
	}
	var out []span
	for _, st := range stmts {
		syntax.Walk(st, func(n syntax.Node) bool {
			in, ok := n.(*syntax.Stmt)
			if !ok {
				return true
			}
			call, ok := in.Cmd.(*syntax.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			var b strings.Builder
			for _, w := range call.Args {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(text[w.Pos().Offset():w.End().Offset()])
			}
			for _, r := range in.Redirs {
				if r.Word == nil || r.Hdoc != nil {
					continue
				}
				b.WriteString(" " + r.Op.String() + " " + text[r.Word.Pos().Offset():r.Word.End().Offset()])
			}
			out = append(out, span{b.String(), int(call.Pos().Offset()), int(in.End().Offset())})
			return true
		})
	}
	return out
}

// shellPipes returns the pipelines of text (statements split at ;, &&,
// || and newlines, compound commands entered), each as its text and its
// stages' texts.
func (s *scanner) shellPipes(text string) []pipeline {
	stmts, ok := s.splitParse(text)
	if !ok {
		var out []pipeline
		for _, st := range shellStatements(text) {
			out = append(out, pipeline{st, pipeSegments(st)})
		}
		return out
	}
	var out []pipeline
	var visit func(st *syntax.Stmt)
	visit = func(st *syntax.Stmt) {
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			if c.Op == syntax.AndStmt || c.Op == syntax.OrStmt {
				visit(c.X)
				visit(c.Y)
				return
			}
			var stages []string
			var stage func(x *syntax.Stmt)
			stage = func(x *syntax.Stmt) {
				if b, ok := x.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
					stage(b.X)
					stage(b.Y)
					return
				}
				stages = append(stages, text[x.Pos().Offset():x.End().Offset()])
			}
			stage(st)
			out = append(out, pipeline{text[st.Pos().Offset():st.End().Offset()], stages})
		case *syntax.CallExpr, *syntax.DeclClause, nil:
			t := text[st.Pos().Offset():st.End().Offset()]
			out = append(out, pipeline{t, []string{t}})
		default:
			syntax.Walk(c, func(n syntax.Node) bool {
				if in, ok := n.(*syntax.Stmt); ok {
					visit(in)
					return false
				}
				return true
			})
		}
	}
	for _, st := range stmts {
		visit(st)
	}
	return out
}

// pipeline is a statement's text and its stages' texts.
type pipeline struct {
	text   string
	stages []string
}

// splitParse parses a command line for the splitters, remembering the
// last one (several rules split the same line).
func (s *scanner) splitParse(text string) ([]*syntax.Stmt, bool) {
	if len(text) > maxSplitSrc {
		return nil, false
	}
	if text == s.splitOf && s.splitStmts != nil {
		return s.splitStmts, s.splitOK
	}
	stmts, err := s.parseShell("bash", text)
	s.splitOf, s.splitStmts, s.splitOK = text, stmts, err == nil
	if s.splitStmts == nil {
		s.splitStmts = []*syntax.Stmt{}
	}
	return stmts, err == nil
}
