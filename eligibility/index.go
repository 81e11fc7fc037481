package eligibility

import (
	"maps"
	"slices"

	"github.com/skillgate/skillgate/internal/bitset"
)

// Index holds connected hosts by attribute (role, capability, OS, env
// name, binary) as bitsets over host slots, so that a skill's host filter
// chain costs a few word-wise ANDs and ORs instead of a pass over every
// host. It gives exactly the results of Prepared.Evaluate. An Index is not
// safe for concurrent mutation; readers must not run during Put/Remove.
type Index struct {
	hosts []*Host        // slot → host, nil when free
	slots map[string]int // host id → slot
	free  []int
	all   bitset.Set
	attrs [numAttrs]map[string]bitset.Set
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
		x.attrs[i] = map[string]bitset.Set{}
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
		b.Add(s)
		x.attrs[a][name] = b
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
	for n := range h.Roles {
		f(attrRole, n)
	}
	for n := range h.Capabilities {
		f(attrCap, n)
	}
	for n := range h.Env {
		f(attrEnv, n)
	}
	for n := range h.Bins {
		f(attrBin, n)
	}
}

// stage attributes and semantics, in host filter order.
var indexStages = []struct {
	field string
	attr  attr
	any   bool // at least one value (else all)
}{
	{FieldHostRoles, attrRole, true},
	{FieldCapabilities, attrCap, false},
	{FieldAnyCapabilities, attrCap, true},
	{FieldOS, attrOS, true},
	{FieldEnv, attrEnv, false},
	{FieldBins, attrBin, false},
	{FieldAnyBins, attrBin, true},
}

// EvaluateIndexed is Evaluate against the hosts of an index.
func (p *Prepared) EvaluateIndexed(x *Index) Result {
	return p.evaluate(x.Len(), func(r *Result) {
		cand := x.filter(&p.Req, func(field string, vals []string) {
			r.Reasons = append(r.Reasons, requiresReason(field, vals))
		})
		// Sized once: at 10,000 hosts, growing the list was most of the cost.
		r.Hosts = make([]string, 0, cand.Len())
		cand.Each(func(i int) { r.Hosts = append(r.Hosts, x.hosts[i].ID) })
	})
}

// filter runs the host filter chain and returns the candidate set; failed
// is called for every stage that leaves it empty.
func (x *Index) filter(req *Requirements, failed func(field string, vals []string)) bitset.Set {
	cand := slices.Clone(x.all)
	var tmp bitset.Set
	for _, st := range indexStages {
		vals := *req.field(st.field)
		if len(vals) == 0 {
			continue
		}
		m := x.attrs[st.attr]
		if st.any {
			tmp = append(tmp[:0], make(bitset.Set, len(cand))...)
			for _, v := range vals {
				tmp.Or(m[v])
			}
			cand.And(tmp)
		} else {
			for _, v := range vals {
				cand.And(m[v])
			}
		}
		if cand.Empty() && failed != nil {
			failed(st.field, vals)
		}
	}
	return cand
}

// Matches reports whether one host satisfies every host requirement of a
// skill (true for a skill without host requirements).
func (r *Requirements) Matches(h *Host) bool {
	for _, st := range hostStages {
		if vals := *r.field(st.field); len(vals) > 0 && !st.match(h, vals) {
			return false
		}
	}
	return true
}

// EligibleIndexed reports only whether the skill is eligible against the
// hosts of an index: the prompt block needs no more, and skipping the host
// list and reasons makes it several times cheaper than EvaluateIndexed.
func (p *Prepared) EligibleIndexed(x *Index) bool {
	switch {
	case p.Excluded:
		return false
	case p.Always, p.Req.Empty():
		return true
	case x.Len() == 0, len(p.missingConfig) > 0:
		return false
	}
	return !p.Req.HasHost() || !x.filter(&p.Req, nil).Empty()
}

// Count returns how many hosts satisfy every host requirement.
func (x *Index) Count(req *Requirements) int {
	if !req.HasHost() {
		return x.Len()
	}
	return x.filter(req, nil).Len()
}

// ExplainIndexed is EvaluateIndexed without the host list: the verdict and
// its reasons, cheap enough for log lines at fleet scale.
func (p *Prepared) ExplainIndexed(x *Index) Result {
	return p.evaluate(x.Len(), func(r *Result) {
		x.filter(&p.Req, func(field string, vals []string) {
			r.Reasons = append(r.Reasons, requiresReason(field, vals))
		})
	})
}

// AnyHostHasBin and AnyHostHasEnv report whether some host in the index
// has the binary or the env-var name: one map lookup, for log lines that
// name what the whole fleet lacks.
func (x *Index) AnyHostHasBin(name string) bool { return len(x.attrs[attrBin][name]) > 0 }

// AnyHostHasEnv is AnyHostHasBin for env-var names.
func (x *Index) AnyHostHasEnv(name string) bool { return len(x.attrs[attrEnv][name]) > 0 }

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
		c.attrs[i] = make(map[string]bitset.Set, len(m))
		for k, b := range m {
			c.attrs[i][k] = slices.Clone(b)
		}
	}
	return c
}
