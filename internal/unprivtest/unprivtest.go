// Package unprivtest runs a test as an unprivileged user when the test
// binary runs as root, for the tests that need a directory a process
// cannot read (chmod 000 stops no process with CAP_DAC_OVERRIDE, which root
// has in most containers and CI runners).
//
// Only tests import it. It imports only the standard library.
package unprivtest

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// ChildEnv is set in the environment of a test run again by Run.
const ChildEnv = "SKILLGATE_UNPRIVILEGED_TEST"

// Nobody is the user and group id the test is run again as.
const Nobody = 65534

// IsChild reports whether this test binary was started by Run: TestMain
// may then skip expensive set-up the one test it runs does not need.
func IsChild() bool { return os.Getenv(ChildEnv) != "" }

// Run makes the calling top-level test run as a user that file modes
// bind. When the process is not root (or is the child Run started), it
// returns false: the caller goes on and is that test. When it is root, it
// runs the same test in a copy of the test binary as uid and gid 65534
// (nobody), fails t with the child's output if the child failed, logs it
// otherwise, and returns true: the caller returns at once.
//
// Files the child must read must be readable by nobody; the child makes
// its own temporary directories.
func Run(t *testing.T) bool {
	t.Helper()
	if os.Geteuid() != 0 {
		return false
	}
	if IsChild() {
		t.Fatal("unprivtest: the child still runs as root")
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatal("unprivtest: Run is for top-level tests")
	}
	bin := binaryCopy(t)
	args := []string{"-test.run=^" + regexp.QuoteMeta(t.Name()) + "$", "-test.v", "-test.count=1"}
	if d, ok := t.Deadline(); ok {
		args = append(args, "-test.timeout="+time.Until(d).Round(time.Second).String())
	}
	cmd := exec.CommandContext(t.Context(), bin, args...)
	cmd.Dir = filepath.Dir(bin)
	cmd.Env = append(os.Environ(), ChildEnv+"=1", "HOME="+os.TempDir(), "TMPDIR="+os.TempDir())
	setCredential(cmd, Nobody)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the test run as uid %d failed: %v\n%s", Nobody, err, out)
	}
	if !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the test run as uid %d did not pass:\n%s", Nobody, out)
	}
	t.Logf("ran as uid %d:\n%s", Nobody, out)
	return true
}

// binaryCopy copies the test binary where nobody may run it (go test
// builds it in a directory only its user can enter); the copy is removed
// when t ends.
func binaryCopy(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "unprivtest-")
	if err != nil {
		t.Fatalf("unprivtest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p, err := copyBinary(dir)
	if err != nil {
		t.Fatalf("unprivtest: %v", err)
	}
	return p
}

func copyBinary(dir string) (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return "", err
	}
	src, err := os.Open(self)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst := filepath.Join(dir, filepath.Base(self))
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, src); err != nil {
		f.Close()
		return "", err
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("copying the test binary: %w", err)
	}
	return dst, nil
}
