package skill

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// aliasSizeBomb is a frontmatter of about 250 KiB whose metadata refers to
// one long string 100,000 times through five levels of ten aliases: some
// 220,000 values, within the value bound, but about 24 GB of text.
func aliasSizeBomb() string {
	const size = 250 << 10
	var b strings.Builder
	b.WriteString("---\ndescription: d\n")
	tail := "a: &a [*s, *s, *s, *s, *s, *s, *s, *s, *s, *s]\n" +
		"b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n" +
		"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n" +
		"d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n" +
		"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n" +
		"metadata:\n  openclaw:\n    requires:\n      bins: *e\n---\n"
	b.WriteString("s: &s ")
	b.WriteString(strings.Repeat("x", size-b.Len()-len(tail)-1))
	b.WriteString("\n")
	b.WriteString(tail)
	return b.String()
}

// TestParseAliasSizeBomb: aliases that repeat a long string stay within the
// value bound but not within the size bound, so the metadata is not
// expanded, and parsing allocates a small multiple of the file, not the
// expansion.
func TestParseAliasSizeBomb(t *testing.T) {
	in := []byte(aliasSizeBomb())
	fmLen := len(in) - len("---\n") - len("---\n")
	limit := fmLen + minExpansionBytes

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s := Parse(testRef, in)
	runtime.ReadMemStats(&after)

	want := warnD(fmt.Sprintf(`frontmatter key "metadata" cannot be read (YAML aliases expand to more than %d bytes of values); it is ignored — fix its value`, limit))
	if len(s.Diagnostics) != 1 || s.Diagnostics[0] != want {
		t.Errorf("diagnostics = %+v, want [%+v]", s.Diagnostics, want)
	}
	if s.Metadata != nil || s.Requires != nil || s.Description != "d" {
		t.Errorf("metadata %d keys, requires %T, description %q; want no metadata and description d", len(s.Metadata), s.Requires, s.Description)
	}
	// The YAML parser, the normalized text and the nodes cost a few times
	// the file; expanding the aliases cost 40 times and more.
	const maxFactor = 16
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("Parse allocated %d bytes for a %d-byte file", alloc, len(in))
	if alloc > maxFactor*uint64(len(in)) {
		t.Errorf("Parse allocated %d bytes for a %d-byte file, more than %d times its size", alloc, len(in), maxFactor)
	}
}

// TestParseAliasManySmallValues: aliases of many short values stay within
// the value-count and text bounds, yet kept about 8 MB live per 250 KiB
// file; each value an alias produces is charged (aliasValueCost), so the
// metadata is refused and nothing of the expansion stays live.
func TestParseAliasManySmallValues(t *testing.T) {
	var b strings.Builder
	b.WriteString("---\ndescription: d\nmetadata:\n  a: &a [")
	b.WriteString(strings.TrimSuffix(strings.Repeat("xx,", 2000), ","))
	b.WriteString("]\n  b: &b [")
	b.WriteString(strings.TrimSuffix(strings.Repeat("*a,", 60), ","))
	b.WriteString("]\n  c: *b\n")
	for b.Len() < 250<<10 {
		fmt.Fprintf(&b, "  # padding %d\n", b.Len())
	}
	b.WriteString("---\n")
	in := []byte(b.String())
	fmLen := len(in) - len("---\n") - len("---\n")

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	skills := make([]*Skill, 4)
	for i := range skills {
		skills[i] = Parse(testRef, in)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)

	want := warnD(fmt.Sprintf(`frontmatter key "metadata" cannot be read (YAML aliases expand to more than %d bytes of values); it is ignored — fix its value`, fmLen+minExpansionBytes))
	if d := skills[0].Diagnostics; len(d) != 1 || d[0] != want {
		t.Errorf("diagnostics = %+v, want [%+v]", d, want)
	}
	live := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / int64(len(skills))
	t.Logf("%d bytes live per parsed %d-byte file", live, len(in))
	if live > 4*int64(len(in)) {
		t.Errorf("%d bytes live per parsed %d-byte file; the expansion must not stay live", live, len(in))
	}
}

// TestParseAliasReuse: an anchor repeated within the size bound is expanded
// as before, even in a short file (minExpansionBytes).
func TestParseAliasReuse(t *testing.T) {
	long := strings.Repeat("x", 2000)
	refs := strings.TrimSuffix(strings.Repeat("*s, ", 20), ", ")
	in := file("---", "description: d", "s: &s "+long, "metadata: {openclaw: {requires: {bins: ["+refs+"]}}}", "---")
	s := Parse(testRef, []byte(in))
	bins, _ := s.Requires.(map[string]any)["bins"].([]any)
	if len(s.Diagnostics) != 0 || len(bins) != 20 || bins[19] != long {
		t.Errorf("got %d bins, diagnostics %+v; want 20 copies of the anchor and no diagnostics", len(bins), s.Diagnostics)
	}
}
