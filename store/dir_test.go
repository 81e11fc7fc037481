package store_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/store"
)

func TestNewDir(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if _, err := store.NewDir(filepath.Join(root, "missing")); err == nil {
		t.Error("NewDir of a missing directory: no error")
	}
	file := filepath.Join(root, "file")
	testkit.WriteFiles(t, root, map[string]string{"file": "x"})
	if _, err := store.NewDir(file); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("NewDir of a file: %v, want a 'not a directory' error", err)
	}
	d, err := store.NewDir(root)
	if err != nil || d.Root() != root {
		t.Fatalf("NewDir(%q) = %v, %v", root, d, err)
	}
}

func TestDirList(t *testing.T) {
	t.Parallel()
	d, root := storetest.Dir(t, map[string]string{
		"skills/b/SKILL.md":             "b",
		"skills/a/SKILL.md":             "a",
		"skills/a-c/SKILL.md":           "a-c", // walks after skills/a/ but sorts before it
		"skills/a/scripts/run.sh":       "#!/bin/sh",
		"skills/a/examples/e/SKILL.md":  "deep",
		"agents/main/skills/x/SKILL.md": "x",
		"README.md":                     "hi",
	})
	if err := os.MkdirAll(filepath.Join(root, "skills", "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()

	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{
			"README.md",
			"agents/main/skills/x/SKILL.md",
			"skills/a-c/SKILL.md",
			"skills/a/SKILL.md",
			"skills/a/examples/e/SKILL.md",
			"skills/a/scripts/run.sh",
			"skills/b/SKILL.md",
		}},
		{"skills/", []string{
			"skills/a-c/SKILL.md",
			"skills/a/SKILL.md",
			"skills/a/examples/e/SKILL.md",
			"skills/a/scripts/run.sh",
			"skills/b/SKILL.md",
		}},
		{"skills/a/", []string{"skills/a/SKILL.md", "skills/a/examples/e/SKILL.md", "skills/a/scripts/run.sh"}},
		{"skills/a", []string{ // S3 prefix semantics: any key starting so
			"skills/a-c/SKILL.md",
			"skills/a/SKILL.md",
			"skills/a/examples/e/SKILL.md",
			"skills/a/scripts/run.sh",
		}},
		{"agents/main/skills/", []string{"agents/main/skills/x/SKILL.md"}},
		{"agents/other/skills/", []string{}}, // missing prefix directory
		{"skills/empty/", []string{}},        // empty directory
		{"skills/a/SKILL.md/", []string{}},   // prefix "directory" is a file
		{"README.md", []string{"README.md"}}, // a prefix naming a file
		{"nothing", []string{}},
	}
	for _, tt := range tests {
		objs, err := d.List(ctx, tt.prefix)
		if err != nil {
			t.Errorf("List(%q): %v", tt.prefix, err)
			continue
		}
		if objs == nil {
			t.Errorf("List(%q) = nil, want an empty, non-nil list", tt.prefix)
		}
		if got := storetest.Keys(objs); !slices.Equal(got, tt.want) {
			t.Errorf("List(%q) =\n  %q\nwant\n  %q", tt.prefix, got, tt.want)
		}
	}

	objs, err := d.List(ctx, "skills/b/")
	if err != nil || len(objs) != 1 {
		t.Fatalf("List(skills/b/) = %v, %v", objs, err)
	}
	if o := objs[0]; o.Size != 1 || !strings.HasPrefix(o.ETag, `"`) || !strings.HasSuffix(o.ETag, `"`) {
		t.Errorf("object = %+v, want size 1 and a quoted ETag", o)
	}

	for _, bad := range []string{"/etc/", "../", "skills/../../", `skills\`, "skills//", "./skills/"} {
		if _, err := d.List(ctx, bad); err == nil {
			t.Errorf("List(%q): no error", bad)
		}
	}
}

func TestDirSymlinks(t *testing.T) {
	t.Parallel()
	outside := t.TempDir()
	testkit.WriteFiles(t, outside, map[string]string{"SKILL.md": "secret", "d/SKILL.md": "secret"})
	d, root := storetest.Dir(t, map[string]string{
		"skills/a/SKILL.md":      "a",
		"shared/s/SKILL.md":      "shared",
		"skills/esc/placeholder": "",
	})
	link := func(target, name string) {
		t.Helper()
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("symlinks unavailable: %v", err)
		}
	}
	link(filepath.Join(outside, "SKILL.md"), "skills/esc/SKILL.md") // file outside root
	link(outside, "skills/outdir")                                  // directory outside root
	link(filepath.Join(root, "shared"), "skills/indir")             // directory inside root
	link("../a/SKILL.md", "skills/alias/SKILL.md")                  // file inside root
	link("missing", "skills/dangling/SKILL.md")                     // dangling
	link("../loop/SKILL.md", "skills/loop/SKILL.md")                // loop
	link(filepath.Join(root, "skills"), "linked")                   // prefix is a symlinked dir

	ctx := t.Context()
	objs, err := d.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"shared/s/SKILL.md",
		"skills/a/SKILL.md",
		"skills/alias/SKILL.md",
		"skills/esc/placeholder",
	}
	if got := storetest.Keys(objs); !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q", got, want)
	}
	if objs, err := d.List(ctx, "linked/"); err != nil || len(objs) != 0 {
		t.Errorf("List(linked/) through a symlinked directory = %q, %v; want nothing", storetest.Keys(objs), err)
	}

	for _, key := range []string{"skills/esc/SKILL.md", "skills/outdir/SKILL.md", "skills/outdir/d/SKILL.md", "skills/dangling/SKILL.md", "skills/loop/SKILL.md", "skills/indir/s/SKILL.md", "linked/a/SKILL.md"} {
		if body, _, err := d.Get(ctx, key, ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s) = %q, %v; want ErrNotFound", key, body, err)
		}
	}
	if body, _, err := d.Get(ctx, "skills/alias/SKILL.md", ""); err != nil || string(body) != "a" {
		t.Errorf("Get(alias inside root) = %q, %v", body, err)
	}
}

func TestDirGet(t *testing.T) {
	t.Parallel()
	d, root := storetest.Dir(t, map[string]string{"skills/a/SKILL.md": "one"})
	ctx := t.Context()
	const key = "skills/a/SKILL.md"

	body, etag, err := d.Get(ctx, key, "")
	if err != nil || string(body) != "one" {
		t.Fatalf("Get = %q, %q, %v", body, etag, err)
	}
	objs, err := d.List(ctx, "skills/")
	if err != nil || len(objs) != 1 || objs[0].ETag != etag {
		t.Fatalf("List = %+v, %v; want the ETag %s of Get", objs, err, etag)
	}

	if body, got, err := d.Get(ctx, key, etag); !errors.Is(err, store.ErrNotModified) || body != nil || got != etag {
		t.Errorf("Get(current etag) = %q, %q, %v; want ErrNotModified", body, got, err)
	}

	// A change of content and time gives a new ETag and the new body.
	p := filepath.Join(root, "skills", "a", "SKILL.md")
	if err := os.WriteFile(p, []byte("two!"), 0o644); err != nil {
		t.Fatal(err)
	}
	future := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, future, future); err != nil {
		t.Fatal(err)
	}
	body, etag2, err := d.Get(ctx, key, etag)
	if err != nil || string(body) != "two!" || etag2 == etag {
		t.Errorf("Get(old etag) after a change = %q, %q, %v; want the new body and ETag", body, etag2, err)
	}

	for _, missing := range []string{"skills/b/SKILL.md", "skills/a/SKILL.md/x", "skills/a"} {
		if _, _, err := d.Get(ctx, missing, ""); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%s) = %v, want ErrNotFound", missing, err)
		}
	}

	for _, bad := range []string{"", "/etc/passwd", "../x", "skills/../../x", `skills\a\SKILL.md`, "skills//a", "./skills/a/SKILL.md", "skills/a/", "a\x00b"} {
		_, _, err := d.Get(ctx, bad, "")
		if err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q) = %v, want a key error", bad, err)
		}
	}
}

func TestDirGetSizeLimit(t *testing.T) {
	t.Parallel()
	d, _ := storetest.Dir(t, map[string]string{
		"skills/max/SKILL.md":  strings.Repeat("x", store.MaxFileSize),
		"skills/over/SKILL.md": strings.Repeat("x", store.MaxFileSize+1),
	})
	ctx := t.Context()
	if body, _, err := d.Get(ctx, "skills/max/SKILL.md", ""); err != nil || len(body) != store.MaxFileSize {
		t.Errorf("Get(exactly MaxFileSize) = %d bytes, %v", len(body), err)
	}
	if body, _, err := d.Get(ctx, "skills/over/SKILL.md", ""); !errors.Is(err, store.ErrTooLarge) || body != nil {
		t.Errorf("Get(MaxFileSize+1) = %d bytes, %v; want ErrTooLarge", len(body), err)
	}
}

func TestDirGetCanceled(t *testing.T) {
	t.Parallel()
	d, _ := storetest.Dir(t, map[string]string{"skills/a/SKILL.md": "a"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := d.Get(ctx, "skills/a/SKILL.md", ""); !errors.Is(err, context.Canceled) {
		t.Errorf("Get with a canceled context = %v", err)
	}
	if _, err := d.List(ctx, ""); !errors.Is(err, context.Canceled) {
		t.Errorf("List with a canceled context = %v", err)
	}
}
