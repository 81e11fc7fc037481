package catalog_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// touch gives the file of key under root a new modification time, so that
// its directory-store ETag changes even when its size does not.
func touch(t *testing.T, root, key string, at time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(root, filepath.FromSlash(key)), at, at); err != nil {
		t.Fatal(err)
	}
}

// inputs maps each loaded skill's key to its Input, without the parsed
// skill it carries (checked once, in TestLoaderFiles).
func inputs(loaded []catalog.Loaded) map[string]governance.Input {
	m := map[string]governance.Input{}
	for _, l := range loaded {
		in := l.Input
		in.Skill, in.Lines = nil, skill.TextLines{}
		m[l.Skill.Key] = in
	}
	return m
}

// TestLoaderFiles loads skill directories from a real directory store: the
// other files come with exact paths and bytes, through the ETag cache.
func TestLoaderFiles(t *testing.T) {
	t.Parallel()
	files := map[string]string{
		"skills/a/SKILL.md":                string(storetest.SkillFile("ay", "a")),
		"skills/a/.x":                      "dot",
		"skills/a/scripts/run.sh":          "#!/bin/sh\necho run\n",
		"skills/a/sub/SKILL.md":            "deeper",
		"skills/a/z":                       "",
		"skills/ab/SKILL.md":               string(storetest.SkillFile("ab", "look-alike prefix")),
		"agents/main/skills/b/SKILL.md":    string(storetest.SkillFile("bee", "b")),
		"agents/main/skills/b/notes.md":    "notes",
		"skills/nodir/orphan.txt":          "ignored",
		"agents/main/skills/c/no-skill.md": "ignored",
	}
	d, root := storetest.Dir(t, files)
	st := &storetest.Counting{Store: d}
	l := catalog.NewLoader(st)

	want := map[string]governance.Input{
		"agents/main/skills/b/SKILL.md": {SkillMD: []byte(files["agents/main/skills/b/SKILL.md"]), Files: []governance.File{
			{Path: "notes.md", Data: []byte("notes")},
		}, MaxFileBytes: store.MaxFileSize},
		"skills/a/SKILL.md": {SkillMD: []byte(files["skills/a/SKILL.md"]), Files: []governance.File{
			{Path: ".x", Data: []byte("dot")},
			{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\necho run\n")},
			{Path: "sub/SKILL.md", Data: []byte("deeper")},
			{Path: "z", Data: []byte{}},
		}, MaxFileBytes: store.MaxFileSize},
		"skills/ab/SKILL.md": {SkillMD: []byte(files["skills/ab/SKILL.md"]), MaxFileBytes: store.MaxFileSize},
	}
	loaded, diags := snapshot(t, st, l)
	if got := inputs(loaded); !reflect.DeepEqual(got, want) {
		t.Errorf("first load inputs =\n  %+v\nwant\n  %+v", got, want)
	}
	// Each Input carries the skill as parsed, for the scanner: SKILL.md is
	// parsed once.
	for _, ld := range loaded {
		if sk, at := skill.ParseLines(ld.Skill.Ref, ld.Input.SkillMD); ld.Input.Skill != ld.Skill || !reflect.DeepEqual(sk, ld.Skill) || ld.Input.Lines != at {
			t.Errorf("%s: Input.Skill %p (Loaded.Skill %p), Lines %+v, want the loaded skill and %+v", ld.Skill.Key, ld.Input.Skill, ld.Skill, ld.Input.Lines, at)
		}
	}
	if len(diags) != 1 || diags[0].Location != "skills/a/sub/SKILL.md" {
		t.Errorf("diagnostics = %+v, want one about the deeper SKILL.md", diags)
	}
	if n, s := st.Gets.Load(), l.Stats(); n != 3+5 || s != (catalog.LoaderStats{Gets: 8, Downloads: 8}) {
		t.Errorf("first load: %d Gets, stats %+v; want 8 downloads (3 SKILL.md, 5 files)", n, s)
	}

	// Unchanged: no Get, the same Input, its bytes shared with the cache.
	again, _ := snapshot(t, st, l)
	if n := st.Gets.Load(); n != 8 {
		t.Errorf("an unchanged re-load made %d Gets, want 0", n-8)
	}
	if got := inputs(again); !reflect.DeepEqual(got, inputs(loaded)) {
		t.Errorf("an unchanged re-load gave other inputs:\n  %+v\nwant\n  %+v", got, inputs(loaded))
	}
	if a, b := inputs(again)["skills/a/SKILL.md"], inputs(loaded)["skills/a/SKILL.md"]; &a.SkillMD[0] != &b.SkillMD[0] || &a.Files[1].Data[0] != &b.Files[1].Data[0] {
		t.Error("an unchanged re-load copied the bytes instead of reusing the cached ones")
	}
	if s := l.Stats(); s.CacheHits != 8 {
		t.Errorf("stats %+v, want 8 cache hits", s)
	}

	// Without listed ETags every object is asked for conditionally.
	objs, _, err := catalog.ListAll(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		objs[i].ETag = ""
		for j := range objs[i].Files {
			objs[i].Files[j].ETag = ""
		}
	}
	noETag, _, err := l.Load(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	if got := inputs(noETag); !reflect.DeepEqual(got, want) {
		t.Errorf("inputs without ETags =\n  %+v\nwant\n  %+v", got, want)
	}
	if s := l.Stats(); s != (catalog.LoaderStats{Gets: 16, NotModified: 8, Downloads: 8, CacheHits: 8}) {
		t.Errorf("stats %+v, want 8 more Gets, all not modified", s)
	}

	// One changed file is fetched again, and only it.
	future := time.Now().Add(time.Hour)
	testkit.WriteFiles(t, root, map[string]string{"skills/a/scripts/run.sh": "#!/bin/sh\necho changed\n"})
	touch(t, root, "skills/a/scripts/run.sh", future)
	before := st.Gets.Load()
	changed, _ := snapshot(t, st, l)
	if n := st.Gets.Load() - before; n != 1 {
		t.Errorf("one changed file: %d Gets, want 1", n)
	}
	want["skills/a/SKILL.md"].Files[1].Data = []byte("#!/bin/sh\necho changed\n")
	if got := inputs(changed); !reflect.DeepEqual(got, want) {
		t.Errorf("after a change inputs =\n  %+v\nwant\n  %+v", got, want)
	}

	// A deleted file is left out, and leaves the cache: put back with the
	// same ETag (size and time), it is read again.
	p := filepath.Join(root, "skills", "a", ".x")
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	before = st.Gets.Load()
	deleted, _ := snapshot(t, st, l)
	if n := st.Gets.Load() - before; n != 0 {
		t.Errorf("a deleted file: %d Gets, want 0", n)
	}
	a := want["skills/a/SKILL.md"]
	a.Files = a.Files[1:]
	want["skills/a/SKILL.md"] = a
	if got := inputs(deleted); !reflect.DeepEqual(got, want) {
		t.Errorf("after a deletion inputs =\n  %+v\nwant\n  %+v", got, want)
	}
	testkit.WriteFiles(t, root, map[string]string{"skills/a/.x": "dot"})
	touch(t, root, "skills/a/.x", fi.ModTime())
	before = st.Gets.Load()
	snapshot(t, st, l)
	if n := st.Gets.Load() - before; n != 1 {
		t.Errorf("a file put back after its deletion: %d Gets, want 1 (the cache dropped it)", n)
	}
}

// TestLoaderFileCaps checks the governance.Budget caps on a skill
// directory's files: which are read, which come back with Err, that files
// refused by their listing cost no request, and that a file read to learn
// what it is, then refused, is not read again while unchanged.
func TestLoaderFileCaps(t *testing.T) {
	t.Parallel()
	const kib = 1 << 10
	many := map[string]string{}
	var manyWant []governance.File
	for i := range governance.MaxFiles + 1 {
		name := fmt.Sprintf("f%03d.txt", i)
		many["skills/s/"+name] = name
		if i < governance.MaxFiles {
			manyWant = append(manyWant, governance.File{Path: name, Data: []byte(name)})
		}
	}
	manyWant = append(manyWant, governance.File{Path: fmt.Sprintf("f%03d.txt", governance.MaxFiles), Size: 8,
		Err: "over the 256-file limit of a skill directory: this and 0 more files are not read"})

	// Files of 250 KiB of text: MaxSkillBytes holds n of them, then two
	// more do not fit (they are read: were they media, they would), and a
	// small one after them still does.
	quarter := strings.Repeat("q", 250*kib)
	n := governance.MaxSkillBytes / (250 * kib)
	over := map[string]string{}
	var overWant []governance.File
	for i := range n + 2 {
		name := fmt.Sprintf("%02d", i)
		over["skills/s/"+name] = quarter
		if i < n {
			overWant = append(overWant, governance.File{Path: name, Data: []byte(quarter)})
		} else {
			overWant = append(overWant, governance.File{Path: name, Err: "over the 2 MiB limit of a skill directory", Size: 250 * kib})
		}
	}
	over["skills/s/zz"] = "small"
	overWant = append(overWant, governance.File{Path: "zz", Data: []byte("small")})
	// The same 2000 KiB of text, then fonts or images past it (kept: their
	// first 8 KiB count), an executable (refused: it counts in full) and
	// a small text file (kept).
	media := map[string]string{}
	var mediaWant []governance.File
	for i := range n {
		name := fmt.Sprintf("%02d", i)
		media["skills/s/"+name] = quarter
		mediaWant = append(mediaWant, governance.File{Path: name, Data: []byte(quarter)})
	}
	png := "\x89PNG\r\n\x1a\n" + strings.Repeat("\x00", 250*kib-8)
	elf := "\x7fELF\x02\x01\x01" + strings.Repeat("\x00", 250*kib-7)
	media["skills/s/p1.png"], media["skills/s/p2.png"], media["skills/s/x.bin"], media["skills/s/zz"] = png, png, elf, "small"
	mediaWant = append(mediaWant, governance.File{Path: "p1.png", Data: []byte(png)}, governance.File{Path: "p2.png", Data: []byte(png)},
		governance.File{Path: "x.bin", Err: "over the 2 MiB limit of a skill directory", Size: 250 * kib}, governance.File{Path: "zz", Data: []byte("small")})
	tests := []struct {
		name     string
		files    map[string]string // under skills/s/, besides SKILL.md
		want     []governance.File
		wantGets int64
	}{
		{
			name:     "one file past the count",
			files:    many,
			want:     manyWant,
			wantGets: 1 + governance.MaxFiles,
		},
		{
			name: "a file over 256 KiB",
			files: map[string]string{
				"skills/s/big.bin": strings.Repeat("b", 300*kib),
				"skills/s/ok.txt":  "ok",
			},
			want: []governance.File{
				{Path: "big.bin", Err: "307200 bytes, over the 256 KiB file limit", Size: 300 * kib},
				{Path: "ok.txt", Data: []byte("ok")},
			},
			wantGets: 2,
		},
		{
			name:     "over the bytes of a skill in all",
			files:    over,
			want:     overWant,
			wantGets: int64(n + 4), // SKILL.md, the n that fit, the two read and refused, and the small one
		},
		{
			name:     "media past the bytes of a skill",
			files:    media,
			want:     mediaWant,
			wantGets: int64(n + 5), // SKILL.md and every file: each is read to learn what it is
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.files["skills/s/SKILL.md"] = string(storetest.SkillFile("s", "s"))
			d, _ := storetest.Dir(t, tt.files)
			st := &storetest.Counting{Store: d}
			l := catalog.NewLoader(st)
			loaded, diags := snapshot(t, st, l)
			if len(loaded) != 1 || len(diags) != 0 {
				t.Fatalf("loaded %d skills, diagnostics %+v; want 1, none", len(loaded), diags)
			}
			// A file not read keeps its listed size and ETag (the digest
			// covers them); the ETags are the store's own.
			got := slices.Clone(loaded[0].Input.Files)
			for i := range got {
				if got[i].Err != "" && got[i].ETag == "" {
					t.Errorf("%s, not read, has no ETag", got[i].Path)
				}
				got[i].ETag = ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("files =\n  %+v\nwant\n  %+v", got, tt.want)
			}
			if n := st.Gets.Load(); n != tt.wantGets {
				t.Errorf("%d Gets, want %d", n, tt.wantGets)
			}
			// Unchanged, no Get: refused files are not read again.
			again, _ := snapshot(t, st, l)
			if n := st.Gets.Load(); n != tt.wantGets || !reflect.DeepEqual(again[0].Input, loaded[0].Input) {
				t.Errorf("unchanged re-load: %d more Gets, same input %v; want 0, true", n-tt.wantGets, reflect.DeepEqual(again[0].Input, loaded[0].Input))
			}
		})
	}
}

// TestLoaderFilesUnloadedSkill checks that the files of a skill whose
// SKILL.md is not loaded are not read, and that a file deleted between the
// listing and its Get is left out.
func TestLoaderFilesUnloadedSkill(t *testing.T) {
	t.Parallel()
	d, root := storetest.Dir(t, map[string]string{
		"skills/big/SKILL.md":  "---\nname: big\n---\n" + strings.Repeat("x", store.MaxFileSize),
		"skills/big/run.sh":    "big's file",
		"skills/gone/SKILL.md": string(storetest.SkillFile("gone", "deleted after listing")),
		"skills/gone/run.sh":   "gone's file",
		"skills/ok/SKILL.md":   string(storetest.SkillFile("ok", "ok")),
		"skills/ok/a.txt":      "a",
		"skills/ok/b.txt":      "b",
	})
	st := &storetest.Counting{Store: d}
	objs, _, err := catalog.ListAll(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"skills/gone/SKILL.md", "skills/ok/a.txt"} {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(key))); err != nil {
			t.Fatal(err)
		}
	}
	loaded, diags, err := catalog.NewLoader(st).Load(t.Context(), objs)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]governance.Input{
		"skills/ok/SKILL.md": {SkillMD: storetest.SkillFile("ok", "ok"), Files: []governance.File{{Path: "b.txt", Data: []byte("b")}}, MaxFileBytes: store.MaxFileSize},
	}
	if got := inputs(loaded); !reflect.DeepEqual(got, want) {
		t.Errorf("inputs =\n  %+v\nwant\n  %+v", got, want)
	}
	var locs []string
	for _, dg := range diags {
		locs = append(locs, string(dg.Level)+" "+dg.Location)
	}
	if w := []string{"error skills/big/SKILL.md", "info skills/gone/SKILL.md"}; !reflect.DeepEqual(locs, w) {
		t.Errorf("diagnostics %q, want %q", locs, w)
	}
	// gone/SKILL.md, ok/SKILL.md, ok/a.txt (deleted), ok/b.txt: nothing of
	// big, nothing of gone's files.
	if n := st.Gets.Load(); n != 4 {
		t.Errorf("%d Gets, want 4", n)
	}
}

// TestLoaderFileStorageError checks that a storage error reading a file
// fails the whole Load, as one reading a SKILL.md does, and leaves the
// cache as it was.
func TestLoaderFileStorageError(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	root := filepath.Join(parent, "bucket")
	testkit.WriteFiles(t, root, map[string]string{
		"skills/a/SKILL.md": string(storetest.SkillFile("ay", "a")),
		"skills/a/run.sh":   "run",
	})
	d, err := store.NewDir(root)
	if err != nil {
		t.Fatal(err)
	}
	st := &storetest.Counting{Store: d}
	l := catalog.NewLoader(st)
	objs, _, err := catalog.ListAll(t.Context(), st)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Load(t.Context(), objs); err != nil {
		t.Fatal(err)
	}

	// Only the file changed; the store's directory is gone: an outage.
	changed := append([]catalog.SkillObject(nil), objs...)
	changed[0].Files = []store.Object{changed[0].Files[0]}
	changed[0].Files[0].ETag = `"changed"`
	if err := os.Rename(root, root+".gone"); err != nil {
		t.Fatal(err)
	}
	if loaded, _, err := l.Load(t.Context(), changed); err == nil {
		t.Fatalf("Load during an outage = %d skills, no error", len(loaded))
	}
	if err := os.Rename(root+".gone", root); err != nil {
		t.Fatal(err)
	}
	before := st.Gets.Load()
	loaded, _, err := l.Load(t.Context(), objs)
	if err != nil || len(loaded) != 1 || len(loaded[0].Input.Files) != 1 || string(loaded[0].Input.Files[0].Data) != "run" {
		t.Fatalf("Load after the outage = %+v, %v", loaded, err)
	}
	if n := st.Gets.Load() - before; n != 0 {
		t.Errorf("after the outage the unchanged listing made %d Gets, want 0 (the cache survived)", n)
	}
}
