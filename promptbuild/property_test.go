package promptbuild

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

var (
	propNames = []string{"github", "tmux", "a&b", "café", "日本語", "deploy", "x", "review<pr>", "gh", "z"}
	propWords = []string{"a", "use", "the", "GitHub", "CLI:", "issues,", "pull", "requests.", "é", "日本語", "🙂", "&", "<b>",
		"\"q\"", "'s'", "…", "(fast)", "--", "tab\tsep", "nl\nsep", "ctl\x00\x1b\x7f", "bad\xff", "nbsp\u00a0x",
		strings.Repeat("long", 30)}
)

// randDesc returns a description: empty, a few words, many words (often
// over 160 characters), or a long run without spaces.
func randDesc(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		return ""
	case 1:
		return strings.Repeat(propWords[r.IntN(len(propWords))], 20+r.IntN(200))
	}
	n := 1 + r.IntN(10)
	if r.IntN(2) == 0 {
		n += r.IntN(80)
	}
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(propWords[r.IntN(len(propWords))])
	}
	return b.String()
}

func randEntries(r *rand.Rand, n int) []Entry {
	es := make([]Entry, n)
	for i := range es {
		name := propNames[r.IntN(len(propNames))]
		if r.IntN(3) == 0 {
			name += strconv.Itoa(r.IntN(20))
		}
		e := Entry{
			Name:        name,
			Description: randDesc(r),
			Location:    fmt.Sprintf("skills/s%03d/SKILL.md", i),
			Always:      r.IntN(10) == 0,
			Priority:    r.IntN(4) - 1,
			Local:       r.IntN(3) == 0,
		}
		if e.Local {
			e.Location = "agents/main/" + e.Location
		}
		e.ReadPath = fmt.Sprintf("skills/s%03d/SKILL.md", i)
		if r.IntN(5) == 0 {
			h := &Hosts{Count: r.IntN(10)}
			if r.IntN(4) > 0 {
				for range r.IntN(9) {
					h.Names = append(h.Names, propNames[r.IntN(len(propNames))])
				}
			}
			e.Hosts = h
		}
		es[i] = e
	}
	return es
}

// naiveBudgeted is the budget algorithm done the slow way: every decision
// renders the whole candidate block and measures it.
func naiveBudgeted(entries []Entry, vs []Variants, b Budget, note string) Block {
	if len(entries) == 0 {
		return Block{}
	}
	fits := make([]Fit, len(entries))
	build := func() Block {
		bl := Block{Fits: slices.Clone(fits)}
		var body strings.Builder
		for i, f := range fits {
			switch f {
			case FitOmitted:
				bl.Omitted++
			case FitFull:
				body.WriteString(vs[i].Full)
			case FitShort:
				bl.Shortened++
				body.WriteString(vs[i].Short)
			case FitName:
				bl.Shortened++
				body.WriteString(vs[i].Bare)
			}
		}
		if bl.Omitted > 0 || bl.Shortened > 0 {
			var n strings.Builder
			escape(&n, note)
			fmt.Fprintf(&body, "\n  <note omitted=\"%d\" shortened=\"%d\">%s</note>", bl.Omitted, bl.Shortened, n.String())
		}
		bl.Text = "<available_skills>" + body.String() + "\n</available_skills>"
		return bl
	}
	fitsIn := func() bool { return b.MaxChars <= 0 || len(build().Text) <= b.MaxChars }
	always := 0
	for _, e := range entries {
		if e.Always {
			always++
		}
	}
	others := 0
	for i, e := range entries {
		if e.Always || b.MaxSkills <= 0 || others < b.MaxSkills-always {
			fits[i] = FitFull
			if !e.Always {
				others++
			}
		}
	}
	if fitsIn() {
		return build()
	}
	for i := range fits {
		if fits[i] != FitOmitted {
			fits[i] = FitName
		}
	}
	if fitsIn() {
		for i := range fits {
			if fits[i] != FitName {
				continue
			}
			fits[i] = FitShort
			if vs[i].Short == vs[i].Full {
				fits[i] = FitFull
			}
			if !fitsIn() {
				fits[i] = FitName
			}
		}
		return build()
	}
	for i := len(fits) - 1; i >= 0 && !fitsIn(); i-- {
		if !entries[i].Always {
			fits[i] = FitOmitted
		}
	}
	if fitsIn() {
		return build()
	}
	if always == 0 {
		return Block{Fits: fits, Omitted: len(fits)}
	}
	bl := build()
	bl.OverBudget = true
	return bl
}

type xmlSkill struct {
	name, always, desc, location string
	hasDesc, hasHosts            bool
}

// parseBlock walks text with encoding/xml: one root available_skills, its
// children skill elements then at most one note, last.
func parseBlock(text string) (skills []xmlSkill, note map[string]string, err error) {
	d := xml.NewDecoder(strings.NewReader(text))
	depth := 0
	var cur *xmlSkill
	var field string
	roots := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			switch depth {
			case 1:
				if roots++; roots > 1 || t.Name.Local != "available_skills" {
					return nil, nil, fmt.Errorf("root %q (#%d)", t.Name.Local, roots)
				}
			case 2:
				if note != nil {
					return nil, nil, fmt.Errorf("%q after the note", t.Name.Local)
				}
				attrs := map[string]string{}
				for _, a := range t.Attr {
					attrs[a.Name.Local] = a.Value
				}
				switch t.Name.Local {
				case "skill":
					skills = append(skills, xmlSkill{name: attrs["name"], always: attrs["always"]})
					cur = &skills[len(skills)-1]
				case "note":
					note = attrs
				default:
					return nil, nil, fmt.Errorf("child %q", t.Name.Local)
				}
			case 3:
				if cur == nil {
					return nil, nil, fmt.Errorf("%q in the note", t.Name.Local)
				}
				field = t.Name.Local
				switch field {
				case "description":
					cur.hasDesc = true
				case "hosts":
					cur.hasHosts = true
				case "location", "read_path":
				default:
					return nil, nil, fmt.Errorf("skill child %q", field)
				}
			default:
				return nil, nil, fmt.Errorf("element %q at depth %d", t.Name.Local, depth)
			}
		case xml.EndElement:
			if depth == 2 {
				cur = nil
			}
			field = ""
			depth--
		case xml.CharData:
			if cur != nil && field == "description" {
				cur.desc += string(t)
			}
			if cur != nil && field == "location" {
				cur.location += string(t)
			}
		}
	}
	if roots != 1 {
		return nil, nil, fmt.Errorf("%d roots", roots)
	}
	return skills, note, nil
}

// TestBudgetedProperties: random entry sets and budgets, seeded.
func TestBudgetedProperties(t *testing.T) {
	r := rand.New(rand.NewPCG(20240601, 42))
	notes := []string{testNote, "a < b & \"c\" 'd'\x00", "Kürzer: 日本語."}
	steps := map[string]int{}
	for iter := range 600 {
		n := r.IntN(301)
		if iter%3 == 0 {
			n = r.IntN(40)
		}
		entries := randEntries(r, n)
		slices.SortFunc(entries, func(a, b Entry) int { return Compare(&a, &b) })
		vs := variantsOf(entries)
		note := notes[r.IntN(len(notes))]
		fullSize := len(Join(fullOf(vs)))
		var b Budget
		switch r.IntN(5) {
		case 0:
		case 1:
			b.MaxChars = r.IntN(fullSize + 300)
		case 2:
			b.MaxChars = r.IntN(fullSize/3 + 300)
		default:
			b.MaxChars = fullSize/4 + r.IntN(fullSize*3/4+300)
		}
		if r.IntN(2) == 0 {
			b.MaxSkills = r.IntN(n + 5)
		}
		name := fmt.Sprintf("#%d n=%d %+v", iter, n, b)
		got := Budgeted(entries, vs, b, note)
		checkBlock(t, name, entries, vs, b, note, got)
		if again := Budgeted(slices.Clone(entries), slices.Clone(vs), b, note); !reflect.DeepEqual(again, got) {
			t.Errorf("%s: not deterministic", name)
		}
		if free := Budgeted(entries, vs, Budget{}, note); free.Text != Render(entries) || free.Omitted+free.Shortened != 0 {
			t.Errorf("%s: without limits, not Render", name)
		}
		if n <= 60 {
			if want := naiveBudgeted(entries, vs, b, note); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: differs from the naive build:\n got  %v %q\n want %v %q", name, got.Fits, got.Text, want.Fits, want.Text)
			}
		}
		switch {
		case got.OverBudget:
			steps["over"]++
		case got.Omitted > 0 && got.Shortened > 0:
			steps["dropped"]++
		case got.Shortened > 0:
			steps["shortened"]++
		default:
			steps["whole"]++
		}
	}
	t.Logf("outcomes: %v", steps)
	for _, s := range []string{"over", "dropped", "shortened", "whole"} {
		if steps[s] < 10 {
			t.Errorf("only %d cases %s: the generator misses a step", steps[s], s)
		}
	}
}

func fullOf(vs []Variants) []string {
	out := make([]string, len(vs))
	for i := range vs {
		out[i] = vs[i].Full
	}
	return out
}

func checkBlock(t *testing.T, name string, entries []Entry, vs []Variants, b Budget, note string, got Block) {
	t.Helper()
	if len(got.Fits) != len(entries) {
		t.Fatalf("%s: %d fits for %d entries", name, len(got.Fits), len(entries))
	}
	if len(entries) == 0 {
		if got.Text != "" {
			t.Errorf("%s: text for no entries", name)
		}
		return
	}
	// Budget.
	if b.MaxChars > 0 && len(got.Text) > b.MaxChars && !got.OverBudget {
		t.Errorf("%s: %d bytes over MaxChars", name, len(got.Text))
	}
	alwaysOnly := len(blockOpen) + len(blockClose)
	always := 0
	for i := range entries {
		if entries[i].Always {
			always++
			alwaysOnly += len(vs[i].Bare)
		}
	}
	var n strings.Builder
	escape(&n, note)
	alwaysOnly += len(fmt.Sprintf("\n  <note omitted=\"%d\" shortened=\"%d\">%s</note>", len(entries)-always, always, n.String()))
	if got.OverBudget && (b.MaxChars <= 0 || always == 0 || alwaysOnly <= b.MaxChars) {
		t.Errorf("%s: OverBudget, yet the always entries alone take %d bytes", name, alwaysOnly)
	}
	// Counts and Fits.
	omitted, shortened, others := 0, 0, 0
	for i, f := range got.Fits {
		switch f {
		case FitOmitted:
			omitted++
			if entries[i].Always {
				t.Errorf("%s: always entry %d left out", name, i)
			}
		case FitShort, FitName:
			shortened++
		}
		if f == FitShort && vs[i].Short == vs[i].Full {
			t.Errorf("%s: entry %d short but not cut", name, i)
		}
		if f == FitFull && vs[i].Short != vs[i].Full && got.Shortened > 0 {
			t.Errorf("%s: entry %d whole though cut, in a shortened block", name, i)
		}
		if f != FitOmitted && !entries[i].Always {
			others++
		}
	}
	if omitted != got.Omitted || shortened != got.Shortened {
		t.Errorf("%s: Omitted %d Shortened %d, Fits say %d %d", name, got.Omitted, got.Shortened, omitted, shortened)
	}
	if b.MaxSkills > 0 && others > max(0, b.MaxSkills-always) {
		t.Errorf("%s: %d entries besides the %d always ones, MaxSkills %d", name, others, always, b.MaxSkills)
	}
	if got.Text == "" {
		if omitted != len(entries) || always > 0 {
			t.Errorf("%s: empty text with entries kept", name)
		}
		return
	}
	// XML.
	skills, noteAttrs, err := parseBlock(got.Text)
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, got.Text)
	}
	if (noteAttrs != nil) != (omitted+shortened > 0) {
		t.Errorf("%s: note %v with omitted %d shortened %d", name, noteAttrs, omitted, shortened)
	}
	if noteAttrs != nil && (noteAttrs["omitted"] != strconv.Itoa(omitted) || noteAttrs["shortened"] != strconv.Itoa(shortened)) {
		t.Errorf("%s: note %v, counts %d %d", name, noteAttrs, omitted, shortened)
	}
	k := 0
	for i, f := range got.Fits {
		if f == FitOmitted {
			continue
		}
		if k >= len(skills) {
			t.Fatalf("%s: %d skills in the block, more kept", name, len(skills))
		}
		s, e := skills[k], &entries[i]
		k++
		if s.name != clean(e.Name) || s.location != clean(e.Location) || (s.always == "true") != e.Always || s.hasHosts != (e.Hosts != nil) {
			t.Errorf("%s: skill %d is %+v, entry %d %+v", name, k-1, s, i, e)
		}
		if s.hasDesc != (f != FitName) {
			t.Errorf("%s: entry %d fit %v, description present %v", name, i, f, s.hasDesc)
		}
		want := clean(e.Description)
		if f == FitShort {
			want, _ = shorten(e.Description)
		}
		if f != FitName && s.desc != want {
			t.Errorf("%s: entry %d fit %v: description %q, want %q", name, i, f, s.desc, want)
		}
	}
	if k != len(skills) {
		t.Errorf("%s: %d skills in the block, %d kept", name, len(skills), k)
	}
	// Tight: the block is the same with MaxChars its exact length.
	if b.MaxChars > 0 && !got.OverBudget {
		tb := b
		tb.MaxChars = len(got.Text)
		if tight := Budgeted(entries, vs, tb, note); !reflect.DeepEqual(tight, got) {
			t.Errorf("%s: MaxChars %d (its length) gives another block", name, tb.MaxChars)
		}
	}
}
