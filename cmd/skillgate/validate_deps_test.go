package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
)

// TestValidateDependenciesAndVersions: in a directory of skills, a name in
// requires.skills or requires.anySkills that no skill there has and a
// cycle of requires.skills are warnings; so is a version a constraint
// cannot read, even in a single skill. A single skill's dependencies are
// not checked: validate cannot see the skills it names.
func TestValidateDependenciesAndVersions(t *testing.T) {
	dir := t.TempDir()
	mk := func(rel, content string) string { return testkit.WriteFile(t, dir, rel, content) }
	md := func(name, extra string) string {
		return "---\nname: " + name + "\ndescription: The " + name + " skill.\n" + extra + "---\n\n# " + name + "\n"
	}
	// A store: agent-local skills see the global ones they do not shadow.
	a := mk("store/skills/a/SKILL.md", md("a", `metadata: {"gsv": {"requires": {"skills": ["b", "nope"], "anySkills": ["gone", "c"]}}}`+"\n"))
	b := mk("store/skills/b/SKILL.md", md("b", `metadata: {"gsv": {"requires": {"skills": ["a"]}}}`+"\n"))
	c := mk("store/skills/c/SKILL.md", md("c", "version: latest\n"))
	mine := mk("store/agents/x/skills/mine/SKILL.md", md("mine", `metadata: {"gsv": {"version": "v1.2", "requires": {"skills": ["c", "d"]}}}`+"\n"))

	out, _, code := runCmd(t, "validate", filepath.Join(dir, "store"))
	if code != 0 {
		t.Errorf("exit %d, want 0 (warnings only)", code)
	}
	for _, want := range []string{
		c + `: warn: version "latest" is not a semantic version such as 1.2.0 (a v prefix and a missing minor or patch number are fine); a skills.entries version constraint never matches it`,
		a + `: warn: requires.skills: no skill here is named "nope" (by name or directory); the skill is not offered without it`,
		a + `: warn: requires.anySkills: no skill here is named "gone" (by name or directory); it never counts as offered`,
		a + `: warn: requires.skills: dependency cycle a -> b -> a; no skill on it is ever offered — remove one of the names`,
		b + `: warn: requires.skills: dependency cycle a -> b -> a; no skill on it is ever offered — remove one of the names`,
		mine + `: warn: requires.skills: no skill here is named "d" (by name or directory); the skill is not offered without it`,
		"4 files checked: 0 errors, 6 warnings",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("validate output lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "dependency cycle") != 2 {
		t.Errorf("a cycle reported once per skill on it, in whichever views:\n%s", out)
	}
	if _, _, code := runCmd(t, "validate", "--strict", filepath.Join(dir, "store")); code != 1 {
		t.Errorf("--strict: exit %d, want 1", code)
	}

	// One skill alone: its dependencies are not checked; its version is.
	out, _, code = runCmd(t, "validate", a)
	if code != 0 || strings.Contains(out, "requires.skills") {
		t.Errorf("one skill: exit %d\n%s", code, out)
	}
	if out, _, _ = runCmd(t, "validate", c); !strings.Contains(out, `version "latest" is not a semantic version`) {
		t.Errorf("one skill's version:\n%s", out)
	}
	if out, _, _ = runCmd(t, "validate", mine); strings.Contains(out, "version") {
		t.Errorf("v1.2 is a version:\n%s", out)
	}
}
