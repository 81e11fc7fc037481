package promptbuild

import (
	"cmp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/textsafe"
)

// Compare orders entries by priority: always first, then Priority (higher
// first), then Local before global, then Name, then Location (so the order
// is total and deterministic).
func Compare(a, b *Entry) int {
	if c := trueFirst(a.Always, b.Always); c != 0 {
		return c
	}
	if c := cmp.Compare(b.Priority, a.Priority); c != 0 {
		return c
	}
	if c := trueFirst(a.Local, b.Local); c != 0 {
		return c
	}
	if c := strings.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return strings.Compare(a.Location, b.Location)
}

// trueFirst orders true before false.
func trueFirst(a, b bool) int {
	switch {
	case a == b:
		return 0
	case a:
		return -1
	}
	return 1
}

// Variants are the three renderings of an entry, computed once per entry.
type Variants struct {
	Full  string // as Fragment renders it (with the hosts hint if any)
	Short string // description cut to at most 160 characters; == Full when no cut was needed
	Bare  string // no <description> element at all
}

// NewVariants renders e's three variants. A caller that builds blocks
// often (the gateway) keeps them with the entry, as it keeps fragments.
func NewVariants(e *Entry) Variants {
	full := Fragment(e)
	v := Variants{Full: full, Short: full, Bare: fragment(e, "", false)}
	if d, cut := shorten(e.Description); cut {
		v.Short = fragment(e, d, true)
	}
	return v
}

// shortMax is the most characters (code points) a Short description has,
// its trailing "…" included.
const shortMax = 160

// shorten returns desc cut for the Short variant, and whether a cut was
// needed. Characters are the code points of desc as escape writes it
// (invalid UTF-8 as U+FFFD, control and invisible characters dropped),
// before entities.
// A description of more than shortMax characters is cut after its last
// whole word within shortMax-1 characters (at whitespace other than a
// no-break space, not at its first character), or hard at shortMax-1
// characters when there is none; trailing whitespace and punctuation are
// then trimmed (unless nothing would be left, when the hard cut stands
// untrimmed) and "…" appended.
func shorten(desc string) (string, bool) {
	if len(desc) <= shortMax { // bytes ≥ characters
		return "", false
	}
	s := clean(desc)
	if utf8.RuneCountInString(s) <= shortMax {
		return "", false
	}
	hard, word := 0, -1
	n := 0
	for i, r := range s {
		if n > 0 && isBreak(r) {
			word = i // s[:i] is n ≤ shortMax-1 characters of whole words
		}
		if n == shortMax-1 {
			hard = i
			break
		}
		n++
	}
	t := ""
	if word > 0 {
		t = strings.TrimRightFunc(s[:word], isTrailing)
	}
	if t == "" {
		t = strings.TrimRightFunc(s[:hard], isTrailing)
	}
	if t == "" {
		t = s[:hard]
	}
	return t + "…", true
}

// isBreak reports whether a description may be cut at r: whitespace other
// than the no-break spaces.
func isBreak(r rune) bool {
	switch r {
	case '\u00a0', '\u2007', '\u202f':
		return false
	}
	return unicode.IsSpace(r)
}

// isTrailing reports whether r is trimmed before the "…" of a cut.
func isTrailing(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsPunct(r)
}

// clean returns s as escape writes it before entities: invalid UTF-8 as
// U+FFFD and without the characters escape drops (textsafe.ForPrompt).
func clean(s string) string { return textsafe.ForPrompt(s) }
