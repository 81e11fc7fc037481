package gateway

import (
	"slices"
	"testing"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// TestSnapshotViewIsTheStoreView: the gateway's snapshot and
// catalog.ListView (what the offline eval reads) give each agent the same
// view, key for key, since both are catalog.AgentView.
func TestSnapshotViewIsTheStoreView(t *testing.T) {
	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		"skills/gh/SKILL.md":                   skillWithBin("github", "gh"),
		"skills/tmux/SKILL.md":                 skillWithBin("tmux", "tmux"),
		"skills/zeta/SKILL.md":                 skillWithBin("zeta", "zeta"),
		"agents/main/skills/gh/SKILL.md":       skillWithBin("gh-local", "gh"),
		"agents/main/skills/alpha/SKILL.md":    skillWithBin("github", "alpha"), // a global skill's name, another dir
		"agents/other/skills/tmux/SKILL.md":    skillWithBin("tmux", "tmux"),
		"agents/main-2/skills/zeta-2/SKILL.md": skillWithBin("zeta", "zeta"),
	})
	st, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	snap, _, err := loadSnapshot(t.Context(), st, catalog.NewLoader(st), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"main":   {"agents/main/skills/alpha/SKILL.md", "agents/main/skills/gh/SKILL.md", "skills/tmux/SKILL.md", "skills/zeta/SKILL.md"},
		"other":  {"agents/other/skills/tmux/SKILL.md", "skills/gh/SKILL.md", "skills/zeta/SKILL.md"},
		"main-2": {"agents/main-2/skills/zeta-2/SKILL.md", "skills/gh/SKILL.md", "skills/tmux/SKILL.md", "skills/zeta/SKILL.md"},
		"nobody": {"skills/gh/SKILL.md", "skills/tmux/SKILL.md", "skills/zeta/SKILL.md"},
	}
	for agent, keys := range want {
		var got []string
		for _, sk := range snap.view(agent) {
			got = append(got, sk.Key)
		}
		objs, _, err := catalog.ListView(t.Context(), st, agent)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, o := range objs {
			listed = append(listed, o.Key)
		}
		if !slices.Equal(got, keys) || !slices.Equal(listed, keys) {
			t.Errorf("view of %s:\n  snapshot %q\n  ListView %q\nwant %q", agent, got, listed, keys)
		}
	}
	for _, tt := range []struct {
		agent, dir string
		scope      skill.Scope
		ok         bool
	}{
		{"main", "gh", skill.ScopeAgent, true},
		{"main", "tmux", skill.ScopeGlobal, true},
		{"other", "gh", skill.ScopeGlobal, true},
		{"main", "zeta-2", "", false},
	} {
		sk, ok := snap.findDir(tt.agent, tt.dir)
		var scope skill.Scope
		if ok {
			scope = sk.Scope
		}
		if scope != tt.scope || ok != tt.ok {
			t.Errorf("findDir(%s, %s) = %q, %v; want %q, %v", tt.agent, tt.dir, scope, ok, tt.scope, tt.ok)
		}
	}
}
