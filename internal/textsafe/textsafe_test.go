package textsafe

import (
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestIsInvisible(t *testing.T) {
	for _, c := range []struct {
		r         rune
		invisible bool
	}{
		{'a', false}, {' ', false}, {'\n', false}, {0xA0, false}, {'é', false}, {'日', false}, {'😀', false},
		{0xAD, true},                                   // soft hyphen
		{0x200B, true}, {0x200C, true}, {0x200D, true}, // zero width space, non-joiner, joiner
		{0x200E, true}, {0x200F, true}, {0x061C, true}, // bidi marks
		{0x202A, true}, {0x202E, true}, // embeddings and overrides
		{0x2066, true}, {0x2069, true}, // isolates
		{0x2060, true}, {0xFEFF, true}, // word joiner, BOM
		{0x2028, true}, {0x2029, true}, // line and paragraph separators
		{0xE0000, true}, {0xE0001, true}, {0xE0041, true}, // tags, unassigned ones too
		{0xE007F, true}, {0xE0080, false},
		{0x115F, true}, {0x1160, true}, {0x3164, true}, {0xFFA0, true}, // Hangul fillers
		{0xFE00, true}, {0xFE0E, true}, {0xFE0F, false}, // VS1, VS15; VS16 is part of emoji
		{0xE0100, true}, {0xE01EF, true}, {0xE01F0, false},
		{0x85, false}, {0x9B, false}, // C1: controls, not invisible (IsUnsafe has them)
	} {
		if got := IsInvisible(c.r); got != c.invisible {
			t.Errorf("IsInvisible(%U) = %v, want %v", c.r, got, c.invisible)
		}
	}
	// Every format character is invisible, and the fast path misses none.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Cf, r) && !IsInvisible(r) {
			t.Fatalf("IsInvisible(%U) = false for a format character", r)
		}
	}
}

func TestIsUnsafe(t *testing.T) {
	for _, c := range []struct {
		r      rune
		unsafe bool
	}{
		{0, true}, {'\t', true}, {'\n', true}, {0x1B, true}, {0x1F, true}, {0x7F, true},
		{0x80, true}, {0x85, true}, {0x9F, true},
		{' ', false}, {'~', false}, {0xA0, false}, {0xAD, true}, {0x202E, true}, {'é', false},
	} {
		if got := IsUnsafe(c.r); got != c.unsafe {
			t.Errorf("IsUnsafe(%U) = %v, want %v", c.r, got, c.unsafe)
		}
	}
}

func TestForPrompt(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{"plain text, <b> & 'quotes'", "plain text, <b> & 'quotes'"},
		{"tab\tnew\nline\r", "tab\tnew\nline"},
		{"\x00\x1b[31mred\x7f", "[31mred"},
		{"c1\u0085\u009b", "c1"},
		{"cu\u200brl", "curl"},
		{"evil\u202egnp.exe", "evilgnp.exe"},
		{"hi\U000e0049\U000e0067\U000e006e", "hi"},
		{"😀\ufe00\ufe01 ❤\ufe0f", "😀 ❤\ufe0f"},
		{"bad\xffutf8", "bad\ufffdutf8"},
		{"Café 日本語 שלום", "Café 日本語 שלום"},
	} {
		if got := ForPrompt(c.in); got != c.want {
			t.Errorf("ForPrompt(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if s := strings.Repeat("plain ", 10); testing.AllocsPerRun(10, func() { ForPrompt(s) }) != 0 {
		t.Errorf("ForPrompt allocates for text with nothing to drop")
	}
}

func TestPrintable(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"", ""},
		{`C:\skills\x1b`, `C:\skills\x1b`},
		{"café 東京 🚀 ❤\ufe0f שרת", "café 東京 🚀 ❤\ufe0f שרת"},
		{"\x1b[2J a\tb\nc\rd \x7f", `\x1b[2J a\tb\nc\rd \x7f`},
		{"csi\u009b31m", `csi\u009b31m`},
		{"zw\u200bsp evil\u202egnp", `zw\u200bsp evil\u202egnp`},
		{"tag\U000e0041 vs\ufe00 filler\u3164", `tag\U000e0041 vs\ufe00 filler\u3164`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"bad\xff\xc3utf8", `bad\xff\xc3utf8`},
	} {
		got := Printable(c.in)
		if got != c.want {
			t.Errorf("Printable(%q) = %q, want %q", c.in, got, c.want)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Printable(%q) = %q is not valid UTF-8", c.in, got)
		}
	}
}

func TestEscape(t *testing.T) {
	for r, want := range map[rune]string{0x200B: `\u200b`, 0x85: `\u0085`, 0xE0041: `\U000e0041`, 0xFEFF: `\ufeff`} {
		if got := Escape(r); got != want {
			t.Errorf("Escape(%U) = %q, want %q", r, got, want)
		}
	}
}
