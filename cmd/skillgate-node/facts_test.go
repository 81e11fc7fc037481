package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestFactsHintsEscapeHostilePaths: the hints of `skillgate-node facts`
// show a search directory whose name holds ESC, BEL or a bidi override as
// escapes, in the searched path and in the reason a file was rejected.
func TestFactsHintsEscapeHostilePaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Windows refuses control characters in file names, and executable bits are a unix notion")
	}
	dir := filepath.Join(t.TempDir(), "bin\x1b[2J\x07\u202e")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tmux"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCmd(t, context.Background(), "facts", "--id", "h", "--bins", "tmux", "--path", dir)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	if strings.ContainsAny(errOut, "\x1b\x07\u202e") {
		t.Errorf("stderr holds a raw control or bidi character: %q", errOut)
	}
	for _, want := range []string{`searched ` + filepath.Dir(dir) + `/bin\x1b[2J\x07\u202e`, `bin\x1b[2J\x07\u202e/tmux: not executable`} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%q", want, errOut)
		}
	}
}
