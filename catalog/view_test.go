package catalog_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

func TestClassify(t *testing.T) {
	t.Parallel()
	objs := []store.Object{
		{Key: "skills/b/SKILL.md", Size: 10, ETag: `"b"`},
		{Key: "agents/main/skills/a/SKILL.md", Size: 11, ETag: `"ma"`},
		{Key: "skills/a/SKILL.md", Size: 12, ETag: `"a"`},
		{Key: "skills/a/scripts/run.sh"},                          // a skill's other file
		{Key: "README.md"},                                        // unrelated: ignored
		{Key: "skills/a/examples/x/SKILL.md"},                     // too deep; a file of skills/a
		{Key: "agents/main/skills/a/examples/x/SKILL.md"},         // too deep
		{Key: "agents/main/SKILL.md"},                             // wrong shape
		{Key: "skills/c/skill.md"},                                // wrong case
		{Key: "skills/a..b/SKILL.md"},                             // bad dir
		{Key: "agents/bad\x7fid/skills/a/SKILL.md"},               // bad agent id (DEL)
		{Key: "skills/" + strings.Repeat("d", 129) + "/SKILL.md"}, // dir too long
	}
	skills, diags := catalog.Classify(objs)

	want := []catalog.SkillObject{
		{Ref: skill.Ref{Key: "skills/b/SKILL.md", Dir: "b", Scope: skill.ScopeGlobal}, Size: 10, ETag: `"b"`},
		{Ref: skill.Ref{Key: "agents/main/skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeAgent, Agent: "main"}, Size: 11, ETag: `"ma"`,
			Files: []store.Object{{Key: "agents/main/skills/a/examples/x/SKILL.md"}}},
		{Ref: skill.Ref{Key: "skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeGlobal}, Size: 12, ETag: `"a"`,
			Files: []store.Object{{Key: "skills/a/examples/x/SKILL.md"}, {Key: "skills/a/scripts/run.sh"}}},
	}
	if !reflect.DeepEqual(skills, want) {
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

// TestClassifyFiles checks that each skill gets the other objects of its
// directory, and only those, whatever the input order.
func TestClassifyFiles(t *testing.T) {
	t.Parallel()
	// A listing, sorted by key as List returns it.
	listing := []store.Object{
		{Key: "README.md"},
		{Key: "agents/main/skills/a/.hidden", Size: 1, ETag: `"1"`},
		{Key: "agents/main/skills/a/SKILL.md", Size: 2, ETag: `"2"`},
		{Key: "agents/main/skills/a/ref/deep/notes.md", Size: 3, ETag: `"3"`},
		{Key: "agents/main/skills/ab/SKILL.md", Size: 4, ETag: `"4"`},
		{Key: "agents/main/skills/ab/x.txt", Size: 5, ETag: `"5"`},
		{Key: "agents/main/skills/nodir/readme.md"}, // no SKILL.md: ignored
		{Key: "agents/other/skills/a/z.sh"},         // another agent's a, without SKILL.md: ignored
		{Key: "skills/a-b/SKILL.md", Size: 6, ETag: `"6"`},
		{Key: "skills/a/.x", Size: 7, ETag: `"7"`},
		{Key: "skills/a/SKILL.md", Size: 8, ETag: `"8"`},
		{Key: "skills/a/sub/SKILL.md", Size: 9, ETag: `"9"`}, // too deep: a warning, and a file of a
		{Key: "skills/a/z", Size: 10, ETag: `"10"`},
		{Key: "skills/ab/SKILL.md", Size: 11, ETag: `"11"`},
		{Key: "skills/ab/run.sh", Size: 12, ETag: `"12"`},
		{Key: "skills/lonely/notes.md"}, // no SKILL.md: ignored
		{Key: "skills/p/SKILL.md", Size: 13, ETag: `"13"`},
		{Key: "skills/p/fifo", NotRegular: true},
		{Key: "skills/q/SKILL.md", NotRegular: true}, // not a skill: its files are ignored
		{Key: "skills/q/run.sh", Size: 14, ETag: `"14"`},
		{Key: "skillsx/a/SKILL.md"},
	}
	want := []catalog.SkillObject{
		{Ref: skill.Ref{Key: "agents/main/skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeAgent, Agent: "main"}, Size: 2, ETag: `"2"`,
			Files: []store.Object{listing[1], listing[3]}},
		{Ref: skill.Ref{Key: "agents/main/skills/ab/SKILL.md", Dir: "ab", Scope: skill.ScopeAgent, Agent: "main"}, Size: 4, ETag: `"4"`,
			Files: []store.Object{listing[5]}},
		{Ref: skill.Ref{Key: "skills/a-b/SKILL.md", Dir: "a-b", Scope: skill.ScopeGlobal}, Size: 6, ETag: `"6"`},
		{Ref: skill.Ref{Key: "skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeGlobal}, Size: 8, ETag: `"8"`,
			Files: []store.Object{listing[9], listing[11], listing[12]}},
		{Ref: skill.Ref{Key: "skills/ab/SKILL.md", Dir: "ab", Scope: skill.ScopeGlobal}, Size: 11, ETag: `"11"`,
			Files: []store.Object{listing[14]}},
		{Ref: skill.Ref{Key: "skills/p/SKILL.md", Dir: "p", Scope: skill.ScopeGlobal}, Size: 13, ETag: `"13"`,
			Files: []store.Object{listing[17]}},
	}

	reversed := slices.Clone(listing)
	slices.Reverse(reversed)
	wantReversed := slices.Clone(want)
	slices.Reverse(wantReversed)

	tests := []struct {
		name      string
		objs      []store.Object
		want      []catalog.SkillObject
		wantDiags []string // locations
	}{
		{"sorted", listing, want, []string{"skills/a/sub/SKILL.md", "skills/q/SKILL.md"}},
		// Skills come in input order; each one's Files stay in key order.
		{"reversed", reversed, wantReversed, []string{"skills/q/SKILL.md", "skills/a/sub/SKILL.md"}},
		{"no skill", []store.Object{{Key: "skills/a/run.sh"}, {Key: "agents/x/skills/a/b"}}, nil, nil},
		{"empty", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			skills, diags := catalog.Classify(tt.objs)
			if !reflect.DeepEqual(skills, tt.want) {
				t.Errorf("skills =\n  %+v\nwant\n  %+v", skills, tt.want)
			}
			var locs []string
			for _, d := range diags {
				locs = append(locs, d.Location)
			}
			if !slices.Equal(locs, tt.wantDiags) {
				t.Errorf("diagnostics at %q, want %q", locs, tt.wantDiags)
			}
		})
	}

	// View carries the Files along.
	all, _ := catalog.Classify(listing)
	wantView := []catalog.SkillObject{want[0], want[1], want[2], want[5]} // main's ab shadows the global one
	if view := catalog.View(all, "main"); !reflect.DeepEqual(view, wantView) {
		t.Errorf("View(main) =\n  %+v\nwant\n  %+v", view, wantView)
	}
}

// TestListViewFiles lists a real directory store: each skill of the view
// comes with its directory's other files.
func TestListViewFiles(t *testing.T) {
	t.Parallel()
	d, _ := storetest.Dir(t, map[string]string{
		"agents/main/skills/a/SKILL.md":      string(storetest.SkillFile("a", "local a")),
		"agents/main/skills/a/notes.md":      "n",
		"agents/main/skills/a/scripts/go.sh": "g",
		"skills/a/SKILL.md":                  string(storetest.SkillFile("a", "global a")),
		"skills/a/hidden-by-local.md":        "h",
		"skills/b/SKILL.md":                  string(storetest.SkillFile("b", "global b")),
		"skills/b/ref/SKILL.md":              "deep",
		"skills/bb/run.sh":                   "no SKILL.md",
	})
	view, _, err := catalog.ListView(t.Context(), d, "main")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, o := range view {
		got[o.Key] = storetest.Keys(o.Files)
	}
	want := map[string][]string{
		"agents/main/skills/a/SKILL.md": {"agents/main/skills/a/notes.md", "agents/main/skills/a/scripts/go.sh"},
		"skills/b/SKILL.md":             {"skills/b/ref/SKILL.md"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ListView(main) files = %q, want %q", got, want)
	}
}

// TestClassifyScale classifies a bucket of 10,000 skills with 9 other
// files each, as listed. Files are matched by directory prefix, so this is
// linear: milliseconds (BenchmarkClassify measures it).
func TestClassifyScale(t *testing.T) {
	t.Parallel()
	objs := scaleListing(10000, 9)
	skills, diags := catalog.Classify(objs)
	if len(skills) != 10000 || len(diags) != 0 {
		t.Fatalf("%d skills, %d diagnostics; want 10000, 0", len(skills), len(diags))
	}
	for _, s := range skills {
		dir := strings.TrimSuffix(s.Key, skill.FileName)
		if len(s.Files) != 9 || !strings.HasPrefix(s.Files[0].Key, dir) || !strings.HasPrefix(s.Files[8].Key, dir) {
			t.Fatalf("%s: files %q", s.Key, storetest.Keys(s.Files))
		}
	}
}

func BenchmarkClassify(b *testing.B) {
	objs := scaleListing(10000, 9)
	for b.Loop() {
		catalog.Classify(objs)
	}
}

// scaleListing returns the sorted listing of n skills with files other
// files each, some sorting before their SKILL.md and some after.
func scaleListing(n, files int) []store.Object {
	objs := make([]store.Object, 0, n*(files+1))
	for i := range n {
		dir := fmt.Sprintf("skills/s%05d/", i)
		objs = append(objs, store.Object{Key: dir + skill.FileName, Size: 100, ETag: `"s"`})
		for f := range files {
			name := fmt.Sprintf("%c-file%d", "AZ"[f%2], f) // "A…" sorts before SKILL.md, "Z…" after
			objs = append(objs, store.Object{Key: dir + name, Size: 10, ETag: `"f"`})
		}
	}
	slices.SortFunc(objs, func(a, b store.Object) int { return strings.Compare(a.Key, b.Key) })
	return objs
}

func TestView(t *testing.T) {
	t.Parallel()
	all, _ := catalog.Classify([]store.Object{
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
		if got := storetest.SkillKeys(catalog.View(all, tt.agent)); !slices.Equal(got, tt.want) {
			t.Errorf("View(%s) =\n  %q\nwant\n  %q", tt.agent, got, tt.want)
		}
	}
	if got := catalog.View(nil, "main"); len(got) != 0 {
		t.Errorf("View(nil) = %v", got)
	}
}

// TestViewShadowsByDir checks that an agent-local skill shadows the global
// skill of the same directory even when their frontmatter names differ, and
// does not shadow a global skill of another directory with the same name.
func TestViewShadowsByDir(t *testing.T) {
	t.Parallel()
	d, _ := storetest.Dir(t, map[string]string{
		"skills/gh/SKILL.md":                 string(storetest.SkillFile("github", "global gh")),
		"skills/github/SKILL.md":             string(storetest.SkillFile("github", "global github")),
		"agents/main/skills/gh/SKILL.md":     string(storetest.SkillFile("gh-local", "local")),
		"agents/main/skills/extra/SKILL.md":  string(storetest.SkillFile("github", "local github name")),
		"agents/main/skills/deep/x/SKILL.md": "deep",
	})
	view, diags, err := catalog.ListView(t.Context(), d, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agents/main/skills/extra/SKILL.md", "agents/main/skills/gh/SKILL.md", "skills/github/SKILL.md"}
	if got := storetest.SkillKeys(view); !slices.Equal(got, want) {
		t.Errorf("ListView = %q, want %q", got, want)
	}
	if len(diags) != 1 || diags[0].Location != "agents/main/skills/deep/x/SKILL.md" {
		t.Errorf("diagnostics = %+v, want one about the deep key", diags)
	}
}

func TestListViewRejectsAgentIDs(t *testing.T) {
	t.Parallel()
	d, _ := storetest.Dir(t, map[string]string{"skills/a/SKILL.md": "a"})
	st := &storetest.Counting{Store: d}
	for _, id := range []string{"", "..", "a/b", `a\b`, "a..b", "a\x00", "tab\there", "del\x7f", strings.Repeat("x", 129)} {
		if _, _, err := catalog.ListView(t.Context(), st, id); err == nil || !strings.HasPrefix(err.Error(), "agent id") {
			t.Errorf("ListView(%q) = %v, want an agent id error", id, err)
		}
	}
	if n := st.Lists.Load() + st.Gets.Load(); n != 0 {
		t.Errorf("%d storage requests for invalid agent ids, want none", n)
	}
	if _, _, err := catalog.ListView(t.Context(), st, strings.Repeat("x", 128)); err != nil {
		t.Errorf("ListView(128-byte id): %v", err)
	}
}

func TestListAll(t *testing.T) {
	t.Parallel()
	d, _ := storetest.Dir(t, map[string]string{
		"skills/a/SKILL.md":             "a",
		"agents/x/skills/a/SKILL.md":    "xa",
		"agents/y/skills/b/SKILL.md":    "yb",
		"skills/a/more/deeper/SKILL.md": "deep",
		"notes.txt":                     "",
	})
	all, diags, err := catalog.ListAll(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"agents/x/skills/a/SKILL.md", "agents/y/skills/b/SKILL.md", "skills/a/SKILL.md"}
	if got := storetest.SkillKeys(all); !slices.Equal(got, want) {
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
	if got := catalog.AgentView(local, global, dir); !slices.Equal(got, want) {
		t.Errorf("AgentView = %v, want %v", got, want)
	}
	if got := catalog.AgentView(nil, global, dir); len(got) != 3 || &got[0] != &global[0] {
		t.Errorf("AgentView(no local) = %v, want global itself", got)
	}
	if got := catalog.AgentView(local, nil, dir); !slices.Equal(got, local) {
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
		got, isLocal, ok := catalog.LookupDir(local, global, dir, tt.dir)
		if got != tt.want || isLocal != tt.isLocal || ok != tt.wantFound {
			t.Errorf("LookupDir(%q) = %v, %v, %v; want %v, %v, %v", tt.dir, got, isLocal, ok, tt.want, tt.isLocal, tt.wantFound)
		}
	}
}

// TestSkillDirMatchesLayout holds store.SkillDir, the one shape of a skill
// directory's key prefix (the store cannot import skill), to skill's
// layout, which Classify matches files to their skill by.
func TestSkillDirMatchesLayout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ key, want string }{
		{skill.GlobalKey("a"), skill.GlobalPrefix + "a/"},
		{skill.AgentKey("main", "a"), skill.AgentPrefix("main") + "a/"},
		{skill.GlobalPrefix + "a/scripts/run.sh", skill.GlobalPrefix + "a/"},
		{skill.AgentPrefix("main") + "a/x/y/", skill.AgentPrefix("main") + "a/"},
	} {
		if got, ok := store.SkillDir(tc.key); !ok || got != tc.want {
			t.Errorf("store.SkillDir(%q) = %q, %v; want %q", tc.key, got, ok, tc.want)
		}
	}
	for _, key := range []string{
		skill.GlobalPrefix, skill.GlobalPrefix + "a", skill.AgentPrefix("main"),
		skill.AgentsPrefix + "main/other/a/SKILL.md", "other/a/SKILL.md",
	} {
		if got, ok := store.SkillDir(key); ok {
			t.Errorf("store.SkillDir(%q) = %q: want none, the key is not in a skill directory", key, got)
		}
	}
}
