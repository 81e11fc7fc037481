package catalog_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/miniotest"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

func TestS3ListViewShadowing(t *testing.T) {
	t.Parallel()
	st := storetest.S3(t, minio.Get(t))
	storetest.PutAll(t, st, map[string][]byte{
		"skills/github/SKILL.md":                  storetest.SkillFile("github", "global github"),
		"skills/tmux/SKILL.md":                    storetest.SkillFile("tmux", "global tmux"),
		"skills/zeta/SKILL.md":                    storetest.SkillFile("zeta", "global zeta"),
		"skills/github/examples/x/SKILL.md":       []byte("an example"),
		"agents/main/skills/github/SKILL.md":      storetest.SkillFile("gh-main", "main's github"),
		"agents/main/skills/alpha/SKILL.md":       storetest.SkillFile("alpha", "main's alpha"),
		"agents/other/skills/tmux/SKILL.md":       storetest.SkillFile("tmux", "other's tmux"),
		"agents/main/skills/github/references.md": []byte("more"),
	})
	cs := &storetest.Counting{Store: st}
	view, diags, err := catalog.ListView(t.Context(), cs, "main")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"agents/main/skills/alpha/SKILL.md",
		"agents/main/skills/github/SKILL.md",
		"skills/tmux/SKILL.md",
		"skills/zeta/SKILL.md",
	}
	if got := storetest.SkillKeys(view); !slices.Equal(got, want) {
		t.Errorf("ListView(main) =\n  %q\nwant\n  %q", got, want)
	}
	if len(diags) != 1 || diags[0].Location != "skills/github/examples/x/SKILL.md" || diags[0].Level != skill.LevelWarn {
		t.Errorf("diagnostics = %+v, want one warning about the example", diags)
	}
	if n := cs.Lists.Load(); n != 2 {
		t.Errorf("ListView made %d List requests, want 2 (agent prefix, global prefix)", n)
	}

	skills, _, err := catalog.NewLoader(cs).Load(t.Context(), view)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(skills), "agents/main/skills/alpha/SKILL.md=alpha agents/main/skills/github/SKILL.md=gh-main skills/tmux/SKILL.md=tmux skills/zeta/SKILL.md=zeta"; got != want {
		t.Errorf("loaded %s\nwant   %s", got, want)
	}

	before := cs.Lists.Load()
	if _, _, err := catalog.ListView(t.Context(), cs, "../main"); err == nil {
		t.Error("ListView(../main): no error")
	}
	if cs.Lists.Load() != before {
		t.Error("ListView with an invalid agent id made a request")
	}
}

func TestS3Oversize(t *testing.T) {
	t.Parallel()
	st := storetest.S3(t, minio.Get(t))
	storetest.PutAll(t, st, map[string][]byte{
		"skills/max/SKILL.md":  append([]byte("---\nname: max\n---\n"), bytes.Repeat([]byte("x"), store.MaxFileSize-18)...),
		"skills/over/SKILL.md": bytes.Repeat([]byte("x"), store.MaxFileSize+1),
	})
	ctx := t.Context()
	if body, _, err := st.Get(ctx, "skills/over/SKILL.md", ""); !errors.Is(err, store.ErrTooLarge) || body != nil {
		t.Errorf("Get(over) = %d bytes, %v; want ErrTooLarge", len(body), err)
	}
	if body, _, err := st.Get(ctx, "skills/max/SKILL.md", ""); err != nil || len(body) != store.MaxFileSize {
		t.Errorf("Get(max) = %d bytes, %v; want %d", len(body), err, store.MaxFileSize)
	}

	cs := &storetest.Counting{Store: st}
	skills, diags := snapshot(t, cs, catalog.NewLoader(cs))
	if got := names(skills); got != "skills/max/SKILL.md=max" {
		t.Errorf("loaded %s, want only skills/max/SKILL.md", got)
	}
	want := fmt.Sprintf("skills/over/SKILL.md is %d bytes, over the 256 KiB limit; it is not loaded", store.MaxFileSize+1)
	if len(diags) != 1 || diags[0].Level != skill.LevelError || diags[0].Message != want {
		t.Errorf("diagnostics = %+v, want one error %q", diags, want)
	}
	if n := cs.Gets.Load(); n != 1 {
		t.Errorf("%d Gets, want 1 (the oversize file is not requested)", n)
	}
}

func TestS3Loader(t *testing.T) {
	t.Parallel()
	st := storetest.S3(t, minio.Get(t))
	ctx := t.Context()
	storetest.PutAll(t, st, map[string][]byte{
		"skills/a/SKILL.md":             storetest.SkillFile("ay", "a"),
		"skills/b/SKILL.md":             storetest.SkillFile("bee", "b"),
		"agents/main/skills/c/SKILL.md": storetest.SkillFile("see", "c"),
	})
	cs := &storetest.Counting{Store: st}
	l := catalog.NewLoader(cs)

	skills, _ := snapshot(t, cs, l)
	const first = "agents/main/skills/c/SKILL.md=see skills/a/SKILL.md=ay skills/b/SKILL.md=bee"
	if got := names(skills); got != first {
		t.Fatalf("loaded %s, want %s", got, first)
	}
	if n := cs.Gets.Load(); n != 3 {
		t.Errorf("first load: %d Gets, want 3", n)
	}

	// Unchanged bucket: listing only, no Get.
	skills, _ = snapshot(t, cs, l)
	if got := names(skills); got != first {
		t.Errorf("re-load = %s", got)
	}
	if n := cs.Gets.Load(); n != 3 {
		t.Errorf("unchanged re-load: %d more Gets, want 0", n-3)
	}

	// A changed file is downloaded again, a deleted one disappears.
	if err := st.Put(ctx, "skills/a/SKILL.md", storetest.SkillFile("ay-2", "a changed")); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "skills/b/SKILL.md"); err != nil {
		t.Fatal(err)
	}
	skills, diags := snapshot(t, cs, l)
	if got, want := names(skills), "agents/main/skills/c/SKILL.md=see skills/a/SKILL.md=ay-2"; got != want {
		t.Errorf("after a change: %s, want %s", got, want)
	}
	if len(diags) != 0 {
		t.Errorf("diagnostics = %+v", diags)
	}
	if n := cs.Gets.Load(); n != 4 {
		t.Errorf("after one change: %d Gets in all, want 4", n)
	}

	// Without listed ETags the Loader asks conditionally and MinIO answers
	// 304 for every cached file.
	objs, _, err := catalog.ListAll(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range objs {
		objs[i].ETag = ""
	}
	if _, _, err := l.Load(ctx, objs); err != nil {
		t.Fatal(err)
	}
	if s := l.Stats(); s.NotModified != 2 || s.Downloads != 4 {
		t.Errorf("stats = %+v, want 2 not-modified and 4 downloads", s)
	}
}

// TestS3LoaderFiles loads a skill directory from MinIO: its other files
// come with exact bytes, and an unchanged bucket costs no download.
func TestS3LoaderFiles(t *testing.T) {
	t.Parallel()
	st := storetest.S3(t, minio.Get(t))
	ctx := t.Context()
	md := storetest.SkillFile("ay", "a")
	storetest.PutAll(t, st, map[string][]byte{
		"skills/a/SKILL.md":       md,
		"skills/a/scripts/run.sh": []byte("#!/bin/sh\ncurl example.com\n"),
		"skills/a/ref/notes.md":   {0, 1, 2, 0xff, '\n'},
		"skills/lonely/x.txt":     []byte("no SKILL.md here"),
	})
	cs := &storetest.Counting{Store: st}
	l := catalog.NewLoader(cs)

	want := governance.Input{SkillMD: md, Files: []governance.File{
		{Path: "ref/notes.md", Data: []byte{0, 1, 2, 0xff, '\n'}},
		{Path: "scripts/run.sh", Data: []byte("#!/bin/sh\ncurl example.com\n")},
	}, MaxFileBytes: store.MaxFileSize}
	loaded, diags := snapshot(t, cs, l)
	if len(loaded) != 1 || len(diags) != 0 || !reflect.DeepEqual(inputs(loaded)["skills/a/SKILL.md"], want) {
		t.Fatalf("loaded %+v, diagnostics %+v; want skills/a with %+v", loaded, diags, want)
	}
	if s := l.Stats(); s != (catalog.LoaderStats{Gets: 3, Downloads: 3}) {
		t.Errorf("first load: stats %+v, want 3 downloads", s)
	}

	again, _ := snapshot(t, cs, l)
	if len(again) != 1 || !reflect.DeepEqual(inputs(again)["skills/a/SKILL.md"], want) {
		t.Errorf("re-load = %+v, want %+v", again, want)
	}
	if s := l.Stats(); s != (catalog.LoaderStats{Gets: 3, Downloads: 3, CacheHits: 3}) || cs.Gets.Load() != 3 {
		t.Errorf("unchanged re-load: stats %+v, %d Gets; want no request, 3 cache hits", s, cs.Gets.Load())
	}

	// A changed file: one conditional Get, one download.
	if err := st.Put(ctx, "skills/a/scripts/run.sh", []byte("echo two\n")); err != nil {
		t.Fatal(err)
	}
	changed, _ := snapshot(t, cs, l)
	want.Files[1].Data = []byte("echo two\n")
	if len(changed) != 1 || !reflect.DeepEqual(inputs(changed)["skills/a/SKILL.md"], want) {
		t.Errorf("after a change = %+v, want %+v", changed, want)
	}
	if s := l.Stats(); s != (catalog.LoaderStats{Gets: 4, Downloads: 4, CacheHits: 5}) {
		t.Errorf("after one change: stats %+v, want one more download", s)
	}
}

// TestS3Outage stops MinIO under a Loader: listing and loading fail (the
// gateway keeps its last snapshot), and after a restart on the same
// address the same store works again without reloading anything.
func TestS3Outage(t *testing.T) {
	t.Parallel()
	srv := miniotest.Start(t) // its own server: stopping it must not disturb other tests
	st := storetest.S3(t, srv)
	storetest.PutAll(t, st, map[string][]byte{"skills/a/SKILL.md": storetest.SkillFile("ay", "a")})
	cs := &storetest.Counting{Store: st}
	l := catalog.NewLoader(cs)
	snapshot(t, cs, l)

	srv.Stop()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	if _, _, err := catalog.ListAll(ctx, cs); err == nil {
		t.Error("ListAll while MinIO is down: no error")
	}
	objs := []catalog.SkillObject{{Ref: skill.Ref{Key: "skills/a/SKILL.md", Dir: "a", Scope: skill.ScopeGlobal}, ETag: `"other"`}}
	if _, _, err := l.Load(ctx, objs); err == nil || errors.Is(err, store.ErrNotFound) {
		t.Errorf("Load while MinIO is down = %v, want a storage error", err)
	}

	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	before := cs.Gets.Load()
	skills, _ := snapshot(t, cs, l)
	if names(skills) != "skills/a/SKILL.md=ay" || cs.Gets.Load() != before {
		t.Errorf("after the restart: %s with %d Gets, want the cached skill and no Get", names(skills), cs.Gets.Load()-before)
	}
}
