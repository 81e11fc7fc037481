package node

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/protocol"
)

func TestProbe(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("executable bits and symlinks are unix notions here")
	}
	root := t.TempDir()
	a := filepath.Join(root, "a")
	b := filepath.Join(root, "b")
	writeExec(t, filepath.Join(b, "gh"))
	writeExec(t, filepath.Join(root, "target", "real-tool"))
	writeExec(t, filepath.Join(root, "escape"))
	if err := os.MkdirAll(a, 0o755); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(a, "gh"), []byte("x"), 0o644)) // shadowed but not executable: b's counts
	must(os.Mkdir(filepath.Join(a, "dirtool"), 0o755))
	must(os.Symlink(filepath.Join(root, "target", "real-tool"), filepath.Join(a, "linked")))
	must(os.Symlink(filepath.Join(root, "target"), filepath.Join(a, "linkdir")))
	must(os.Symlink(filepath.Join(root, "nowhere"), filepath.Join(a, "dangling")))
	must(os.WriteFile(filepath.Join(a, "noexec"), []byte("x"), 0o600))

	t.Setenv("SG_SET", "1")
	t.Setenv("SG_EMPTY", "")
	t.Setenv("SG_NOT_ASKED", "secret")

	got := Probe([]string{a, b, filepath.Join(root, "missing-dir")}, protocol.Interest{
		Bins: []string{"gh", "dirtool", "linked", "linkdir", "dangling", "noexec", "absent",
			"../escape", "target/real-tool", "..", ".", "", strings.Repeat("x", protocol.MaxNameLen+1)},
		Env: []string{"SG_SET", "SG_EMPTY", "SG_UNSET", "SG_SET", "A=B", "", "PATH"},
	})
	want := protocol.FactsUpdate{
		Env: []string{"PATH", "SG_SET"},
		HostBinStatus: map[string]bool{
			"gh": true, "dirtool": false, "linked": true, "linkdir": false, "dangling": false,
			"noexec": false, "absent": false, "../escape": false, "target/real-tool": false,
			"..": false, ".": false,
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Probe\n got %+v\nwant %+v", got, want)
	}

	empty := Probe(nil, protocol.Interest{})
	if empty.Env == nil || empty.HostBinStatus == nil {
		t.Fatalf("empty interest: %+v, want non-nil empty lists", empty)
	}
}

func TestFindBinExplains(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("executable bits are a unix notion")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tool"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "box"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, reject string
	}{
		{"tool", filepath.Join(dir, "tool") + ": not executable"},
		{"box", filepath.Join(dir, "box") + ": is a directory"},
		{"a/b", "a/b: not a plain file name, not looked up"},
	}
	for _, tt := range tests {
		r := FindBin([]string{dir}, tt.name)
		if r.Found != "" || len(r.Rejected) != 1 || r.Rejected[0] != tt.reject {
			t.Errorf("FindBin(%q) = %+v, want rejected %q", tt.name, r, tt.reject)
		}
	}
	writeExec(t, filepath.Join(dir, "ok"))
	if r := FindBin([]string{dir}, "ok"); r.Found != filepath.Join(dir, "ok") {
		t.Errorf("FindBin(ok) = %+v", r)
	}
}
