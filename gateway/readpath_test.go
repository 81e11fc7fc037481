package gateway

import (
	"path"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/skill"
)

// FuzzCheckReadPath: whatever a client sends as ?path=, an accepted path
// names a file inside one skill directory: the key built from it stays
// under skills/{dir}/ (or agents/{id}/skills/{dir}/) after cleaning.
func FuzzCheckReadPath(f *testing.F) {
	for _, s := range []string{
		"skills/x/SKILL.md", "skills/x/a/b.txt", "skills/../agents/o/skills/x/SKILL.md", "/etc/passwd",
		"skills/x/..", "skills/x/./a", "skills\\x\\a", "skills/x//a", "skills/x/a\x00", "skills/%2e%2e/a", "skills/x",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		dir, rest, err := checkReadPath(p)
		if err != nil {
			return
		}
		if skill.ValidateID(dir) != nil || rest == "" {
			t.Fatalf("accepted %q: dir %q rest %q", p, dir, rest)
		}
		for _, key := range []string{skill.GlobalPrefix + dir + "/" + rest, skill.AgentPrefix("a") + dir + "/" + rest} {
			prefix := strings.TrimSuffix(key, rest)
			if cleaned := path.Clean(key); cleaned != key || !strings.HasPrefix(cleaned, prefix) {
				t.Fatalf("accepted %q builds key %q, which cleans to %q outside %q", p, key, cleaned, prefix)
			}
		}
	})
}
