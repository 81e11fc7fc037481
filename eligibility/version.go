package eligibility

import (
	"github.com/Masterminds/semver/v3"
)

// ParseVersion reads a skill's version (skill.Skill.Version) as semver,
// the way a skills.entries version constraint compares it: a "v" prefix
// and missing minor or patch numbers are accepted ("v1.10" is 1.10.0).
func ParseVersion(v string) (*semver.Version, error) {
	return semver.NewVersion(v)
}

// Satisfies reports whether the version v satisfies the constraint c:
// false when v is "" or does not parse.
func Satisfies(v string, c *semver.Constraints) bool {
	if v == "" {
		return false
	}
	sv, err := ParseVersion(v)
	return err == nil && c.Check(sv)
}
