package eligibility

import "slices"

// Matcher finds, among many requirement lists, the ones one host
// satisfies, without checking every list against the host: each list is
// filed under one value a host must have to satisfy it (a required binary,
// env name or capability, or its only OS, role, anyBins or anyEnv value), so only
// the lists filed under a value the host has, and the few with no such
// value, are checked, with Requirements.Matches (the one stage table). The
// gateway recounts its live matches with it at every node event: at 1,000
// skills, checking each was most of a connect's cost.
type Matcher struct {
	reqs    []*Requirements
	keyed   [numAttrs]map[string][]int32
	unkeyed []int32
}

// NewMatcher files reqs; indexes into reqs identify them.
func NewMatcher(reqs []*Requirements) *Matcher {
	m := &Matcher{reqs: reqs}
	for a := range m.keyed {
		m.keyed[a] = map[string][]int32{}
	}
	for i, r := range reqs {
		a, key, ok := r.key()
		if !ok {
			m.unkeyed = append(m.unkeyed, int32(i))
			continue
		}
		m.keyed[a][key] = append(m.keyed[a][key], int32(i))
	}
	return m
}

// key picks the value a host must have to satisfy r, the most selective
// kind first.
func (r *Requirements) key() (attr, string, bool) {
	switch {
	case len(r.Bins) > 0:
		return attrBin, r.Bins[0], true
	case len(r.Env) > 0:
		return attrEnv, r.Env[0], true
	case len(r.AnyBins) == 1:
		return attrBin, r.AnyBins[0], true
	case len(r.AnyEnv) == 1:
		return attrEnv, r.AnyEnv[0], true
	case len(r.OS) == 1:
		return attrOS, r.OS[0], true
	case len(r.Capabilities) > 0:
		return attrCap, r.Capabilities[0], true
	case len(r.AnyCapabilities) == 1:
		return attrCap, r.AnyCapabilities[0], true
	case len(r.HostRoles) == 1:
		return attrRole, r.HostRoles[0], true
	}
	return 0, "", false
}

// Matching appends to dst the indexes of the lists h satisfies, in
// increasing order, and returns it. A nil h satisfies none.
func (m *Matcher) Matching(dst []int32, h *Host) []int32 {
	if h == nil {
		return dst
	}
	start := len(dst)
	check := func(ids []int32) {
		for _, i := range ids {
			if m.reqs[i].Matches(h) {
				dst = append(dst, i)
			}
		}
	}
	check(m.unkeyed)
	check(m.keyed[attrOS][h.OS])
	for a, names := range [...][]string{attrRole: h.Roles, attrCap: h.Capabilities, attrEnv: h.Env, attrBin: h.Bins} {
		if a == int(attrOS) || len(m.keyed[a]) == 0 {
			continue
		}
		for _, n := range names {
			check(m.keyed[a][n])
		}
	}
	slices.Sort(dst[start:])
	return dst
}
