package protocol

import (
	"maps"
	"slices"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

// FactsScan decodes the params of req facts.update into names, without
// maps: the gateway looks each name up in its interest and keeps bit
// positions, so the names are only read, never kept. A FactsScan is reused
// frame after frame; the names it returns are valid until the next Scan.
type FactsScan struct {
	Env     [][]byte // the env names, as listed (repeats included)
	Bins    [][]byte // the hostBinStatus names, in frame order…
	Present []bool   // …and whether each exists; a repeated name: the last counts
	s       jsonscan.Scanner
}

// Reset drops every reference into the last frame scanned (keeping the
// lists' capacity), so that a FactsScan kept for reuse holds no frame.
func (f *FactsScan) Reset() {
	clear(f.Env[:cap(f.Env)])
	clear(f.Bins[:cap(f.Bins)])
	f.Env, f.Bins, f.Present = f.Env[:0], f.Bins[:0], f.Present[:0]
	f.s = jsonscan.Scanner{}
}

// Scan decodes raw, accepting and refusing exactly what ParseFactsUpdate
// does, with the same errors.
func (f *FactsScan) Scan(raw []byte) error {
	f.Env, f.Bins, f.Present = f.Env[:0], f.Bins[:0], f.Present[:0]
	if f.scan(raw) {
		return nil
	}
	// Whatever the scanner does not take goes through the decoder that
	// defines the rules.
	f.Env, f.Bins, f.Present = f.Env[:0], f.Bins[:0], f.Present[:0]
	u, err := ParseFactsUpdate(raw)
	if err != nil {
		return err
	}
	for _, e := range u.Env {
		f.Env = append(f.Env, []byte(e))
	}
	for _, b := range slices.Sorted(maps.Keys(u.HostBinStatus)) {
		f.Bins = append(f.Bins, []byte(b))
		f.Present = append(f.Present, u.HostBinStatus[b])
	}
	return nil
}

// scan is the fast path; false sends raw to ParseFactsUpdate.
func (f *FactsScan) scan(raw []byte) bool {
	s := &f.s
	s.Reset(raw)
	if !s.Consume('{') {
		return false
	}
	var seenEnv, seenBins bool
	if !s.Consume('}') {
		for {
			key, ok := s.Plain()
			if !ok || !s.Consume(':') {
				return false
			}
			switch string(key) {
			case "env":
				if seenEnv || !f.env() {
					return false
				}
				seenEnv = true
			case "hostBinStatus":
				if seenBins || !f.bins() {
					return false
				}
				seenBins = true
			default:
				// Keys are matched exactly (the params are a map of raw
				// members): any other key is ignored.
				if !s.Skip() {
					return false
				}
			}
			if s.Consume('}') {
				break
			}
			if !s.Consume(',') {
				return false
			}
		}
	}
	if !s.End() {
		return false
	}
	// The limits of FactsUpdate.Validate: past them the decoder words the error.
	if len(f.Env) > MaxNames || len(f.Bins) > MaxNames {
		return false
	}
	for _, names := range [2][][]byte{f.Env, f.Bins} {
		for _, n := range names {
			if len(n) == 0 || len(n) > MaxNameLen {
				return false
			}
		}
	}
	return true
}

// env reads a list of plain strings, or null.
func (f *FactsScan) env() bool {
	s := &f.s
	if s.Consume('[') {
		if s.Consume(']') {
			return true
		}
		for {
			name, ok := s.Plain()
			if !ok {
				return false
			}
			f.Env = append(f.Env, name)
			if s.Consume(']') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	}
	lit, ok := s.Literal()
	return ok && lit == "null"
}

// bins reads an object of booleans with plain keys, or null.
func (f *FactsScan) bins() bool {
	s := &f.s
	if s.Consume('{') {
		if s.Consume('}') {
			return true
		}
		for {
			name, ok := s.Plain()
			if !ok || !s.Consume(':') {
				return false
			}
			lit, ok := s.Literal()
			if !ok || lit == "null" {
				return false // null leaves a map entry false: the decoder's business
			}
			f.Bins = append(f.Bins, name)
			f.Present = append(f.Present, lit == "true")
			if s.Consume('}') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	}
	lit, ok := s.Literal()
	return ok && lit == "null"
}
