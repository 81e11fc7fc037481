package promptbuild

import (
	"strconv"
	"strings"
)

// Fit is how an entry appears in a budgeted block.
type Fit uint8

// Fits, from left out to whole.
const (
	FitOmitted Fit = iota // not in the block
	FitFull               // as Fragment renders it
	FitShort              // description cut (Variants.Short)
	FitName               // no description (Variants.Bare)
)

// String returns "omitted", "full", "short" or "name".
func (f Fit) String() string {
	switch f {
	case FitOmitted:
		return "omitted"
	case FitFull:
		return "full"
	case FitShort:
		return "short"
	case FitName:
		return "name"
	}
	return "Fit(" + strconv.Itoa(int(f)) + ")"
}

// Budget limits a block. A value ≤ 0 means no limit.
type Budget struct {
	MaxChars  int // bytes of the whole block, the note included
	MaxSkills int // entries in the block; always entries are kept beyond it
}

// Block is a budgeted block.
type Block struct {
	Text       string
	Fits       []Fit // per entry, in the order given
	Omitted    int   // entries left out (by either limit)
	Shortened  int   // entries whose description was cut or removed
	OverBudget bool  // the always entries alone exceed MaxChars (then all are emitted anyway)
}

const (
	noteOpen      = "\n  <note omitted=\""
	noteShortened = "\" shortened=\""
	noteText      = "\">"
	noteClose     = "</note>"
)

// Budgeted builds the block of entries, which must be in Compare order,
// with their variants (vs[i] of entries[i]), within b; note is the one
// sentence of the <note> element (escaped here).
//
// MaxSkills keeps the first MaxSkills entries, and every always entry
// whatever MaxSkills. If the kept entries fit MaxChars whole, that is the
// block. Otherwise every kept entry starts without its description, and
// descriptions are put back in order (cut ones in their Short form)
// wherever the block still fits; an entry whose description does not fit
// stays bare and the next ones are still tried. If even every kept entry
// bare does not fit, entries that are not always are left out from the
// end of the order until the bare block fits; if the always entries alone
// do not fit, they are all emitted bare and OverBudget is set. If every
// entry is left out, the block is the note alone, or "" when that does
// not fit either.
//
// Whenever an entry is left out or shortened, the block ends with
// <note omitted="N" shortened="M">note</note>, counted in MaxChars. The
// budget is decided on the byte lengths of vs alone, and the chosen
// strings are joined once: the cost is that of Join and a few passes of
// arithmetic. No entries give "".
func Budgeted(entries []Entry, vs []Variants, b Budget, note string) Block {
	if len(vs) != len(entries) {
		panic("promptbuild: Budgeted: " + strconv.Itoa(len(vs)) + " variants for " + strconv.Itoa(len(entries)) + " entries")
	}
	if len(entries) == 0 {
		return Block{}
	}
	fits := make([]Fit, len(entries))

	// 1: MaxSkills.
	kept := 0
	if b.MaxSkills > 0 {
		room := b.MaxSkills
		for i := range entries {
			if entries[i].Always {
				room--
			}
		}
		for i := range entries {
			if entries[i].Always || room > 0 {
				if !entries[i].Always {
					room--
				}
				fits[i] = FitFull
				kept++
			}
		}
	} else {
		for i := range fits {
			fits[i] = FitFull
		}
		kept = len(entries)
	}
	omitted := len(entries) - kept
	shortened := 0

	var esc strings.Builder
	escape(&esc, note)
	sentence := esc.String()
	noteLen := func(omitted, shortened int) int {
		if omitted == 0 && shortened == 0 {
			return 0
		}
		return len(noteOpen) + digits(omitted) + len(noteShortened) + digits(shortened) +
			len(noteText) + len(sentence) + len(noteClose)
	}
	limit := b.MaxChars
	over := false

	// 2: everything kept, whole.
	size := len(blockOpen) + len(blockClose)
	for i := range vs {
		if fits[i] != FitOmitted {
			size += len(vs[i].Full)
		}
	}
	if limit > 0 && size+noteLen(omitted, 0) > limit {
		// 3: every kept entry bare, then descriptions back in order.
		size = len(blockOpen) + len(blockClose)
		for i := range vs {
			if fits[i] != FitOmitted {
				fits[i] = FitName
				size += len(vs[i].Bare)
			}
		}
		shortened = kept
		if size+noteLen(omitted, shortened) <= limit {
			for i := range vs {
				if fits[i] != FitName {
					continue
				}
				v := &vs[i]
				grown, sh, f := size+len(v.Short)-len(v.Bare), shortened, FitShort
				if v.Short == v.Full {
					sh, f = sh-1, FitFull
				}
				if grown+noteLen(omitted, sh) <= limit {
					size, shortened, fits[i] = grown, sh, f
				}
			}
		} else {
			// 4: leave out entries from the end, bare.
			for i := len(vs) - 1; i >= 0 && size+noteLen(omitted, shortened) > limit; i-- {
				if fits[i] == FitOmitted || entries[i].Always {
					continue
				}
				fits[i] = FitOmitted
				size -= len(vs[i].Bare)
				omitted++
				shortened--
				kept--
			}
			if size+noteLen(omitted, shortened) > limit {
				if kept == 0 {
					// Not even the note fits, and no entry must be shown.
					return Block{Fits: fits, Omitted: omitted}
				}
				over = true
			}
		}
	}

	// Join the chosen strings once.
	nl := noteLen(omitted, shortened)
	var out strings.Builder
	out.Grow(size + nl)
	out.WriteString(blockOpen)
	for i := range vs {
		switch fits[i] {
		case FitFull:
			out.WriteString(vs[i].Full)
		case FitShort:
			out.WriteString(vs[i].Short)
		case FitName:
			out.WriteString(vs[i].Bare)
		}
	}
	if nl > 0 {
		var num [20]byte
		out.WriteString(noteOpen)
		out.Write(strconv.AppendInt(num[:0], int64(omitted), 10))
		out.WriteString(noteShortened)
		out.Write(strconv.AppendInt(num[:0], int64(shortened), 10))
		out.WriteString(noteText)
		out.WriteString(sentence)
		out.WriteString(noteClose)
	}
	out.WriteString(blockClose)
	return Block{Text: out.String(), Fits: fits, Omitted: omitted, Shortened: shortened, OverBudget: over}
}

// digits is the length of n in decimal (n ≥ 0).
func digits(n int) int {
	d := 1
	for n >= 10 {
		n /= 10
		d++
	}
	return d
}
