// Package testkit holds what several packages' tests share that is not a
// server of its own (those are miniotest, natstest, tlstest): the module's
// root, the external skill sets, and the module's programs, built once
// for every package that runs them (Binaries).
package testkit

import (
	"os"
	"testing"

	"github.com/skillgate/skillgate/internal/corpus"
)

// ModuleRoot returns the directory of the go.mod above the working
// directory (a test's package directory).
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := corpus.ModuleRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// ExternalCorpus returns the directory of the public skill sets
// (corpus.External); a missing corpus fails the test, never skips it.
func ExternalCorpus(t testing.TB) string {
	t.Helper()
	d, err := corpus.External(ModuleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}
