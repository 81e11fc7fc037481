// Package textsafe owns the one rule of which characters are unsafe to
// show: what counts as invisible (IsInvisible), what a terminal shows
// escaped (Printable) and what a prompt leaves out (ForPrompt,
// DroppedFromPrompt). Ids refuse the same characters (internal/ident),
// governance's excerpts escape them and the hidden-unicode rule looks for
// them (with the context that tells a joiner in an emoji from a hidden
// one), and scanners' strings lose them.
//
// It imports only the standard library, so that every layer may use it:
// ident, protocol, governance and promptbuild are pure, and the node links
// it through internal/cli.
package textsafe

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// IsFormat reports whether r is a Unicode format character (category Cf:
// zero-width spaces and joiners, bidi marks, embeddings, overrides and
// isolates, U+FEFF, the soft hyphen, the Arabic number signs…) or in the
// tag block U+E0000–U+E007F (assigned or not): the characters that hide
// text or reorder it, as the hidden-unicode rule looks for them.
func IsFormat(r rune) bool {
	return unicode.Is(unicode.Cf, r) || r >= 0xE0000 && r <= 0xE007F
}

// IsVariationSelector reports whether r selects a variant of the glyph
// before it: VS1–VS16 (U+FE00–U+FE0F) and VS17–VS256 (U+E0100–U+E01EF).
// A run of them carries data that shows as nothing.
func IsVariationSelector(r rune) bool {
	return r >= 0xFE00 && r <= 0xFE0F || r >= 0xE0100 && r <= 0xE01EF
}

// IsHangulFiller reports whether r is one of the Hangul fillers, which
// render as blank space of a letter's width.
func IsHangulFiller(r rune) bool {
	return r == 0x115F || r == 0x1160 || r == 0x3164 || r == 0xFFA0
}

// IsInvisible reports whether r shows nothing or changes how the text
// around it is shown: a format or tag character (IsFormat), the line or
// paragraph separator U+2028, U+2029, a Hangul filler, or a variation
// selector other than VS16 (U+FE0F, which asks for the emoji form of the
// character before it and is part of most emoji as typed).
func IsInvisible(r rune) bool {
	if r < 0xAD {
		return false // the common case: ASCII and Latin-1 letters
	}
	return IsFormat(r) || r == '\u2028' || r == '\u2029' || IsHangulFiller(r) ||
		IsVariationSelector(r) && r != 0xFE0F
}

// IsUnsafe reports whether r is a control character (C0, DEL or C1),
// which a terminal acts on, or invisible (IsInvisible): every character
// Printable escapes and, but for \n and \t, every one ForPrompt drops.
func IsUnsafe(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || IsInvisible(r)
}

// DroppedFromPrompt reports whether ForPrompt leaves r out: every unsafe
// character (IsUnsafe) but \n and \t, which lay a description out.
func DroppedFromPrompt(r rune) bool {
	return r != '\n' && r != '\t' && IsUnsafe(r)
}

// ForPrompt returns s as a prompt may hold it: invalid UTF-8 as U+FFFD and
// without the characters DroppedFromPrompt names. Whatever governance
// decided about the text (and whether it ran at all), a model is not given
// characters that a person reading the same text cannot see: hidden
// instructions in tag characters, text reordered by bidi controls, data in
// runs of variation selectors. It returns s itself when nothing is
// dropped.
func ForPrompt(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "\uFFFD")
	}
	i := 0
	for i < len(s) {
		r, size := utf8.DecodeRuneInString(s[i:])
		if DroppedFromPrompt(r) {
			break
		}
		i += size
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(s[:i])
	for _, r := range s[i:] {
		if !DroppedFromPrompt(r) {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Printable returns s with every character a terminal would act on or not
// show replaced by a visible escape: C0 controls and DEL as \xHH (\t, \n
// and \r as such), C1 controls and invisible characters (IsInvisible) as
// \uHHHH or \UHHHHHHHH, and bytes that are not UTF-8 as \xHH. Other text,
// backslashes included, is left as is.
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
		default:
			b.WriteString(Escape(r))
		}
		i += size
	}
	return b.String()
}

// Escape returns r as \uHHHH, or \UHHHHHHHH beyond the BMP: how Printable
// and governance's excerpts show an unsafe character.
func Escape(r rune) string {
	if r > 0xFFFF {
		return fmt.Sprintf(`\U%08x`, r)
	}
	return fmt.Sprintf(`\u%04x`, r)
}

// needsEscape reports whether the rune r, decoded from size bytes, is one
// Printable escapes.
func needsEscape(r rune, size int) bool {
	return r == utf8.RuneError && size == 1 || IsUnsafe(r)
}
