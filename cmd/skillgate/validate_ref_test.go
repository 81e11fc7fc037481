package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
)

// refCorpus is the Agent Skills reference validator's own test cases
// (skills-ref), materialised with the reference's verdict on each: a set
// of the external corpus (testkit.ExternalCorpus), never copied into the
// repository.
const refCorpus = "agentskills-skills-ref-validate"

// refCases is how many cases the set holds (its PROVENANCE.md).
const refCases = 36

// A topic is the problem a message names, so that the reference's wording
// and skillgate's can be compared. Each table maps a message to its topic
// by the first pattern that matches.
type topicPattern struct {
	topic string
	re    *regexp.Regexp
}

func topics(pairs ...string) []topicPattern {
	var out []topicPattern
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, topicPattern{pairs[i], regexp.MustCompile(pairs[i+1])})
	}
	return out
}

// refTopics reads the reference validator's messages (skills_ref/validator.py
// and parser.py).
var refTopics = topics(
	"does not exist", `^Path does not exist: `,
	"not a directory", `^Not a directory: `,
	"missing SKILL.md", `^Missing required file: SKILL\.md$`,
	"name lowercase", `^Skill name '.*' must be lowercase$`,
	"name too long", `^Skill name '.*' exceeds 64 character limit \(\d+ chars\)$`,
	"name hyphen at an end", `^Skill name cannot start or end with a hyphen$`,
	"name consecutive hyphens", `^Skill name cannot contain consecutive hyphens$`,
	"name invalid characters", `^Skill name '.*' contains invalid characters\.`,
	"name not the directory", `^Directory name '.*' must match skill name '.*'$`,
	"unexpected fields", `^Unexpected fields in frontmatter: `,
	"description too long", `^Description exceeds 1024 character limit \(\d+ chars\)$`,
	"compatibility too long", `^Compatibility exceeds 500 character limit \(\d+ chars\)$`,
	"frontmatter missing", `^SKILL\.md must start with YAML frontmatter \(---\)$`,
	"frontmatter unclosed", `^SKILL\.md frontmatter not properly closed with ---$`,
	"frontmatter invalid YAML", `^Invalid YAML in frontmatter: `,
	"frontmatter not a mapping", `^SKILL\.md frontmatter must be a YAML mapping$`,
	"missing name", `^Missing required field in frontmatter: name$`,
	"missing description", `^Missing required field in frontmatter: description$`,
)

// ourTopics reads validate's messages.
var ourTopics = topics(
	"does not exist", `^path does not exist: `,
	"not a directory", `^not a directory: `,
	"missing SKILL.md", `^missing required file: SKILL\.md `,
	"name lowercase", `^name ".*" must be lowercase$`,
	"name too long", `^name ".*" exceeds the 64 character limit \(\d+ characters\)$`,
	"name hyphen at an end", `^name ".*" cannot start or end with a hyphen$`,
	"name consecutive hyphens", `^name ".*" cannot contain consecutive hyphens$`,
	"name invalid characters", `^name ".*" contains invalid characters `,
	"name not the directory", `^directory name ".*" must match skill name ".*"; `,
	"unexpected fields", `^unexpected fields in frontmatter: `,
	"description too long", `^description exceeds the 1024 character limit \(\d+ characters\)`,
	"compatibility too long", `^compatibility exceeds the 500 character limit \(\d+ characters\)$`,
	"frontmatter missing", `^no frontmatter: `,
	"frontmatter unclosed", `^frontmatter is not closed: `,
	"frontmatter invalid YAML", `^frontmatter is invalid YAML \(`,
	"frontmatter not a mapping", `^frontmatter is a YAML \w+, not a mapping of keys to values`,
	"missing name", `^missing required field in frontmatter: name \(`,
	"missing description", `^missing required field in frontmatter: description( \(|$)`,
)

// topicOf returns the topic of msg, or "" when no pattern matches.
func topicOf(table []topicPattern, msg string) string {
	for _, tp := range table {
		if tp.re.MatchString(msg) {
			return tp.topic
		}
	}
	return ""
}

// noSkillFile are the topics of a path with no skill file to read.
var noSkillFile = []string{"does not exist", "not a directory", "missing SKILL.md"}

// refCase is one case of the set's expected.json.
type refCase struct {
	Case string `json:"case"`
	// SkillDirs maps the path validate() was called on, relative to the
	// case's directory, to the exact errors it returned.
	SkillDirs map[string][]string `json:"skills_ref_validate"`
	Valid     bool                `json:"valid"`
}

// TestValidateAgreesWithReference runs validate, with and without
// --strict, on every case of the reference validator's own test set and
// checks that it agrees: a case is valid exactly when validate passes it
// (no error; with --strict no warning either), and for an invalid case
// validate's errors name exactly the problems the reference names (by
// topic: the wording differs). The set must be there: a missing corpus
// fails the test rather than skipping the comparison.
func TestValidateAgreesWithReference(t *testing.T) {
	corpus := filepath.Join(testkit.ExternalCorpus(t), refCorpus)
	data, err := os.ReadFile(filepath.Join(corpus, "expected.json"))
	if err != nil {
		t.Fatalf("the reference validator's cases are missing (%v); they are expected at %s", err, corpus)
	}
	var cases []refCase
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatalf("%s: %v", filepath.Join(corpus, "expected.json"), err)
	}
	if len(cases) != refCases {
		t.Fatalf("%s holds %d cases, want %d", filepath.Join(corpus, "expected.json"), len(cases), refCases)
	}
	empty := t.TempDir()
	for _, c := range cases {
		if len(c.SkillDirs) == 0 {
			t.Errorf("%s: no skill directory in the case", c.Case)
		}
		for rel, refErrs := range c.SkillDirs {
			if c.Valid != (len(refErrs) == 0) {
				t.Fatalf("%s: valid is %v with errors %q", c.Case, c.Valid, refErrs)
			}
			var want []string
			for _, e := range refErrs {
				topic := topicOf(refTopics, e)
				if topic == "" {
					t.Fatalf("%s: no topic for the reference's message %q; add it to refTopics", c.Case, e)
				}
				want = append(want, topic)
			}
			slices.Sort(want)
			path := filepath.Join(corpus, "cases", c.Case, filepath.FromSlash(rel))
			if _, err := os.Stat(path); rel == "." && os.IsNotExist(err) {
				// The upstream test ran on its empty tmp_path, which git
				// cannot carry: the same empty directory.
				path = filepath.Join(empty, c.Case)
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Run(c.Case, func(t *testing.T) {
				t.Run("default", func(t *testing.T) {
					checkRefCase(t, []string{"validate", "--json", path}, c.Valid, want, false)
				})
				t.Run("strict", func(t *testing.T) {
					checkRefCase(t, []string{"validate", "--json", "--strict", path}, c.Valid, want, true)
				})
			})
		}
	}
}

// checkRefCase runs one validate command line on a case and checks the
// verdict and the topics of its errors against the reference's (want,
// sorted).
func checkRefCase(t *testing.T, args []string, valid bool, want []string, strict bool) {
	t.Helper()
	out, errOut, code := runCmd(t, args...)
	var got []string
	var res validateResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("exit %d, stdout is not validate's JSON (%v):\n%s\nstderr: %s", code, err, out, errOut)
	} else {
		for _, d := range res.Diagnostics {
			if d.Level != "error" {
				continue
			}
			topic := topicOf(ourTopics, d.Message)
			if topic == "" {
				t.Errorf("error with no topic of the reference's: %q", d.Message)
				continue
			}
			got = append(got, topic)
		}
		slices.Sort(got)
		// Passing a skill that was never read would agree for no reason.
		if read := !slices.Contains(noSkillFile, firstOr(want, "")); read && res.Files != 1 {
			t.Errorf("%d files checked, want 1", res.Files)
		}
		if valid && strict && res.Warnings != 0 {
			t.Errorf("a skill the reference accepts has %d warnings: %+v", res.Warnings, res.Diagnostics)
		}
	}
	wantCode := 0
	if !valid {
		wantCode = 1
	}
	if code != wantCode {
		t.Errorf("exit %d, want %d (reference: valid %v)\nstdout: %s\nstderr: %s", code, wantCode, valid, out, errOut)
	}
	if !slices.Equal(got, want) {
		t.Errorf("problems %q, the reference's %q\nstdout: %s\nstderr: %s", got, want, out, errOut)
	}
}

// firstOr returns s[0], or def when s is empty.
func firstOr(s []string, def string) string {
	if len(s) == 0 {
		return def
	}
	return s[0]
}
