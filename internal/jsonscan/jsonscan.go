// Package jsonscan reads the common case of the JSON skillgate exchanges
// without building maps or calling reflection: objects with plain keys,
// ASCII strings without escapes, booleans, and values it only skips
// (checking their syntax). Anything else (an escape, a non-ASCII byte in a
// string it returns, nesting past MaxDepth) makes it give up, and the
// caller decodes with encoding/json instead, so that results and error
// messages are always those of encoding/json. The frames of nodes and the
// hosts files of eval are read with it: at 10,000 nodes their decoding was
// most of the cost. It imports nothing of the project.
package jsonscan

import "bytes"

// A Scanner reads JSON from a byte slice. The zero value scans nothing;
// Reset gives it input.
type Scanner struct {
	b []byte
	i int
}

// New returns a Scanner of b.
func New(b []byte) *Scanner { return &Scanner{b: b} }

// Reset makes s scan b from its start.
func (s *Scanner) Reset(b []byte) { s.b, s.i = b, 0 }

// Off returns the offset of the next byte to scan.
func (s *Scanner) Off() int { return s.i }

// MaxDepth bounds the nesting Skip takes; deeper values go to
// encoding/json, whose own limit then applies.
const MaxDepth = 64

// Space skips JSON whitespace.
func (s *Scanner) Space() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// space is Space for the hot paths: JSON's whitespace is all at or below
// ' ', so a byte above it (the common case: compact JSON) ends it without
// a call.
func (s *Scanner) space() {
	if s.i < len(s.b) && s.b[s.i] <= ' ' {
		s.Space()
	}
}

// Consume skips space and then c, reporting whether c was there.
func (s *Scanner) Consume(c byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// End reports whether only space is left.
func (s *Scanner) End() bool {
	s.Space()
	return s.i == len(s.b)
}

// plain marks the bytes a string may hold as they are: printable ASCII
// but the quote and the backslash.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Plain reads a string of printable ASCII without escapes and returns its
// bytes (a slice of the input).
func (s *Scanner) Plain() ([]byte, bool) {
	if !s.Consume('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.b) && plain[s.b[s.i]] {
		s.i++
	}
	if s.i < len(s.b) && s.b[s.i] == '"' {
		s.i++
		return s.b[start : s.i-1], true
	}
	return nil, false
}

// Literal reads true, false or null.
func (s *Scanner) Literal() (string, bool) {
	s.space()
	if s.i >= len(s.b) {
		return "", false
	}
	var lit string
	switch s.b[s.i] {
	case 't':
		lit = "true"
	case 'f':
		lit = "false"
	case 'n':
		lit = "null"
	default:
		return "", false
	}
	if len(s.b)-s.i >= len(lit) && string(s.b[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return lit, true
	}
	return "", false
}

// skip checks and skips one value of any kind, at nesting depth.
func (s *Scanner) skip(depth int) bool {
	s.space()
	if s.i >= len(s.b) || depth > MaxDepth {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		return s.skipString()
	case c == '{':
		s.i++
		if s.Consume('}') {
			return true
		}
		for {
			if !s.skipKey() || !s.Consume(':') || !s.skip(depth+1) {
				return false
			}
			if s.Consume('}') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	case c == '[':
		s.i++
		if s.Consume(']') {
			return true
		}
		for {
			if !s.skip(depth + 1) {
				return false
			}
			if s.Consume(']') {
				return true
			}
			if !s.Consume(',') {
				return false
			}
		}
	case c == '-' || '0' <= c && c <= '9':
		return s.number()
	}
	_, ok := s.Literal()
	return ok
}

func (s *Scanner) skipKey() bool {
	s.space()
	return s.i < len(s.b) && s.b[s.i] == '"' && s.skipString()
}

// skipString skips a string of ASCII with the simple escapes; anything
// else (\u escapes, non-ASCII bytes) is left to encoding/json.
func (s *Scanner) skipString() bool {
	s.i++ // '"'
	for ; s.i < len(s.b); s.i++ {
		if plain[s.b[s.i]] {
			continue
		}
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
func (s *Scanner) number() bool {
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

func (s *Scanner) digits() int {
	n := 0
	for s.i < len(s.b) && '0' <= s.b[s.i] && s.b[s.i] <= '9' {
		s.i++
		n++
	}
	return n
}

// Skip checks and skips one value of any kind.
func (s *Scanner) Skip() bool { return s.skip(1) }

// Null consumes a null literal if one is next, reporting whether it did.
func (s *Scanner) Null() bool {
	at := s.i
	if lit, ok := s.Literal(); ok && lit == "null" {
		return true
	}
	s.i = at
	return false
}

// Member is one member of a scanned object: its key and its value's JSON
// text, both slices of the input.
type Member struct {
	Key, Raw []byte
}

// SplitObject splits data, one JSON object, into its members in input
// order, appending to dst. It reports false for anything the scanner does
// not take (see scanner); a repeated key is kept twice, and readers take
// the last, as encoding/json does.
func SplitObject(dst []Member, data []byte) ([]Member, bool) {
	s := Scanner{b: data}
	if !s.Consume('{') {
		return dst, false
	}
	if s.Consume('}') {
		return dst, s.End()
	}
	for {
		key, ok := s.Plain()
		if !ok || !s.Consume(':') {
			return dst, false
		}
		s.Space()
		start := s.i
		if !s.skip(1) {
			return dst, false
		}
		dst = append(dst, Member{Key: key, Raw: data[start:s.i]})
		if s.Consume('}') {
			return dst, s.End()
		}
		if !s.Consume(',') {
			return dst, false
		}
	}
}

// PlainString returns the value of raw, a JSON string of printable ASCII
// without escapes, or false.
func PlainString(raw []byte) (string, bool) {
	s := Scanner{b: raw}
	b, ok := s.Plain()
	if !ok || s.i != len(raw) {
		return "", false
	}
	return string(b), true
}

// PlainStrings returns the values of raw, a JSON list of strings of
// printable ASCII without escapes, or false.
func PlainStrings(raw []byte) ([]string, bool) { return PlainStringsIn(raw, nil) }

// PlainStringsIn is PlainStrings that takes a value found in known (as a
// key) as known's string for it, without allocating: lists from a small
// vocabulary (a node's roles and capabilities) then share their strings.
func PlainStringsIn(raw []byte, known map[string]string) ([]string, bool) {
	s := Scanner{b: raw}
	if !s.Consume('[') {
		return nil, false
	}
	if s.Consume(']') {
		return []string{}, s.End()
	}
	// Plain strings hold no quote: two per value.
	l := make([]string, 0, bytes.Count(raw, []byte{'"'})/2)
	for {
		b, ok := s.Plain()
		if !ok {
			return nil, false
		}
		if k, ok := known[string(b)]; ok {
			l = append(l, k)
		} else {
			l = append(l, string(b))
		}
		if s.Consume(']') {
			return l, s.End()
		}
		if !s.Consume(',') {
			return nil, false
		}
	}
}
