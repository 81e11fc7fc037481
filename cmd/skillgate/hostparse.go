package main

import "bytes"

// hostParser decodes host objects into nodeFacts exactly as encoding/json
// would, for the shape nodes and the gateway write: known keys spelled as
// documented, ASCII strings without escapes, lists of strings and a map of
// booleans. At 10,000 hosts it is several times faster than
// encoding/json and allocates little: names (binaries, env names, roles…)
// repeat across hosts and are interned, and the lists and the
// hostBinStatus map of one host are reused for the next, since a host is
// validated and indexed (copied into eligibility.Host) before the next is
// parsed. Not safe for concurrent use.
type hostParser struct {
	data  []byte
	off   int
	names map[string]string // interned names
	lists [3][]string       // roles, capabilities, env, reused
	bins  map[string]bool   // hostBinStatus, reused
}

func newHostParser() *hostParser { return &hostParser{names: map[string]string{}} }

// parse decodes data, which must be valid JSON (the json.Decoder that cut
// it out checked that), into n. It returns false for anything it does not
// decode exactly as encoding/json: a key that encoding/json would match
// case-insensitively, a repeated key, an escape or a non-ASCII byte in a
// string, a value of another type. The caller then decodes the object with
// encoding/json, so results and errors are always those of encoding/json.
// nodes selects the fields of a GET /v1/nodes node (factsAt too). n is
// valid until the next call.
func (p *hostParser) parse(data []byte, n *nodeFacts, nodes bool) bool {
	p.data, p.off = data, 0
	if !p.consume('{') {
		return false
	}
	var seen uint8
	if p.consume('}') {
		return p.end()
	}
	for {
		key, ok := p.str()
		if !ok || !p.consume(':') {
			return false
		}
		field := hostField(key, nodes)
		switch {
		case field < 0:
			return false
		case field == fieldOther:
			if !p.skip() {
				return false
			}
		case seen&(1<<field) != 0:
			return false
		default:
			seen |= 1 << field
			if !p.field(n, field) {
				return false
			}
		}
		if p.consume(',') {
			continue
		}
		return p.consume('}') && p.end()
	}
}

// Fields of nodeFacts, as bits of the "seen" mask.
const (
	fieldID = iota
	fieldOS
	fieldRoles
	fieldCapabilities
	fieldEnv
	fieldHostBinStatus
	fieldFactsAt
	fieldOther = 100 // a key encoding/json ignores
)

var hostFieldNames = [][]byte{[]byte("id"), []byte("os"), []byte("roles"), []byte("capabilities"), []byte("env"), []byte("hostBinStatus"), []byte("factsAt")}

// hostField returns the field of key, fieldOther for a key that matches
// no field, or -1 when only encoding/json can tell (a case-insensitive or
// non-ASCII near-match).
func hostField(key []byte, nodes bool) int {
	names := hostFieldNames
	if !nodes {
		names = names[:fieldFactsAt]
	}
	for i, name := range names {
		if bytes.Equal(key, name) {
			return i
		}
	}
	for i := 0; i < len(key); i++ {
		if key[i] >= 0x80 {
			return -1 // Unicode case folding (ſ, K) is encoding/json's to judge
		}
	}
	for _, name := range names {
		if bytes.EqualFold(key, name) {
			return -1
		}
	}
	return fieldOther
}

func (p *hostParser) space() {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case ' ', '\t', '\n', '\r':
			p.off++
		default:
			return
		}
	}
}

// consume skips space and then c, reporting whether c was there.
func (p *hostParser) consume(c byte) bool {
	p.space()
	if p.off < len(p.data) && p.data[p.off] == c {
		p.off++
		return true
	}
	return false
}

func (p *hostParser) end() bool {
	p.space()
	return p.off == len(p.data)
}

// peekNull consumes a null literal if one is next.
func (p *hostParser) peekNull() bool {
	p.space()
	if bytes.HasPrefix(p.data[p.off:], []byte("null")) {
		p.off += 4
		return true
	}
	return false
}

// str reads a string without escapes or non-ASCII bytes; the bytes are
// those of data.
func (p *hostParser) str() ([]byte, bool) {
	if !p.consume('"') {
		return nil, false
	}
	rest := p.data[p.off:]
	for i, c := range rest {
		switch {
		case c == '"':
			p.off += i + 1
			return rest[:i], true
		case c == '\\' || c >= 0x80:
			return nil, false
		}
	}
	return nil, false
}

// name reads such a string and interns it.
func (p *hostParser) name() (string, bool) {
	b, ok := p.str()
	if !ok {
		return "", false
	}
	if s, ok := p.names[string(b)]; ok {
		return s, true
	}
	s := string(b)
	p.names[s] = s
	return s, true
}

// list reads a list of names into buf[:0]; null is a nil list, as
// encoding/json makes it.
func (p *hostParser) list(buf []string) ([]string, bool) {
	if p.peekNull() {
		return nil, true
	}
	if !p.consume('[') {
		return nil, false
	}
	out := buf[:0]
	if p.consume(']') {
		return out, true
	}
	for {
		s, ok := p.name()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if p.consume(',') {
			continue
		}
		return out, p.consume(']')
	}
}

// bools reads an object of booleans into p.bins; null is a nil map.
func (p *hostParser) bools() (map[string]bool, bool) {
	if p.peekNull() {
		return nil, true
	}
	if !p.consume('{') {
		return nil, false
	}
	if p.bins == nil || len(p.bins) > 1024 {
		p.bins = map[string]bool{} // a huge one is not kept: clear costs its size
	}
	out := p.bins
	clear(out)
	if p.consume('}') {
		return out, true
	}
	for {
		k, ok := p.name()
		if !ok || !p.consume(':') {
			return nil, false
		}
		p.space()
		switch rest := p.data[p.off:]; {
		case bytes.HasPrefix(rest, []byte("true")):
			out[k] = true
			p.off += 4
		case bytes.HasPrefix(rest, []byte("false")):
			out[k] = false
			p.off += 5
		default:
			return nil, false
		}
		if p.consume(',') {
			continue
		}
		return out, p.consume('}')
	}
}

func (p *hostParser) field(n *nodeFacts, field int) bool {
	var ok bool
	switch field {
	case fieldID, fieldOS:
		if p.peekNull() {
			return true // null leaves a string as it is
		}
		if field == fieldOS {
			n.OS, ok = p.name()
			return ok
		}
		var b []byte
		if b, ok = p.str(); ok {
			n.ID = string(b)
		}
	case fieldRoles:
		n.Roles, ok = p.list(p.lists[0])
		p.lists[0] = n.Roles
	case fieldCapabilities:
		n.Capabilities, ok = p.list(p.lists[1])
		p.lists[1] = n.Capabilities
	case fieldEnv:
		n.Env, ok = p.list(p.lists[2])
		p.lists[2] = n.Env
	case fieldHostBinStatus:
		n.HostBinStatus, ok = p.bools()
	case fieldFactsAt:
		start := p.off
		if ok = p.skip(); ok {
			n.FactsAt = bytes.TrimSpace(p.data[start:p.off])
		}
	}
	return ok
}

// skip skips one value of valid JSON.
func (p *hostParser) skip() bool {
	p.space()
	depth := 0
	for p.off < len(p.data) {
		c := p.data[p.off]
		p.off++
		switch c {
		case '"':
			if !p.skipString() {
				return false
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth < 0 {
				return false
			}
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return false
			}
		default: // a literal or a number
			for p.off < len(p.data) && isLiteralByte(p.data[p.off]) {
				p.off++
			}
		}
		if depth == 0 {
			return true
		}
	}
	return false
}

// skipString skips the rest of a string whose '"' was read.
func (p *hostParser) skipString() bool {
	for p.off < len(p.data) {
		switch p.data[p.off] {
		case '"':
			p.off++
			return true
		case '\\':
			p.off++
		}
		p.off++
	}
	return false
}

func isLiteralByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.'
}
