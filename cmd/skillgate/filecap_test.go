package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/store"
)

// TestValidateFileCap: skillgate validate holds a skill to the one cap of
// a file, store.MaxFileSize, wherever the gateway does: a SKILL.md over
// it, another file over it (the budget), and a member of an archive over
// it (the scan, through Input.MaxFileBytes), each with the gateway's
// words; a file at the cap is read.
func TestValidateFileCap(t *testing.T) {
	over := store.MaxFileSize + 1
	var noisy strings.Builder // text that compresses about 2:1, under the scanner's ratio bound
	for i := uint64(0); noisy.Len() < over; i++ {
		fmt.Fprintf(&noisy, "%016x\n", i*0x9e3779b97f4a7c15)
	}
	var tgz bytes.Buffer
	zw := gzip.NewWriter(&tgz)
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Name: "big.txt", Mode: 0o644, Size: int64(over), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(noisy.String()[:over])); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}

	root := t.TempDir()
	testkit.WriteFiles(t, root, map[string]string{
		"over/SKILL.md": strings.Repeat("x", over),
		"s/SKILL.md":    "---\nname: s\ndescription: Keeps notes.\n---\n\nKeeps notes.\n",
		"s/at.txt":      strings.Repeat("a", store.MaxFileSize),
		"s/big.txt":     strings.Repeat("b", over),
		"s/a.tar.gz":    tgz.String(),
	})
	out, _, code := runCmd(t, "validate", root)
	for _, want := range []string{
		filepath.Join(root, "over/SKILL.md") + ": error: file is over the 256 KiB limit; the gateway will not load it",
		filepath.Join(root, "s/big.txt") + fmt.Sprintf(": warn: binary-file: not scanned: %d bytes, over the 256 KiB file limit", over),
		filepath.Join(root, "s/a.tar.gz") + fmt.Sprintf("!/big.txt: error: archive-unscanned: %d bytes, over the 256 KiB limit of a file: not scanned", over),
	} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "at.txt") || code != 1 {
		t.Errorf("exit %d; want 1, and nothing about at.txt (at the cap):\n%s", code, out)
	}
}
