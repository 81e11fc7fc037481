package eligibility

import (
	"math/bits"
	"slices"
)

// Matcher finds, among many requirement lists, the ones one host
// satisfies, without checking every list against the host: each list is
// filed under the values a host must have one of to satisfy it — one
// required binary, env name or capability, or every value of its
// anyBins, anyEnv, os, anyCapabilities or roles — so only the lists filed
// under a value the host has, and the few with no such value, are checked.
// A list is checked on the stages of the one stage table, as
// Requirements.Matches does, less what the value it was found by already
// settles: a list whose only host requirement is that value (bins with one
// name, anyBins, an OS, …) needs no check at all. The gateway recounts its
// live matches with it at every node event: at 1,000 skills, checking each
// list was most of a connect's cost.
type Matcher struct {
	reqs    []*Requirements
	keyed   [numAttrs]map[string][]filed
	unkeyed []filed
}

// check is one host stage of a list, with the list's values for it.
type check struct {
	st   *hostStage
	vals []string
}

// filed is a list as filed under one value: its index in reqs and the
// checks left once a host has that value.
type filed struct {
	i    int32
	rest []check
}

// holds reports whether h passes every check of f.
func (f *filed) holds(h *Host) bool {
	for _, c := range f.rest {
		if !c.st.holds(h, c.vals) {
			return false
		}
	}
	return true
}

// NewMatcher files reqs; indexes into reqs identify them.
func NewMatcher(reqs []*Requirements) *Matcher {
	m := &Matcher{reqs: reqs}
	for a := range m.keyed {
		m.keyed[a] = map[string][]filed{}
	}
	for i, r := range reqs {
		var checks []check
		for j := range hostStages {
			if vals := hostStages[j].vals(r); len(vals) > 0 {
				checks = append(checks, check{&hostStages[j], vals})
			}
		}
		st, keys := r.keys()
		if st == nil {
			m.unkeyed = append(m.unkeyed, filed{int32(i), checks})
			continue
		}
		// A host found by one of keys passes st on its own when st asks
		// for one value of its list; when st asks for every value, it
		// still needs the others.
		var rest []check
		for _, c := range checks {
			switch {
			case c.st != st:
				rest = append(rest, c)
			case !st.any && len(c.vals) > 1:
				rest = append(rest, check{st, c.vals[1:]})
			}
		}
		for _, k := range slices.Compact(slices.Sorted(slices.Values(keys))) {
			m.keyed[st.attr][k] = append(m.keyed[st.attr][k], filed{int32(i), rest})
		}
	}
	return m
}

// keys picks the stage of r to file it under and the values a host must
// have one of to satisfy r: the first value of an every-value list (a host
// must have all of them; keys[0] is it), or all values of a one-value
// list. The most selective kind comes first: a required binary or env name
// is rare on hosts, an OS or a role common, a baseline capability
// universal. st is nil when r has no host requirement.
func (r *Requirements) keys() (st *hostStage, keys []string) {
	for _, field := range [...]string{FieldBins, FieldEnv, FieldAnyBins, FieldAnyEnv, FieldOS, FieldCapabilities, FieldAnyCapabilities, FieldHostRoles} {
		s := stageOf(field)
		vals := s.vals(r)
		switch {
		case len(vals) == 0:
			continue
		case !s.any:
			return s, vals[:1]
		}
		return s, vals
	}
	return nil, nil
}

// stageOf returns the host stage of a requirement field.
func stageOf(field string) *hostStage {
	for i := range hostStages {
		if hostStages[i].field == field {
			return &hostStages[i]
		}
	}
	panic("eligibility: no host stage " + field)
}

// Matching appends to dst the indexes of the lists h satisfies, in
// increasing order, and returns it. A nil h satisfies none.
func (m *Matcher) Matching(dst []int32, h *Host) []int32 {
	if h == nil {
		return dst
	}
	// Found lists are marked in a bitset, which also orders them and
	// drops a list found under two values the host has.
	var small [64]uint64
	seen := small[:]
	if n := (len(m.reqs) + 63) / 64; n > len(small) {
		seen = make([]uint64, n)
	}
	found := false
	mark := func(l []filed) {
		for k := range l {
			if f := &l[k]; f.holds(h) {
				seen[f.i/64] |= 1 << (f.i % 64)
				found = true
			}
		}
	}
	mark(m.unkeyed)
	if len(m.keyed[attrOS]) > 0 {
		mark(m.keyed[attrOS][h.OS])
	}
	for a, names := range [...][]string{attrRole: h.Roles, attrCap: h.Capabilities, attrEnv: h.Env, attrBin: h.Bins} {
		if a == int(attrOS) || len(m.keyed[a]) == 0 {
			continue
		}
		for _, n := range names {
			mark(m.keyed[a][n])
		}
	}
	if !found {
		return dst
	}
	for w, word := range seen {
		for word != 0 {
			dst = append(dst, int32(w*64+bits.TrailingZeros64(word)))
			word &= word - 1
		}
	}
	return dst
}
