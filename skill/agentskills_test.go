package skill

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestCheckFormat(t *testing.T) {
	files := map[string]bool{"references/guide.md": true, "scripts/run.sh": true}
	exists := func(rel string) bool { return files[rel] }
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	e := func(m string) string { return "error: " + m }
	note := func(m string) string { return "info: " + m }
	const onlySpec = "; the Agent Skills format defines only name, description, license, compatibility, metadata and allowed-tools — move other data under metadata"
	tests := []struct {
		name, dir, file string
		want            []string
	}{
		{"valid", "pdf-tools", "---\nname: pdf-tools\ndescription: Work with PDFs.\nlicense: MIT\ncompatibility: needs python3\nallowed-tools: Bash Read\nhomepage: https://x\nalways: false\nuser-invocable: true\nversion: 1.0.0\nrequires: {}\nmetadata: {\"openclaw\": {}}\n---\nSee [guide](references/guide.md), [run](./scripts/run.sh#top), [web](https://example.com), [anchor](#usage), ![img](<references/guide.md>).\n", nil},
		{"allowed-tools list", "a", "---\nname: a\ndescription: d\nallowed-tools: [Bash, Read]\n---\n", nil},
		{"scalars read as text", "a", "---\nname: a\ndescription: d\nlicense: 2\ncompatibility: 3.11\nallowed-tools: true\n---\n", nil},
		{"name missing", "a", "---\ndescription: d\n---\n", []string{e(`missing required field in frontmatter: name (the directory name "a" is used)`)}},
		{"name upper", "My-Skill", "---\nname: My-Skill\ndescription: d\n---\n", []string{e(`name "My-Skill" must be lowercase`)}},
		{"name underscore", "a_b", "---\nname: a_b\ndescription: d\n---\n", []string{e(`name "a_b" contains invalid characters ('_'); only letters, digits and hyphens are allowed`)}},
		{"name several characters", "a b.c_d", "---\nname: a b.c_d\ndescription: d\n---\n", []string{e(`name "a b.c_d" contains invalid characters (' ', '.', '_'); only letters, digits and hyphens are allowed`)}},
		{"name leading hyphen", "-a", "---\nname: -a\ndescription: d\n---\n", []string{e(`name "-a" cannot start or end with a hyphen`)}},
		{"name trailing hyphen", "a-", "---\nname: a-\ndescription: d\n---\n", []string{e(`name "a-" cannot start or end with a hyphen`)}},
		{"name double hyphen", "a--b", "---\nname: a--b\ndescription: d\n---\n", []string{e(`name "a--b" cannot contain consecutive hyphens`)}},
		{"name too long", long("a", 65), "---\nname: " + long("a", 65) + "\ndescription: d\n---\n", []string{e(`name "` + long("a", 65) + `" exceeds the 64 character limit (65 characters)`)}},
		{"name 64", long("a", 64), "---\nname: " + long("a", 64) + "\ndescription: d\n---\n", nil},
		{"name 64 letters of another script", long("я", 64), "---\nname: " + long("я", 64) + "\ndescription: d\n---\n", nil},
		{"name several problems", "x", "---\nname: -My_Skill\ndescription: d\n---\n", []string{
			e(`name "-My_Skill" must be lowercase`),
			e(`name "-My_Skill" cannot start or end with a hyphen`),
			e(`name "-My_Skill" contains invalid characters ('_'); only letters, digits and hyphens are allowed`),
			e(`directory name "x" must match skill name "-My_Skill"; the Agent Skills format requires them to be equal`)}},
		{"name Cyrillic", "мой-навык", "---\nname: мой-навык\ndescription: d\n---\n", nil},
		{"name Cyrillic upper", "НАВЫК", "---\nname: НАВЫК\ndescription: d\n---\n", []string{e(`name "НАВЫК" must be lowercase`)}},
		{"name CJK", "技能", "---\nname: 技能\ndescription: d\n---\n", nil},
		{"name NFKC", "caf\u00e9", "---\nname: cafe\u0301\ndescription: d\n---\n", nil},
		{"name NFKC directory decomposed", "cafe\u0301", "---\nname: caf\u00e9\ndescription: d\n---\n", nil},
		{"name NFKC compatibility", "ﬁle", "---\nname: ﬁle\ndescription: d\n---\n", nil},
		{"name title-case letter", "ǅ", "---\nname: ǅ\ndescription: d\n---\n", []string{e(`name "Dž" must be lowercase`)}},
		{"name not dir", "other", "---\nname: mine\ndescription: d\n---\n", []string{e(`directory name "other" must match skill name "mine"; the Agent Skills format requires them to be equal`)}},
		{"name empty (ParseChecked reports it)", "a", "---\nname: \"\"\ndescription: d\n---\n", nil},
		{"name list (ParseChecked reports it)", "a", "---\nname: [a]\ndescription: d\n---\n", nil},
		{"description from body", "a", "---\nname: a\n---\nA paragraph.\n", []string{e("missing required field in frontmatter: description (the first paragraph of the body is used)")}},
		{"no description at all", "a", "---\nname: a\n---\n", []string{e("missing required field in frontmatter: description")}},
		{"description empty", "a", "---\nname: a\ndescription: \" \"\n---\nA paragraph.\n", []string{e("description is empty; the Agent Skills format requires a non-empty description")}},
		{"description null", "a", "---\nname: a\ndescription:\n---\n", []string{e("description is empty; the Agent Skills format requires a non-empty description")}},
		{"description angle brackets", "a", "---\nname: a\ndescription: Use <b>this</b>\n---\n", []string{note(`description contains "<" or ">", which can break the markup of a prompt it is pasted into (some skill validators refuse them)`)}},
		{"description too long (ParseChecked reports it)", "a", "---\nname: a\ndescription: " + long("x", 1025) + "\n---\n", nil},
		{"compatibility long", "a", "---\nname: a\ndescription: d\ncompatibility: " + long("x", 501) + "\n---\n", []string{e("compatibility exceeds the 500 character limit (501 characters)")}},
		{"compatibility 500", "a", "---\nname: a\ndescription: d\ncompatibility: " + long("x", 500) + "\n---\n", nil},
		{"compatibility list", "a", "---\nname: a\ndescription: d\ncompatibility: [linux]\n---\n", []string{e("compatibility is list, not a string")}},
		{"license mapping", "a", "---\nname: a\ndescription: d\nlicense: {spdx: MIT}\n---\n", []string{note("license is mapping, not a string")}},
		{"allowed-tools mapping", "a", "---\nname: a\ndescription: d\nallowed-tools: {bash: true}\n---\n", []string{e("allowed-tools is mapping, not a string or a list of strings")}},
		{"allowed-tools list of lists", "a", "---\nname: a\ndescription: d\nallowed-tools: [Bash, [Read]]\n---\n", []string{e("allowed-tools has an item that is list, not a string; write a string or a list of strings")}},
		{"unknown key with hint", "a", "---\nname: a\ndescriptoin: d\n---\nBody.\n", []string{
			e("missing required field in frontmatter: description (the first paragraph of the body is used)"),
			e(`unexpected fields in frontmatter: "descriptoin" (did you mean "description"?)` + onlySpec)}},
		{"unknown keys", "a", "---\nname: a\ndescription: d\nlicence: MIT\nfavourite-colour: blue\n---\n", []string{
			e(`unexpected fields in frontmatter: "licence" (did you mean "license"?), "favourite-colour"` + onlySpec)}},
		{"many unknown keys", "a", "---\nname: a\ndescription: d\n" + manyKeys(22) + "---\n", []string{
			e(`unexpected fields in frontmatter: "k00", "k01", "k02", "k03", "k04", "k05", "k06", "k07", "k08", "k09", "k10", "k11", "k12", "k13", "k14", "k15", "k16", "k17", "k18", "k19" and 2 more` + onlySpec)}},
		{"known extensions", "a", "---\nname: a\ndescription: d\nuser-invocable: true\ndisable-model-invocation: true\nargument-hint: file\nmodel: x\nversion: 1\n---\n", nil},
		{"no frontmatter", "a", "# Title\n\nText.\n", []string{e(`no frontmatter: the file must start with YAML frontmatter, a block opened and closed by a line "---" that holds name and description`)}},
		{"opening line with spaces", "a", "--- \nname: a\ndescription: d\n---\n", []string{e(`no frontmatter: the file must start with YAML frontmatter, a block opened and closed by a line "---" that holds name and description`)}},
		{"unclosed (ParseChecked reports it)", "a", "---\nname: a\n", nil},
		{"not YAML (ParseChecked reports it)", "a", "---\nname: [a\n---\n", nil},
		{"not a mapping (ParseChecked reports it)", "a", "---\n- a\n---\n", nil},
		{"empty frontmatter", "a", "---\n# nothing\n---\nBody.\n", []string{
			e(`missing required field in frontmatter: name (the directory name "a" is used)`),
			e("missing required field in frontmatter: description (the first paragraph of the body is used)")}},
		{"body 500 lines", "a", "---\nname: a\ndescription: d\n---\n" + long("x\n", 500), nil},
		{"body 501 lines", "a", "---\nname: a\ndescription: d\n---\n" + long("x\n", 501), []string{note("the body is 501 lines long, more than 500; move details into files the skill links to")}},
		{"broken links", "a", "---\nname: a\ndescription: d\n---\n# T\n\nRead [the guide](references/missing.md).\nAnd [up](../other/SKILL.md) and [ok](references/guide.md).\n", []string{
			note(`line 7: link "references/missing.md" does not resolve: no file "references/missing.md" in the skill directory`),
			note(`line 8: link "../other/SKILL.md" points outside the skill directory`)}},
		{"links in code ignored", "a", "---\nname: a\ndescription: d\n---\n```md\n[x](missing.md)\n```\nInline `[y](missing.md)` too.\n", nil},
		{"links in {baseDir}", "a", "---\nname: a\ndescription: d\n---\nRead [g]({baseDir}/references/guide.md) and [m]({baseDir}/missing.md).\n", []string{
			note(`line 5: link "{baseDir}/missing.md" does not resolve: no file "missing.md" in the skill directory`)}},
		{"escaped link", "a", "---\nname: a\ndescription: d\n---\n[g](references%2Fguide.md) [h](a%20b.md)\n", []string{
			note(`line 5: link "a%20b.md" does not resolve: no file "a b.md" in the skill directory`)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := Ref{Key: "skills/" + tt.dir + "/SKILL.md", Dir: tt.dir}
			s := Parse(ref, []byte(tt.file))
			var got []string
			for _, d := range CheckFormat(s, []byte(tt.file), exists) {
				if d.Location != ref.Key {
					t.Errorf("diagnostic %+v: want location %q", d, ref.Key)
				}
				got = append(got, string(d.Level)+": "+d.Message)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// manyKeys is n frontmatter lines "kNN: v".
func manyKeys(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "k%02d: v\n", i)
	}
	return b.String()
}

// TestCheckFormatNotInParse: the format rules are validate's only; Parse's
// diagnostics (what the gateway shows) are unchanged by them.
func TestCheckFormatNotInParse(t *testing.T) {
	s := Parse(Ref{Key: "k", Dir: "x"}, []byte("---\nname: Bad--Name\ndescriptoin: d\n---\nBody.\n"))
	if len(s.Diagnostics) != 0 {
		t.Errorf("Parse reports %v", s.Diagnostics)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"abc", "", 3}, {"descriptoin", "description", 1}, {"kitten", "sitting", 3}, {"name", "name", 0}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// checkParseChecked: ParseChecked reads data exactly as Parse did (s), and
// differs only in raising some warnings to errors.
func checkParseChecked(t *testing.T, ref Ref, data []byte, s *Skill) {
	t.Helper()
	c := ParseChecked(ref, data)
	if len(c.Diagnostics) != len(s.Diagnostics) {
		t.Fatalf("ParseChecked has %d diagnostics, Parse %d", len(c.Diagnostics), len(s.Diagnostics))
	}
	for i, d := range c.Diagnostics {
		p := s.Diagnostics[i]
		if d.Level == LevelError && p.Level == LevelWarn {
			p.Level = LevelError
		}
		if d != p {
			t.Fatalf("ParseChecked diagnostic %d is %+v, Parse's %+v", i, d, s.Diagnostics[i])
		}
	}
	cs, ps := *c, *s
	cs.Diagnostics, ps.Diagnostics = nil, nil
	if !reflect.DeepEqual(cs, ps) {
		t.Fatalf("ParseChecked reads another skill than Parse:%s", diffSkill(&cs, &ps))
	}
}

// TestParseChecked: the findings that also break the Agent Skills
// specification are errors for validate, warnings for the gateway; the
// others keep their level.
func TestParseChecked(t *testing.T) {
	tests := []struct {
		name, in string
		errors   []string // messages ParseChecked reports as errors
	}{
		{"valid", "---\nname: demo\ndescription: d\n---\n", nil},
		{"unclosed", "---\nname: demo\n", []string{msgUnclosed}},
		{"invalid YAML", "---\nname: [demo\ndescription: d\n---\n", []string{"frontmatter is invalid YAML (line 3: did not find expected ',' or ']')" + msgFlat}},
		{"not a mapping", "---\n- a\n---\nBody.\n", []string{"frontmatter is a YAML list, not a mapping of keys to values" + msgFlat}},
		{"nested too deeply", "---\nmetadata: " + strings.Repeat("[", 65) + strings.Repeat("]", 65) + "\n---\nBody.\n",
			[]string{"frontmatter nests brackets 65 levels deep, more than 64; it is not read (name and description fall back to the directory and the body) — flatten it"}},
		{"name empty", "---\nname: \"\"\ndescription: d\n---\n", []string{`name is empty; the directory name "demo" is used — set name or remove the line`}},
		{"name list", "---\nname: [a]\ndescription: d\n---\n", []string{`name is a list, not a string; the directory name "demo" is used — write name as text`}},
		{"name number is text to the reference", "---\nname: 7\ndescription: d\n---\n", nil},
		{"description mapping", "---\nname: demo\ndescription: {a: b}\n---\nBody.\n", []string{"description is a mapping, not a string; the first paragraph of the body is used — write description as text"}},
		{"description too long", "---\nname: demo\ndescription: " + strings.Repeat("é", 1025) + "\n---\n",
			[]string{"description exceeds the 1024 character limit (1025 characters); it is kept, but it is pasted into every prompt — shorten it"}},
		{"always as a string stays a warning", "---\nname: demo\ndescription: d\nalways: \"true\"\n---\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := Parse(testRef, []byte(tt.in))
			checkParseChecked(t, testRef, []byte(tt.in), s)
			var errs []string
			for _, d := range ParseChecked(testRef, []byte(tt.in)).Diagnostics {
				if d.Level == LevelError {
					errs = append(errs, d.Message)
				}
			}
			if !reflect.DeepEqual(errs, tt.errors) {
				t.Errorf("errors\n%q\nwant\n%q", errs, tt.errors)
			}
			for _, d := range s.Diagnostics {
				if d.Level == LevelError {
					t.Errorf("Parse reports an error: %+v", d)
				}
			}
		})
	}
}
