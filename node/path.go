package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// loginShellTimeout bounds how long DefaultPath waits for the login shell;
// a slow or interactive profile must not hold up the node's start.
const loginShellTimeout = 3 * time.Second

// extraDirs are added to the default search path because package managers
// install there and a service manager's PATH often lacks them.
func extraDirs() []string {
	if runtime.GOOS == "windows" {
		return nil
	}
	return []string{"/usr/local/bin", "/opt/homebrew/bin"}
}

// DefaultPath returns the default binary search path: the login shell's PATH
// where it can be read (else this process's PATH), then /usr/local/bin and
// /opt/homebrew/bin, de-duplicated in order. Relative and empty entries are
// dropped: they would search the node's working directory, which is neither
// meaningful for a service nor safe.
func DefaultPath() []string {
	dirs, _ := defaultPath(os.Getenv("SHELL"), os.Getenv("PATH"), loginShellTimeout)
	return dirs
}

// defaultPath is DefaultPath with its inputs explicit. The error says why the
// login shell's PATH could not be read; dirs is usable anyway.
func defaultPath(shell, envPath string, timeout time.Duration) (dirs []string, err error) {
	p, err := loginShellPath(shell, timeout)
	if err != nil {
		p = envPath
	}
	dirs = append(filepath.SplitList(p), extraDirs()...)
	return cleanPath(dirs), err
}

// loginShellPath asks the user's login shell for its PATH, the one a person
// gets in a terminal, which is what skills expect to find binaries on.
func loginShellPath(shell string, timeout time.Duration) (string, error) {
	if runtime.GOOS == "windows" {
		return "", errors.New("no login shell on windows")
	}
	if shell == "" {
		return "", errors.New("SHELL is not set")
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "-lc", `printf %s "$PATH"`)
	// A profile that starts a background process keeping stdout open must
	// not make us wait past the timeout.
	cmd.WaitDelay = 500 * time.Millisecond
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s -lc: %w", shell, err)
	}
	// Profiles may print banners; printf leaves PATH last, with no newline.
	if i := bytes.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	if len(bytes.TrimSpace(out)) == 0 {
		return "", fmt.Errorf("%s -lc: printed no PATH", shell)
	}
	return string(out), nil
}

// cleanPath cleans each directory and drops empty, relative and repeated
// ones, keeping the first occurrence's position.
func cleanPath(dirs []string) []string {
	seen := make(map[string]bool, len(dirs))
	out := make([]string, 0, len(dirs))
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		d = filepath.Clean(d)
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}
