package catalog_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// snapshot lists the whole store and loads every skill, as the gateway does.
func snapshot(t *testing.T, st store.Store, l *catalog.Loader) ([]catalog.Loaded, []skill.Diagnostic) {
	t.Helper()
	objs, diags, err := catalog.ListAll(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	skills, more, err := l.Load(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	return skills, append(diags, more...)
}

// names lists the loaded skills as key=name.
func names(loaded []catalog.Loaded) string {
	var b strings.Builder
	for i, l := range loaded {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(l.Skill.Key + "=" + l.Skill.Name)
	}
	return b.String()
}

func TestLoaderDir(t *testing.T) {
	t.Parallel()
	d, root := storetest.Dir(t, map[string]string{
		"agents/main/skills/b/SKILL.md": string(storetest.SkillFile("bee", "local b")),
		"skills/a/SKILL.md":             string(storetest.SkillFile("ay", "global a")),
		"skills/b/SKILL.md":             string(storetest.SkillFile("bee-global", "global b")),
		"skills/big/SKILL.md":           "---\nname: big\n---\n" + strings.Repeat("x", store.MaxFileSize),
	})
	st := &storetest.Counting{Store: d}
	l := catalog.NewLoader(st)

	skills, diags := snapshot(t, st, l)
	const want = "agents/main/skills/b/SKILL.md=bee skills/a/SKILL.md=ay skills/b/SKILL.md=bee-global"
	if got := names(skills); got != want {
		t.Errorf("first load = %s, want %s", got, want)
	}
	if len(diags) != 1 || diags[0].Level != skill.LevelError || diags[0].Location != "skills/big/SKILL.md" ||
		!strings.Contains(diags[0].Message, "over the 256 KiB limit; it is not loaded") {
		t.Errorf("diagnostics = %+v, want one error about skills/big/SKILL.md", diags)
	}
	if n := st.Gets.Load(); n != 3 {
		t.Errorf("first load made %d Gets, want 3 (none for the oversize file)", n)
	}

	// Unchanged: no Get at all, the same parsed skills.
	again, _ := snapshot(t, st, l)
	if n := st.Gets.Load(); n != 3 {
		t.Errorf("an unchanged re-load made %d more Gets, want 0", n-3)
	}
	if len(again) != 3 || again[0].Skill != skills[0].Skill {
		t.Errorf("an unchanged re-load did not reuse the parsed skills")
	}

	// A changed file is downloaded again; a deleted one disappears.
	p := filepath.Join(root, "skills", "a", "SKILL.md")
	if err := os.WriteFile(p, storetest.SkillFile("ay-2", "changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(root, "skills", "b", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	skills, _ = snapshot(t, st, l)
	if got, want := names(skills), "agents/main/skills/b/SKILL.md=bee skills/a/SKILL.md=ay-2"; got != want {
		t.Errorf("after a change = %s, want %s", got, want)
	}
	if n := st.Gets.Load(); n != 4 {
		t.Errorf("after one change: %d Gets in all, want 4", n)
	}
	stats := l.Stats()
	if stats.Gets != 4 || stats.Downloads != 4 || stats.CacheHits != 3+1 || stats.NotModified != 0 {
		t.Errorf("stats = %+v", stats)
	}
}

func TestLoaderConditionalAndDeleted(t *testing.T) {
	t.Parallel()
	d, root := storetest.Dir(t, map[string]string{
		"skills/a/SKILL.md": string(storetest.SkillFile("ay", "a")),
		"skills/b/SKILL.md": string(storetest.SkillFile("bee", "b")),
	})
	st := &storetest.Counting{Store: d}
	l := catalog.NewLoader(st)
	objs, _, err := catalog.ListAll(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Load(t.Context(), objs); err != nil {
		t.Fatal(err)
	}

	// Without a listed ETag the Loader asks conditionally: not modified.
	noETag := append([]catalog.SkillObject(nil), objs...)
	for i := range noETag {
		noETag[i].ETag = ""
	}
	skills, diags, err := l.Load(t.Context(), noETag)
	if err != nil || len(skills) != 2 || len(diags) != 0 {
		t.Fatalf("Load without ETags = %d skills, %+v, %v", len(skills), diags, err)
	}
	if s := l.Stats(); s.NotModified != 2 || s.Downloads != 2 {
		t.Errorf("stats = %+v, want 2 not-modified answers and 2 downloads", s)
	}

	// A key deleted between the listing and the Get is skipped with an
	// info diagnostic, and leaves the cache.
	if err := os.Remove(filepath.Join(root, "skills", "b", "SKILL.md")); err != nil {
		t.Fatal(err)
	}
	stale := append([]catalog.SkillObject(nil), objs...)
	stale[1].ETag = `"changed"`
	skills, diags, err = l.Load(t.Context(), stale)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(skills); got != "skills/a/SKILL.md=ay" {
		t.Errorf("skills = %s", got)
	}
	if len(diags) != 1 || diags[0].Level != skill.LevelInfo || diags[0].Location != "skills/b/SKILL.md" {
		t.Errorf("diagnostics = %+v, want one info about skills/b/SKILL.md", diags)
	}
}

func TestLoaderStorageError(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	root := filepath.Join(parent, "bucket")
	testkit.WriteFiles(t, root, map[string]string{"skills/a/SKILL.md": string(storetest.SkillFile("ay", "a"))})
	d, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	l := catalog.NewLoader(d)
	objs, _, err := catalog.ListAll(t.Context(), d)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Load(t.Context(), objs); err != nil {
		t.Fatal(err)
	}

	// The store's directory disappears: an outage, not a deleted skill.
	if err := os.Rename(root, root+".gone"); err != nil {
		t.Fatal(err)
	}
	changed := append([]catalog.SkillObject(nil), objs...)
	changed[0].ETag = `"changed"`
	if skills, _, err := l.Load(t.Context(), changed); err == nil {
		t.Fatalf("Load during an outage = %d skills, no error", len(skills))
	}
	if err := os.Rename(root+".gone", root); err != nil {
		t.Fatal(err)
	}
	// The cache survived the failed Load: the unchanged listing costs nothing.
	before := l.Stats().Gets
	if skills, _, err := l.Load(t.Context(), objs); err != nil || len(skills) != 1 {
		t.Fatalf("Load after the outage = %d skills, %v", len(skills), err)
	}
	if n := l.Stats().Gets - before; n != 0 {
		t.Errorf("after the outage the unchanged listing made %d Gets, want 0", n)
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := l.Load(ctx, changed); err == nil {
		t.Error("Load with a canceled context: no error")
	}
}

func TestLoaderConcurrent(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for _, dir := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		files["skills/"+dir+"/SKILL.md"] = string(storetest.SkillFile(dir, dir))
	}
	d, _ := storetest.Dir(t, files)
	st := &storetest.Counting{Store: d}
	l := catalog.NewLoader(st)
	objs, _, err := catalog.ListAll(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			skills, _, err := l.Load(t.Context(), objs)
			if err != nil || len(skills) != len(objs) {
				t.Errorf("Load = %d skills, %v", len(skills), err)
			}
		})
	}
	wg.Wait()
	if n := st.Gets.Load(); n != int64(len(objs)) {
		t.Errorf("8 concurrent Loads made %d Gets, want %d (each file once)", n, len(objs))
	}
}
