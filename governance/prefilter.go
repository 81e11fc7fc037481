package governance

import (
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Go's regexp runs every alternative of an expression at every byte of a
// line, and most lines the rules ask about hold no match. Each
// expression is therefore read once, at package initialization, for the
// literal text any match must contain ("crontab" or "@reboot" or
// ".bashrc" … for the persistence expression, "curl" and "&&" and
// "chmod" for a download made executable); those literals join the
// keyword automaton (keywords.go), and the expression runs only on a
// line that holds them. What the literals are is derived from the
// expression itself, not written beside it, so the check cannot drift
// from the expression: it only ever skips a line the expression would
// not match (TestPrefilterSound checks that against strings generated
// from each expression and against the corpora).

// rx is a compiled expression with what any of its matches contains:
// for each clause of need, one of its keywords, in the text as
// lowerASCII lowercases it. need is empty when nothing is known.
type rx struct {
	*regexp.Regexp // compiled when made; an alternative's on first use (re)
	need           []*keySet
	// alts are the expression's alternatives (see distribute), each with
	// its own prefilter (nil for one): find and match run only those
	// whose literals a line holds, and an alternative alone is cheaper
	// to run than the whole (regexp tries every alternative at every
	// byte; one that starts with a literal is found by a substring
	// search).
	alts  []*rx
	isAlt bool           // one of another's alts
	tree  *syntax.Regexp // an alternative's, compiled on first use
	once  sync.Once
}

// allRx are the expressions made by mustRx, and their alternatives once
// prepared.
var allRx []*rx

// mustRx compiles an expression; its prefilter and alternatives are
// derived at the first scan (prepareRx).
func mustRx(expr string) *rx {
	r := &rx{Regexp: regexp.MustCompile(expr)}
	allRx = append(allRx, r)
	return r
}

// prepareRx derives every expression's prefilter and alternatives, once,
// before the keyword automaton is built from the keywords they add:
// at the first scan, not at package initialization (a program that
// imports the package and scans nothing does not pay for it, and the
// alternatives are compiled only when a line first asks for one).
func prepareRx() {
	for _, r := range slices.Clone(allRx) {
		re, err := syntax.Parse(r.String(), syntax.Perl)
		if err != nil {
			panic(err)
		}
		r.need = needOf(re)
		if alts := distribute(re, maxAlts); len(alts) > 1 {
			for _, a := range alts {
				ar := &rx{need: needOf(a), isAlt: true, tree: a}
				r.alts = append(r.alts, ar)
				allRx = append(allRx, ar)
			}
		}
	}
}

// re returns the compiled expression (an alternative's compiled now).
func (r *rx) re() *regexp.Regexp {
	if r.tree != nil {
		r.once.Do(func() { r.Regexp = regexp.MustCompile(pattern(r.tree)) })
	}
	return r.Regexp
}

// needOf is the prefilter of an expression: its clauses as sets of
// keywords.
func needOf(re *syntax.Regexp) []*keySet {
	var need []*keySet
	for _, clause := range literals(re.Simplify()).clauses() {
		if clause = trimClause(clause); clause != nil {
			need = append(need, prefilterKeys.add(clause))
		}
	}
	return need
}

// pattern writes re back as an expression (syntax.Regexp.String does
// too, but takes seconds for the alternatives made here: it works out
// their flags again at every node). Every piece is grouped, so that no
// precedence is left to the reader.
func pattern(re *syntax.Regexp) string {
	var b strings.Builder
	writePattern(&b, re)
	return b.String()
}

func writePattern(b *strings.Builder, re *syntax.Regexp) {
	group := func(sub *syntax.Regexp) {
		b.WriteString("(?:")
		writePattern(b, sub)
		b.WriteString(")")
	}
	lazy := func() {
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteByte('?')
		}
	}
	switch re.Op {
	case syntax.OpNoMatch:
		b.WriteString(`[^\x00-\x{10FFFF}]`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString("(?i:")
		}
		for _, r := range re.Rune {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(")")
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			b.WriteString(`[^\x00-\x{10FFFF}]`)
			return
		}
		b.WriteByte('[')
		for k := 0; k+1 < len(re.Rune); k += 2 {
			fmt.Fprintf(b, `\x{%x}`, re.Rune[k])
			if re.Rune[k+1] != re.Rune[k] {
				fmt.Fprintf(b, `-\x{%x}`, re.Rune[k+1])
			}
		}
		b.WriteByte(']')
	case syntax.OpAnyCharNotNL:
		b.WriteString(`(?-s:.)`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine:
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine:
		b.WriteString(`(?m:$)`)
	case syntax.OpBeginText:
		b.WriteString(`\A`)
	case syntax.OpEndText:
		if re.Flags&syntax.WasDollar != 0 {
			b.WriteString(`(?-m:$)`)
		} else {
			b.WriteString(`\z`)
		}
	case syntax.OpWordBoundary:
		b.WriteString(`\b`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`\B`)
	case syntax.OpCapture:
		group(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		group(re.Sub[0])
		b.WriteByte(map[syntax.Op]byte{syntax.OpStar: '*', syntax.OpPlus: '+', syntax.OpQuest: '?'}[re.Op])
		lazy()
	case syntax.OpRepeat:
		group(re.Sub[0])
		switch {
		case re.Max == -1:
			fmt.Fprintf(b, "{%d,}", re.Min)
		case re.Max == re.Min:
			fmt.Fprintf(b, "{%d}", re.Min)
		default:
			fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
		}
		lazy()
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			group(sub)
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for k, sub := range re.Sub {
			if k > 0 {
				b.WriteByte('|')
			}
			writePattern(b, sub)
		}
		b.WriteString(")")
	default:
		panic("governance: an expression's piece of unknown kind: " + re.Op.String())
	}
}

// maxAlts bounds the alternatives an expression is split into.
const maxAlts = 32

// distribute returns the alternatives of re, as many as one can tell
// apart by how a match starts: those of a top-level alternation, and
// those of an alternation that starts a concatenation, the rest of the
// concatenation copied after each (x(a|b)y is xay|xby: at any start,
// leftmost-first matching tries a before b, then y, as it tries xay
// before xby). A match of re is a match of one of them, and the first
// of those that match at the leftmost start is what re matches there.
// Captures are dropped: they change no match. More than max
// alternatives: re alone.
func distribute(re *syntax.Regexp, max int) []*syntax.Regexp {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	var out []*syntax.Regexp
	switch re.Op {
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			out = append(out, distribute(sub, max)...)
		}
	case syntax.OpConcat:
		k := 0
		for k < len(re.Sub) && (re.Sub[k].Op == syntax.OpWordBoundary || re.Sub[k].Op == syntax.OpNoWordBoundary) {
			k++
		}
		if k == len(re.Sub) {
			return []*syntax.Regexp{re}
		}
		lead := re.Sub[k]
		for lead.Op == syntax.OpCapture {
			lead = lead.Sub[0]
		}
		if lead.Op != syntax.OpAlternate {
			return []*syntax.Regexp{re}
		}
		for _, a := range lead.Sub {
			c := &syntax.Regexp{Op: syntax.OpConcat, Flags: re.Flags}
			c.Sub = append(c.Sub, re.Sub[:k]...)
			c.Sub = append(c.Sub, a)
			c.Sub = append(c.Sub, re.Sub[k+1:]...)
			out = append(out, distribute(c, max)...)
		}
	default:
		return []*syntax.Regexp{re}
	}
	if len(out) > max {
		return []*syntax.Regexp{re}
	}
	return out
}

// maxLitLen is the longest keyword a clause keeps: a literal's first
// bytes are in every text the literal is, and rule out nearly as many
// lines as the whole literal, for fewer states of the automaton.
const maxLitLen = 8

// trimClause returns a clause as the automaton looks for it: each string
// cut to maxLitLen bytes, and a string holding another of the clause
// dropped (the other is in every text it is).
func trimClause(clause []string) []string {
	// A clause with a blank, a letter or a digit alone is met on nearly
	// every line: it rules out none, and each of those bytes would stop
	// the automaton.
	if slices.ContainsFunc(clause, func(w string) bool {
		return len(w) == 1 && (isAlnum(w[0]) || strings.IndexByte(" \t\n\r\f\v", w[0]) >= 0)
	}) {
		return nil
	}
	var out []string
	for _, w := range clause {
		out = append(out, w[:min(len(w), maxLitLen)])
	}
	var keep []string
	for i, w := range out {
		redundant := false
		for j, v := range out {
			if j != i && strings.Contains(w, v) && (len(v) < len(w) || j < i) {
				redundant = true
				break
			}
		}
		if !redundant {
			keep = append(keep, w)
		}
	}
	return keep
}

// may reports whether low — the text r is to run on, or a text holding
// it, lowercased by lowerASCII — may hold a match of r.
func (s *scanner) may(r *rx, low string) bool {
	if len(r.need) == 0 {
		return true
	}
	bits := s.pkw.bitsOf(prefilterKeys, low)
	for _, ks := range r.need {
		if !ks.in(bits) {
			return false
		}
	}
	return true
}

// find is r.FindStringIndex(low) behind r's prefilter. Split into its
// alternatives, the match is the same: the leftmost start of any
// alternative's first match, and at that start the first alternative
// (in the pattern's order) that matches there, as regexp's
// leftmost-first semantics pick it, with its end.
func (s *scanner) find(r *rx, low string) []int {
	return s.findFrom(r, low, 0)
}

// findFrom is r.FindStringIndex(low[from:]), the prefilter asked of low
// (what low[from:] holds, low holds).
func (s *scanner) findFrom(r *rx, low string, from int) []int {
	if !s.may(r, low) {
		return nil
	}
	if r.alts == nil {
		return r.FindStringIndex(low[from:])
	}
	var best []int
	for _, a := range r.alts {
		if !s.may(a, low) {
			continue
		}
		if loc := a.re().FindStringIndex(low[from:]); loc != nil && (best == nil || loc[0] < best[0]) {
			best = loc
		}
	}
	return best
}

// match is r.MatchString(low) behind r's prefilter: whether one of its
// alternatives matches.
func (s *scanner) match(r *rx, low string) bool {
	if !s.may(r, low) {
		return false
	}
	if r.alts == nil {
		return r.MatchString(low)
	}
	for _, a := range r.alts {
		if s.may(a, low) && a.re().MatchString(low) {
			return true
		}
	}
	return false
}

// findAll is r.FindAllStringIndex(low, n) behind r's prefilter.
func (s *scanner) findAll(r *rx, low string, n int) [][]int {
	if !s.may(r, low) {
		return nil
	}
	return r.FindAllStringIndex(low, n)
}

// findAllSubmatch is r.FindAllStringSubmatchIndex(low, n) behind r's
// prefilter.
func (s *scanner) findAllSubmatch(r *rx, low string, n int) [][]int {
	if !s.may(r, low) {
		return nil
	}
	return r.FindAllStringSubmatchIndex(low, n)
}

// findAllIn is r.FindAllStringIndex(text, n), text as written, behind r's
// prefilter over low, text lowercased.
func (s *scanner) findAllIn(r *rx, text, low string, n int) [][]int {
	if !s.may(r, low) {
		return nil
	}
	return r.FindAllStringIndex(text, n)
}

// findSubmatchIn is r.FindStringSubmatchIndex(text), text as written,
// when on and r's prefilter over low (text lowercased) allows it.
func (s *scanner) findSubmatchIn(r *rx, text, low string, on bool) []int {
	if !on || !s.may(r, low) {
		return nil
	}
	return r.FindStringSubmatchIndex(text)
}

// Bounds of the literal analysis: larger sets are given up (they would
// cost the automaton more than they save).
const (
	maxLitSet    = 24  // strings in an exact set
	maxLitClause = 128 // strings in a clause
	maxLitClass  = 8   // characters of a class enumerated
)

// litInfo is what the analysis knows of a piece of an expression: either
// the exact (small) set of strings it matches (exact), or clauses any
// match contains a string of each (and), or nothing (neither).
type litInfo struct {
	exact   []string // when isExact: every string the piece matches
	isExact bool
	and     [][]string // when !isExact: each clause, one of its strings is in every match
}

var anyInfo = litInfo{}

func exactInfo(set []string) litInfo {
	if len(set) > maxLitSet {
		return anyInfo
	}
	return litInfo{exact: set, isExact: true}
}

// clauses returns the clauses of the info as the prefilter uses them:
// a clause holding "" says nothing.
func (l litInfo) clauses() [][]string {
	var all [][]string
	if l.isExact {
		all = [][]string{l.exact}
	} else {
		all = l.and
	}
	var out [][]string
	for _, c := range all {
		if len(c) == 0 || len(c) > maxLitClause || slices.Contains(c, "") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// best returns the clause most likely to rule a line out: the one whose
// shortest string is longest (then the smallest), or nil.
func (l litInfo) best() []string {
	var best []string
	score := func(c []string) int {
		m := 1 << 20
		for _, s := range c {
			m = min(m, len(s))
		}
		return m*64 - len(c)
	}
	for _, c := range l.clauses() {
		if best == nil || score(c) > score(best) {
			best = c
		}
	}
	return best
}

// runeForms returns the strings a rune of the expression matches in the
// text lowercased by lowerASCII: the rune itself, or with (?i) each rune
// of its case-folding orbit (K matches the Kelvin sign too), ASCII
// capitals lowercased. nil when the rune is one the matcher also meets
// as an invalid byte (utf8.RuneError).
func runeForms(r rune, fold bool) []string {
	if r == utf8.RuneError {
		return nil
	}
	if r < utf8.RuneSelf && !fold {
		return asciiForms[r] // (shared: the callers only read it)
	}
	lower := func(r rune) string {
		if r >= 'A' && r <= 'Z' {
			r += 'a' - 'A'
		}
		return string(r)
	}
	out := []string{lower(r)}
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			if s := lower(f); !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// asciiForms are runeForms of the ASCII characters without case folding.
var asciiForms = func() (t [utf8.RuneSelf][]string) {
	for r := range t {
		c := byte(r)
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		t[r] = []string{string(c)}
	}
	return t
}()

// cross returns every a+b, or nil when there would be more than
// maxLitSet.
func cross(a, b []string) []string {
	if len(a)*len(b) > maxLitSet {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			if s := x + y; !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

// literals analyses a (simplified) expression.
func literals(re *syntax.Regexp) litInfo {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return exactInfo([]string{""})
	case syntax.OpLiteral:
		set := []string{""}
		for _, r := range re.Rune {
			forms := runeForms(r, re.Flags&syntax.FoldCase != 0)
			if forms == nil {
				return anyInfo
			}
			next := cross(set, forms)
			if next == nil {
				// Too many case forms: a match holds one of the
				// forms of the literal's start.
				return litInfo{and: [][]string{set}}
			}
			set = next
		}
		return exactInfo(set)
	case syntax.OpCharClass:
		var set []string
		n := 0
		for k := 0; k+1 < len(re.Rune); k += 2 {
			n += int(re.Rune[k+1]-re.Rune[k]) + 1
			if n > maxLitClass {
				return anyInfo
			}
			for r := re.Rune[k]; r <= re.Rune[k+1]; r++ {
				forms := runeForms(r, false) // a class lists its case forms itself
				if forms == nil {
					return anyInfo
				}
				if !slices.Contains(set, forms[0]) {
					set = append(set, forms[0])
				}
			}
		}
		if len(set) == 0 {
			return anyInfo
		}
		return exactInfo(set)
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpQuest:
		sub := literals(re.Sub[0])
		if sub.isExact && !slices.Contains(sub.exact, "") {
			return exactInfo(append(slices.Clip(sub.exact), ""))
		}
		if sub.isExact {
			return sub
		}
		return anyInfo
	case syntax.OpPlus:
		return required(literals(re.Sub[0]))
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(literals(re.Sub[0]))
		}
		return anyInfo
	case syntax.OpConcat:
		var and [][]string
		cur := []string{""}
		exact := true
		for _, sub := range re.Sub {
			l := literals(sub)
			if l.isExact {
				if next := cross(cur, l.exact); next != nil {
					cur = next
					continue
				}
				// Too many: what was gathered is one clause, and the
				// product starts again from this piece.
				exact = false
				and = append(and, cur)
				cur = l.exact
				continue
			}
			exact = false
			and = append(and, cur)
			and = append(and, l.and...)
			cur = []string{""}
		}
		if exact {
			return exactInfo(cur)
		}
		return litInfo{and: append(and, cur)}
	case syntax.OpAlternate:
		var union []string
		exact := true
		for _, sub := range re.Sub {
			l := literals(sub)
			if !l.isExact {
				exact = false
				break
			}
			for _, s := range l.exact {
				if !slices.Contains(union, s) {
					union = append(union, s)
				}
			}
		}
		if exact && len(union) <= maxLitSet {
			return exactInfo(union)
		}
		// Each alternative's best clause: a match holds one of their
		// strings.
		union = nil
		for _, sub := range re.Sub {
			c := literals(sub).best()
			if c == nil {
				return anyInfo
			}
			for _, s := range c {
				if !slices.Contains(union, s) {
					union = append(union, s)
				}
			}
		}
		if len(union) > maxLitClause {
			return anyInfo
		}
		return litInfo{and: [][]string{union}}
	}
	// OpStar, OpAnyChar, OpAnyCharNotNL, OpNoMatch and the rest.
	return anyInfo
}

// required is what a piece that occurs at least once contains.
func required(l litInfo) litInfo {
	if l.isExact {
		return litInfo{and: [][]string{l.exact}}
	}
	return l
}
