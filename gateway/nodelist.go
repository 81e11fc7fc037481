package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/protocol"
)

// Paging of GET /v1/nodes.
const (
	DefaultNodesPage = 1000
	MaxNodesPage     = 10000
)

// nodeFields are the top-level fields of a node in GET /v1/nodes, in the
// order they are written: api.Node's JSON names, its embedded host facts'
// first; nodeIndex are their indexes in api.Node. ?fields= selects among
// them ("id" always).
var nodeFields, nodeIndex = jsonFields(reflect.TypeFor[api.Node]())

// jsonFields returns the JSON names of a struct's fields in the order
// encoding/json writes them (an embedded struct's in its place), and their
// indexes for reflect.Value.FieldByIndex. The struct's tags have names
// and no options: each field is encoded alone, always.
func jsonFields(t reflect.Type) (names []string, index [][]int) {
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		names = append(names, name)
		index = append(index, f.Index)
	}
	return names, index
}

// nodeEntry is one node of the answer, each field encoded once.
type nodeEntry struct {
	id     string
	fields [][]byte // `"name":value`, in nodeFields order
}

// nodesCache holds the nodes of one registry generation, encoded. At
// thousands of nodes encoding costs a large fraction of a second, so
// callers between two node events share one build, and concurrent callers
// after an event wait for a single rebuild rather than each making their
// own; pages and field selections are cut from it. A rebuild encodes only
// the nodes that changed since the last one (by nodeRecord.ver): with a
// cluster some node changes every moment, and re-encoding 10,000 nodes
// for each took seconds.
type nodesCache struct {
	mu      sync.Mutex // serializes builds
	gen     uint64
	entries []nodeEntry // sorted by id; nil until the first build
	byID    map[string]versioned
}

// versioned is a node's entry as encoded at one version of its record;
// bad when that version could not be encoded (the node is left out).
type versioned struct {
	ver uint64
	e   nodeEntry
	bad bool
}

// nodeEntries returns every node, encoded, sorted by id.
func (s *Server) nodeEntries() []nodeEntry {
	c := &s.nodesJSON
	c.mu.Lock()
	defer c.mu.Unlock()
	s.mu.RLock()
	gen := s.nodesGenLocked()
	if c.entries != nil && c.gen == gen {
		s.mu.RUnlock()
		return c.entries
	}
	type raw struct {
		id          string
		ver         uint64
		facts       protocol.HostFacts
		connectedAt time.Time
		factsAt     *time.Time
		replica     string
	}
	var list []raw
	entries := make([]nodeEntry, 0, s.nodeCountLocked()+s.remoteCountLocked())
	byID := make(map[string]versioned, cap(entries))
	add := func(id string, n *nodeRecord, replica string) {
		if v, ok := c.byID[id]; ok && v.ver == n.ver {
			if !v.bad {
				entries = append(entries, v.e)
			}
			byID[id] = v
			return
		}
		r := raw{id: id, ver: n.ver, facts: n.factsLocked(), connectedAt: n.connectedAt.Truncate(time.Second), replica: replica}
		if n.host != nil {
			t := n.factsAt.Truncate(time.Second)
			r.factsAt = &t
		}
		list = append(list, r)
	}
	for id, c := range s.nodesLocked() {
		add(id, &c.nodeRecord, s.replica)
	}
	for id, n := range s.remotesLocked() {
		add(id, &n.nodeRecord, n.replica)
	}
	s.mu.RUnlock()
	// Encoding (the bulk of the work) runs without s.mu. A node with a
	// field that cannot be encoded is left out, never written in part
	// (one such node made every answer invalid JSON), and logged once
	// per version of its record.
	for _, r := range list {
		n := api.Node{HostFacts: r.facts, ConnectedAt: r.connectedAt, FactsAt: r.factsAt, Replica: r.replica}
		v := reflect.ValueOf(&n).Elem()
		e := nodeEntry{id: r.id, fields: make([][]byte, len(nodeFields))}
		var err error
		for j, name := range nodeFields {
			if e.fields[j], err = encodeField(name, v.FieldByIndex(nodeIndex[j]).Interface()); err != nil {
				break
			}
		}
		if err != nil {
			s.log.Error("GET /v1/nodes: leaving out a node whose facts cannot be encoded", "node", r.id, "replica", r.replica, "err", err)
			byID[r.id] = versioned{ver: r.ver, bad: true}
			continue
		}
		entries = append(entries, e)
		byID[r.id] = versioned{ver: r.ver, e: e}
	}
	slices.SortFunc(entries, func(a, b nodeEntry) int { return strings.Compare(a.id, b.id) })
	c.gen, c.entries, c.byID = gen, entries, byID
	return entries
}

// encodeField returns `"name":value`, or an error (a time out of years
// 0–9999): never a part of it.
func encodeField(name string, v any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(strconv.Quote(name))
	b.WriteByte(':')
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}

// nodesQuery is a parsed GET /v1/nodes query.
type nodesQuery struct {
	limit  int
	after  string          // ids after this one ("": from the start)
	ids    map[string]bool // nil: every id
	fields []bool          // by index in nodeFields
}

// parseNodesQuery checks ?limit=, ?cursor=, ?id= and ?fields=; errors say
// what was expected.
func parseNodesQuery(q url.Values) (nodesQuery, error) {
	nq := nodesQuery{limit: DefaultNodesPage, fields: make([]bool, len(nodeFields))}
	for k := range q {
		switch k {
		case "limit", "cursor", "id", "fields":
		default:
			return nq, fmt.Errorf("unknown parameter %q (known: limit, cursor, id, fields)", k)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxNodesPage {
			return nq, fmt.Errorf("limit: %q is not a whole number from 1 to %d", v, MaxNodesPage)
		}
		nq.limit = n
	}
	if v := q.Get("cursor"); v != "" {
		b, err := base64.RawURLEncoding.DecodeString(v)
		if err != nil || len(b) == 0 {
			return nq, errors.New("cursor: not a cursor this gateway gave (use the \"next\" of the previous page)")
		}
		nq.after = string(b)
	}
	if ids := q["id"]; len(ids) > 0 {
		if len(ids) > MaxNodesPage {
			return nq, fmt.Errorf("id: more than %d ids", MaxNodesPage)
		}
		nq.ids = make(map[string]bool, len(ids))
		for _, id := range ids {
			nq.ids[id] = true
		}
	}
	if v := q.Get("fields"); v != "" {
		for f := range strings.SplitSeq(v, ",") {
			i := slices.Index(nodeFields, strings.TrimSpace(f))
			if i < 0 {
				return nq, fmt.Errorf("fields: unknown field %q (known: %s)", f, strings.Join(nodeFields, ", "))
			}
			nq.fields[i] = true
		}
		nq.fields[0] = true
	} else {
		for i := range nq.fields {
			nq.fields[i] = true
		}
	}
	return nq, nil
}

// nodesPage writes one page of {"nodes": [...], "next": "…"}: an
// api.NodesPage, written from the entries' encoded fields.
func nodesPage(entries []nodeEntry, q nodesQuery) []byte {
	start := 0
	if q.after != "" {
		start, _ = slices.BinarySearchFunc(entries, q.after, func(e nodeEntry, id string) int {
			if e.id <= id {
				return -1
			}
			return 1
		})
	}
	var b bytes.Buffer
	b.WriteString(`{"nodes":[`)
	n, last := 0, ""
	more := false
	for _, e := range entries[start:] {
		if q.ids != nil && !q.ids[e.id] {
			continue
		}
		if n == q.limit {
			more = true
			break
		}
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('{')
		sep := false
		for i, f := range e.fields {
			if !q.fields[i] {
				continue
			}
			if sep {
				b.WriteByte(',')
			}
			b.Write(f)
			sep = true
		}
		b.WriteByte('}')
		n++
		last = e.id
	}
	b.WriteByte(']')
	if more {
		b.WriteString(`,"next":"`)
		b.WriteString(base64.RawURLEncoding.EncodeToString([]byte(last)))
		b.WriteByte('"')
	}
	b.WriteString("}\n")
	return b.Bytes()
}
