package eligibility

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

// randomFleet makes hosts from small vocabularies, so that requirements
// hit and miss often.
func randomFleet(r *rand.Rand, n int) []protocol.HostFacts {
	oses := []string{"linux", "darwin", "windows", "macOS", "freebsd"}
	bins := []string{"gh", "tmux", "curl", "jq", "claude", "codex", "op", "ffmpeg"}
	env := []string{"A_KEY", "B_TOKEN", "C", "D"}
	pick := func(from []string, p float64) []string {
		var out []string
		for _, s := range from {
			if r.Float64() < p {
				out = append(out, s)
			}
		}
		return out
	}
	hosts := make([]protocol.HostFacts, n)
	for i := range hosts {
		h := protocol.HostFacts{ID: fmt.Sprintf("h%04d", r.IntN(n*2)), OS: oses[r.IntN(len(oses))], Env: pick(env, 0.4), HostBinStatus: map[string]bool{}}
		if r.IntN(4) == 0 {
			h.Roles = []string{"specialized"}
			h.Capabilities = pick(protocol.Capabilities, 0.5)
		} else {
			h.Roles = []string{"execution"}
			h.Capabilities = append(pick([]string{"filesystem.edit", "text.search"}, 0.5), protocol.BaselineCapabilities...)
		}
		for _, b := range bins {
			if x := r.IntN(3); x > 0 {
				h.HostBinStatus[b] = x == 2
			}
		}
		hosts[i] = h
	}
	return hosts
}

func randomSkills(r *rand.Rand, n int) []*skill.Skill {
	vocab := map[string][]string{
		FieldHostRoles:       {"execution", "specialized"},
		FieldCapabilities:    protocol.Capabilities,
		FieldAnyCapabilities: protocol.Capabilities,
		FieldOS:              {"linux", "darwin", "osx", "win32", "plan9"},
		FieldEnv:             {"A_KEY", "B_TOKEN", "C", "D", "E"},
		FieldBins:            {"gh", "tmux", "curl", "jq", "nope"},
		FieldAnyBins:         {"claude", "codex", "op", "ffmpeg", "nope"},
		FieldConfig:          {"a", "b.c", "missing"},
	}
	out := make([]*skill.Skill, n)
	for i := range out {
		req := map[string]any{}
		for _, f := range Fields {
			if r.IntN(3) != 0 {
				continue
			}
			var vals []any
			for _, v := range vocab[f] {
				if r.IntN(3) == 0 {
					vals = append(vals, v)
				}
			}
			req[f] = vals
		}
		name := fmt.Sprintf("s%03d", i)
		out[i] = &skill.Skill{Ref: skill.Ref{Key: "skills/" + name + "/SKILL.md", Dir: name}, Name: name, Requires: req, Always: r.IntN(20) == 0}
	}
	return out
}

// TestIndexMatchesNaive is the property test: on random fleets and skills,
// with hosts added, replaced and removed, every evaluation through the
// index, and the gateway's path (Matches counts fed to Decide), give
// exactly the results of the oracle, naiveEvaluate.
func TestIndexMatchesNaive(t *testing.T) {
	cfg := mkConfig(t, `{"a": 1, "b": {"c": "x"}}`)
	filtered := 0
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 7))
		skills := randomSkills(r, 60)
		x := NewIndex()
		live := map[string]protocol.HostFacts{}
		for round := range 4 {
			for _, h := range randomFleet(r, 1+r.IntN(150)) {
				x.Put(NewHost(&h))
				live[h.ID] = h
			}
			for id := range live {
				if r.IntN(4) == 0 {
					x.Remove(id)
					delete(live, id)
				}
			}
			var facts []protocol.HostFacts
			for _, h := range live {
				facts = append(facts, h)
			}
			hosts := NewHosts(facts)
			for _, s := range skills {
				p := Prepare(s, nil, cfg)
				want := naiveEvaluate(p, hosts)
				got := p.EvaluateIndexed(x)
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("seed %d round %d skill %s requires %v:\nindexed %+v\nnaive   %+v", seed, round, s.Name, s.Requires, got, want)
				}
				filtered += len(got.Filtered)
				explained := want
				explained.Hosts = []string{}
				if e := p.ExplainIndexed(x); !reflect.DeepEqual(e, explained) {
					t.Fatalf("seed %d skill %s: ExplainIndexed %+v, naive %+v", seed, s.Name, e, want)
				}
				if v := p.EligibleIndexed(x); v != want.Eligible {
					t.Fatalf("seed %d skill %s: EligibleIndexed %v, naive %v", seed, s.Name, v, want.Eligible)
				}
				matches := 0
				for _, h := range hosts {
					if p.Req.Matches(h) {
						matches++
					}
				}
				if c := x.Count(&p.Req); c != matches {
					t.Fatalf("seed %d skill %s: Count %d, Matches %d", seed, s.Name, c, matches)
				}
				if p.FiltersHosts() && len(hosts) > 0 && matches != len(want.Hosts) {
					t.Fatalf("seed %d skill %s: Matches counts %d hosts, naive %d", seed, s.Name, matches, len(want.Hosts))
				}
				if v := p.Decide(len(hosts), matches); (v == VerdictOffered) != want.Eligible {
					t.Fatalf("seed %d skill %s: Decide from live counts %v, naive eligible %v", seed, s.Name, v, want.Eligible)
				}
			}
		}
		if x.Len() != len(live) {
			t.Fatalf("index has %d hosts, want %d", x.Len(), len(live))
		}
	}
	if filtered < 1000 {
		t.Fatalf("only %d filtered entries compared: the random skills hardly reach the host filter", filtered)
	}
}

func TestIndexRemoveFreesAttributes(t *testing.T) {
	x := NewIndex()
	h := host("a", "linux", []string{"K"}, "gh")
	x.Put(NewHost(&h))
	x.Remove("a")
	for a, m := range x.attrs {
		if len(m) != 0 {
			t.Errorf("attr %d still holds %v", a, m)
		}
	}
	x.Put(NewHost(&h))
	if x.Len() != 1 || x.Get("a") == nil {
		t.Errorf("re-put: len %d", x.Len())
	}
}
