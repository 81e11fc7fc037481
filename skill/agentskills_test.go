package skill

import (
	"reflect"
	"strings"
	"testing"
)

func TestCheckFormat(t *testing.T) {
	files := map[string]bool{"references/guide.md": true, "scripts/run.sh": true}
	exists := func(rel string) bool { return files[rel] }
	long := func(s string, n int) string { return strings.Repeat(s, n) }
	tests := []struct {
		name, dir, file string
		want            []string
	}{
		{"valid", "pdf-tools", "---\nname: pdf-tools\ndescription: Work with PDFs.\nlicense: MIT\ncompatibility: needs python3\nallowed-tools: Bash Read\nhomepage: https://x\nalways: false\nuser-invocable: true\nversion: 1.0.0\nrequires: {}\nmetadata: {\"openclaw\": {}}\n---\nSee [guide](references/guide.md), [run](./scripts/run.sh#top), [web](https://example.com), [anchor](#usage), ![img](<references/guide.md>).\n", nil},
		{"allowed-tools list", "a", "---\nname: a\ndescription: d\nallowed-tools: [Bash, Read]\n---\n", nil},
		{"name missing", "a", "---\ndescription: d\n---\n", []string{`name is missing; the Agent Skills format requires it (the directory name "a" is used)`}},
		{"name upper", "My-Skill", "---\nname: My-Skill\ndescription: d\n---\n", []string{`name "My-Skill" may hold only lowercase letters a-z, digits and hyphens`}},
		{"name underscore", "a_b", "---\nname: a_b\ndescription: d\n---\n", []string{`name "a_b" may hold only lowercase letters a-z, digits and hyphens`}},
		{"name leading hyphen", "-a", "---\nname: -a\ndescription: d\n---\n", []string{`name "-a" must not start or end with a hyphen`}},
		{"name trailing hyphen", "a-", "---\nname: a-\ndescription: d\n---\n", []string{`name "a-" must not start or end with a hyphen`}},
		{"name double hyphen", "a--b", "---\nname: a--b\ndescription: d\n---\n", []string{`name "a--b" must not contain two hyphens in a row`}},
		{"name too long", long("a", 65), "---\nname: " + long("a", 65) + "\ndescription: d\n---\n", []string{`name "` + long("a", 65) + `" is 65 characters long, more than 64`}},
		{"name 64", long("a", 64), "---\nname: " + long("a", 64) + "\ndescription: d\n---\n", nil},
		{"name not dir", "other", "---\nname: mine\ndescription: d\n---\n", []string{`name "mine" is not the directory name "other"; the Agent Skills format requires them to be equal`}},
		{"name empty (Parse reports it)", "a", "---\nname: \"\"\ndescription: d\n---\n", nil},
		{"description from body", "a", "---\nname: a\n---\nA paragraph.\n", []string{"description is missing from the frontmatter; the Agent Skills format requires it (the first paragraph of the body is used)"}},
		{"no description at all (Parse reports it)", "a", "---\nname: a\n---\n", nil},
		{"description angle brackets", "a", "---\nname: a\ndescription: Use <b>this</b>\n---\n", []string{`description contains "<" or ">"; the Agent Skills format forbids them (they can break the prompt's markup)`}},
		{"compatibility long", "a", "---\nname: a\ndescription: d\ncompatibility: " + long("x", 501) + "\n---\n", []string{"compatibility is 501 characters long, more than 500"}},
		{"compatibility 500", "a", "---\nname: a\ndescription: d\ncompatibility: " + long("x", 500) + "\n---\n", nil},
		{"compatibility list", "a", "---\nname: a\ndescription: d\ncompatibility: [linux]\n---\n", []string{"compatibility is list, not a string"}},
		{"license mapping", "a", "---\nname: a\ndescription: d\nlicense: {spdx: MIT}\n---\n", []string{"license is mapping, not a string"}},
		{"license number", "a", "---\nname: a\ndescription: d\nlicense: 2\n---\n", []string{"license is number, not a string"}},
		{"allowed-tools mapping", "a", "---\nname: a\ndescription: d\nallowed-tools: {bash: true}\n---\n", []string{"allowed-tools is mapping, not a string or a list"}},
		{"unknown key with hint", "a", "---\nname: a\ndescriptoin: d\n---\nBody.\n", []string{
			"description is missing from the frontmatter; the Agent Skills format requires it (the first paragraph of the body is used)",
			`unknown frontmatter key "descriptoin"; did you mean "description"?`}},
		{"unknown key hint licence", "a", "---\nname: a\ndescription: d\nlicence: MIT\n---\n", []string{`unknown frontmatter key "licence"; did you mean "license"?`}},
		{"unknown key no hint", "a", "---\nname: a\ndescription: d\nfavourite-colour: blue\n---\n", []string{`unknown frontmatter key "favourite-colour"; the Agent Skills format does not define it`}},
		{"no frontmatter", "a", "# Title\n\nText.\n", []string{`no frontmatter: the Agent Skills format requires name and description in a frontmatter block opened and closed by "---"`}},
		{"body 500 lines", "a", "---\nname: a\ndescription: d\n---\n" + long("x\n", 500), nil},
		{"body 501 lines", "a", "---\nname: a\ndescription: d\n---\n" + long("x\n", 501), []string{"the body is 501 lines long, more than 500; move details into files the skill links to"}},
		{"broken links", "a", "---\nname: a\ndescription: d\n---\n# T\n\nRead [the guide](references/missing.md).\nAnd [up](../other/SKILL.md) and [ok](references/guide.md).\n", []string{
			`line 7: link "references/missing.md" does not resolve: no file "references/missing.md" in the skill directory`,
			`line 8: link "../other/SKILL.md" points outside the skill directory`}},
		{"links in code ignored", "a", "---\nname: a\ndescription: d\n---\n```md\n[x](missing.md)\n```\nInline `[y](missing.md)` too.\n", nil},
		{"escaped link", "a", "---\nname: a\ndescription: d\n---\n[g](references%2Fguide.md) [h](a%20b.md)\n", []string{
			`line 5: link "a%20b.md" does not resolve: no file "a b.md" in the skill directory`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := Ref{Key: "skills/" + tt.dir + "/SKILL.md", Dir: tt.dir}
			s := Parse(ref, []byte(tt.file))
			var got []string
			for _, d := range CheckFormat(s, []byte(tt.file), exists) {
				if d.Location != ref.Key || d.Level != LevelWarn {
					t.Errorf("diagnostic %+v: want location %q, level warn", d, ref.Key)
				}
				got = append(got, d.Message)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
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
