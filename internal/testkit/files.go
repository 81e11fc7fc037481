package testkit

import (
	"os"
	"path/filepath"
	"testing"
)

// WriteFiles writes files (slash-separated key → content) under root,
// making directories as needed: a directory store's content.
func WriteFiles(t testing.TB, root string, files map[string]string) {
	t.Helper()
	for key, content := range files {
		WriteFile(t, root, key, content)
	}
}

// WriteFile writes content to the file key (slash-separated) under root,
// making directories as needed, and returns its path.
func WriteFile(t testing.TB, root, key, content string) string {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// WriteFileAtomic replaces the file p with content through a rename, so
// that a server polling p reads the old file or the new one, never a part.
func WriteFileAtomic(t testing.TB, p, content string, perm os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
}

// ReadFile returns the content of the file name; an error fails t.
func ReadFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
