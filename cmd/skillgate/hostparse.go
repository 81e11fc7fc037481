package main

import (
	"bytes"

	"github.com/skillgate/skillgate/internal/jsonscan"
)

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
	s     jsonscan.Scanner
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
	p.data = data
	p.s.Reset(data)
	if !p.s.Consume('{') {
		return false
	}
	var seen uint8
	if p.s.Consume('}') {
		return p.s.End()
	}
	for {
		key, ok := p.s.Plain()
		if !ok || !p.s.Consume(':') {
			return false
		}
		field := hostField(key, nodes)
		switch {
		case field < 0:
			return false
		case field == fieldOther:
			if !p.s.Skip() {
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
		if p.s.Consume(',') {
			continue
		}
		return p.s.Consume('}') && p.s.End()
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

// name reads such a string and interns it.
func (p *hostParser) name() (string, bool) {
	b, ok := p.s.Plain()
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
	if p.s.Null() {
		return nil, true
	}
	if !p.s.Consume('[') {
		return nil, false
	}
	out := buf[:0]
	if p.s.Consume(']') {
		return out, true
	}
	for {
		s, ok := p.name()
		if !ok {
			return nil, false
		}
		out = append(out, s)
		if p.s.Consume(',') {
			continue
		}
		return out, p.s.Consume(']')
	}
}

// bools reads an object of booleans into p.bins; null is a nil map.
func (p *hostParser) bools() (map[string]bool, bool) {
	if p.s.Null() {
		return nil, true
	}
	if !p.s.Consume('{') {
		return nil, false
	}
	if p.bins == nil || len(p.bins) > 1024 {
		p.bins = map[string]bool{} // a huge one is not kept: clear costs its size
	}
	out := p.bins
	clear(out)
	if p.s.Consume('}') {
		return out, true
	}
	for {
		k, ok := p.name()
		if !ok || !p.s.Consume(':') {
			return nil, false
		}
		lit, ok := p.s.Literal()
		if !ok || lit == "null" {
			return nil, false // null is encoding/json's to judge
		}
		out[k] = lit == "true"
		if p.s.Consume(',') {
			continue
		}
		return out, p.s.Consume('}')
	}
}

func (p *hostParser) field(n *nodeFacts, field int) bool {
	var ok bool
	switch field {
	case fieldID, fieldOS:
		if p.s.Null() {
			return true // null leaves a string as it is
		}
		if field == fieldOS {
			n.OS, ok = p.name()
			return ok
		}
		var b []byte
		if b, ok = p.s.Plain(); ok {
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
		p.s.Space()
		start := p.s.Off()
		if ok = p.s.Skip(); ok {
			n.FactsAt = p.data[start:p.s.Off()]
		}
	}
	return ok
}
