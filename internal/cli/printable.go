package cli

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/skillgate/skillgate/protocol"
)

// Printable returns s with every character a terminal would act on or not
// show replaced by a visible escape: C0 controls and DEL as \xHH (\t, \n
// and \r as such), C1 controls and invisible characters (Unicode format
// characters, U+2028, U+2029; see protocol.IsInvisible) as \uHHHH or
// \UHHHHHHHH, and bytes that are not UTF-8 as \xHH. Other text, backslashes
// included, is left as is. Human-readable output passes every value that
// comes from a node, a SKILL.md, a config file or the gateway through it,
// so that such a value cannot clear the screen, fake a line or reorder
// what is shown.
func Printable(s string) string {
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if needsEscape(r, size) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s // the common case: nothing to escape, no allocation
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case !needsEscape(r, size):
			b.WriteString(s[i : i+size])
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < utf8.RuneSelf || size == 1: // C0, DEL or a byte that is not UTF-8
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r <= 0xffff:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			fmt.Fprintf(&b, `\U%08x`, r)
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether the rune r, decoded from size bytes, is one
// Printable escapes.
func needsEscape(r rune, size int) bool {
	switch {
	case r == utf8.RuneError && size == 1:
		return true
	case r < utf8.RuneSelf:
		return r < 0x20 || r == 0x7f
	}
	return unicode.IsControl(r) || protocol.IsInvisible(r)
}
