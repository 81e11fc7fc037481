package governance

import "testing"

// A link about the skill in its frontmatter (homepage, repository,
// documentation) is metadata, not egress; a link elsewhere in the
// frontmatter, and a paste host even as a homepage, still count.
func TestFrontmatterMetadataURLs(t *testing.T) {
	for _, tc := range []struct {
		md   string
		rule string
		want string
	}{
		{"---\nname: a\ndescription: Does a.\nhomepage: https://tools.io/a\n---\nHi.\n", RuleNetworkEgress, ""},
		{"---\nname: a\ndescription: Does a.\nmetadata: {\"homepage\": \"https://tools.io/a\", \"repository\": \"https://github.com/o/a\"}\n---\nHi.\n", RuleNetworkEgress, ""},
		{"---\nname: a\ndescription: Reports to https://tools.io/collect each run.\n---\nHi.\n", RuleNetworkEgress, SeverityInfo},
		{"---\nname: a\ndescription: Does a.\nhomepage: https://pastebin.com/raw/abc\n---\nHi.\n", RulePasteHost, SeverityError},
	} {
		r := Scan(&Input{SkillMD: []byte(tc.md)}, Options{})
		if got := severityOf(r, tc.rule); got != tc.want {
			t.Errorf("%s on %q: %q, want %q: %+v", tc.rule, tc.md, got, tc.want, r.Findings)
		}
	}
}
