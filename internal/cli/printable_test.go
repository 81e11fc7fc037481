package cli

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestPrintable(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"mac-1 linux gh,tmux", "mac-1 linux gh,tmux"},
		{`C:\skills\x1b`, `C:\skills\x1b`}, // backslashes are left alone
		{"café 東京 🚀 ❤\ufe0f שרת", "café 東京 🚀 ❤\ufe0f שרת"},
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"alert\x07", `alert\x07`},
		{"a\tb\nc\rd", `a\tb\nc\rd`},
		{"\x00\x01\x1f\x7f", `\x00\x01\x1f\x7f`},
		{"csi\u009b31m nel\u0085", `csi\u009b31m nel\u0085`},
		{"soft\u00adhyphen", `soft\u00adhyphen`},
		{"zw\u200bsp \u200c\u200d\u200e\u200f", `zw\u200bsp \u200c\u200d\u200e\u200f`},
		{"evil\u202egnp.exe \u202a\u202b\u202c\u202d", `evil\u202egnp.exe \u202a\u202b\u202c\u202d`},
		{"\u2066iso\u2069 \u2067\u2068", `\u2066iso\u2069 \u2067\u2068`},
		{"\ufeffbom", `\ufeffbom`},
		{"tag\U000e0041\U000e007f", `tag\U000e0041\U000e007f`},
		{"line\u2028para\u2029", `line\u2028para\u2029`},
		{"bad\xff\xc3utf8 \xe2\x80", `bad\xff\xc3utf8 \xe2\x80`},
		{"\x9b[2J", `\x9b[2J`}, // a raw 8-bit CSI byte is not UTF-8
	}
	for _, tt := range tests {
		got := Printable(tt.in)
		if got != tt.want {
			t.Errorf("Printable(%q) = %q, want %q", tt.in, got, tt.want)
		}
		for _, r := range got {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == '\u202e' || r == '\u200b' {
				t.Errorf("Printable(%q) = %q keeps %U", tt.in, got, r)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("Printable(%q) = %q is not valid UTF-8", tt.in, got)
		}
	}
	if s := strings.Repeat("plain ", 10); testing.AllocsPerRun(10, func() { Printable(s) }) != 0 {
		t.Errorf("Printable allocates for text with nothing to escape")
	}
}
