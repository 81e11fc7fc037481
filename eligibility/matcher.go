package eligibility

import "slices"

// Matcher finds, among many requirement lists, the ones one host
// satisfies, without checking every list against the host: each list is
// filed under the values a host must have one of to satisfy it — one
// required binary, env name or capability, or every value of its
// anyBins, anyEnv, os, anyCapabilities or roles — so only the lists filed
// under a value the host has, and the few with no such value, are checked,
// as Requirements.Matches does (on the one stage table). A list whose only host
// requirement is the one it is filed under (bins with one name, anyBins,
// an OS, …) needs no check: the host has the value it was found by. The
// gateway recounts its live matches with it at every node event: at 1,000
// skills, checking each was most of a connect's cost.
type Matcher struct {
	reqs []*Requirements
	// checks are each list's host stages with values, in the chain's
	// order: what Matches runs, without passing the empty ones.
	checks  [][]check
	keyed   [numAttrs]map[string][]filed
	unkeyed []int32
	// several: some list is filed under more than one value, so a host
	// can find it twice.
	several bool
}

// check is one host stage of a list, with the list's values for it.
type check struct {
	st   *hostStage
	vals []string
}

// matches is reqs[i].Matches(h), on the list's checks.
func (m *Matcher) matches(i int32, h *Host) bool {
	for _, c := range m.checks[i] {
		if !c.st.holds(h, c.vals) {
			return false
		}
	}
	return true
}

// filed is a list filed under one value: its index in reqs, and whether
// having that value is all it asks.
type filed struct {
	i    int32
	only bool
}

// NewMatcher files reqs; indexes into reqs identify them.
func NewMatcher(reqs []*Requirements) *Matcher {
	m := &Matcher{reqs: reqs, checks: make([][]check, len(reqs))}
	for a := range m.keyed {
		m.keyed[a] = map[string][]filed{}
	}
	for i, r := range reqs {
		for j := range hostStages {
			if vals := hostStages[j].vals(r); len(vals) > 0 {
				m.checks[i] = append(m.checks[i], check{&hostStages[j], vals})
			}
		}
		a, keys, only := r.keys()
		if keys == nil {
			m.unkeyed = append(m.unkeyed, int32(i))
			continue
		}
		keys = slices.Compact(slices.Sorted(slices.Values(keys)))
		m.several = m.several || len(keys) > 1
		for _, k := range keys {
			m.keyed[a][k] = append(m.keyed[a][k], filed{int32(i), only})
		}
	}
	return m
}

// keys picks the values a host must have one of to satisfy r, the most
// selective kind first: one value of an every-value list (a host must have
// all of them), or all values of a one-value list (it must have one).
// only reports that r asks nothing of a host but one of them. keys is nil
// when r has no host requirement to file it under.
func (r *Requirements) keys() (a attr, keys []string, only bool) {
	// The stages, most selective first: a required binary or env name is
	// rare on hosts; an OS or a role is common, a baseline capability
	// universal.
	order := [...]struct {
		attr attr
		vals []string
		any  bool
	}{
		{attrBin, r.Bins, false},
		{attrEnv, r.Env, false},
		{attrBin, r.AnyBins, true},
		{attrEnv, r.AnyEnv, true},
		{attrOS, r.OS, true},
		{attrCap, r.Capabilities, false},
		{attrCap, r.AnyCapabilities, true},
		{attrRole, r.HostRoles, true},
	}
	for _, o := range order {
		if len(o.vals) == 0 {
			continue
		}
		keys = o.vals
		if !o.any {
			keys = o.vals[:1]
		}
		return o.attr, keys, r.hostFields() == 1 && (o.any || len(o.vals) == 1)
	}
	return 0, nil, false
}

// hostFields counts the host requirements with values.
func (r *Requirements) hostFields() int {
	n := 0
	for i := range hostStages {
		if len(hostStages[i].vals(r)) > 0 {
			n++
		}
	}
	return n
}

// Matching appends to dst the indexes of the lists h satisfies, in
// increasing order, and returns it. A nil h satisfies none.
func (m *Matcher) Matching(dst []int32, h *Host) []int32 {
	if h == nil {
		return dst
	}
	start := len(dst)
	for _, i := range m.unkeyed {
		if m.matches(i, h) {
			dst = append(dst, i)
		}
	}
	check := func(l []filed) {
		for _, f := range l {
			if f.only || m.matches(f.i, h) {
				dst = append(dst, f.i)
			}
		}
	}
	if len(m.keyed[attrOS]) > 0 {
		check(m.keyed[attrOS][h.OS])
	}
	for a, names := range [...][]string{attrRole: h.Roles, attrCap: h.Capabilities, attrEnv: h.Env, attrBin: h.Bins} {
		if a == int(attrOS) || len(m.keyed[a]) == 0 {
			continue
		}
		for _, n := range names {
			check(m.keyed[a][n])
		}
	}
	slices.Sort(dst[start:])
	if m.several {
		// A list filed under two values the host has was found twice.
		dst = dst[:start+len(slices.Compact(dst[start:]))]
	}
	return dst
}
