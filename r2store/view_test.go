package r2store_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/r2store"
	"github.com/skillgate/skillgate/skill"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	objs := []r2store.Object{
		{Key: "skills/b/SKILL.md", Size: 10, ETag: `"b"`},
		{Key: "agents/main/skills/a/SKILL.md", Size: 11, ETag: `"ma"`},
		{Key: "skills/a/SKILL.md", Size: 12, ETag: `"a"`},
		{Key: "skills/a/scripts/run.sh"},                          // a skill's other file: ignored
		{Key: "README.md"},                                        // unrelated: ignored
		{Key: "skills/a/examples/x/SKILL.md"},                     // too deep
		{Key: "agents/main/skills/a/examples/x/SKILL.md"},         // too deep
		{Key: "agents/main/SKILL.md"},                             // wrong shape
		{Key: "skills/c/skill.md"},                                // wrong case
		{Key: "skills/a..b/SKILL.md"},                             // bad dir
		{Key: "agents/bad\x7fid/skills/a/SKILL.md"},               // bad agent id (DEL)
		{Key: "skills/" + strings.Repeat("d", 129) + "/SKILL.md"}, // dir too long
	}
	skills, diags := r2store.Classify(objs)

	want := []r2store.SkillObject{
		{Ref: skill.Ref{Key: "skills/b/SKILL.md", Dir: "b", Scope: skill.ScopeGlobal}, Size: 10, ETag: `"b"`},
		{Ref: skill.Ref{Key: "agents/main/skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeAgent, Agent: "main"}, Size: 11, ETag: `"ma"`},
		{Ref: skill.Ref{Key: "skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeGlobal}, Size: 12, ETag: `"a"`},
	}
	if !slices.Equal(skills, want) {
		t.Errorf("skills =\n  %+v\nwant\n  %+v", skills, want)
	}

	wantDiags := map[string]string{ // location → message substring
		"skills/a/examples/x/SKILL.md":                     "or ignore this if it is an example",
		"agents/main/skills/a/examples/x/SKILL.md":         "move it to skills/{dir}/SKILL.md",
		"agents/main/SKILL.md":                             "not a skill",
		"skills/c/skill.md":                                "rename the file to SKILL.md",
		"skills/a..b/SKILL.md":                             "rename it: agent ids and skill directory names",
		"agents/bad\x7fid/skills/a/SKILL.md":               "agent id",
		"skills/" + strings.Repeat("d", 129) + "/SKILL.md": "more than 128",
	}
	if len(diags) != len(wantDiags) {
		t.Errorf("got %d diagnostics, want %d: %+v", len(diags), len(wantDiags), diags)
	}
	for _, d := range diags {
		sub, ok := wantDiags[d.Location]
		if !ok {
			t.Errorf("unexpected diagnostic %+v", d)
			continue
		}
		if d.Level != skill.LevelWarn || !strings.Contains(d.Message, sub) {
			t.Errorf("diagnostic %+v: want level warn and a message containing %q", d, sub)
		}
	}
}

func TestView(t *testing.T) {
	t.Parallel()
	all, _ := r2store.Classify([]r2store.Object{
		{Key: "skills/zeta/SKILL.md"},
		{Key: "agents/main/skills/tmux/SKILL.md"},
		{Key: "skills/github/SKILL.md"},
		{Key: "agents/other/skills/github/SKILL.md"},
		{Key: "agents/main/skills/alpha/SKILL.md"},
		{Key: "skills/tmux/SKILL.md"},
		{Key: "agents/main-2/skills/zeta/SKILL.md"},
		{Key: "agents/main/skills/github-old/SKILL.md"}, // shadows nothing: by dir, not by prefix
	})
	tests := []struct {
		agent string
		want  []string
	}{
		{"main", []string{
			"agents/main/skills/alpha/SKILL.md",
			"agents/main/skills/github-old/SKILL.md",
			"agents/main/skills/tmux/SKILL.md",
			"skills/github/SKILL.md",
			"skills/zeta/SKILL.md",
		}},
		{"other", []string{
			"agents/other/skills/github/SKILL.md",
			"skills/tmux/SKILL.md",
			"skills/zeta/SKILL.md",
		}},
		{"main-2", []string{
			"agents/main-2/skills/zeta/SKILL.md",
			"skills/github/SKILL.md",
			"skills/tmux/SKILL.md",
		}},
		{"nobody", []string{"skills/github/SKILL.md", "skills/tmux/SKILL.md", "skills/zeta/SKILL.md"}},
	}
	for _, tt := range tests {
		if got := skillKeys(r2store.View(all, tt.agent)); !slices.Equal(got, tt.want) {
			t.Errorf("View(%s) =\n  %q\nwant\n  %q", tt.agent, got, tt.want)
		}
	}
	if got := r2store.View(nil, "main"); len(got) != 0 {
		t.Errorf("View(nil) = %v", got)
	}
}

// TestViewShadowsByDir checks that an agent-local skill shadows the global
// skill of the same directory even when their frontmatter names differ, and
// does not shadow a global skill of another directory with the same name.
func TestViewShadowsByDir(t *testing.T) {
	t.Parallel()
	d, _ := newDir(t, map[string]string{
		"skills/gh/SKILL.md":                 string(skillFile("github", "global gh")),
		"skills/github/SKILL.md":             string(skillFile("github", "global github")),
		"agents/main/skills/gh/SKILL.md":     string(skillFile("gh-local", "local")),
		"agents/main/skills/extra/SKILL.md":  string(skillFile("github", "local github name")),
		"agents/main/skills/deep/x/SKILL.md": "deep",
	})
	view, diags, err := r2store.ListView(t.Context(), d, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agents/main/skills/extra/SKILL.md", "agents/main/skills/gh/SKILL.md", "skills/github/SKILL.md"}
	if got := skillKeys(view); !slices.Equal(got, want) {
		t.Errorf("ListView = %q, want %q", got, want)
	}
	if len(diags) != 1 || diags[0].Location != "agents/main/skills/deep/x/SKILL.md" {
		t.Errorf("diagnostics = %+v, want one about the deep key", diags)
	}
}

func TestListViewRejectsAgentIDs(t *testing.T) {
	t.Parallel()
	d, _ := newDir(t, map[string]string{"skills/a/SKILL.md": "a"})
	st := &countingStore{Store: d}
	for _, id := range []string{"", "..", "a/b", `a\b`, "a..b", "a\x00", "tab\there", "del\x7f", strings.Repeat("x", 129)} {
		if _, _, err := r2store.ListView(t.Context(), st, id); err == nil || !strings.HasPrefix(err.Error(), "agent id") {
			t.Errorf("ListView(%q) = %v, want an agent id error", id, err)
		}
	}
	if n := st.lists.Load() + st.gets.Load(); n != 0 {
		t.Errorf("%d storage requests for invalid agent ids, want none", n)
	}
	if _, _, err := r2store.ListView(t.Context(), st, strings.Repeat("x", 128)); err != nil {
		t.Errorf("ListView(128-byte id): %v", err)
	}
}

func TestListAll(t *testing.T) {
	t.Parallel()
	d, _ := newDir(t, map[string]string{
		"skills/a/SKILL.md":             "a",
		"agents/x/skills/a/SKILL.md":    "xa",
		"agents/y/skills/b/SKILL.md":    "yb",
		"skills/a/more/deeper/SKILL.md": "deep",
		"notes.txt":                     "",
	})
	all, diags, err := r2store.ListAll(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agents/x/skills/a/SKILL.md", "agents/y/skills/b/SKILL.md", "skills/a/SKILL.md"}
	if got := skillKeys(all); !slices.Equal(got, want) {
		t.Errorf("ListAll = %q, want %q", got, want)
	}
	if len(diags) != 1 {
		t.Errorf("diagnostics = %+v, want one", diags)
	}
}

// TestAgentView checks the one definition of the agent view on plain
// values: local first in the order given, then the global items whose
// directory no local item has; an empty local list gives global itself.
func TestAgentView(t *testing.T) {
	t.Parallel()
	type item struct{ dir, from string }
	dir := func(it item) string { return it.dir }
	local := []item{{"b", "local"}, {"z", "local"}}
	global := []item{{"a", "global"}, {"b", "global"}, {"c", "global"}}
	want := []item{{"b", "local"}, {"z", "local"}, {"a", "global"}, {"c", "global"}}
	if got := r2store.AgentView(local, global, dir); !slices.Equal(got, want) {
		t.Errorf("AgentView = %v, want %v", got, want)
	}
	if got := r2store.AgentView(nil, global, dir); len(got) != 3 || &got[0] != &global[0] {
		t.Errorf("AgentView(no local) = %v, want global itself", got)
	}
	if got := r2store.AgentView(local, nil, dir); !slices.Equal(got, local) {
		t.Errorf("AgentView(no global) = %v, want %v", got, local)
	}

	for _, tt := range []struct {
		dir       string
		want      item
		isLocal   bool
		wantFound bool
	}{
		{"b", item{"b", "local"}, true, true},
		{"z", item{"z", "local"}, true, true},
		{"a", item{"a", "global"}, false, true},
		{"nope", item{}, false, false},
	} {
		got, isLocal, ok := r2store.LookupDir(local, global, dir, tt.dir)
		if got != tt.want || isLocal != tt.isLocal || ok != tt.wantFound {
			t.Errorf("LookupDir(%q) = %v, %v, %v; want %v, %v, %v", tt.dir, got, isLocal, ok, tt.want, tt.isLocal, tt.wantFound)
		}
	}
}
