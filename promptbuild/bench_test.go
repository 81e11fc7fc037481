package promptbuild

import (
	"fmt"
	"testing"
)

func BenchmarkRender(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		entries := make([]Entry, n)
		for i := range entries {
			entries[i] = Entry{
				Name:        fmt.Sprintf("skill-%04d", i),
				Description: "Interact with GitHub using the `gh` CLI: issues, pull requests & workflow runs (\"fast\").",
				Location:    fmt.Sprintf("skills/skill-%04d/SKILL.md", i),
				ReadPath:    fmt.Sprintf("skills/skill-%04d/SKILL.md", i),
				Always:      i%10 == 0,
			}
		}
		b.Run(fmt.Sprintf("skills=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Render(entries)
			}
		})
	}
}
