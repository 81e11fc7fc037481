package promptbuild

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

const testNote = "Some skills were left out or shortened to fit the prompt budget."

func ent(name, desc string, always bool) Entry {
	return Entry{Name: name, Description: desc, Location: "skills/" + name + "/SKILL.md", ReadPath: "skills/" + name + "/SKILL.md", Always: always}
}

// budgetEntries are in Compare order: alpha always with a short
// description (Full 196 bytes, Bare 144), beta with one that Short cuts
// (Full 444, Short 312, Bare 127), gamma with a long one that is not cut
// (Full 302, Bare 130), delta with a short one (Full 167, Bare 130).
func budgetEntries() []Entry {
	return []Entry{
		ent("alpha", "Deploys the service.", true),
		ent("beta", strings.Repeat("Reviews pull requests, ", 12)+"and more.", false),
		ent("gamma", strings.Repeat("Long description that is not cut. ", 4)+"End.", false),
		ent("delta", "Fits.", false),
	}
}

func variantsOf(es []Entry) []Variants {
	vs := make([]Variants, len(es))
	for i := range es {
		vs[i] = NewVariants(&es[i])
	}
	return vs
}

const (
	O = FitOmitted
	F = FitFull
	S = FitShort
	N = FitName
)

// TestBudgetedGolden: one case per step of the budget, with exact Fits and
// counts; each block is also checked to come out the same with MaxChars
// set to its exact length (the limit is inclusive and the note's length
// exact) and differently one byte below.
func TestBudgetedGolden(t *testing.T) {
	es := budgetEntries()
	five := []Entry{ent("a", "First.", true), ent("b", "Second.", true), ent("c", "Third.", false), ent("d", "Fourth.", false), ent("e", "Fifth.", false)}
	tests := []struct {
		file      string
		entries   []Entry
		budget    Budget
		fits      []Fit
		omitted   int
		shortened int
		over      bool
	}{
		// 2: everything fits whole; no note.
		{"budget-all-fit.golden", es, Budget{MaxChars: 1147, MaxSkills: 4}, []Fit{F, F, F, F}, 0, 0, false},
		// 1: MaxSkills keeps the two always entries and the first other one.
		{"budget-max-skills.golden", five, Budget{MaxSkills: 3}, []Fit{F, F, F, O, O}, 2, 0, false},
		// 1: more always entries than MaxSkills: all of them, no other.
		{"budget-max-skills-always.golden", five, Budget{MaxChars: 10000, MaxSkills: 1}, []Fit{F, F, O, O, O}, 3, 0, false},
		// 3: alpha whole, beta cut, gamma too long (stays bare), delta whole.
		{"budget-partial.golden", es, Budget{MaxChars: 1000}, []Fit{F, S, N, F}, 0, 2, false},
		// 3 after 1: MaxSkills leaves delta out, the note counts it.
		{"budget-partial-max-skills.golden", es, Budget{MaxChars: 800, MaxSkills: 3}, []Fit{F, S, N, O}, 1, 2, false},
		// 3: all bare fits, no description does.
		{"budget-all-bare.golden", es, Budget{MaxChars: 700}, []Fit{N, N, N, N}, 0, 4, false},
		// 4: even bare, two entries must go, from the end.
		{"budget-drop.golden", es, Budget{MaxChars: 500}, []Fit{N, N, O, O}, 2, 2, false},
		// 4: the always entry alone (bare) does not fit: emitted anyway.
		{"budget-over.golden", es, Budget{MaxChars: 250}, []Fit{N, O, O, O}, 3, 1, true},
		{"budget-over-two.golden", five, Budget{MaxChars: 50}, []Fit{N, N, O, O, O}, 3, 2, true},
		// 4: nothing must be shown and no entry fits: the note alone.
		{"budget-note-only.golden", es[2:3], Budget{MaxChars: 200}, []Fit{O}, 1, 0, false},
		// 4: not even the note fits: nothing.
		{"budget-nothing.golden", es[2:3], Budget{MaxChars: 100}, []Fit{O}, 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			vs := variantsOf(tt.entries)
			got := Budgeted(tt.entries, vs, tt.budget, testNote)
			golden(t, tt.file, got.Text)
			want := Block{Text: got.Text, Fits: tt.fits, Omitted: tt.omitted, Shortened: tt.shortened, OverBudget: tt.over}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("got  %v %d %d %v\nwant %v %d %d %v", got.Fits, got.Omitted, got.Shortened, got.OverBudget, tt.fits, tt.omitted, tt.shortened, tt.over)
			}
			if tt.budget.MaxChars > 0 && !tt.over && len(got.Text) > tt.budget.MaxChars {
				t.Errorf("%d bytes over MaxChars %d", len(got.Text), tt.budget.MaxChars)
			}
			if got.Text == "" || tt.over {
				return
			}
			b := tt.budget
			b.MaxChars = len(got.Text)
			if tight := Budgeted(tt.entries, vs, b, testNote); !reflect.DeepEqual(tight, got) {
				t.Errorf("MaxChars = its length %d: got %v %q", b.MaxChars, tight.Fits, tight.Text)
			}
			b.MaxChars--
			if below := Budgeted(tt.entries, vs, b, testNote); below.Text == got.Text || len(below.Text) > b.MaxChars && !below.OverBudget {
				t.Errorf("MaxChars one below its length %d: got %v, %d bytes", b.MaxChars, below.Fits, len(below.Text))
			}
		})
	}
}

func TestBudgetedEmpty(t *testing.T) {
	for _, b := range []Budget{{}, {MaxChars: 1}, {MaxSkills: 1}} {
		if got := Budgeted(nil, nil, b, testNote); !reflect.DeepEqual(got, Block{}) {
			t.Errorf("Budgeted(nil, %+v) = %+v, want zero Block", b, got)
		}
	}
}

func TestBudgetedNoteEscaped(t *testing.T) {
	es := budgetEntries()
	got := Budgeted(es, variantsOf(es), Budget{MaxSkills: 1}, "a < b & \"c\"\x00")
	want := "\n  <note omitted=\"3\" shortened=\"0\">a &lt; b &amp; &quot;c&quot;</note>\n</available_skills>"
	if !strings.HasSuffix(got.Text, want) {
		t.Errorf("got %q, want suffix %q", got.Text, want)
	}
}

func TestBudgetedMismatch(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for len(vs) != len(entries)")
		}
	}()
	Budgeted(budgetEntries(), nil, Budget{}, testNote)
}

func TestFitString(t *testing.T) {
	for f, want := range map[Fit]string{FitOmitted: "omitted", FitFull: "full", FitShort: "short", FitName: "name", 9: "Fit(9)"} {
		if got := f.String(); got != want {
			t.Errorf("Fit(%d).String() = %q, want %q", f, got, want)
		}
	}
}

// TestCompare: always, then priority (higher first), then local, then
// name, then location.
func TestCompare(t *testing.T) {
	want := []Entry{
		{Name: "z", Location: "skills/z/SKILL.md", Always: true, Priority: -5},
		{Name: "p", Location: "skills/p/SKILL.md", Priority: 2},
		{Name: "x", Location: "agents/a/skills/x/SKILL.md", Priority: 1, Local: true},
		{Name: "a", Location: "skills/a/SKILL.md", Priority: 1},
		{Name: "m", Location: "agents/a/skills/m/SKILL.md", Local: true},
		{Name: "b", Location: "skills/b1/SKILL.md"},
		{Name: "b", Location: "skills/b2/SKILL.md"},
		{Name: "c", Location: "skills/c/SKILL.md", Priority: -1},
	}
	for rot := range want {
		got := append(slices.Clone(want[rot:]), want[:rot]...)
		slices.Reverse(got)
		slices.SortFunc(got, func(a, b Entry) int { return Compare(&a, &b) })
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("rotation %d: got %+v", rot, got)
		}
	}
	if c := Compare(&want[0], &want[0]); c != 0 {
		t.Errorf("Compare(e, e) = %d", c)
	}
}

func TestHostsGolden(t *testing.T) {
	entries := []Entry{
		{Name: "three", Description: "Three hosts.", Location: "skills/three/SKILL.md", ReadPath: "skills/three/SKILL.md",
			Hosts: &Hosts{Count: 3, Names: []string{"mac-1", "linux-2", "win-3"}}},
		{Name: "five", Description: "Exactly five.", Location: "skills/five/SKILL.md", ReadPath: "skills/five/SKILL.md",
			Hosts: &Hosts{Count: 5, Names: []string{"h1", "h2", "h3", "h4", "h5"}}},
		{Name: "seven", Description: "More than five.", Location: "skills/seven/SKILL.md", ReadPath: "skills/seven/SKILL.md", Always: true,
			Hosts: &Hosts{Count: 7, Names: []string{"h1", "h2", "h3", "h4", "h5", "h6", "h7"}}},
		{Name: "count", Description: "Count only.", Location: "skills/count/SKILL.md", ReadPath: "skills/count/SKILL.md",
			Hosts: &Hosts{Count: 12}},
		{Name: "empty", Description: "No names: count only too.", Location: "skills/empty/SKILL.md", ReadPath: "skills/empty/SKILL.md",
			Hosts: &Hosts{Count: 0, Names: []string{}}},
		{Name: "hostile", Description: "Escaped names.", Location: "skills/hostile/SKILL.md", ReadPath: "skills/hostile/SKILL.md",
			Hosts: &Hosts{Count: 2, Names: []string{`a"b<c>&'d`, "</hosts></skill>\x00"}}},
	}
	golden(t, "hosts.golden", Render(entries))
	// Without Hosts, the fragment is as it always was.
	e := entries[0]
	e.Hosts = nil
	if got, want := Fragment(&e), "\n  <skill name=\"three\">\n    <description>Three hosts.</description>\n    <location>skills/three/SKILL.md</location>\n    <read_path>skills/three/SKILL.md</read_path>\n  </skill>"; got != want {
		t.Errorf("Fragment without hosts = %q, want %q", got, want)
	}
}

// TestVariantsGolden: the three variants of an entry with a hint.
func TestVariantsGolden(t *testing.T) {
	e := Entry{Name: "gh", Description: strings.Repeat("Interact with GitHub using the `gh` CLI: issues & pull requests. ", 4),
		Location: "agents/main/skills/gh/SKILL.md", ReadPath: "skills/gh/SKILL.md", Always: true,
		Hosts: &Hosts{Count: 2, Names: []string{"mac-1", "linux-2"}}}
	v := NewVariants(&e)
	if v.Full != Fragment(&e) {
		t.Errorf("Full != Fragment")
	}
	golden(t, "variants.golden", v.Full+"\n\n"+v.Short+"\n\n"+v.Bare+"\n")
	short := Entry{Name: "s", Description: "Short."}
	if v := NewVariants(&short); v.Short != v.Full || v.Bare != "\n  <skill name=\"s\">\n    <location></location>\n    <read_path></read_path>\n  </skill>" {
		t.Errorf("NewVariants(short) = %+v", v)
	}
}

// TestShort: the cut of a description; want "" means no cut (Short == Full).
func TestShort(t *testing.T) {
	a := strings.Repeat
	tests := []struct {
		name, desc, want string
	}{
		{"exactly 160", a("a", 160), ""},
		{"161 no space", a("a", 161), a("a", 159) + "…"},
		{"space at 159", a("abcd ", 40), strings.TrimSpace(a("abcd ", 32)) + "…"},
		{"last word boundary", a("a", 150) + " " + a("b", 10), a("a", 150) + "…"},
		{"space at 160 does not count", a("a", 160) + " b", a("a", 159) + "…"},
		{"punctuation trimmed", a("word, ", 30), a("word, ", 25) + "word…"},
		{"spaces and dots trimmed", a("a", 100) + " ... " + a("b", 100), a("a", 100) + "…"},
		{"160 multibyte", a("é", 160), ""},
		{"161 multibyte", a("é", 161), a("é", 159) + "…"},
		{"multibyte words", a("日本語 ", 50), strings.TrimSpace(a("日本語 ", 40)) + "…"},
		{"emoji", a("🙂", 170), a("🙂", 159) + "…"},
		{"control characters not counted", a("a", 160) + "\x00\x01\x1b\x7f", ""},
		{"control characters dropped", "\x1b" + a("a", 161), a("a", 159) + "…"},
		{"invalid UTF-8 as U+FFFD", a("a\xff", 100), a("a\uFFFD", 79) + "a…"},
		{"tab is a boundary", a("a", 100) + "\t" + a("b", 100), a("a", 100) + "…"},
		{"no-break space is not", a("ab\u00a0", 70), a("ab\u00a0", 52) + "ab…"},
		{"leading space is no boundary", " " + a("a", 200), " " + a("a", 158) + "…"},
		{"all punctuation", a(".", 200), a(".", 159) + "…"},
		{"entities escaped after the cut", a("a&b ", 50), strings.TrimSpace(a("a&b ", 40)) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := ent("x", tt.desc, false)
			v := NewVariants(&e)
			if tt.want == "" {
				if v.Short != v.Full {
					t.Errorf("cut: %q", v.Short)
				}
				return
			}
			if n := utf8.RuneCountInString(tt.want); n > shortMax {
				t.Fatalf("bad test: want has %d characters", n)
			}
			if want := fragment(&e, tt.want, true); v.Short != want {
				t.Errorf("Short =\n%q\nwant\n%q", v.Short, want)
			}
		})
	}
}

// BenchmarkBudgeted: 1,000 entries of about 250 bytes each (one in ten
// with a description that Short cuts); join is Join
// of their Full fragments (what the gateway does without a budget), step3
// a budget that puts some descriptions back, step4 one that leaves
// entries out.
func BenchmarkBudgeted(b *testing.B) {
	const n = 1000
	entries := make([]Entry, n)
	for i := range entries {
		desc := "Interact with GitHub using the `gh` CLI: issues & pull requests."
		if i%10 == 0 {
			desc = strings.Repeat("Long description of a skill, cut by Short. ", 4)
		}
		entries[i] = Entry{
			Name:        fmt.Sprintf("skill-%04d", i),
			Description: desc,
			Location:    fmt.Sprintf("skills/skill-%04d/SKILL.md", i),
			ReadPath:    fmt.Sprintf("skills/skill-%04d/SKILL.md", i),
			Always:      i%50 == 0,
			Priority:    i % 3,
		}
	}
	slices.SortFunc(entries, func(a, b Entry) int { return Compare(&a, &b) })
	vs := variantsOf(entries)
	full := make([]string, n)
	total := 0
	for i := range vs {
		full[i] = vs[i].Full
		total += len(full[i])
	}
	b.Logf("%d entries, %d bytes full (%d per entry)", n, total, total/n)
	b.Run("join", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Join(full)
		}
	})
	for _, c := range []struct {
		name  string
		limit int
	}{{"step3", total * 2 / 3}, {"step4", total / 3}} {
		bl := Budgeted(entries, vs, Budget{MaxChars: c.limit}, testNote)
		var count [4]int
		for _, f := range bl.Fits {
			count[f]++
		}
		if (c.name == "step3") != (bl.Omitted == 0) || count[FitFull]+count[FitShort] == 0 && c.name == "step3" {
			b.Fatalf("%s: budget %d gives %v", c.name, c.limit, count)
		}
		b.Logf("%s: MaxChars %d: %d bytes; omitted %d, full %d, short %d, name %d", c.name, c.limit, len(bl.Text), count[FitOmitted], count[FitFull], count[FitShort], count[FitName])
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Budgeted(entries, vs, Budget{MaxChars: c.limit}, testNote)
			}
		})
	}
}
