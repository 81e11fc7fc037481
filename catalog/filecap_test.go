package catalog_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/internal/testkit/storetest"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// listedSmall lists the keys of small as 1 byte long, as a listing taken
// before the file grew: the loader admits them, and the store's read
// finds them over the cap.
type listedSmall struct {
	store.Store
	small map[string]bool
}

func (l listedSmall) List(ctx context.Context, prefix string) ([]store.Object, error) {
	objs, err := l.Store.List(ctx, prefix)
	for i := range objs {
		if l.small[objs[i].Key] {
			objs[i].Size = 1
		}
	}
	return objs, err
}

// noisy is n bytes of text that compresses about 2:1, under the scanner's
// ratio bound.
func noisy(n int) string {
	var b strings.Builder
	for i := uint64(0); b.Len() < n; i++ {
		fmt.Fprintf(&b, "%016x\n", i*0x9e3779b97f4a7c15)
	}
	return b.String()[:n]
}

// tarGz is a .tar.gz holding one file.
func tarGz(t *testing.T, name, body string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestFileCapReachesEveryCheck: the cap of one file is declared once, as
// store.MaxFileSize, and reaches every check of it through the loader: the
// store's read, a SKILL.md's diagnostics (as listed and as read), the
// budget of a skill's other files (as listed and as read), and, through
// Input.MaxFileBytes, the scanner's cap on a member of an archive; each
// with its message. A file at the cap is read everywhere.
func TestFileCapReachesEveryCheck(t *testing.T) {
	t.Parallel()
	const capSize = store.MaxFileSize
	over := capSize + 1
	d, _ := storetest.Dir(t, map[string]string{
		"skills/over/SKILL.md":  strings.Repeat("x", over),
		"skills/raced/SKILL.md": strings.Repeat("x", over),
		"skills/s/SKILL.md":     string(storetest.SkillFile("s", "s")),
		"skills/s/at.txt":       strings.Repeat("a", capSize),
		"skills/s/big.txt":      strings.Repeat("b", over),
		"skills/s/raced.txt":    strings.Repeat("r", over),
		"skills/s/a.tar.gz":     tarGz(t, "big.txt", noisy(over)),
	})
	st := listedSmall{Store: d, small: map[string]bool{"skills/raced/SKILL.md": true, "skills/s/raced.txt": true}}

	if got, want := store.ErrTooLarge.Error(), "file larger than 256 KiB"; got != want {
		t.Errorf("store.ErrTooLarge = %q, want %q", got, want)
	}
	loaded, diags := snapshot(t, st, catalog.NewLoader(st))
	want := []skill.Diagnostic{
		{Location: "skills/over/SKILL.md", Level: skill.LevelError, Message: fmt.Sprintf("skills/over/SKILL.md is %d bytes, over the 256 KiB limit; it is not loaded", over)},
		{Location: "skills/raced/SKILL.md", Level: skill.LevelError, Message: "skills/raced/SKILL.md is over the 256 KiB limit; it is not loaded"},
	}
	if fmt.Sprint(diags) != fmt.Sprint(want) {
		t.Errorf("diagnostics =\n  %+v\nwant\n  %+v", diags, want)
	}
	if len(loaded) != 1 {
		t.Fatalf("loaded %d skills, want skills/s alone", len(loaded))
	}
	in := loaded[0].Input
	if in.MaxFileBytes != store.MaxFileSize {
		t.Errorf("Input.MaxFileBytes = %d, want store.MaxFileSize (%d)", in.MaxFileBytes, store.MaxFileSize)
	}
	files := map[string]governance.File{}
	for _, f := range in.Files {
		files[f.Path] = f
	}
	if f := files["at.txt"]; f.Err != "" || len(f.Data) != capSize {
		t.Errorf("at.txt, at the cap: %d bytes, Err %q; want read", len(f.Data), f.Err)
	}
	for path, wantErr := range map[string]string{
		"big.txt":   fmt.Sprintf("%d bytes, over the 256 KiB file limit", over),
		"raced.txt": "over the 256 KiB file limit",
	} {
		if f := files[path]; f.Err != wantErr || f.Data != nil || !catalog.IsTooLarge(&f) {
			t.Errorf("%s: Err %q, %d bytes, IsTooLarge %v; want Err %q, no bytes, too large", path, f.Err, len(f.Data), catalog.IsTooLarge(&f), wantErr)
		}
	}

	r := governance.Scan(&in, governance.Options{})
	member := fmt.Sprintf("%d bytes, over the 256 KiB limit of a file: not scanned", over)
	found := false
	for _, f := range r.Findings {
		found = found || f.Rule == "archive-unscanned" && f.File == "a.tar.gz!/big.txt" && f.Excerpt == member
	}
	if !found {
		t.Errorf("no archive-unscanned %q at a.tar.gz!/big.txt: %+v", member, r.Findings)
	}
}
