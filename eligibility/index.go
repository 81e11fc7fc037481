package eligibility

import (
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/internal/bitset"
)

// Index holds connected hosts by attribute (role, capability, OS, env
// name, binary) as bitsets over host slots, so that a skill's host filter
// chain costs a few word-wise ANDs and ORs instead of a pass over every
// host. It is the only evaluator of a set of hosts (the gateway's live
// counts check one host at a time with Requirements.Matches, on the same
// stage table); the straightforward evaluator is kept in the tests, as the
// oracle it must agree with. An Index is not safe for concurrent mutation;
// readers must not run during Put/Remove.
type Index struct {
	hosts []*Host        // slot → host, nil when free
	slots map[string]int // host id → slot
	free  []int
	all   bitset.Set
	attrs [numAttrs]map[string]*bitset.Set // never an empty set: deleted when it empties
}

type attr int

const (
	attrRole attr = iota
	attrCap
	attrOS
	attrEnv
	attrBin
	numAttrs
)

// NewIndex returns an empty index.
func NewIndex() *Index {
	x := &Index{slots: map[string]int{}}
	for i := range x.attrs {
		x.attrs[i] = map[string]*bitset.Set{}
	}
	return x
}

// Len returns the number of hosts.
func (x *Index) Len() int { return len(x.slots) }

// Get returns the host with this id, or nil.
func (x *Index) Get(id string) *Host {
	if s, ok := x.slots[id]; ok {
		return x.hosts[s]
	}
	return nil
}

// Put adds a host, replacing one with the same id.
func (x *Index) Put(h *Host) {
	x.Remove(h.ID)
	var s int
	if n := len(x.free); n > 0 {
		s, x.free = x.free[n-1], x.free[:n-1]
		x.hosts[s] = h
	} else {
		s = len(x.hosts)
		x.hosts = append(x.hosts, h)
	}
	x.slots[h.ID] = s
	x.all.Add(s)
	x.each(h, func(a attr, name string) {
		b := x.attrs[a][name]
		if b == nil {
			b = new(bitset.Set)
			x.attrs[a][name] = b
		}
		b.Add(s)
	})
}

// Remove drops the host with this id, if present.
func (x *Index) Remove(id string) {
	s, ok := x.slots[id]
	if !ok {
		return
	}
	h := x.hosts[s]
	x.each(h, func(a attr, name string) {
		b := x.attrs[a][name]
		if b == nil {
			return // a name the host lists twice: gone with the first
		}
		b.Remove(s)
		if b.Empty() {
			delete(x.attrs[a], name) // memory follows the fleet
		}
	})
	x.all.Remove(s)
	x.hosts[s] = nil
	delete(x.slots, id)
	x.free = append(x.free, s)
}

func (x *Index) each(h *Host, f func(attr, string)) {
	f(attrOS, h.OS)
	for _, n := range h.Roles {
		f(attrRole, n)
	}
	for _, n := range h.Capabilities {
		f(attrCap, n)
	}
	for _, n := range h.Env {
		f(attrEnv, n)
	}
	for _, n := range h.Bins {
		f(attrBin, n)
	}
}

// hostStage is one host requirement of the host filter chain: the
// requirement field, the host attribute it reads, and whether one of its
// values suffices (else every value must be present).
type hostStage struct {
	field string
	attr  attr
	any   bool
	vals  func(*Requirements) []string // the field's values (Requirements.field, without its switch)
}

// hostStages is the host filter chain, in order: the one table both the
// index (filter) and the per-host check (Requirements.Matches) run.
var hostStages = []hostStage{
	{FieldHostRoles, attrRole, true, func(r *Requirements) []string { return r.HostRoles }},
	{FieldCapabilities, attrCap, false, func(r *Requirements) []string { return r.Capabilities }},
	{FieldAnyCapabilities, attrCap, true, func(r *Requirements) []string { return r.AnyCapabilities }},
	{FieldOS, attrOS, true, func(r *Requirements) []string { return r.OS }},
	{FieldEnv, attrEnv, false, func(r *Requirements) []string { return r.Env }},
	{FieldAnyEnv, attrEnv, true, func(r *Requirements) []string { return r.AnyEnv }},
	{FieldBins, attrBin, false, func(r *Requirements) []string { return r.Bins }},
	{FieldAnyBins, attrBin, true, func(r *Requirements) []string { return r.AnyBins }},
}

// has reports whether the host has the attribute value: what Index.each
// indexes it under.
func (h *Host) has(a attr, name string) bool {
	var set []string
	switch a {
	case attrOS:
		return h.OS == name
	case attrRole:
		set = h.Roles
	case attrCap:
		set = h.Capabilities
	case attrEnv:
		set = h.Env
	case attrBin:
		set = h.Bins
	}
	_, ok := slices.BinarySearch(set, name)
	return ok
}

// holds reports whether one host meets the stage's values.
func (st *hostStage) holds(h *Host, vals []string) bool {
	for _, v := range vals {
		if h.has(st.attr, v) == st.any {
			return st.any // any: found one; all: one is missing
		}
	}
	return !st.any
}

// Lacking says what h lacks to meet one host requirement (field with its
// values), by the host filter chain's rules: "field: a, b", the values h
// lacks, for an every-value requirement; "field: one of a, b" for a
// one-value requirement none of whose values h has. ok is false when h
// meets it, or field is no host requirement.
func Lacking(h *Host, field string, vals []string) (lack string, ok bool) {
	for i := range hostStages {
		st := &hostStages[i]
		if st.field != field || st.holds(h, vals) {
			continue
		}
		if st.any {
			return field + ": one of " + strings.Join(vals, ", "), true
		}
		var miss []string
		for _, v := range vals {
			if !h.has(st.attr, v) {
				miss = append(miss, v)
			}
		}
		return field + ": " + strings.Join(miss, ", "), true
	}
	return "", false
}

// filter runs the host filter chain over the hosts of x and returns the
// hosts that pass every stage. With r, it also explains: for each stage
// with values, it appends to r.Filtered how many hosts the stage ruled out
// (popcounts before and after its AND), and to r.Reasons the stage's
// reason when the set is empty after it.
func (x *Index) filter(req *Requirements, r *Result) bitset.Set {
	cand := slices.Clone(x.all)
	left := x.Len() // without r, only whether it is 0 is kept up to date
	var tmp bitset.Set
	for i := range hostStages {
		st := &hostStages[i]
		vals := st.vals(req)
		if len(vals) == 0 {
			continue
		}
		if left == 0 && r == nil {
			break // an empty set stays empty
		}
		before := left
		if left > 0 {
			m := x.attrs[st.attr]
			hosts := func(v string) bitset.Set {
				if b := m[v]; b != nil {
					return *b
				}
				return nil
			}
			if st.any {
				tmp = append(tmp[:0], make(bitset.Set, len(cand))...)
				for _, v := range vals {
					tmp.Or(hosts(v))
				}
				cand.And(tmp)
			} else {
				for _, v := range vals {
					cand.And(hosts(v))
				}
			}
			switch {
			case r != nil:
				left = cand.Len()
			case cand.Empty():
				left = 0
			}
		}
		if r != nil {
			r.Filtered = append(r.Filtered, Filtered{Requirement: st.field, Values: vals, Hosts: before - left})
			if left == 0 {
				r.Reasons = append(r.Reasons, requiresReason(st.field, vals))
			}
		}
	}
	return cand
}

// Matches reports whether one host satisfies every host requirement of a
// skill (true for a skill without host requirements): the chain of filter
// for one host, for the gateway's live counts.
func (r *Requirements) Matches(h *Host) bool {
	for i := range hostStages {
		st := &hostStages[i]
		if vals := st.vals(r); len(vals) > 0 && !st.holds(h, vals) {
			return false
		}
	}
	return true
}

// Count returns how many hosts satisfy every host requirement.
func (x *Index) Count(req *Requirements) int {
	if !req.HasHost() {
		return x.Len()
	}
	return x.filter(req, nil).Len()
}

// AnyHostHasBin and AnyHostHasEnv report whether some host in the index
// has the binary or the env-var name: one map lookup, for log lines that
// name what the whole fleet lacks.
func (x *Index) AnyHostHasBin(name string) bool { return x.attrs[attrBin][name] != nil }

// AnyHostHasEnv is AnyHostHasBin for env-var names.
func (x *Index) AnyHostHasEnv(name string) bool { return x.attrs[attrEnv][name] != nil }

// Clone returns a copy that later Put/Remove on x do not change, so that
// slow readers (per-skill reports with host lists) can work without holding
// the lock that guards x. Hosts are immutable and shared.
func (x *Index) Clone() *Index {
	c := &Index{
		hosts: slices.Clone(x.hosts),
		slots: maps.Clone(x.slots),
		free:  slices.Clone(x.free),
		all:   slices.Clone(x.all),
	}
	for i, m := range x.attrs {
		c.attrs[i] = make(map[string]*bitset.Set, len(m))
		for k, b := range m {
			cb := slices.Clone(*b)
			c.attrs[i][k] = &cb
		}
	}
	return c
}
