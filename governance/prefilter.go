package governance

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
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
	*regexp.Regexp
	need []*keySet
	// alts are the expression's top-level alternatives, each compiled on
	// its own with its own prefilter (nil for one): find and match run
	// only those whose literals a line holds, and an alternative alone
	// is cheaper to run than the whole (regexp tries every alternative
	// at every byte; one that starts with a literal is found by a
	// substring search).
	alts  []*rx
	isAlt bool // one of another's alts
}

// allRx are the expressions made by mustRx, for the tests.
var allRx []*rx

// mustRx compiles an expression and derives its prefilter.
func mustRx(expr string) *rx {
	r := &rx{Regexp: regexp.MustCompile(expr)}
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		panic(err)
	}
	for _, clause := range literals(re.Simplify()).clauses() {
		if clause = trimClause(clause); clause != nil {
			r.need = append(r.need, keys(clause...))
		}
	}
	allRx = append(allRx, r)
	// (A leading flag group applies to every alternative: such a
	// pattern is not split.)
	if alts := topAlternatives(expr); len(alts) > 1 && !strings.HasPrefix(expr, "(?") {
		for _, a := range alts {
			ar := mustRx(a)
			ar.isAlt = true
			r.alts = append(r.alts, ar)
		}
	}
	return r
}

// maxLitLen is the longest keyword a clause keeps: a literal's first
// bytes are in every text the literal is, and rule out nearly as many
// lines as the whole literal, for fewer states of the automaton.
const maxLitLen = 8

// trimClause returns a clause as the automaton looks for it: each string
// cut to maxLitLen bytes, and a string holding another of the clause
// dropped (the other is in every text it is).
func trimClause(clause []string) []string {
	// Blanks are in most lines: a clause of them rules out nearly none.
	if !slices.ContainsFunc(clause, func(w string) bool { return strings.Trim(w, " \t\n\r\f\v") != "" }) {
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
	bits := s.bitsOf(low)
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
	if !s.may(r, low) {
		return nil
	}
	if r.alts == nil {
		return r.FindStringIndex(low)
	}
	var best []int
	for _, a := range r.alts {
		if !s.may(a, low) {
			continue
		}
		if loc := a.FindStringIndex(low); loc != nil && (best == nil || loc[0] < best[0]) {
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
		if s.may(a, low) && a.MatchString(low) {
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
