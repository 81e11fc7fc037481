// Package corpus finds what the tests and the governance benchmark read
// from outside the repository: the module root, and the public skill sets
// of shared/corpus/external, which are never copied into the repository.
package corpus

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Env names a directory holding the external sets, when they are neither
// beside the checkout nor beside the checkout it was cloned from.
const Env = "SKILLGATE_CORPUS"

// rel is where the sets are from a checkout: a sibling directory shared/.
const rel = "../shared/corpus/external"

// ModuleRoot returns the directory of the go.mod at or above dir.
func ModuleRoot(dir string) (string, error) {
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod at or above " + dir + ": run it inside the skillgate checkout")
		}
		dir = parent
	}
}

// External returns the directory of the external sets: $SKILLGATE_CORPUS,
// else shared/corpus/external beside the checkout at modRoot, else beside
// the checkout it was cloned from (a clone made with `git clone . /tmp/x`
// finds the sets of the checkout it came from). The error names every
// place looked at.
func External(modRoot string) (string, error) {
	var tried []string
	try := func(dir string) bool {
		tried = append(tried, dir)
		fi, err := os.Stat(dir)
		return err == nil && fi.IsDir()
	}
	if d := os.Getenv(Env); d != "" && try(d) {
		return d, nil
	}
	if d := filepath.Join(modRoot, rel); try(d) {
		return d, nil
	}
	if origin := localOrigin(modRoot); origin != "" {
		if d := filepath.Join(origin, rel); try(d) {
			return d, nil
		}
	}
	return "", fmt.Errorf("the external skill sets are not found (looked at %s); put shared/ beside the checkout, or set %s",
		strings.Join(tried, ", "), Env)
}

// localOrigin returns the directory the checkout at modRoot was cloned
// from when that is a local path, else "".
func localOrigin(modRoot string) string {
	out, err := exec.Command("git", "-C", modRoot, "config", "--get", "remote.origin.url").Output()
	if err != nil {
		return ""
	}
	u := strings.TrimPrefix(strings.TrimSpace(string(out)), "file://")
	if u == "" || strings.Contains(u, "://") || !filepath.IsAbs(u) && !strings.HasPrefix(u, ".") {
		return "" // a remote: nothing beside it here
	}
	if !filepath.IsAbs(u) {
		u = filepath.Join(modRoot, u)
	}
	if root, err := ModuleRoot(u); err == nil {
		return root
	}
	return ""
}
