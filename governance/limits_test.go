package governance

import (
	"fmt"
	"testing"
)

// testFileCap is the cap of one file these tests scan under: the one the
// loader passes (store.MaxFileSize, which governance may not import), so
// that their messages are the gateway's. catalog's
// TestFileCapReachesEveryCheck holds the real value to the same messages
// end to end.
const testFileCap = 256 << 10

// TestFileCapIsData: the cap of one file is the caller's value, in the
// budget and for archive members alike, and the messages say that value;
// without one (0) only the directory's and the archives' bounds hold.
func TestFileCapIsData(t *testing.T) {
	for _, limit := range []int{testFileCap, 64 << 10} {
		b := Budget{MaxFileBytes: limit}
		if ok, refused := b.AdmitFile(File{Path: "at", Size: int64(limit)}); !ok || refused != nil {
			t.Errorf("cap %d: a file at the cap refused: %+v", limit, refused)
		}
		want := fmt.Sprintf("%d bytes, over the %d KiB file limit", limit+1, limit>>10)
		if ok, refused := b.AdmitFile(File{Path: "over", Size: int64(limit) + 1, ETag: "e"}); ok || refused == nil || refused.Err != want {
			t.Errorf("cap %d: a file over the cap: %v %+v, want refused with %q", limit, ok, refused, want)
		}
		if got, want := TooLargeText(limit), fmt.Sprintf("over the %d KiB file limit", limit>>10); got != want {
			t.Errorf("TooLargeText(%d) = %q, want %q", limit, got, want)
		}

		tgz := mkGzip(t, mkTar(t, tent{name: "big.txt", body: noisyText(limit+1, 3)}, tent{name: "at.txt", body: noisyText(limit, 4)}))
		z := mkZip(t, zent{name: "big.txt", body: noisyText(limit+1, 5)})
		gz := mkGzip(t, []byte(noisyText(limit+1, 6))) // no size declared: found over by reading
		r := Scan(&Input{SkillMD: []byte(fm + "Hi.\n"), Files: []File{{Path: "a.tar.gz", Data: tgz}, {Path: "b.zip", Data: z}, {Path: "c.gz", Data: gz}}, MaxFileBytes: limit}, Options{})
		over := fmt.Sprintf("over the %d KiB limit of a file: not scanned", limit>>10)
		for file, want := range map[string]string{
			"a.tar.gz!/big.txt": fmt.Sprintf("%d bytes, %s", limit+1, over),
			"b.zip!/big.txt":    fmt.Sprintf("%d bytes, %s", limit+1, over),
			"c.gz!/c":           over,
		} {
			if !has(r, RuleArchiveUnscanned, file, SeverityError, want) {
				t.Errorf("cap %d: no archive-unscanned %q at %s: %+v", limit, want, file, r.Findings)
			}
		}
		if has(r, RuleArchiveUnscanned, "a.tar.gz!/at.txt", "", "") {
			t.Errorf("cap %d: a member at the cap not scanned: %+v", limit, r.Findings)
		}
	}

	var none Budget
	if ok, refused := none.AdmitFile(File{Path: "big", Size: testFileCap + 1}); !ok {
		t.Errorf("no cap: a file of %d bytes refused: %+v", testFileCap+1, refused)
	}
	r := scanFiles(File{Path: "a.tar.gz", Data: mkGzip(t, mkTar(t, tent{name: "big.txt", body: noisyText(testFileCap+1, 3)}))})
	if has(r, RuleArchiveUnscanned, "a.tar.gz!/big.txt", "", "") {
		t.Errorf("no cap: a member of %d bytes not scanned: %+v", testFileCap+1, r.Findings)
	}
}
