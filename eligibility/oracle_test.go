package eligibility

import (
	"reflect"
	"slices"
	"testing"

	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

// naiveEvaluate is the oracle the host index is checked against: the
// runtime stage written straight from DESIGN.md, one pass over a plain
// list of hosts per requirement. It shares nothing with the index, the
// stage table or Decide; only Prepare (the host-independent stages) is
// common. It is test code only: the index is the one evaluator of hosts.
func naiveEvaluate(p *Prepared, hosts []*Host) Result {
	r := Result{Skill: p.Skill, Always: p.Always, Reasons: []string{}, Hosts: []string{}, Filtered: []Filtered{}}
	switch {
	case p.Excluded:
		r.Stage, r.Reasons = p.Stage, []string{p.Reason}
		return r
	case p.Always, p.Req.Empty():
		r.Eligible = true
		return r
	case len(hosts) == 0:
		r.Stage, r.Reasons = StageRuntime, []string{ReasonNoHosts}
		return r
	}
	has := func(set []string, v string) bool { return slices.Contains(set, v) }
	all := func(set func(*Host) []string) func(*Host, []string) bool {
		return func(h *Host, vals []string) bool {
			for _, v := range vals {
				if !has(set(h), v) {
					return false
				}
			}
			return true
		}
	}
	anyOf := func(set func(*Host) []string) func(*Host, []string) bool {
		return func(h *Host, vals []string) bool {
			for _, v := range vals {
				if has(set(h), v) {
					return true
				}
			}
			return false
		}
	}
	roles := func(h *Host) []string { return h.Roles }
	caps := func(h *Host) []string { return h.Capabilities }
	env := func(h *Host) []string { return h.Env }
	bins := func(h *Host) []string { return h.Bins }
	chain := []struct {
		field string
		vals  []string
		ok    func(*Host, []string) bool
	}{
		{"hostRoles", p.Req.HostRoles, anyOf(roles)},
		{"capabilities", p.Req.Capabilities, all(caps)},
		{"anyCapabilities", p.Req.AnyCapabilities, anyOf(caps)},
		{"os", p.Req.OS, func(h *Host, vals []string) bool { return slices.Contains(vals, h.OS) }},
		{"env", p.Req.Env, all(env)},
		{"anyEnv", p.Req.AnyEnv, anyOf(env)},
		{"bins", p.Req.Bins, all(bins)},
		{"anyBins", p.Req.AnyBins, anyOf(bins)},
	}
	if p.Req.HasHost() {
		cand := slices.Clone(hosts)
		for _, st := range chain {
			if len(st.vals) == 0 {
				continue
			}
			before := len(cand)
			cand = slices.DeleteFunc(cand, func(h *Host) bool { return !st.ok(h, st.vals) })
			r.Filtered = append(r.Filtered, Filtered{Requirement: st.field, Values: st.vals, Hosts: before - len(cand)})
			if len(cand) == 0 {
				r.Reasons = append(r.Reasons, "requires "+st.field+": "+joinComma(st.vals))
			}
		}
		for _, h := range cand {
			r.Hosts = append(r.Hosts, h.ID)
		}
		slices.Sort(r.Hosts)
	}
	if len(p.missingConfig) > 0 {
		r.Reasons = append(r.Reasons, "requires config: "+joinComma(p.missingConfig))
	}
	if len(r.Reasons) > 0 {
		r.Stage = StageRuntime
		return r
	}
	r.Eligible = true
	return r
}

func joinComma(vals []string) string {
	out := ""
	for i, v := range vals {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// indexOf puts host facts into a new index, as eval does.
func indexOf(facts []protocol.HostFacts) *Index {
	x := NewIndex()
	for i := range facts {
		x.Put(NewHost(&facts[i]))
	}
	return x
}

// evaluate runs the pipeline for one skill through the index (the
// production path) and fails the test when the oracle disagrees.
func evaluate(t *testing.T, s *skill.Skill, cfg *Config, facts []protocol.HostFacts) Result {
	t.Helper()
	p := Prepare(s, nil, cfg)
	got := p.EvaluateIndexed(indexOf(facts))
	if want := naiveEvaluate(p, NewHosts(facts)); !reflect.DeepEqual(got, want) {
		t.Errorf("index and oracle disagree:\nindexed %+v\noracle  %+v", got, want)
	}
	return got
}
