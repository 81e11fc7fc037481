package gateway

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// TestLiveMatchesPipeline drives the live counts with random node events
// and checks after each one that every agent's cached prompt block is
// exactly what the straightforward pipeline renders for the hosts now.
func TestLiveMatchesPipeline(t *testing.T) {
	st, err := store.NewDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 4))
	bins := []string{"gh", "tmux", "curl", "jq"}
	envs := []string{"A", "B"}
	mkReq := func() any {
		req := map[string]any{}
		if r.IntN(2) == 0 {
			req["bins"] = []any{bins[r.IntN(len(bins))]}
		}
		if r.IntN(3) == 0 {
			req["env"] = []any{envs[r.IntN(len(envs))]}
		}
		if r.IntN(4) == 0 {
			req["os"] = []any{"darwin"}
		}
		if r.IntN(6) == 0 {
			req["anyBins"] = []any{"jq", "curl"}
		}
		if r.IntN(6) == 0 {
			req["anyEnv"] = []any{"A", "B"}
		}
		// Dependencies on other skills, global or agent-local (by name or
		// directory), cycles and unknown names included.
		deps := func() []any {
			out := make([]any, 1+r.IntN(2))
			for k := range out {
				switch r.IntN(4) {
				case 0:
					out[k] = fmt.Sprintf("a1s%02d", 3*r.IntN(4))
				case 1:
					out[k] = "nope"
				default:
					out[k] = fmt.Sprintf("s%02d", r.IntN(12))
				}
			}
			return out
		}
		if r.IntN(3) == 0 {
			req["skills"] = deps()
		}
		if r.IntN(5) == 0 {
			req["anySkills"] = deps()
		}
		return req
	}
	snap := &snapshot{agents: map[string][]*skill.Skill{}}
	for i := range 12 {
		dir := fmt.Sprintf("s%02d", i)
		sk := &skill.Skill{Ref: skill.Ref{Key: skill.GlobalKey(dir), Dir: dir, Scope: skill.ScopeGlobal}, Name: dir, Description: "d", Requires: mkReq()}
		snap.global = append(snap.global, sk)
		snap.all = append(snap.all, sk)
	}
	for _, agent := range []string{"a1", "a2"} {
		for i := range 4 {
			dir := fmt.Sprintf("s%02d", i*3) // shadows some global skills
			sk := &skill.Skill{Ref: skill.Ref{Key: skill.AgentKey(agent, dir), Dir: dir, Scope: skill.ScopeAgent, Agent: agent}, Name: agent + dir, Description: "d", Requires: mkReq()}
			snap.agents[agent] = append(snap.agents[agent], sk)
			snap.all = append(snap.all, sk)
		}
	}
	s.mu.Lock()
	s.snap = snap
	s.rebuildLocked()
	s.mu.Unlock()

	hosts := map[string]*eligibility.Host{}
	for step := range 400 {
		id := fmt.Sprintf("h%d", r.IntN(6))
		s.mu.Lock()
		old := hosts[id]
		if r.IntN(3) == 0 {
			delete(hosts, id)
			if old != nil {
				s.hostChangedLocked(id, old, nil)
			}
		} else {
			f := protocol.HostFacts{ID: id, OS: []string{"linux", "darwin"}[r.IntN(2)], Roles: []string{"execution"},
				Capabilities: protocol.BaselineCapabilities, HostBinStatus: map[string]bool{}}
			for _, b := range bins {
				f.HostBinStatus[b] = r.IntN(2) == 0
			}
			for _, e := range envs {
				if r.IntN(2) == 0 {
					f.Env = append(f.Env, e)
				}
			}
			h := eligibility.NewHost(&f)
			hosts[id] = h
			s.hostChangedLocked(id, old, h)
		}
		s.mu.Unlock()

		// The straightforward pipeline: every skill prepared afresh, against
		// a fresh index of the hosts now, through the one report builder.
		x := eligibility.NewIndex()
		for _, h := range hosts {
			x.Put(h)
		}
		for _, agent := range []string{"a1", "a2", "nobody"} {
			view := snap.view(agent)
			want := report.Build(&report.View{Skills: view, Prepare: func(i int) *eligibility.Prepared {
				return eligibility.Prepare(view[i], nil, s.pol.cfg)
			}}, x, 1, nil).Prompt
			if got := s.promptFor(agent); got != want {
				t.Fatalf("step %d agent %s: live block differs from the pipeline\n got: %s\nwant: %s", step, agent, got, want)
			}
		}
	}
}
