package corpus

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExternal: the sets beside the checkout, beside the checkout it was
// cloned from, or named by $SKILLGATE_CORPUS; nowhere is an error naming
// every place looked at.
func TestExternal(t *testing.T) {
	t.Setenv(Env, "")
	base := t.TempDir()
	repo := filepath.Join(base, "main")
	sets := filepath.Join(base, "shared", "corpus", "external")
	for _, d := range []string{repo, sets} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(repo, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("-C", repo, "init", "-q")
	git("-C", repo, "add", "go.mod")
	git("-C", repo, "commit", "-q", "-m", "x")
	clone := filepath.Join(t.TempDir(), "fresh")
	git("clone", "-q", repo, clone)

	for name, root := range map[string]string{"beside": repo, "beside the origin": clone} {
		if got, err := External(root); err != nil || filepath.Clean(got) != sets {
			t.Errorf("%s: External = %q, %v; want %s", name, got, err, sets)
		}
	}
	alone := t.TempDir()
	_, err := External(alone)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(alone, rel)) || !strings.Contains(err.Error(), Env) {
		t.Errorf("nowhere: %v", err)
	}
	t.Setenv(Env, sets)
	if got, err := External(alone); err != nil || got != sets {
		t.Errorf("%s: External = %q, %v", Env, got, err)
	}
}
