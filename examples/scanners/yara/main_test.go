package main

import (
	"reflect"
	"strings"
	"testing"
)

// The end-to-end tests with the real yara are in package scanners
// (scanners/yara_test.go); these check the reading of yara's output.

func TestParseOutput(t *testing.T) {
	out := strings.Join([]string{
		`clawhavoc_c2 [block] [description="C2 \"x\" ] , y=z \303\251\n",n =3,b=true] /dev/fd/3`,
		`0x3d:$ip_b64: kxLjkyLjI0Mi4zM`,
		`0x12:$ip: 91.92.242.30`,
		`0x40:$ip: 91.92.242.30`,
		`plain [] [] /dev/fd/3`,
		`tagged [warn,Other] [] /dev/fd/3`,
		`0x0:$a: ` + strings.Repeat("A", 100<<10), // longer than the buffer
		`0x5:$b: short`,
		`unrelated line`,
	}, "\n") + "\n"
	ms, err := parseOutput(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 {
		t.Fatalf("%d matches", len(ms))
	}
	want0 := &match{rule: "clawhavoc_c2", tags: []string{"block"}, off: 0x12, str: "$ip", data: "91.92.242.30",
		meta: map[string]string{"description": "C2 \"x\" ] , y=z é\n", "n": "3", "b": "true"}}
	if !reflect.DeepEqual(ms[0], want0) {
		t.Errorf("got %+v\nwant %+v", ms[0], want0)
	}
	if m := ms[1]; m.rule != "plain" || m.tags != nil || len(m.meta) != 0 || m.off != -1 {
		t.Errorf("got %+v", m)
	}
	if m := ms[2]; m.rule != "tagged" || !reflect.DeepEqual(m.tags, []string{"warn", "Other"}) || m.off != 0 || m.str != "$a" || len(m.data) > 64<<10 {
		t.Errorf("got %+v", m.rule)
	}
	if _, err := parseOutput(strings.NewReader("bad line /dev/fd/3\n")); err == nil {
		t.Error("a rule line without tags was read")
	}
}

func TestFinding(t *testing.T) {
	m := &match{rule: "r", tags: []string{"WARN"}, meta: map[string]string{"description": "d"}, off: 3, str: "$s", data: strings.Repeat("x", 100), line: 2}
	f := m.finding("a/b.md")
	want := Finding{Rule: "r", Severity: "warn", File: "a/b.md", Line: 2, Message: `d ($s: "` + strings.Repeat("x", 80) + `…")`}
	if f != want {
		t.Errorf("got %+v", f)
	}
	m = &match{rule: "r", tags: []string{"warn", "block"}, meta: map[string]string{}, off: -1}
	if f := m.finding("x"); f.Severity != "error" || f.Message != "YARA rule r matched" || f.Line != 0 {
		t.Errorf("got %+v", f)
	}
}

func TestUnquote(t *testing.T) {
	tests := []struct{ in, s, rest string }{
		{`abc", x=1`, "abc", ", x=1"},
		{`a\"b\\c\n\t\r"`, "a\"b\\c\n\t\r", ""},
		{`\303\251\x41\xzz\9"z`, "éA\\xzz9", "z"},
		{`no end`, "no end", ""},
		{`end\`, "end\\", ""},
	}
	for _, tc := range tests {
		s, rest := unquote(tc.in)
		if s != tc.s || rest != tc.rest {
			t.Errorf("unquote(%q) = %q, %q; want %q, %q", tc.in, s, rest, tc.s, tc.rest)
		}
	}
}
