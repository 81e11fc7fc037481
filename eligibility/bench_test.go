package eligibility

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

// benchFleet makes a fleet shaped like a real one: mostly linux and darwin
// execution hosts, each with a few dozen of 300 binary names and a few of
// 40 env names; skills ask for one or two of them, some for an OS or any
// of several agents.
func benchFleet(nSkills, nHosts int) ([]*Prepared, []*Host) {
	r := rand.New(rand.NewPCG(1, 2))
	bin := func() string { return fmt.Sprintf("bin%03d", r.IntN(300)) }
	env := func() string { return fmt.Sprintf("ENV_%02d", r.IntN(40)) }
	oses := []string{"linux", "linux", "linux", "darwin", "windows"}
	hosts := make([]*Host, nHosts)
	for i := range hosts {
		f := protocol.HostFacts{ID: fmt.Sprintf("host-%05d", i), OS: oses[r.IntN(len(oses))],
			Roles: []string{"execution"}, Capabilities: protocol.BaselineCapabilities, HostBinStatus: map[string]bool{}}
		for range 30 {
			f.HostBinStatus[bin()] = true
		}
		for range 3 {
			f.Env = append(f.Env, env())
		}
		hosts[i] = NewHost(&f)
	}
	prepared := make([]*Prepared, nSkills)
	for i := range prepared {
		req := map[string]any{"bins": []any{bin()}}
		switch i % 4 {
		case 1:
			req["env"] = []any{env()}
		case 2:
			req["os"] = []any{"darwin", "linux"}
			req["bins"] = []any{bin(), bin()}
		case 3:
			req["anyBins"] = []any{bin(), bin(), bin()}
			delete(req, "bins")
		}
		s := &skill.Skill{Ref: skill.Ref{Key: fmt.Sprintf("skills/s%04d/SKILL.md", i)}, Name: fmt.Sprint(i), Requires: req}
		prepared[i] = Prepare(s, nil, nil)
	}
	return prepared, hosts
}

func BenchmarkEvaluate(b *testing.B) {
	for _, nSkills := range []int{100, 1000} {
		for _, nHosts := range []int{100, 1000, 10000} {
			prepared, hosts := benchFleet(nSkills, nHosts)
			x := NewIndex()
			for _, h := range hosts {
				x.Put(h)
			}
			b.Run(fmt.Sprintf("naive/skills=%d/hosts=%d", nSkills, nHosts), func(b *testing.B) {
				for b.Loop() {
					for _, p := range prepared {
						naiveEvaluate(p, hosts)
					}
				}
			})
			b.Run(fmt.Sprintf("indexed/skills=%d/hosts=%d", nSkills, nHosts), func(b *testing.B) {
				for b.Loop() {
					for _, p := range prepared {
						p.EvaluateIndexed(x)
					}
				}
			})
			b.Run(fmt.Sprintf("verdict/skills=%d/hosts=%d", nSkills, nHosts), func(b *testing.B) {
				for b.Loop() {
					for _, p := range prepared {
						p.EligibleIndexed(x)
					}
				}
			})
		}
	}
}

// BenchmarkMatching is the gateway's live recount at a node event: the
// skills one host satisfies, found by the Matcher, over the mix of
// requirements `skillgate-fleet skills` writes (one binary, two, any of
// three, an env name and a binary, an OS and a binary, roles with an OS or
// with capabilities) and hosts like its default node mix.
func BenchmarkMatching(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	bin := func() string { return fmt.Sprintf("bin%03d", r.IntN(300)) }
	var reqs []*Requirements
	for range 1000 {
		var q Requirements
		switch x := r.Float64(); {
		case x < 0.15:
		case x < 0.50:
			q.Bins = []string{bin()}
		case x < 0.65:
			q.Bins = SortedSet([]string{bin(), bin()})
		case x < 0.75:
			q.AnyBins = SortedSet([]string{bin(), bin(), bin()})
		case x < 0.85:
			q.Env, q.Bins = []string{fmt.Sprintf("ENV_%02d", r.IntN(40))}, []string{bin()}
		case x < 0.92:
			q.OS, q.Bins = []string{[]string{"darwin", "linux"}[r.IntN(2)]}, []string{bin()}
		case x < 0.95:
			q.OS, q.HostRoles = []string{"windows"}, []string{"specialized"}
		case x < 0.97:
			q.HostRoles, q.Capabilities = []string{"execution"}, []string{"filesystem.edit", "text.search"}
		default:
			q.Bins = []string{fmt.Sprintf("absent%03d", r.IntN(1000))}
		}
		if q.HasHost() {
			reqs = append(reqs, &q)
		}
	}
	m := NewMatcher(reqs)
	hosts := make([]*Host, 1000)
	for i := range hosts {
		f := protocol.HostFacts{ID: fmt.Sprintf("host-%05d", i), OS: "linux", Roles: []string{"execution"},
			Capabilities: append([]string{"filesystem.edit", "text.search"}, protocol.BaselineCapabilities...), HostBinStatus: map[string]bool{}}
		if i%3 == 0 {
			f.OS, f.Capabilities = "darwin", protocol.BaselineCapabilities
		}
		for range 30 {
			f.HostBinStatus[bin()] = true
		}
		for range 3 {
			f.Env = append(f.Env, fmt.Sprintf("ENV_%02d", r.IntN(40)))
		}
		hosts[i] = NewHost(&f)
	}
	var dst []int32
	i := 0
	for b.Loop() {
		dst = m.Matching(dst[:0], hosts[i%len(hosts)])
		i++
	}
}
