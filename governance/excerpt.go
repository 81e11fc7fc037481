package governance

import (
	"strings"
	"unicode/utf8"

	"github.com/skillgate/skillgate/internal/textsafe"
)

// MaxExcerpt is the most characters (code points) of an excerpt as emitted.
const MaxExcerpt = 120

// excerpt returns the part of line around byte offset at, with control and
// invisible characters escaped (\t, \u200b, \U000e0041), at most MaxExcerpt
// code points, "…" marking a cut.
func excerpt(line string, at int) string {
	at = max(0, min(at, len(line)))
	start := 0
	if at > 40 {
		start = at - 40
		for start < len(line) && !utf8.RuneStart(line[start]) {
			start++
		}
	}
	var b strings.Builder
	n := 0
	if start > 0 {
		b.WriteString("…")
		n++
	}
	s := strings.TrimRight(line[start:], " \t")
	if start == 0 {
		s = strings.TrimLeft(s, " \t")
	}
	for i, r := range s {
		piece := escapeRune(r)
		pn := utf8.RuneCountInString(piece)
		if n+pn > MaxExcerpt-1 && i+utf8.RuneLen(r) < len(s) || n+pn > MaxExcerpt {
			b.WriteString("…")
			break
		}
		b.WriteString(piece)
		n += pn
	}
	return b.String()
}

// escapeRune shows control and invisible characters as escapes
// (textsafe.IsUnsafe: the characters a terminal shows escaped).
func escapeRune(r rune) string {
	switch {
	case r == '\t':
		return `\t`
	case r == utf8.RuneError:
		return `\ufffd`
	case r == '\\':
		return `\`
	case textsafe.IsUnsafe(r):
		return textsafe.Escape(r)
	}
	return string(r)
}
