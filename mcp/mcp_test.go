package mcp

import "testing"

func TestResourceURI(t *testing.T) {
	for _, c := range []struct{ agent, path, uri string }{
		{"main", "skills/github/SKILL.md", "skill://main/skills/github/SKILL.md"},
		{"team a", "skills/my skill/SKILL.md", "skill://team%20a/skills/my%20skill/SKILL.md"},
		{"a?b#c", "skills/x%y/SKILL.md", "skill://a%3Fb%23c/skills/x%25y/SKILL.md"},
	} {
		if got := ResourceURI(c.agent, c.path); got != c.uri {
			t.Errorf("ResourceURI(%q, %q) = %q, want %q", c.agent, c.path, got, c.uri)
		}
		agent, p, err := ParseResourceURI(c.uri)
		if err != nil || agent != c.agent || p != c.path {
			t.Errorf("ParseResourceURI(%q) = %q, %q, %v", c.uri, agent, p, err)
		}
	}
	for _, bad := range []string{"file:///etc/passwd", "skill://main", "skill:///skills/x/SKILL.md", "skill://main/", "skill://%zz/skills/x/SKILL.md"} {
		if _, _, err := ParseResourceURI(bad); err == nil {
			t.Errorf("ParseResourceURI(%q): no error", bad)
		}
	}
}

func TestNotAvailable(t *testing.T) {
	if got := NotAvailable("github", "main"); got != "skill github is not available to agent main" {
		t.Errorf("NotAvailable = %q", got)
	}
}
