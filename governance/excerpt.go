package governance

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
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

// escapeRune shows control and invisible characters as escapes.
func escapeRune(r rune) string {
	switch {
	case r == '\t':
		return `\t`
	case r == utf8.RuneError:
		return `\ufffd`
	case r == '\\':
		return `\`
	case unicode.IsControl(r) || invisible(r):
		if r > 0xFFFF {
			return fmt.Sprintf(`\U%08x`, r)
		}
		return fmt.Sprintf(`\u%04x`, r)
	}
	return string(r)
}

// invisible reports format characters, bidi controls, tag characters and
// other characters that render as nothing.
func invisible(r rune) bool {
	return unicode.Is(unicode.Cf, r) || (r >= 0xE0000 && r <= 0xE007F) ||
		r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0 || // Hangul fillers
		(r >= 0xFE00 && r <= 0xFE0E) || (r >= 0xE0100 && r <= 0xE01EF) // variation selectors but VS16
}
