package store_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/internal/unprivtest"
	"github.com/skillgate/skillgate/store"
)

// TestDirETagSeesRestoredMtime (issue 19, G6): the directory store's ETag
// was the mtime and the size, so a same-size rewrite whose mtime was put
// back (utimes) kept its ETag and was never read again. The change time,
// which utimes cannot set, is in the ETag now; so is the inode, which a
// rename over the file changes.
func TestDirETagSeesRestoredMtime(t *testing.T) {
	t.Parallel()
	const key = "skills/a/run.sh"
	d, root := storetest.Dir(t, map[string]string{"skills/a/SKILL.md": "a", key: "echo hi"})
	p := filepath.Join(root, filepath.FromSlash(key))
	ctx := t.Context()
	etagOf := func() string {
		t.Helper()
		objs, err := d.List(ctx, "skills/a/")
		if err != nil || len(objs) != 2 || objs[1].Key != key {
			t.Fatalf("List = %+v, %v", objs, err)
		}
		return objs[1].ETag
	}
	l := catalog.NewLoader(d)
	load := func() string {
		t.Helper()
		objs, _, err := catalog.ListAll(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		loaded, _, err := l.Load(ctx, objs)
		if err != nil || len(loaded) != 1 || len(loaded[0].Input.Files) != 1 {
			t.Fatalf("Load = %+v, %v", loaded, err)
		}
		return string(loaded[0].Input.Files[0].Data)
	}
	if got := load(); got != "echo hi" {
		t.Fatalf("first load read %q", got)
	}

	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	before := etagOf()
	time.Sleep(50 * time.Millisecond) // past the file system's timestamp tick
	if err := os.WriteFile(p, []byte("rm -rf"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, fi.Size()); err != nil { // same size: "rm -rf\x00"
		t.Fatal(err)
	}
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if fi2, err := os.Stat(p); err != nil || fi2.Size() != fi.Size() || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Fatalf("the rewrite changed the size or the mtime: %v, %v", fi2, err)
	}
	if after := etagOf(); after == before {
		t.Errorf("a same-size rewrite with its mtime put back kept the ETag %s", after)
	}
	if got := load(); got != "rm -rf\x00" {
		t.Errorf("the load after the rewrite read %q, want the new bytes", got)
	}

	// A rename over the file with the same size and mtime.
	before = etagOf()
	tmp := p + ".new"
	if err := os.WriteFile(tmp, []byte("rm -rF\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	if after := etagOf(); after == before {
		t.Errorf("a rename over the file with the same size and mtime kept the ETag %s", after)
	}
	if got := load(); got != "rm -rF\x00" {
		t.Errorf("the load after the rename read %q, want the new bytes", got)
	}
}

// TestDirUnreadableInsideSkill (issue 19, G8): a directory or a file that
// cannot be read inside a skill directory failed the whole listing (or
// Load), freezing every skill. Now it is one unread file of its skill (the
// scanner did not read it: the skill is held), and the others load.
func TestDirUnreadableInsideSkill(t *testing.T) {
	if unprivtest.Run(t) {
		return // it ran as nobody: root reads any file
	}
	d, root := storetest.Dir(t, map[string]string{
		"skills/a/SKILL.md":          string(storetest.SkillFile("a", "a")),
		"skills/a/private/notes.txt": "notes",
		"skills/a/run.sh":            "echo a",
		"skills/b/SKILL.md":          string(storetest.SkillFile("b", "b")),
		"skills/b/key.txt":           "key",
		"skills/c/SKILL.md":          string(storetest.SkillFile("c", "c")),
		"skills/e/SKILL.md":          string(storetest.SkillFile("e", "e")),
		"agents/x/skills/d/SKILL.md": string(storetest.SkillFile("d", "d")),
	})
	chmod := func(key string, mode os.FileMode) {
		t.Helper()
		if err := os.Chmod(filepath.Join(root, filepath.FromSlash(key)), mode); err != nil {
			t.Fatal(err)
		}
	}
	chmod("skills/a/private", 0)
	chmod("skills/b/key.txt", 0)
	chmod("skills/e", 0)
	t.Cleanup(func() { chmod("skills/a/private", 0o755); chmod("skills/b/key.txt", 0o644); chmod("skills/e", 0o755) })
	if _, err := os.ReadDir(filepath.Join(root, "skills", "a", "private")); err == nil {
		t.Fatal("the directory is still readable: this test needs a user that file modes bind")
	}
	ctx := t.Context()

	objs, err := d.List(ctx, "skills/")
	if err != nil {
		t.Fatalf("List with an unreadable directory in a skill: %v", err)
	}
	want := []string{"skills/a/SKILL.md", "skills/a/private/", "skills/a/run.sh", "skills/b/SKILL.md", "skills/b/key.txt", "skills/c/SKILL.md", "skills/e/"}
	if got := storetest.Keys(objs); !slices.Equal(got, want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	if !objs[1].Unreadable || !objs[6].Unreadable || objs[0].Unreadable || objs[4].Unreadable {
		t.Errorf("List = %+v, want skills/a/private/ and skills/e/ Unreadable, no other", objs)
	}
	if _, _, err := d.Get(ctx, "skills/b/key.txt", ""); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get of a file the store cannot read = %v, want an error that is not ErrNotFound", err)
	}

	skills, diags, err := catalog.ListAll(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	// A skill directory the store cannot read: no skill, a warning.
	if len(diags) != 1 || diags[0].Location != "skills/e/" || !strings.Contains(diags[0].Message, "cannot be read") {
		t.Errorf("diagnostics = %+v, want one about skills/e/", diags)
	}
	loaded, _, err := catalog.NewLoader(d).Load(ctx, skills)
	if err != nil {
		t.Fatalf("Load with an unreadable file in a skill: %v", err)
	}
	got := map[string][]governance.File{}
	for _, ld := range loaded {
		got[ld.Skill.Key] = ld.Input.Files
	}
	wantFiles := map[string][]governance.File{
		"agents/x/skills/d/SKILL.md": nil,
		"skills/a/SKILL.md": {
			{Path: "private/", Err: "a directory the gateway cannot read"},
			{Path: "run.sh", Data: []byte("echo a")},
		},
		"skills/b/SKILL.md": {{Path: "key.txt", Err: "a file the gateway cannot read", Size: 3, ETag: objs[4].ETag}},
		"skills/c/SKILL.md": nil,
	}
	if len(got) != len(wantFiles) {
		t.Errorf("loaded %d skills, want %d", len(got), len(wantFiles))
	}
	for k, w := range wantFiles {
		if g, ok := got[k]; !ok || !filesEqual(g, w) {
			t.Errorf("%s: files %+v, want %+v", k, g, w)
		}
	}

	// The store's own structure unreadable is an outage, not deleted skills.
	chmod("skills", 0)
	t.Cleanup(func() { chmod("skills", 0o755) })
	if _, err := d.List(ctx, "skills/"); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("List with skills/ unreadable = %v, want a permission error", err)
	}
}

func filesEqual(a, b []governance.File) bool {
	return slices.EqualFunc(a, b, func(x, y governance.File) bool {
		return x.Path == y.Path && string(x.Data) == string(y.Data) && x.Err == y.Err && x.Size == y.Size && x.ETag == y.ETag
	})
}
