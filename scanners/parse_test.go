package scanners

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestParseVerdict(t *testing.T) {
	const root = "/tmp/skillgate-scan-1/skill"
	tests := []struct {
		name, in string
		verdict  string
		findings []Finding
		err      string
	}{
		{"allow, no findings", `{"verdict": "allow"}`, "allow", []Finding{}, ""},
		{"null findings", `{"verdict": "warn", "findings": null}`, "warn", []Finding{}, ""},
		{"block with a finding and unknown keys", `{"verdict": "block", "policy": {"x": 1}, "findings": [
			{"rule": "c2", "severity": "error", "file": "SKILL.md", "line": 12, "message": "C2 address", "confidence": 0.9}]}`,
			"block", []Finding{{"c2", "error", "SKILL.md", 12, "C2 address"}}, ""},
		{"verdict case and space", `{"verdict": " BLOCK\n"}`, "block", []Finding{}, ""},
		{"byte order mark and space", "\ufeff \n{\"verdict\": \"allow\"}\n\n", "allow", []Finding{}, ""},
		{"lines: string, float, negative, object, huge", `{"verdict": "warn", "findings": [
			{"rule": "a", "line": "7"}, {"rule": "b", "line": 3.9}, {"rule": "c", "line": -2},
			{"rule": "d", "line": {"n": 1}}, {"rule": "e", "line": 1e300}, {"rule": "f", "line": null}]}`,
			"warn", []Finding{{"a", "", "", 7, ""}, {"b", "", "", 3, ""}, {"c", "", "", 0, ""},
				{"d", "", "", 0, ""}, {"e", "", "", 0, ""}, {"f", "", "", 0, ""}}, ""},
		{"numbers and booleans as strings, null finding skipped, no rule", `{"verdict": "warn", "findings": [
			{"rule": 5, "severity": true, "message": 1.5}, null, {"file": "a.md"}]}`,
			"warn", []Finding{{"5", "true", "", 0, "1.5"}, {"unnamed", "", "a.md", 0, ""}}, ""},
		{"severity lowercased", `{"verdict": "warn", "findings": [{"rule": "r", "severity": "HIGH"}]}`,
			"warn", []Finding{{"r", "high", "", 0, ""}}, ""},
		{"control and format characters", `{"verdict": "block", "findings": [{"rule": "r\u0000\u001b[31m", "message": "a\tb\nc\u202ed\u200be\u0007\u0085f"}]}`,
			"block", []Finding{{"r[31m", "", "", 0, "a b cde f"}}, ""},
		{"files made relative to the root", `{"verdict": "block", "findings": [
			{"rule": "a", "file": "/tmp/skillgate-scan-1/skill/scripts/x.sh"},
			{"rule": "b", "file": "file:///tmp/skillgate-scan-1/skill/a%20b.md"},
			{"rule": "c", "file": "./docs//c.md"},
			{"rule": "d", "file": "/etc/passwd"},
			{"rule": "e", "file": "/tmp/skillgate-scan-1/skill"},
			{"rule": "f", "file": "../x"},
			{"rule": "g", "file": "a%20b.md"}]}`,
			"block", []Finding{{"a", "", "scripts/x.sh", 0, ""}, {"b", "", "a b.md", 0, ""}, {"c", "", "docs/c.md", 0, ""},
				{"d", "", "/etc/passwd", 0, ""}, {"e", "", "", 0, ""}, {"f", "", "../x", 0, ""}, {"g", "", "a%20b.md", 0, ""}}, ""},

		{"empty", ``, "", nil, "no answer"},
		{"white space", " \n\t", "", nil, "no answer"},
		{"garbage", `hello`, "", nil, "not a verdict answer: invalid character 'h' looking for beginning of value (at byte 1)"},
		{"an array", `[]`, "", nil, "not a verdict answer: a JSON array where an object was expected"},
		{"no verdict", `{"findings": []}`, "", nil, `not a verdict answer: no "verdict"`},
		{"null", `null`, "", nil, `not a verdict answer: no "verdict"`},
		{"unknown verdict", `{"verdict": "deny"}`, "", nil, `"verdict" must be "allow", "warn" or "block", got "deny"`},
		{"verdict not a string", `{"verdict": {"v": 1}}`, "", nil, "not a verdict answer: a string was expected, got a JSON object or array"},
		{"two values", `{"verdict": "allow"} {"verdict": "block"}`, "", nil, "not a verdict answer: invalid character '{' after top-level value (at byte 22)"},
		{"truncated", `{"verdict": "allow", "findings": [`, "", nil, "not a verdict answer: unexpected end of JSON input (at byte 34)"},
		{"findings not a list", `{"verdict": "allow", "findings": {}}`, "", nil, "not a verdict answer: findings is a JSON object"},
		{"rule an object", `{"verdict": "allow", "findings": [{"rule": {}}]}`, "", nil, "not a verdict answer: a string was expected, got a JSON object or array"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, fs, err := ParseAnswer(FormatVerdict, []byte(tc.in), root)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v != tc.verdict || !reflect.DeepEqual(fs, tc.findings) {
				t.Errorf("got %q %#v\nwant %q %#v", v, fs, tc.verdict, tc.findings)
			}
		})
	}
}

func TestParseSARIF(t *testing.T) {
	const root = "/tmp/skillgate-scan-2/skill"
	result := func(level, extra string) string {
		if level != "" {
			level = `"level": "` + level + `", `
		}
		return `{` + level + `"ruleId": "R", "message": {"text": "m"}` + extra + `}`
	}
	log := func(results ...string) string {
		return `{"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json", "runs": [{"tool": {"driver": {"name": "t"}}, "results": [` +
			strings.Join(results, ",") + `]}]}`
	}
	tests := []struct {
		name, in string
		verdict  string
		findings []Finding
		err      string
	}{
		{"no results", `{"version": "2.1.0", "runs": []}`, "allow", []Finding{}, ""},
		{"error blocks", log(result("error", "")), "block", []Finding{{"R", "error", "", 0, "m"}}, ""},
		{"warning warns", log(result("warning", "")), "warn", []Finding{{"R", "warn", "", 0, "m"}}, ""},
		{"note, none, missing and other levels have no effect", log(result("note", ""), result("none", ""), result("", ""), result("fatal", "")),
			"allow", []Finding{{"R", "info", "", 0, "m"}, {"R", "info", "", 0, "m"}, {"R", "info", "", 0, "m"}, {"R", "info", "", 0, "m"}}, ""},
		{"strongest wins, level case", log(result("warning", ""), result("ERROR", ""), result("note", "")),
			"block", []Finding{{"R", "warn", "", 0, "m"}, {"R", "error", "", 0, "m"}, {"R", "info", "", 0, "m"}}, ""},
		{"locations", log(
			result("error", `, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "scripts/run%20me.sh", "uriBaseId": "%SRCROOT%"}, "region": {"startLine": 4, "startColumn": 2}}}, {"physicalLocation": {"artifactLocation": {"uri": "other.sh"}}}]`),
			result("error", `, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///tmp/skillgate-scan-2/skill/SKILL.md"}, "region": {"startLine": 9}}}]`),
			result("error", `, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "https://example.com/x"}}}]`)),
			"block", []Finding{{"R", "error", "scripts/run me.sh", 4, "m"}, {"R", "error", "SKILL.md", 9, "m"}, {"R", "error", "https://example.com/x", 0, "m"}}, ""},
		{"rule from ruleIndex, rule.id, markdown message", `{"version": "2.1.0", "runs": [{"tool": {"driver": {"rules": [{"id": "R0"}, {"id": "R1"}]}}, "results": [
			{"ruleIndex": 1, "level": "error", "message": {"markdown": "**md**"}},
			{"rule": {"id": "R2"}, "level": "warning"},
			{"rule": {"index": 0}},
			{"ruleIndex": 7},
			null]}]}`,
			"block", []Finding{{"R1", "error", "", 0, "**md**"}, {"R2", "warn", "", 0, ""}, {"R0", "info", "", 0, ""}, {"unnamed", "info", "", 0, ""}}, ""},
		{"several runs", `{"version": "2.1.0", "runs": [{"results": [` + result("warning", "") + `]}, {"results": [` + result("error", "") + `]}]}`,
			"block", []Finding{{"R", "warn", "", 0, "m"}, {"R", "error", "", 0, "m"}}, ""},

		{"no version", `{"runs": []}`, "", nil, `not a SARIF 2.1.0 log: "version" is none`},
		{"other version", `{"version": "2.0.0", "runs": []}`, "", nil, `not a SARIF 2.1.0 log: "version" is "2.0.0"`},
		{"no runs", `{"version": "2.1.0"}`, "", nil, `not a SARIF log: no "runs"`},
		{"runs not a list", `{"version": "2.1.0", "runs": {}}`, "", nil, "not a SARIF log: runs is a JSON object"},
		{"a verdict answer", `{"verdict": "block"}`, "", nil, `not a SARIF 2.1.0 log: "version" is none`},
		{"garbage", `<xml/>`, "", nil, "not a SARIF log: invalid character '<' looking for beginning of value (at byte 1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, fs, err := ParseAnswer(FormatSARIF, []byte(tc.in), root)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if v != tc.verdict || !reflect.DeepEqual(fs, tc.findings) {
				t.Errorf("got %q %#v\nwant %q %#v", v, fs, tc.verdict, tc.findings)
			}
		})
	}
}

func TestParseBounds(t *testing.T) {
	long := strings.Repeat("é", 1000) // 2000 bytes
	var fs []string
	for i := range 150 {
		sev := "info"
		if i%3 == 0 {
			sev = "error"
		}
		fs = append(fs, fmt.Sprintf(`{"rule": %q, "severity": %q, "file": %q, "message": %q}`, fmt.Sprint(i)+long, sev, long, long))
	}
	in := `{"verdict": "block", "findings": [` + strings.Join(fs, ",") + `]}`
	_, got, err := ParseAnswer(FormatVerdict, []byte(in), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != MaxFindings {
		t.Fatalf("%d findings, want %d", len(got), MaxFindings)
	}
	// The 50 error findings are all kept, in order, with the first 50 info ones.
	errs, infos := 0, 0
	for i, f := range got {
		if f.Severity == "error" {
			errs++
		} else {
			infos++
		}
		if i > 0 && ruleNum(got[i-1].Rule) >= ruleNum(f.Rule) {
			t.Errorf("findings out of order at %d", i)
		}
		if len(f.Rule) > MaxRuleLen || len(f.File) > MaxFileLen || len(f.Message) > MaxMessageLen {
			t.Errorf("finding %d over the bounds: %d %d %d", i, len(f.Rule), len(f.File), len(f.Message))
		}
		if !strings.HasSuffix(f.Message, "é…") || !utf8.ValidString(f.Message) {
			t.Errorf("message not cut at a character with an ellipsis: …%q", f.Message[len(f.Message)-10:])
		}
	}
	if errs != 50 || infos != 50 {
		t.Errorf("%d error and %d info findings, want 50 and 50", errs, infos)
	}
	// 0 … 74 (the first 50 infos and 25 errors), then the errors 75 … 147.
	if !strings.HasPrefix(got[74].Rule, "74é") || !strings.HasPrefix(got[75].Rule, "75é") || !strings.HasPrefix(got[99].Rule, "147é") {
		t.Errorf("findings 74, 75 and 99: %q, %q, %q", got[74].Rule[:5], got[75].Rule[:5], got[99].Rule[:5])
	}
}

func ruleNum(s string) int {
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
}

func TestClean(t *testing.T) {
	tests := []struct {
		in   string
		max  int
		want string
	}{
		{"plain", 10, "plain"},
		{"  spaced\n", 10, "spaced"},
		{"a\x00b\x7fc\u0080d", 10, "abcd"},
		{"\xff\xfeok", 10, "\ufffd\ufffdok"},
		{"abcdefghijk", 10, "abcdefg…"},
		{"ééééé", 7, "éé…"},
		{"\u202eevil\u2066", 10, "evil"},
	}
	for _, tc := range tests {
		if got := clean(tc.in, tc.max); got != tc.want {
			t.Errorf("clean(%q, %d) = %q, want %q", tc.in, tc.max, got, tc.want)
		}
	}
}

// FuzzParseAnswer: any bytes in either format either fail or give a
// known verdict and bounded, clean findings, never nil.
func FuzzParseAnswer(f *testing.F) {
	seeds := []string{
		`{"verdict": "block", "findings": [{"rule": "r", "severity": "error", "file": "/r/a", "line": 3, "message": "m"}]}`,
		`{"verdict": "allow", "findings": null}`,
		`{"verdict": "warn", "findings": [{"line": "4"}, null, {"rule": 1}]}`,
		`{"version": "2.1.0", "runs": [{"tool": {"driver": {"rules": [{"id": "X"}]}}, "results": [{"ruleIndex": 0, "level": "error", "message": {"text": "t"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "file:///r/a%20b"}, "region": {"startLine": 2}}}]}]}]}`,
		`{"version": "2.1.0", "runs": []}`,
		"\ufeff{\"verdict\":\"ALLOW\"}",
		`[1, 2]`, `garbage`, ``,
	}
	for _, s := range seeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, b []byte, sarif bool) {
		format := FormatVerdict
		if sarif {
			format = FormatSARIF
		}
		v, fs, err := ParseAnswer(format, b, "/r")
		if err != nil {
			if v != "" || fs != nil {
				t.Fatalf("failure with results: %q %v", v, fs)
			}
			return
		}
		if v != VerdictAllow && v != VerdictWarn && v != VerdictBlock {
			t.Fatalf("verdict %q", v)
		}
		if fs == nil || len(fs) > MaxFindings {
			t.Fatalf("%d findings (nil %v)", len(fs), fs == nil)
		}
		for _, f := range fs {
			for _, s := range []struct {
				s   string
				max int
			}{{f.Rule, MaxRuleLen}, {f.Severity, MaxSeverityLen}, {f.File, MaxFileLen}, {f.Message, MaxMessageLen}} {
				if len(s.s) > s.max || !utf8.ValidString(s.s) || strings.IndexFunc(s.s, func(r rune) bool {
					return unicode.IsControl(r) || unicode.Is(unicode.Cf, r)
				}) >= 0 {
					t.Fatalf("unclean or unbounded string %q", s.s)
				}
			}
			if f.Rule == "" || f.Line < 0 {
				t.Fatalf("finding %+v", f)
			}
		}
		if _, err := json.Marshal(fs); err != nil {
			t.Fatal(err)
		}
	})
}
