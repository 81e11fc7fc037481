package skill

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// testRef is where the table tests' files are stored.
var testRef = Ref{Key: "skills/demo/SKILL.md", Dir: "demo", Scope: ScopeGlobal}

func warnD(msg string) Diagnostic {
	return Diagnostic{Location: testRef.Key, Level: LevelWarn, Message: msg}
}

func infoD(msg string) Diagnostic {
	return Diagnostic{Location: testRef.Key, Level: LevelInfo, Message: msg}
}

// file joins lines with "\n" and ends with one.
func file(lines ...string) string { return strings.Join(lines, "\n") + "\n" }

// Messages that many cases expect.
const (
	msgFlat      = "; read name, description, homepage, always and metadata line by line"
	msgNoDesc    = "no description: the frontmatter has none and the body has no paragraph of text; the skill is listed without one — add description to the frontmatter"
	msgUnclosed  = "frontmatter is not closed: the first line is \"---\" but no later line is \"---\"; the whole file is read as the body — add a line \"---\" after the frontmatter"
	msgJSONAfter = "; it is ignored — write metadata as a JSON object (comments and trailing commas are allowed)"
)

type parseCase struct {
	name string
	in   string
	want Skill // Ref is filled in from testRef
}

// checkParse parses tc.in at testRef and compares every field.
func checkParse(t *testing.T, tc parseCase) {
	t.Helper()
	got := Parse(testRef, []byte(tc.in))
	want := tc.want
	want.Ref = testRef
	if !reflect.DeepEqual(got, &want) {
		t.Errorf("Parse(%q) mismatch:%s", tc.in, diffSkill(got, &want))
	}
}

// diffSkill lists the fields that differ, with Go types visible where JSON
// would hide them (float64 vs int).
func diffSkill(got, want *Skill) string {
	var b strings.Builder
	g, w := reflect.ValueOf(*got), reflect.ValueOf(*want)
	for i := range g.NumField() {
		if gf, wf := g.Field(i).Interface(), w.Field(i).Interface(); !reflect.DeepEqual(gf, wf) {
			fmt.Fprintf(&b, "\n%s:\n  got:  %#v\n  want: %#v", g.Type().Field(i).Name, gf, wf)
		}
	}
	return b.String()
}

func TestParseFrontmatterSplit(t *testing.T) {
	cases := []parseCase{
		{
			name: "minimal",
			in:   file("---", "name: e2e-proof", "description: Return a deterministic proof token", "always: false", "---", "", "# E2E Proof"),
			want: Skill{Name: "e2e-proof", Description: "Return a deterministic proof token", Body: "\n# E2E Proof\n"},
		},
		{
			name: "BOM stripped",
			in:   "\uFEFF" + file("---", "name: x", "description: d", "---", "body"),
			want: Skill{Name: "x", Description: "d", Body: "body\n"},
		},
		{
			name: "CRLF",
			in:   "---\r\nname: x\r\ndescription: d\r\n---\r\nline1\r\nline2\r\n",
			want: Skill{Name: "x", Description: "d", Body: "line1\nline2\n"},
		},
		{
			name: "lone CR",
			in:   "---\rname: x\rdescription: d\r---\rline1\rline2",
			want: Skill{Name: "x", Description: "d", Body: "line1\nline2"},
		},
		{
			name: "BOM and CRLF, description from body",
			in:   "\uFEFF---\r\nname: x\r\n---\r\n# T\r\n\r\nfirst\r\nsecond\r\n",
			want: Skill{Name: "x", Description: "first second", Body: "# T\n\nfirst\nsecond\n"},
		},
		{
			name: "no frontmatter",
			in:   file("# Title", "", "First para", "second line.", "", "Second para."),
			want: Skill{Name: "demo", Description: "First para second line.", Body: file("# Title", "", "First para", "second line.", "", "Second para.")},
		},
		{
			name: "BOM without frontmatter",
			in:   "\uFEFFHello.\n",
			want: Skill{Name: "demo", Description: "Hello.", Body: "Hello.\n"},
		},
		{
			name: "unclosed frontmatter",
			in:   file("---", "name: x", "description: d"),
			want: Skill{
				Name: "demo", Description: "--- name: x description: d",
				Body:        file("---", "name: x", "description: d"),
				Diagnostics: []Diagnostic{warnD(msgUnclosed)},
			},
		},
		{
			name: "only an opening line",
			in:   "---",
			want: Skill{Name: "demo", Description: "---", Body: "---", Diagnostics: []Diagnostic{warnD(msgUnclosed)}},
		},
		{
			name: "closing line with trailing spaces and tabs",
			in:   "---\nname: x\n--- \t \nbody",
			want: Skill{Name: "x", Description: "body", Body: "body"},
		},
		{
			name: "closing line with leading space does not close",
			in:   file("---", "name: x", " ---", "body"),
			want: Skill{
				Name: "demo", Description: "--- name: x --- body", Body: file("---", "name: x", " ---", "body"),
				Diagnostics: []Diagnostic{warnD(msgUnclosed)},
			},
		},
		{
			name: "closing line at end of file without newline",
			in:   "---\nname: x\n---",
			want: Skill{Name: "x", Diagnostics: []Diagnostic{warnD(msgNoDesc)}},
		},
		{
			name: "closing line ends at the first ---",
			in:   file("---", "name: x", "---", "---", "body"),
			want: Skill{Name: "x", Description: "--- body", Body: file("---", "body")},
		},
		{
			name: "opening line with trailing space is not frontmatter",
			in:   file("--- ", "name: x", "---", "", "body"),
			want: Skill{
				Name: "demo", Description: "--- name: x ---", Body: file("--- ", "name: x", "---", "", "body"),
				Diagnostics: []Diagnostic{warnD(`the first line is "--- ", not exactly "---", so it does not open frontmatter; the whole file is read as the body — remove the trailing spaces`)},
			},
		},
		{
			name: "empty frontmatter",
			in:   file("---", "---", "Text."),
			want: Skill{Name: "demo", Description: "Text.", Body: "Text.\n"},
		},
		{
			name: "comment-only frontmatter",
			in:   file("---", "# nothing here", "---", "Text."),
			want: Skill{Name: "demo", Description: "Text.", Body: "Text.\n"},
		},
		{
			name: "null frontmatter",
			in:   file("---", "~", "---", "Text."),
			want: Skill{Name: "demo", Description: "Text.", Body: "Text.\n"},
		},
		{
			name: "empty file",
			in:   "",
			want: Skill{Name: "demo", Diagnostics: []Diagnostic{warnD(msgNoDesc)}},
		},
		{
			name: "invalid UTF-8 replaced",
			in:   file("---", "name: a\xffb", "description: c\xc3", "---", "x\xfe"),
			want: Skill{
				Name: "a\uFFFDb", Description: "c\uFFFD", Body: "x\uFFFD\n",
				Diagnostics: []Diagnostic{warnD("file is not valid UTF-8 (line 2); invalid bytes were replaced with U+FFFD — save the file as UTF-8")},
			},
		},
		{
			name: "invalid UTF-8 in body only",
			in:   "Hello \xff\xfe world\n",
			want: Skill{
				Name: "demo", Description: "Hello \uFFFD world", Body: "Hello \uFFFD world\n",
				Diagnostics: []Diagnostic{warnD("file is not valid UTF-8 (line 1); invalid bytes were replaced with U+FFFD — save the file as UTF-8")},
			},
		},
		{
			name: "unknown top-level keys are ignored silently",
			in:   file("---", "name: x", "description: d", "allowed-tools: [\"message\"]", "user-invocable: true", "Name: ignored", "---"),
			want: Skill{Name: "x", Description: "d"},
		},
		{
			name: "duplicate known key: the last one wins",
			in:   file("---", "name: first", "description: d", "name: second", "---"),
			want: Skill{
				Name: "second", Description: "d",
				Diagnostics: []Diagnostic{warnD(`key "name" appears more than once in the frontmatter (lines 2 and 4); the last one is used — remove the duplicate`)},
			},
		},
		{
			name: "duplicate unknown key is not reported",
			in:   file("---", "x: 1", "x: 2", "description: d", "---"),
			want: Skill{Name: "demo", Description: "d"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestParseAgentLocation(t *testing.T) {
	ref := Ref{Key: "agents/main/skills/x/SKILL.md", Dir: "x", Scope: ScopeAgent, Agent: "main"}
	got := Parse(ref, []byte("---\nname: [1]\n---\n"))
	want := &Skill{Ref: ref, Name: "x", Diagnostics: []Diagnostic{
		{Location: ref.Key, Level: LevelWarn, Message: `name is a list, not a string; the directory name "x" is used — write name as text`},
		{Location: ref.Key, Level: LevelWarn, Message: msgNoDesc},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mismatch:%s", diffSkill(got, want))
	}
}

func TestParseFlatFallback(t *testing.T) {
	cases := []parseCase{
		{
			name: "unquoted colon in description, JSON5 metadata recovered",
			in: file("---",
				"name: weather",
				"description: Get weather: current and forecast",
				`homepage: "https://wttr.in"`,
				"always: true",
				"metadata:",
				"  {",
				`    "openclaw": { "emoji": "☔", "requires": { "bins": ["curl"] }, },`,
				"  }",
				"---",
				"# Weather"),
			want: Skill{
				Name: "weather", Description: "Get weather: current and forecast", Homepage: "https://wttr.in", Always: true,
				Emoji: "☔", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"emoji": "☔", "requires": map[string]any{"bins": []any{"curl"}}}},
				Requires: map[string]any{"bins": []any{"curl"}},
				Body:     "# Weather\n",
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 3: mapping values are not allowed in this context)" + msgFlat),
				},
			},
		},
		{
			name: "HuJSON metadata with comments recovered",
			in: file("---",
				"name: x",
				"description: a: b",
				"metadata: {",
				"    // the namespace OpenClaw reads",
				`    "openclaw": {"os": ["darwin"], "requires": {"bins": ["gh",],},},`,
				"  }",
				"---"),
			want: Skill{
				Name: "x", Description: "a: b", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"os": []any{"darwin"}, "requires": map[string]any{"bins": []any{"gh"}}}},
				Requires: map[string]any{"bins": []any{"gh"}, "os": []any{"darwin"}},
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 3: mapping values are not allowed in this context)" + msgFlat),
				},
			},
		},
		{
			name: "YAML block metadata recovered when it is not JSON",
			in: file("---",
				"description: a: b",
				"metadata:",
				"  clawdbot:",
				"    requires:",
				"      env: [TOKEN]",
				"",
				"  # a comment",
				"---"),
			want: Skill{
				Name: "demo", Description: "a: b", Namespace: "clawdbot",
				Metadata: map[string]any{"clawdbot": map[string]any{"requires": map[string]any{"env": []any{"TOKEN"}}}},
				Requires: map[string]any{"env": []any{"TOKEN"}},
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 2: mapping values are not allowed in this context)" + msgFlat),
				},
			},
		},
		{
			name: "unparseable metadata in flat mode",
			in: file("---",
				"description: a: b",
				`metadata: { "openclaw": [ }`,
				"---"),
			want: Skill{
				Name: "demo", Description: "a: b",
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 2: mapping values are not allowed in this context)" + msgFlat),
					warnD("metadata is not valid JSON (line 1, column 17 of the value: invalid character '}' at start of value)" + msgJSONAfter),
				},
			},
		},
		{
			name: "values: quotes, continuation lines, block scalars, booleans, duplicates",
			in: file("---",
				`name: "quoted: name"`,
				`description: "He said "hi": twice"`,
				"homepage: https://example.com/a",
				"  /b",
				"always: 'TRUE'",
				"name: 'second: name'",
				"stray line without colon",
				"---",
				"body"),
			want: Skill{
				Name: "second: name", Description: `He said "hi": twice`, Homepage: "https://example.com/a /b", Always: true,
				Body: "body\n",
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 3: mapping values are not allowed in this context)" + msgFlat),
					warnD(`key "name" appears more than once in the frontmatter (lines 2 and 7); the last one is used — remove the duplicate`),
					warnD(`always is the string "TRUE", not a boolean; it is read as true — write always: true without quotes`),
				},
			},
		},
		{
			name: "literal block description and folded continuation",
			in: file("---",
				"name: x: y",
				"description: |",
				"  line one",
				"  line two",
				"always: false",
				"---"),
			want: Skill{
				Name: "x: y", Description: "line one\nline two",
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 2: mapping values are not allowed in this context)" + msgFlat),
				},
			},
		},
		{
			name: "parser error line is 1-based",
			in:   file("---", "name: x", "description: d", "metadata: {a: 1", "always: true", "---"),
			want: Skill{
				Name: "x", Description: "d", Always: true,
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 4: did not find expected ',' or '}')" + msgFlat),
					warnD("metadata is not valid JSON (line 1, column 2 of the value: invalid literal: a)" + msgJSONAfter),
				},
			},
		},
		{
			name: "unknown anchor",
			in:   file("---", "name: *nope", "description: d", "---"),
			want: Skill{
				Name: "*nope", Description: "d",
				Diagnostics: []Diagnostic{warnD("frontmatter is invalid YAML (unknown anchor 'nope' referenced)" + msgFlat)},
			},
		},
		{
			name: "top level is a list",
			in:   file("---", "- name: x", "---", "Text."),
			want: Skill{
				Name: "demo", Description: "Text.", Body: "Text.\n",
				Diagnostics: []Diagnostic{warnD("frontmatter is a YAML list, not a mapping of keys to values" + msgFlat)},
			},
		},
		{
			name: "top level is a string",
			in:   file("---", "just words", "---", "Text."),
			want: Skill{
				Name: "demo", Description: "Text.", Body: "Text.\n",
				Diagnostics: []Diagnostic{warnD("frontmatter is a YAML string, not a mapping of keys to values" + msgFlat)},
			},
		},
		{
			name: "tab indentation is invalid YAML but read line by line",
			in:   file("---", "name: tabbed", "metadata:", "\t{\"gsv\": {\"requires\": {\"os\": [\"linux\"]}}}", "---", "Text."),
			want: Skill{
				Name: "tabbed", Description: "Text.", Body: "Text.\n", Namespace: "gsv",
				Metadata: map[string]any{"gsv": map[string]any{"requires": map[string]any{"os": []any{"linux"}}}},
				Requires: map[string]any{"os": []any{"linux"}},
				Diagnostics: []Diagnostic{
					warnD("frontmatter is invalid YAML (line 4: found character that cannot start any token)" + msgFlat),
				},
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestParseName(t *testing.T) {
	cases := []parseCase{
		{name: "absent", in: file("---", "description: d", "---"), want: Skill{Name: "demo", Description: "d"}},
		{name: "trimmed", in: file("---", `name: "  spaced  "`, "description: d", "---"), want: Skill{Name: "spaced", Description: "d"}},
		{
			name: "empty string",
			in:   file("---", `name: "   "`, "description: d", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{warnD(`name is empty; the directory name "demo" is used — set name or remove the line`)}},
		},
		{
			name: "null",
			in:   file("---", "name:", "description: d", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{warnD(`name is empty; the directory name "demo" is used — set name or remove the line`)}},
		},
		{
			name: "number",
			in:   file("---", "name: 42", "description: d", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{warnD(`name is a number, not a string; the directory name "demo" is used — write name as text`)}},
		},
		{
			name: "boolean",
			in:   file("---", "name: true", "description: d", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{warnD(`name is a boolean, not a string; the directory name "demo" is used — write name as text`)}},
		},
		{
			name: "mapping",
			in:   file("---", "name: {a: b}", "description: d", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{warnD(`name is a mapping, not a string; the directory name "demo" is used — write name as text`)}},
		},
		{
			name: "quoted number is a string",
			in:   file("---", `name: "42"`, "description: d", "---"),
			want: Skill{Name: "42", Description: "d"},
		},
		{
			name: "timestamp keeps its source text",
			in:   file("---", "name: 2024-01-02", "description: d", "---"),
			want: Skill{Name: "2024-01-02", Description: "d"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestParseDescription(t *testing.T) {
	long := strings.Repeat("é", maxDescription+1)
	exact := strings.Repeat("é", maxDescription)
	cases := []parseCase{
		{name: "trimmed", in: file("---", `description: "  padded  "`, "---"), want: Skill{Name: "demo", Description: "padded"}},
		{
			name: "folded block scalar",
			in:   file("---", "description: >", "  one", "  two", "---"),
			want: Skill{Name: "demo", Description: "one two"},
		},
		{
			name: "non-string falls back to the body",
			in:   file("---", "description: [a, b]", "---", "Body text."),
			want: Skill{
				Name: "demo", Description: "Body text.", Body: "Body text.\n",
				Diagnostics: []Diagnostic{warnD("description is a list, not a string; the first paragraph of the body is used — write description as text")},
			},
		},
		{
			name: "non-string and no body",
			in:   file("---", "description: 3.5", "---"),
			want: Skill{
				Name: "demo",
				Diagnostics: []Diagnostic{
					warnD("description is a number, not a string; the first paragraph of the body is used — write description as text"),
					warnD(msgNoDesc),
				},
			},
		},
		{
			name: "empty falls back silently",
			in:   file("---", `description: ""`, "---", "Body text."),
			want: Skill{Name: "demo", Description: "Body text.", Body: "Body text.\n"},
		},
		{
			name: "null falls back silently",
			in:   file("---", "description:", "---", "Body text."),
			want: Skill{Name: "demo", Description: "Body text.", Body: "Body text.\n"},
		},
		{
			name: "headings skipped, lines trimmed and joined",
			in:   file("---", "name: x", "---", "# H1", "", "## H2", "   ", "  First line  ", "\tsecond\t", "", "next"),
			want: Skill{Name: "x", Description: "First line second", Body: file("# H1", "", "## H2", "   ", "  First line  ", "\tsecond\t", "", "next")},
		},
		{
			name: "a paragraph starting with a heading line is a heading",
			in:   file("# Title", "Text right under the title", "", "  #tag is a heading too", "", "Real paragraph."),
			want: Skill{Name: "demo", Description: "Real paragraph.", Body: file("# Title", "Text right under the title", "", "  #tag is a heading too", "", "Real paragraph.")},
		},
		{
			name: "only headings",
			in:   file("# Only", "", "## Headings"),
			want: Skill{Name: "demo", Body: file("# Only", "", "## Headings"), Diagnostics: []Diagnostic{warnD(msgNoDesc)}},
		},
		{
			name: "over 1024 code points is kept with a warning",
			in:   file("---", "description: "+long, "---"),
			want: Skill{Name: "demo", Description: long, Diagnostics: []Diagnostic{
				warnD("description exceeds the 1024 character limit (1025 characters); it is kept, but it is pasted into every prompt — shorten it"),
			}},
		},
		{
			name: "exactly 1024 code points",
			in:   file("---", "description: "+exact, "---"),
			want: Skill{Name: "demo", Description: exact},
		},
		{
			name: "body description is not length-checked against 1024",
			in:   strings.Repeat("a", 300),
			want: Skill{Name: "demo", Description: strings.Repeat("a", 200), Body: strings.Repeat("a", 300)},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestBodyDescriptionCut(t *testing.T) {
	family := "👩\u200d👩\u200d👧" // 5 code points, 18 bytes
	cases := []struct {
		name, body, want string
	}{
		{"emoji", strings.Repeat("🙂", 250), strings.Repeat("🙂", 200)},
		{"CJK", strings.Repeat("漢", 199) + "字字字", strings.Repeat("漢", 199) + "字"},
		{"exactly 200", strings.Repeat("字", 200), strings.Repeat("字", 200)},
		{"trimmed after the cut", strings.Repeat("a", 199) + " b", strings.Repeat("a", 199)},
		{"joined lines count the space", strings.Repeat("é", 150) + "\n" + strings.Repeat("ß", 100), strings.Repeat("é", 150) + " " + strings.Repeat("ß", 49)},
		// 41 families are 205 code points: the cut keeps 40 families and the
		// first 0 code points of the next, never a partial code point.
		{"ZWJ sequences", strings.Repeat(family, 41), strings.Repeat(family, 40)},
		{"ZWJ sequence split between code points", "ab" + strings.Repeat(family, 40), "ab" + strings.Repeat(family, 39) + "👩\u200d👩"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := bodyDescription(tc.body)
			if got != tc.want {
				t.Errorf("bodyDescription = %q (%d code points), want %q", got, utf8.RuneCountInString(got), tc.want)
			}
			if !utf8.ValidString(got) || utf8.RuneCountInString(got) > maxBodyDescription {
				t.Errorf("bodyDescription = %q: invalid UTF-8 or over %d code points", got, maxBodyDescription)
			}
			// Through Parse too, as the body of a file without frontmatter.
			if s := Parse(testRef, []byte(tc.body)); s.Description != tc.want {
				t.Errorf("Parse description = %q, want %q", s.Description, tc.want)
			}
		})
	}
}

func TestParseAlways(t *testing.T) {
	cases := []struct {
		value string
		want  bool
		diag  string
	}{
		{"true", true, ""},
		{"false", false, ""},
		{"True", true, ""},
		{"FALSE", false, ""},
		{`"true"`, true, `always is the string "true", not a boolean; it is read as true — write always: true without quotes`},
		{`'TrUe'`, true, `always is the string "TrUe", not a boolean; it is read as true — write always: true without quotes`},
		{`"False"`, false, `always is the string "False", not a boolean; it is read as false — write always: false without quotes`},
		{`" true "`, true, `always is the string " true ", not a boolean; it is read as true — write always: true without quotes`},
		{"tRUE", true, `always is the string "tRUE", not a boolean; it is read as true — write always: true without quotes`},
		{"yes", false, `always is the string "yes", not true or false; it is read as false — write always: true or always: false`},
		{"on", false, `always is the string "on", not true or false; it is read as false — write always: true or always: false`},
		{"1", false, `always is the number 1, not true or false; it is read as false — write always: true or always: false`},
		{"[true]", false, `always is a list, not true or false; it is read as false — write always: true or always: false`},
		{"{a: 1}", false, `always is a mapping, not true or false; it is read as false — write always: true or always: false`},
		{"", false, ""},
		{"~", false, ""},
	}
	for _, tc := range cases {
		t.Run(tc.value, func(t *testing.T) {
			want := Skill{Name: "demo", Description: "d", Always: tc.want}
			if tc.diag != "" {
				want.Diagnostics = []Diagnostic{warnD(tc.diag)}
			}
			checkParse(t, parseCase{in: file("---", "description: d", "always: "+tc.value, "---"), want: want})
		})
	}
}

func TestParseHomepage(t *testing.T) {
	cases := []parseCase{
		{name: "kept", in: file("---", "description: d", "homepage: https://example.com ", "---"), want: Skill{Name: "demo", Description: "d", Homepage: "https://example.com"}},
		{name: "null", in: file("---", "description: d", "homepage:", "---"), want: Skill{Name: "demo", Description: "d"}},
		{
			name: "non-string",
			in:   file("---", "description: d", "homepage: [https://example.com]", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{warnD("homepage is a list, not a string; it is ignored — write homepage as text")}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestParseMetadata(t *testing.T) {
	ghMeta := map[string]any{"openclaw": map[string]any{"emoji": "🐙", "requires": map[string]any{"bins": []any{"gh"}}}}
	ghSkill := func(diags ...Diagnostic) Skill {
		return Skill{
			Name: "demo", Description: "d", Emoji: "🐙", Namespace: "openclaw",
			Metadata: ghMeta, Requires: map[string]any{"bins": []any{"gh"}}, Diagnostics: diags,
		}
	}
	cases := []parseCase{
		{
			name: "YAML block mapping",
			in:   file("---", "description: d", "metadata:", "  openclaw:", "    emoji: 🐙", "    requires:", "      bins: [gh]", "---"),
			want: ghSkill(),
		},
		{
			name: "JSON5-style flow mapping with trailing commas",
			in: file("---", "description: d", "metadata:", "  {", `    "openclaw":`, "      {", `        "emoji": "🐙",`,
				`        "requires": { "bins": ["gh"] },`, "      },", "  }", "---"),
			want: ghSkill(),
		},
		{
			name: "JSON string",
			in:   file("---", "description: d", `metadata: '{"openclaw": {"emoji": "🐙", "requires": {"bins": ["gh"]}}}'`, "---"),
			want: ghSkill(),
		},
		{
			name: "HuJSON string with comments and trailing commas",
			in: file("---", "description: d", "metadata: |", "  {", "    // OpenClaw namespace", `    "openclaw": {`, `      "emoji": "🐙", /* inline */`,
				`      "requires": {"bins": ["gh",],},`, "    },", "  }", "---"),
			want: ghSkill(),
		},
		{
			name: "flow mapping with a block comment YAML would misread",
			in: file("---", "description: d", "metadata:", "  {", `    /* c */ "openclaw": { "emoji": "🐙", "requires": { "bins": ["gh"] } },`,
				"  }", "---"),
			want: ghSkill(),
		},
		{
			name: "flow mapping with a trailing line comment YAML would misread",
			in: file("---", "description: d", "metadata:", "  {", `    "openclaw": { "emoji": "🐙", "requires": { "bins": ["gh"] } }, // gh`,
				"  }", "---"),
			want: ghSkill(),
		},
		{
			name: "flow mapping that is YAML but not JSON",
			in:   file("---", "description: d", "metadata: {openclaw: {emoji: 🐙, requires: {bins: [gh]}}} # a YAML comment", "---"),
			want: ghSkill(),
		},
		{
			name: "indented frontmatter with flow metadata",
			in:   file("---", "  description: d", "  metadata: {", `    "openclaw": {"emoji": "🐙", /* c */ "requires": {"bins": ["gh"]}}`, "    }", "---"),
			want: ghSkill(),
		},
		{
			name: "unparseable JSON string",
			in:   file("---", "description: d", `metadata: '{"openclaw": {"emoji": "🐙"'`, "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{
				warnD("metadata is not valid JSON (line 1, column 30 of the value: parsing object after value: unexpected EOF)" + msgJSONAfter),
			}},
		},
		{
			name: "JSON string that is not an object",
			in:   file("---", "description: d", `metadata: '["openclaw"]'`, "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{
				warnD("metadata holds a JSON array, not an object" + msgJSONAfter),
			}},
		},
		{
			name: "empty string",
			in:   file("---", "description: d", `metadata: ""`, "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{
				warnD("metadata is not valid JSON (line 1, column 1 of the value: parsing value: unexpected EOF)" + msgJSONAfter),
			}},
		},
		{
			name: "number",
			in:   file("---", "description: d", "metadata: 7", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{
				warnD("metadata is a number, not a mapping or a string holding a JSON object; it is ignored — write metadata as a mapping"),
			}},
		},
		{
			name: "list",
			in:   file("---", "description: d", "metadata: [openclaw]", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{
				warnD("metadata is a list, not a mapping or a string holding a JSON object; it is ignored — write metadata as a mapping"),
			}},
		},
		{
			name: "null",
			in:   file("---", "description: d", "metadata:", "---"),
			want: Skill{Name: "demo", Description: "d"},
		},
		{
			name: "empty mapping",
			in:   file("---", "description: d", "metadata: {}", "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{}},
		},
		{
			name: "values normalized to JSON types",
			in: file("---", "description: d", "metadata:", "  x:",
				"    int: 3", "    hex: 0x10", "    float: 1.5", "    inf: .inf", "    nan: .nan", "    big: 123456789012345678901234567890",
				"    bool: yes", "    t: true", "    null: ~", "    date: 2024-01-02", "    quoted: '7'",
				"    1: one", "    1.0: float key", "    ~: null key", "    [a, b]: list key",
				"    tagged: !custom value", "    bin: !!binary aGk=", "    list: [1, two, {k: v}]",
				"---"),
			want: Skill{Name: "demo", Description: "d",
				Metadata: map[string]any{"x": map[string]any{
					"int": 3.0, "hex": 16.0, "float": 1.5, "inf": ".inf", "nan": ".nan", "big": 1.2345678901234568e+29,
					"bool": "yes", "t": true, "null": nil, "date": "2024-01-02", "quoted": "7",
					"1": "one", "1.0": "float key", "~": "null key", "[a b]": "list key",
					"tagged": "value", "bin": "aGk=", "list": []any{1.0, "two", map[string]any{"k": "v"}},
				}},
				Diagnostics: []Diagnostic{infoD(`unknown metadata namespace "x" is ignored; skillgate reads gsv, openclaw and clawdbot`)},
			},
		},
		{
			name: "anchors, aliases and merge keys",
			in: file("---", "description: d", "metadata:", "  base: &base {bins: [gh], env: [A]}",
				"  openclaw:", "    requires:", "      <<: *base", "      env: [B]", "    install: [*base, *base]", "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{
					"base": map[string]any{"bins": []any{"gh"}, "env": []any{"A"}},
					"openclaw": map[string]any{
						"requires": map[string]any{"bins": []any{"gh"}, "env": []any{"B"}},
						"install": []any{
							map[string]any{"bins": []any{"gh"}, "env": []any{"A"}},
							map[string]any{"bins": []any{"gh"}, "env": []any{"A"}},
						},
					},
				},
				Requires:    map[string]any{"bins": []any{"gh"}, "env": []any{"B"}},
				Diagnostics: []Diagnostic{infoD(`unknown metadata namespace "base" is ignored; skillgate reads gsv, openclaw and clawdbot`)},
			},
		},
		{
			name: "duplicate nested key",
			in:   file("---", "description: d", "metadata:", "  openclaw:", "    requires: {bins: [a]}", "    requires: {bins: [b]}", "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"requires": map[string]any{"bins": []any{"b"}}}},
				Requires: map[string]any{"bins": []any{"b"}},
				Diagnostics: []Diagnostic{
					warnD(`key "requires" appears more than once in metadata.openclaw (lines 5 and 6); the last one is used — remove the duplicate`),
				},
			},
		},
		{
			name: "alias cycle",
			in:   file("---", "description: d", "metadata: &m", "  openclaw: *m", "---"),
			want: Skill{Name: "demo", Description: "d", Diagnostics: []Diagnostic{
				warnD(`frontmatter key "metadata" cannot be read (alias *m at line 4 refers to a value that contains it); it is ignored — fix its value`),
			}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestParseAliasBomb(t *testing.T) {
	lines := []string{"---", "description: d", `a: &a ["x","x","x","x","x","x","x","x","x","x"]`}
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		refs := strings.Repeat("*"+prev+",", 10)
		lines = append(lines, fmt.Sprintf("%s: &%s [%s]", n, n, refs[:len(refs)-1]))
		prev = n
	}
	lines = append(lines, "metadata: {openclaw: *i}", "---")
	in := file(lines...)
	fmLen := len(in) - len("---\n") - len("---\n")
	got := Parse(testRef, []byte(in))
	want := &Skill{Ref: testRef, Name: "demo", Description: "d", Diagnostics: []Diagnostic{
		warnD(fmt.Sprintf(`frontmatter key "metadata" cannot be read (YAML aliases expand to more than %d bytes of values); it is ignored — fix its value`, fmLen+minExpansionBytes)),
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("mismatch:%s", diffSkill(got, want))
	}
}

func TestParseNamespaces(t *testing.T) {
	obj := func(emoji string) map[string]any {
		return map[string]any{"emoji": emoji, "requires": map[string]any{"bins": []any{emoji}}}
	}
	all := map[string]any{"gsv": obj("g"), "openclaw": obj("o"), "clawdbot": obj("c")}
	cases := []parseCase{
		{
			name: "gsv wins over openclaw and clawdbot",
			in:   file("---", "description: d", `metadata: {"clawdbot": {emoji: c, requires: {bins: [c]}}, "openclaw": {emoji: o, requires: {bins: [o]}}, "gsv": {emoji: g, requires: {bins: [g]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: all, Namespace: "gsv", Emoji: "g", Requires: map[string]any{"bins": []any{"g"}}},
		},
		{
			name: "openclaw wins over clawdbot",
			in:   file("---", "description: d", `metadata: {"clawdbot": {emoji: c, requires: {bins: [c]}}, "openclaw": {emoji: o, requires: {bins: [o]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"openclaw": obj("o"), "clawdbot": obj("c")},
				Namespace: "openclaw", Emoji: "o", Requires: map[string]any{"bins": []any{"o"}}},
		},
		{
			name: "gsv that is not an object is skipped",
			in:   file("---", "description: d", `metadata: {"gsv": "yes", "openclaw": {emoji: o, requires: {bins: [o]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"gsv": "yes", "openclaw": obj("o")},
				Namespace: "openclaw", Emoji: "o", Requires: map[string]any{"bins": []any{"o"}},
				Diagnostics: []Diagnostic{warnD("metadata.gsv is a string, not an object; it is ignored — write it as an object")}},
		},
		{
			name: "null gsv and list openclaw are skipped",
			in:   file("---", "description: d", `metadata: {"gsv": null, "openclaw": [], "clawdbot": {emoji: c, requires: {bins: [c]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"gsv": nil, "openclaw": []any{}, "clawdbot": obj("c")},
				Namespace: "clawdbot", Emoji: "c", Requires: map[string]any{"bins": []any{"c"}},
				Diagnostics: []Diagnostic{
					warnD("metadata.gsv is null, not an object; it is ignored — write it as an object"),
					warnD("metadata.openclaw is a list, not an object; it is ignored — write it as an object"),
				}},
		},
		{
			name: "no namespace is an object",
			in:   file("---", "description: d", `metadata: {"clawdbot": 1}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"clawdbot": 1.0},
				Diagnostics: []Diagnostic{warnD("metadata.clawdbot is a number, not an object; it is ignored — write it as an object")}},
		},
		{
			name: "namespace without requires is still used",
			in:   file("---", "description: d", `metadata: { "openclaw": { "emoji": "🪝" } }`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"openclaw": map[string]any{"emoji": "🪝"}}, Namespace: "openclaw", Emoji: "🪝"},
		},
		{
			name: "empty gsv object wins",
			in:   file("---", "description: d", `metadata: {"gsv": {}, "openclaw": {emoji: o, requires: {bins: [o]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"gsv": map[string]any{}, "openclaw": obj("o")}, Namespace: "gsv"},
		},
		{
			name: "unknown namespaces are reported sorted, known ones are not",
			in:   file("---", "description: d", `metadata: {"zeta": 1, "openclaw": {}, "alpha": {}, "clawdbot": {}}`, "---"),
			want: Skill{Name: "demo", Description: "d",
				Metadata:  map[string]any{"zeta": 1.0, "openclaw": map[string]any{}, "alpha": map[string]any{}, "clawdbot": map[string]any{}},
				Namespace: "openclaw",
				Diagnostics: []Diagnostic{
					infoD(`unknown metadata namespace "alpha" is ignored; skillgate reads gsv, openclaw and clawdbot`),
					infoD(`unknown metadata namespace "zeta" is ignored; skillgate reads gsv, openclaw and clawdbot`),
				}},
		},
		{
			name: "emoji that is not a string",
			in:   file("---", "description: d", `metadata: {"openclaw": {"emoji": 1}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Metadata: map[string]any{"openclaw": map[string]any{"emoji": 1.0}}, Namespace: "openclaw",
				Diagnostics: []Diagnostic{warnD("metadata.openclaw.emoji is a number, not a string; it is ignored — write the emoji as text")}},
		},
		{
			name: "requires kept raw",
			in:   file("---", "description: d", `metadata: {"openclaw": {"requires": {"bins": "gh", "hostRoles": [1, ""], "x": null}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"requires": map[string]any{"bins": "gh", "hostRoles": []any{1.0, ""}, "x": nil}}},
				Requires: map[string]any{"bins": "gh", "hostRoles": []any{1.0, ""}, "x": nil}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

func TestParseNamespaceOS(t *testing.T) {
	const gsvOS = "os at the namespace level (metadata.gsv.os) is not evaluated in the gsv namespace; move it into metadata.gsv.requires.os"
	darwin := []any{"darwin", "linux"}
	cases := []parseCase{
		{
			name: "openclaw os folded into requires",
			in:   file("---", "description: d", `metadata: {"openclaw": {"os": ["darwin", "linux"], "requires": {"bins": ["tmux"]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"os": darwin, "requires": map[string]any{"bins": []any{"tmux"}}}},
				Requires: map[string]any{"bins": []any{"tmux"}, "os": darwin}},
		},
		{
			name: "clawdbot os folded into absent requires",
			in:   file("---", "description: d", `metadata: {"clawdbot": {"os": ["darwin", "linux"]}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "clawdbot",
				Metadata: map[string]any{"clawdbot": map[string]any{"os": darwin}},
				Requires: map[string]any{"os": darwin}},
		},
		{
			name: "openclaw os folded into null requires and null requires.os",
			in:   file("---", "description: d", `metadata: {"openclaw": {"os": ["darwin", "linux"], "requires": {"os": null}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"os": darwin, "requires": map[string]any{"os": nil}}},
				Requires: map[string]any{"os": darwin}},
		},
		{
			name: "requires.os wins over namespace os",
			in:   file("---", "description: d", `metadata: {"openclaw": {"os": ["darwin", "linux"], "requires": {"os": ["windows"]}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"os": darwin, "requires": map[string]any{"os": []any{"windows"}}}},
				Requires: map[string]any{"os": []any{"windows"}}},
		},
		{
			name: "empty requires.os list wins too",
			in:   file("---", "description: d", `metadata: {"openclaw": {"os": ["darwin", "linux"], "requires": {"os": []}}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"os": darwin, "requires": map[string]any{"os": []any{}}}},
				Requires: map[string]any{"os": []any{}}},
		},
		{
			name: "requires that is not an object is kept raw",
			in:   file("---", "description: d", `metadata: {"openclaw": {"os": ["darwin", "linux"], "requires": ["tmux"]}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "openclaw",
				Metadata: map[string]any{"openclaw": map[string]any{"os": darwin, "requires": []any{"tmux"}}},
				Requires: []any{"tmux"}},
		},
		{
			name: "gsv os is not folded",
			in:   file("---", "description: d", `metadata: { "gsv": { "emoji": "🖥️", "os": ["darwin", "linux"], "requires": { "bins": ["tmux"] } } }`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "gsv", Emoji: "🖥️",
				Metadata:    map[string]any{"gsv": map[string]any{"emoji": "🖥️", "os": darwin, "requires": map[string]any{"bins": []any{"tmux"}}}},
				Requires:    map[string]any{"bins": []any{"tmux"}},
				Diagnostics: []Diagnostic{warnD(gsvOS)}},
		},
		{
			name: "gsv os without requires",
			in:   file("---", "description: d", `metadata: {"gsv": {"os": ["darwin", "linux"]}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "gsv",
				Metadata:    map[string]any{"gsv": map[string]any{"os": darwin}},
				Diagnostics: []Diagnostic{warnD(gsvOS)}},
		},
		{
			name: "openclaw os is not used when gsv wins",
			in:   file("---", "description: d", `metadata: {"gsv": {}, "openclaw": {"os": ["darwin", "linux"]}}`, "---"),
			want: Skill{Name: "demo", Description: "d", Namespace: "gsv",
				Metadata: map[string]any{"gsv": map[string]any{}, "openclaw": map[string]any{"os": darwin}}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { checkParse(t, tc) })
	}
}

// TestParseDoesNotShareFoldedRequires checks that folding os builds a new
// requires map instead of writing into Metadata.
func TestParseDoesNotShareFoldedRequires(t *testing.T) {
	s := Parse(testRef, []byte(file("---", `metadata: {"openclaw": {"os": ["linux"], "requires": {"bins": ["x"]}}}`, "---")))
	req := s.Requires.(map[string]any)
	req["bins"] = "changed"
	inner := s.Metadata["openclaw"].(map[string]any)["requires"].(map[string]any)
	if _, has := inner["os"]; has || !reflect.DeepEqual(inner["bins"], []any{"x"}) {
		t.Errorf("Metadata was modified: %#v", inner)
	}
}

func TestParseDiagnosticsCapped(t *testing.T) {
	lines := []string{"---", "description: d"}
	for range 60 {
		lines = append(lines, "name: x")
	}
	lines = append(lines, "---")
	s := Parse(testRef, []byte(file(lines...)))
	if len(s.Diagnostics) != maxDiagnostics+1 {
		t.Fatalf("%d diagnostics, want %d", len(s.Diagnostics), maxDiagnostics+1)
	}
	if got, want := s.Diagnostics[0], warnD(`key "name" appears more than once in the frontmatter (lines 3 and 4); the last one is used — remove the duplicate`); got != want {
		t.Errorf("first diagnostic %+v, want %+v", got, want)
	}
	if got, want := s.Diagnostics[maxDiagnostics], warnD("9 more findings in this file are not shown; fix the ones above and validate again"); got != want {
		t.Errorf("last diagnostic %+v, want %+v", got, want)
	}

	// Only infos dropped: the summary is an info too.
	md := make([]string, 0, 60)
	for i := range 60 {
		md = append(md, fmt.Sprintf(`"ns%02d": 1`, i))
	}
	s = Parse(testRef, []byte(file("---", "description: d", "metadata: {"+strings.Join(md, ", ")+"}", "---")))
	if got, want := s.Diagnostics[maxDiagnostics], infoD("10 more findings in this file are not shown; fix the ones above and validate again"); got != want {
		t.Errorf("last diagnostic %+v, want %+v", got, want)
	}
}

// TestParsePathological feeds files of the 256 KiB storage limit built to
// be expensive (duplicate keys, deep nesting, alias and merge fan-out) and
// checks that each finishes with its diagnostics capped.
func TestParsePathological(t *testing.T) {
	const size = 256 << 10
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	cases := map[string]string{
		"duplicate flow metadata": "---\n" + fill("metadata: {}\n") + "---\n",
		"duplicate flat keys":     "---\nx: a: b\n" + fill("name: x\n") + "---\n",
		"deep flow nesting":       "---\nmetadata: " + strings.Repeat("{a: ", 9000) + strings.Repeat("}", 9000) + "\n---\n",
		"deep HuJSON nesting":     "---\nx: a: b\nmetadata: " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n---\n",
		"alias fan-out":           "---\na: &a [x]\nmetadata:\n" + fill("  - *a\n") + "---\n",
		"merge fan-out":           "---\nb: &b {x: 1}\nmetadata:\n  <<: [" + strings.Repeat("*b,", 80000) + "*b]\n---\n",
		"one long line":           "---\ndescription: " + fill("a") + "\n---\n",
		"only blank lines":        fill("\n"),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			s, fromBody := parse(testRef, []byte(in))
			checkInvariants(t, name, testRef, s, fromBody)
			if len(s.Diagnostics) > maxDiagnostics+1 {
				t.Errorf("%d diagnostics", len(s.Diagnostics))
			}
		})
	}
}

func TestYAMLErrorText(t *testing.T) {
	cases := []struct{ in, want string }{
		// Scanner errors: 1-based lines, none for line 1.
		{"yaml: line 2: mapping values are not allowed in this context", "line 3: mapping values are not allowed in this context"},
		{"yaml: mapping values are not allowed in this context", "line 2: mapping values are not allowed in this context"},
		// Parser errors: 0-based lines.
		{"yaml: line 1: did not find expected key", "line 3: did not find expected key"},
		{"yaml: did not find expected ',' or '}'", "line 2: did not find expected ',' or '}'"},
		// Errors without a position.
		{"yaml: control characters are not allowed", "control characters are not allowed"},
		{"yaml: unknown anchor 'x' referenced", "unknown anchor 'x' referenced"},
		{"yaml: line x: odd", "line x: odd"},
	}
	for _, tc := range cases {
		if got := yamlErrorText(fmt.Errorf("%s", tc.in), fmLineOffset); got != tc.want {
			t.Errorf("yamlErrorText(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestParseDeepNesting: frontmatter nesting brackets past maxNesting is not
// parsed (the parsers recurse per level), and the skill still loads.
func TestParseDeepNesting(t *testing.T) {
	deep := "---\nname: deep\nmetadata: '" + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "'\n---\nBody text.\n"
	s := Parse(Ref{Key: "skills/d/SKILL.md", Dir: "d", Scope: ScopeGlobal}, []byte(deep))
	if s.Name != "d" || s.Description != "Body text." || s.Metadata != nil {
		t.Errorf("got name %q description %q metadata %v", s.Name, s.Description, s.Metadata)
	}
	want := "frontmatter nests brackets 100000 levels deep, more than 64; it is not read (name and description fall back to the directory and the body) — flatten it"
	if len(s.Diagnostics) == 0 || s.Diagnostics[0].Message != want || s.Diagnostics[0].Level != LevelWarn {
		t.Errorf("diagnostics = %v", s.Diagnostics)
	}
	ok := "---\nname: ok\nmetadata: {\"gsv\": {\"requires\": {\"bins\": [\"gh\"]}}}\n---\n"
	if s := Parse(Ref{Key: "skills/ok/SKILL.md", Dir: "ok"}, []byte(ok)); s.Namespace != "gsv" {
		t.Errorf("normal nesting: namespace %q, diagnostics %v", s.Namespace, s.Diagnostics)
	}
}

// ParseLines says where the prompt text and the body were read: the
// governance scanner reports what it finds in a name or description at
// these lines, and reads the body from its line.
func TestParseLines(t *testing.T) {
	cases := []struct {
		name, in string
		want     TextLines
	}{
		{"frontmatter", file("---", "name: x", "description: d", "---", "body"), TextLines{Name: 2, Description: 3, Body: 5}},
		{"multi-line description", file("---", "description: >", "  one", "  two", "name: x", "---"), TextLines{Name: 5, Description: 2, Body: 7}},
		{"duplicate: the last", file("---", "name: a", "name: b", "---", "", "# T", "", "Para", "graph."), TextLines{Name: 3, Description: 8, DescriptionFromBody: true, Body: 5}},
		{"flat reader", file("---", "name: x: y", "description: [d", "---", "body"), TextLines{Name: 2, Description: 3, Body: 5}},
		{"no frontmatter", file("# T", "", "First", "second"), TextLines{Description: 3, DescriptionFromBody: true, Body: 1}},
		{"near miss", file("--- ", "name: x", "---", "", "body"), TextLines{Description: 1, DescriptionFromBody: true, Body: 1}},
		{"CRLF and BOM", "\uFEFF---\r\nname: x\r\n---\r\n\r\n\r\nText.\r\n", TextLines{Name: 2, Description: 6, DescriptionFromBody: true, Body: 4}},
		{"not a string", file("---", "name: [a]", "description: {a: b}", "---", "Text."), TextLines{Description: 5, DescriptionFromBody: true, Body: 5}},
		{"none", file("---", "name: x", "---", "# Only a heading"), TextLines{Name: 2, Body: 4}},
	}
	for _, tc := range cases {
		s, got := ParseLines(testRef, []byte(tc.in))
		if got != tc.want {
			t.Errorf("%s: ParseLines = %+v, want %+v", tc.name, got, tc.want)
		}
		if !reflect.DeepEqual(s, Parse(testRef, []byte(tc.in))) {
			t.Errorf("%s: ParseLines's skill differs from Parse's", tc.name)
		}
	}
}

// SplitFrontmatter is the parser's split, for the governance scanner.
func TestSplitFrontmatter(t *testing.T) {
	cases := []struct {
		in, fm, body string
		line         int
		ok           bool
	}{
		{file("---", "name: x", "---", "body"), "name: x\n", "body\n", 4, true},
		{"\uFEFF---\r\nname: x\r\n--- \t\r\n\r\nbody", "name: x\n", "\nbody", 4, true},
		{"---\rname: x\r---", "name: x\n", "", 4, true},
		{file("---", "---"), "", "", 3, true},
		{file("--- ", "name: x", "---", "body"), "", file("--- ", "name: x", "---", "body"), 1, false},
		{file("\u00a0---", "name: x", "---", "body"), "", file("\u00a0---", "name: x", "---", "body"), 1, false},
		{file("---", "name: x", " ---"), "", file("---", "name: x", " ---"), 1, false},
		{"---", "", "---", 1, false},
		{"", "", "", 1, false},
		{"---\nname: a\xff\n---\nb\xfe", "name: a\uFFFD\n", "b\uFFFD", 4, true},
	}
	for _, tc := range cases {
		fm, body, line, ok := SplitFrontmatter([]byte(tc.in))
		if fm != tc.fm || body != tc.body || line != tc.line || ok != tc.ok {
			t.Errorf("SplitFrontmatter(%q) = %q, %q, %d, %v; want %q, %q, %d, %v", tc.in, fm, body, line, ok, tc.fm, tc.body, tc.line, tc.ok)
		}
		if s := Parse(testRef, []byte(tc.in)); s.Body != body {
			t.Errorf("SplitFrontmatter(%q) body %q, Parse's %q", tc.in, body, s.Body)
		}
	}
}
