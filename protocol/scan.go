package protocol

import (
	"maps"
	"slices"
)

// A scanner reads the common case of the wire's JSON without building maps
// or calling reflection: objects with plain keys, ASCII strings without
// escapes, booleans, and values it only skips (checking their syntax).
// Anything else (an escape, a non-ASCII byte in a string it returns, a
// repeated key, nesting past maxScanDepth) makes it give up, and the
// caller decodes with encoding/json instead, so that results and error
// messages are always those of encoding/json. It exists because at 10,000
// nodes the decoding of frames was most of the gateway's CPU per connect.
type scanner struct {
	b []byte
	i int
}

// maxScanDepth bounds the nesting the scanner skips; deeper values go to
// encoding/json, whose own limit then applies.
const maxScanDepth = 64

func (s *scanner) space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips space and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// end reports whether only space is left.
func (s *scanner) end() bool {
	s.space()
	return s.i == len(s.b)
}

// plain reads a string of printable ASCII without escapes and returns its
// bytes (a slice of the input).
func (s *scanner) plain() ([]byte, bool) {
	if !s.consume('"') {
		return nil, false
	}
	start := s.i
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], true
		case c < 0x20 || c >= 0x7f || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

// literal reads true, false or null.
func (s *scanner) literal() (string, bool) {
	s.space()
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
			s.i += len(lit)
			return lit, true
		}
	}
	return "", false
}

// skip checks and skips one value of any kind.
func (s *scanner) skip(depth int) bool {
	s.space()
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{':
		s.i++
		if s.consume('}') {
			return true
		}
		for {
			if !s.skipKey() || !s.consume(':') || !s.skip(depth+1) {
				return false
			}
			if s.consume('}') {
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	case c == '[':
		s.i++
		if s.consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.consume(']') {
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	_, ok := s.literal()
	return ok
}

func (s *scanner) skipKey() bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == '"' && s.skipString()
}

// skipString skips a string of ASCII with the simple escapes; anything
// else (\u escapes, non-ASCII bytes) is left to encoding/json.
func (s *scanner) skipString() bool {
	s.i++ // '"'
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			s.i++
			return true
		case c == '\\':
			s.i++
			if s.i >= len(s.b) {
				return false
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			default:
				return false
			}
		case c < 0x20 || c >= 0x7f:
			return false
		}
	}
	return false
}

// number skips a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	switch {
	case s.i < len(s.b) && s.b[s.i] == '0':
		s.i++
	case s.digits() == 0:
		return false
	}
	if s.i < len(s.b) && s.b[s.i] == '.' {
		s.i++
		if s.digits() == 0 {
			return false
		}
	}
	if s.i < len(s.b) && (s.b[s.i] == 'e' || s.b[s.i] == 'E') {
		s.i++
		if s.i < len(s.b) && (s.b[s.i] == '+' || s.b[s.i] == '-') {
			s.i++
		}
		if s.digits() == 0 {
			return false
		}
	}
	return true
}

func (s *scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// FactsScan decodes the params of req facts.update into names, without
// maps: the gateway looks each name up in its interest and keeps bit
// positions, so the names are only read, never kept. A FactsScan is reused
// frame after frame; the names it returns are valid until the next Scan.
type FactsScan struct {
	Env     [][]byte // the env names, as listed (repeats included)
	Bins    [][]byte // the hostBinStatus names, in frame order…
	Present []bool   // …and whether each exists; a repeated name: the last counts
	s       scanner
}

// Reset drops every reference into the last frame scanned (keeping the
// lists' capacity), so that a FactsScan kept for reuse holds no frame.
func (f *FactsScan) Reset() {
	clear(f.Env[:cap(f.Env)])
	clear(f.Bins[:cap(f.Bins)])
	f.Env, f.Bins, f.Present = f.Env[:0], f.Bins[:0], f.Present[:0]
	f.s = scanner{}
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
	s.b, s.i = raw, 0
	if !s.consume('{') {
		return false
	}
	var seenEnv, seenBins bool
	if !s.consume('}') {
		for {
			key, ok := s.plain()
			if !ok || !s.consume(':') {
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
				if !s.skip(1) {
					return false
				}
			}
			if s.consume('}') {
				break
			}
			if !s.consume(',') {
				return false
			}
		}
	}
	if !s.end() {
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
	if s.consume('[') {
		if s.consume(']') {
			return true
		}
		for {
			name, ok := s.plain()
			if !ok {
				return false
			}
			f.Env = append(f.Env, name)
			if s.consume(']') {
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	}
	lit, ok := s.literal()
	return ok && lit == "null"
}

// bins reads an object of booleans with plain keys, or null.
func (f *FactsScan) bins() bool {
	s := &f.s
	if s.consume('{') {
		if s.consume('}') {
			return true
		}
		for {
			name, ok := s.plain()
			if !ok || !s.consume(':') {
				return false
			}
			lit, ok := s.literal()
			if !ok || lit == "null" {
				return false // null leaves a map entry false: the decoder's business
			}
			f.Bins = append(f.Bins, name)
			f.Present = append(f.Present, lit == "true")
			if s.consume('}') {
				return true
			}
			if !s.consume(',') {
				return false
			}
		}
	}
	lit, ok := s.literal()
	return ok && lit == "null"
}

// member is one member of a scanned object: its key and its value's JSON
// text, both slices of the input.
type member struct {
	key, raw []byte
}

// splitObject splits data, one JSON object, into its members in input
// order, appending to dst. It reports false for anything the scanner does
// not take (see scanner); a repeated key is kept twice, and readers take
// the last, as encoding/json does.
func splitObject(dst []member, data []byte) ([]member, bool) {
	s := scanner{b: data}
	if !s.consume('{') {
		return dst, false
	}
	if s.consume('}') {
		return dst, s.end()
	}
	for {
		key, ok := s.plain()
		if !ok || !s.consume(':') {
			return dst, false
		}
		s.space()
		start := s.i
		if !s.skip(1) {
			return dst, false
		}
		dst = append(dst, member{key: key, raw: data[start:s.i]})
		if s.consume('}') {
			return dst, s.end()
		}
		if !s.consume(',') {
			return dst, false
		}
	}
}

// plainString returns the value of raw, a JSON string of printable ASCII
// without escapes, or false.
func plainString(raw []byte) (string, bool) {
	s := scanner{b: raw}
	b, ok := s.plain()
	if !ok || s.i != len(raw) {
		return "", false
	}
	return string(b), true
}

// plainStrings returns the values of raw, a JSON list of strings of
// printable ASCII without escapes, or false.
func plainStrings(raw []byte) ([]string, bool) {
	s := scanner{b: raw}
	if !s.consume('[') {
		return nil, false
	}
	l := []string{}
	if s.consume(']') {
		return l, s.end()
	}
	for {
		b, ok := s.plain()
		if !ok {
			return nil, false
		}
		l = append(l, string(b))
		if s.consume(']') {
			return l, s.end()
		}
		if !s.consume(',') {
			return nil, false
		}
	}
}
