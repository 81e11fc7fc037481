// Package testkit holds what several packages' tests share that is not a
// server of its own (those are miniotest, natstest, tlstest).
package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// ModuleRoot returns the directory of the go.mod above the working
// directory (a test's package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}
