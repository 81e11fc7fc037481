package testkit

import (
	"os"
	"testing"
)

// Golden compares got with the golden file path, after rewriting the file
// with got when update is set (a package's -update flag: each test binary
// defines its own, as flags cannot be defined twice).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the output:\n--- got ---\n%s\n--- want ---\n%s", path, got, want)
	}
}
