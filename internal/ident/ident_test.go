package ident

import (
	"strings"
	"testing"
)

// TestValidate: the shape of an id (length, slashes, "..", UTF-8).
func TestValidate(t *testing.T) {
	tests := []struct{ id, want string }{
		{"github", ""},
		{".hidden", ""},
		{"with space", ""},
		{strings.Repeat("a", MaxLen), ""},
		{strings.Repeat("é", MaxLen/2), ""},
		{"", "is empty"},
		{strings.Repeat("a", MaxLen+1), "is 129 bytes, more than 128"},
		{"a/b", `"a/b" contains a slash or backslash`},
		{`a\b`, `"a\\b" contains a slash or backslash`},
		{"a..b", `"a..b" contains ".."`},
		{"bad\xffutf8", `"bad\xffutf8" is not valid UTF-8`},
	}
	for _, tt := range tests {
		err := Validate(tt.id)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Validate(%q) = %v, want nil", tt.id, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want):
			t.Errorf("Validate(%q) = %v, want %q", tt.id, err, tt.want)
		}
	}
}

// TestValidateCharacters: ids refuse control characters and invisible
// ones (format characters, line and paragraph separators), naming the
// code point of the latter, and keep ordinary non-ASCII text.
func TestValidateCharacters(t *testing.T) {
	tests := []struct {
		class, id string
		want      string // "" for valid
	}{
		{"ASCII", "mac-1.local_2", ""},
		{"accents", "café-crème", ""},
		{"CJK", "服务器-東京", ""},
		{"emoji", "host-🚀", ""},
		{"emoji with variation selector", "host-❤\ufe0f", ""},
		{"right-to-left letters", "שרת-1", ""},
		{"C0 ESC", "a\x1b[2J", `"a\x1b[2J" contains a control character`},
		{"C0 BEL", "a\x07", `"a\a" contains a control character`},
		{"C0 CR", "a\rb", `"a\rb" contains a control character`},
		{"DEL", "a\x7f", `"a\x7f" contains a control character`},
		{"C1 CSI", "a\u009b", `"a\u009b" contains a control character`},
		{"soft hyphen", "ad\u00admin", `"ad\u00admin" contains the invisible character U+00AD`},
		{"zero-width space", "ad\u200bmin", `"ad\u200bmin" contains the invisible character U+200B`},
		{"zero-width non-joiner", "a\u200cb", `"a\u200cb" contains the invisible character U+200C`},
		{"zero-width joiner", "a\u200db", `"a\u200db" contains the invisible character U+200D`},
		{"left-to-right mark", "a\u200e", `"a\u200e" contains the invisible character U+200E`},
		{"right-to-left mark", "a\u200f", `"a\u200f" contains the invisible character U+200F`},
		{"bidi embedding", "a\u202ab", `"a\u202ab" contains the invisible character U+202A`},
		{"bidi override", "evil\u202egnp.exe", `"evil\u202egnp.exe" contains the invisible character U+202E`},
		{"bidi isolate", "a\u2066b\u2069", `"a\u2066b\u2069" contains the invisible character U+2066`},
		{"pop isolate", "a\u2069", `"a\u2069" contains the invisible character U+2069`},
		{"word joiner", "a\u2060b", `"a\u2060b" contains the invisible character U+2060`},
		{"BOM", "\ufeffmain", `"\ufeffmain" contains the invisible character U+FEFF`},
		{"tag character", "a\U000e0041", `"a\U000e0041" contains the invisible character U+E0041`},
		{"cancel tag", "a\U000e007f", `"a\U000e007f" contains the invisible character U+E007F`},
		{"line separator", "a\u2028b", `"a\u2028b" contains the invisible character U+2028`},
		{"paragraph separator", "a\u2029b", `"a\u2029b" contains the invisible character U+2029`},
	}
	for _, tt := range tests {
		t.Run(tt.class, func(t *testing.T) {
			err := Validate(tt.id)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate(%q) = %v, want nil", tt.id, err)
			case tt.want != "" && (err == nil || err.Error() != tt.want):
				t.Errorf("Validate(%q) = %v, want %q", tt.id, err, tt.want)
			}
		})
	}
}
