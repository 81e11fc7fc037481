package skill

import (
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkParse parses the real-world corpus: 53 OpenClaw SKILL.md files
// per iteration.
func BenchmarkParse(b *testing.B) {
	paths, err := filepath.Glob("../testdata/openclaw-skills/*/SKILL.md")
	if err != nil || len(paths) == 0 {
		b.Fatalf("corpus not found: %v", err)
	}
	type file struct {
		ref  Ref
		data []byte
	}
	var files []file
	var size int64
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		dir := filepath.Base(filepath.Dir(p))
		files = append(files, file{Ref{Key: GlobalKey(dir), Dir: dir, Scope: ScopeGlobal}, data})
		size += int64(len(data))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range files {
			Parse(f.ref, f.data)
		}
	}
}
