// Package gobin finds the servers the tests run (minio, nats-server),
// installed with `go install`: on PATH, or in a GOPATH's bin directory,
// which is often not on PATH. It imports only the standard library.
package gobin

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Find looks for the executable name on PATH, then in each GOPATH's bin
// directory ($GOPATH, else `go env GOPATH`, else ~/go).
func Find(name string) (string, bool) {
	if p, err := exec.LookPath(name); err == nil {
		return p, true
	}
	gopath := os.Getenv("GOPATH")
	if gopath == "" {
		if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
			gopath = strings.TrimSpace(string(out))
		}
	}
	if gopath == "" {
		if home, err := os.UserHomeDir(); err == nil {
			gopath = filepath.Join(home, "go")
		}
	}
	for _, dir := range filepath.SplitList(gopath) {
		p := filepath.Join(dir, "bin", name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, true
		}
	}
	return "", false
}
