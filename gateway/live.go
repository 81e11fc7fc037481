package gateway

import (
	"strings"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// The gateway keeps eligibility live instead of re-running the pipeline
// per prompt build. For every skill whose eligibility depends on hosts it
// counts the connected hosts that satisfy all its host requirements; a
// node event updates those counts with one cheap per-host check per skill,
// and only a count that crosses zero (or the host count crossing zero)
// changes what any prompt shows. Prompt blocks are cached per agent and
// dropped only when something they show changed:
//
//   - skills or config changed: every block (rebuildLocked);
//   - a global skill's verdict flipped, or the first host came or the last
//     went: every block (gen is bumped);
//   - an agent-local skill's verdict flipped: that agent's block.
//
// All of it is guarded by Server.mu; prompt builds that hit the cache take
// no lock but the cache's.

// keptInterests is how many of its latest interests a replica knows a
// remote record's binsAsked by.
const keptInterests = 4

// rebuildLocked prepares every skill of the snapshot against the policy,
// recounts matching hosts, recomputes the interest and drops every cached
// block. s.mu must be held for writing.
func (s *Server) rebuildLocked() {
	s.prepared = make(map[*skill.Skill]*eligibility.Prepared, len(s.snap.all))
	s.depsMu.Lock()
	s.deps = map[string]*eligibility.Dependencies{} // of the views before
	s.depsMu.Unlock()
	s.variants = make(map[*skill.Skill]promptbuild.Variants, len(s.snap.all))
	hostSkills := s.hostSkills[:0]
	all := make([]*eligibility.Prepared, 0, len(s.snap.all))
	for _, sk := range s.snap.all {
		p := eligibility.Prepare(sk, s.snap.reports[sk], s.pol.cfg)
		s.prepared[sk] = p
		entry := report.Entry(p, HostsNone, nil)
		s.variants[sk] = promptbuild.NewVariants(&entry)
		all = append(all, p)
		if p.FiltersHosts() {
			hostSkills = append(hostSkills, p)
		}
	}
	s.setSkillsLocked(hostSkills)
	bins, env, cut := eligibility.Interest(all)
	if cut > 0 && cut != s.interestCut {
		s.log.Error("interest over the limit: names past it count as absent on every host, so the skills needing them are not offered; trim the skills' requirement lists",
			"cut", cut, "max_names", eligibility.MaxInterestNames, "max_bytes", eligibility.MaxInterestBytes)
	}
	s.interestCut = cut
	s.noteSuppressionsLocked(time.Now())
	s.noteGovernanceLocked()
	s.setInterestLocked(bins, env)
	s.countAllLocked()
	s.loggedMu.Lock()
	for key := range s.logged {
		if skillKey, _, _ := strings.Cut(key, "\x00"); !s.snap.has(skillKey) {
			delete(s.logged, key) // memory follows the bucket
		}
	}
	s.loggedMu.Unlock()
	s.invalidateAllLocked()
}

// invalidateAllLocked makes every cached answer stale.
func (s *Server) invalidateAllLocked() {
	// The snapshot cache keys are derived from is published before the
	// generation: a reader that sees the new generation sees the new keys.
	s.now.Store(&viewState{snap: s.snap, pol: s.pol})
	s.gen.Add(1)
	s.reportGen.Add(1)
	s.prompts.clear()
	s.reports.clear()
	s.feed.changedAll()
}

// hostChangedLocked applies one node event to the index and the counts:
// old is the node's host before (nil if it had none), cur after (nil if it
// has none now). s.mu must be held for writing.
func (s *Server) hostChangedLocked(id string, old, cur *eligibility.Host) {
	// With a host hint the block shows each skill's matching hosts: any
	// change of them changes it, not only a verdict's.
	hinted := s.pol.settings.Prompt.Hosts == HostsCount || s.pol.settings.Prompt.Hosts == HostsNames
	if s.moveHostLocked(id, old, cur) {
		// "no connected hosts" turned on or off for every skill.
		s.recountLocked(old, cur, hinted)
		s.invalidateAllLocked()
		return
	}
	s.reportGen.Add(1) // /skills answers list hosts
	global, agents := s.recountLocked(old, cur, hinted)
	if global {
		s.invalidateAllLocked()
		return
	}
	for a := range agents {
		s.prompts.drop(a) // an agent with a local skill has a key of its own
		s.feed.changed(a)
	}
}

// recountLocked moves old's matches to cur and reports whose verdicts
// flipped (or, hinted, whose matching hosts changed): any global skill, or
// the agents with such a local skill. The matcher finds the skills each
// host satisfies; only the skills in one of the two lists and not the
// other change count.
func (f *fleet) recountLocked(old, cur *eligibility.Host, hinted bool) (global bool, agents map[string]bool) {
	was := f.matcher.Matching(f.wasBuf[:0], old)
	is := f.matcher.Matching(f.isBuf[:0], cur)
	f.wasBuf, f.isBuf = was, is
	move := func(i int32, delta int) {
		p := f.hostSkills[i]
		prev := f.matches[p]
		n := prev + delta
		f.matches[p] = n
		if (prev == 0) == (n == 0) && !hinted {
			return // the verdict did not change
		}
		if p.Skill.Scope == skill.ScopeAgent {
			if agents == nil {
				agents = map[string]bool{}
			}
			agents[p.Skill.Agent] = true
		} else {
			global = true
		}
	}
	for len(was) > 0 || len(is) > 0 {
		switch {
		case len(is) == 0 || len(was) > 0 && was[0] < is[0]:
			move(was[0], -1)
			was = was[1:]
		case len(was) == 0 || is[0] < was[0]:
			move(is[0], +1)
			is = is[1:]
		default: // both: the count stays
			was, is = was[1:], is[1:]
		}
	}
	return global, agents
}

// offersLocked evaluates an agent's view: its skills in listing order,
// each prepared for the agent, and their verdicts from the live counts
// with the dependency stage run over the view, last. It runs where a view
// is evaluated (a block build, a search, an MCP listing with hosts),
// never per cached prompt request. s.mu must be held (for reading at
// least).
func (s *Server) offersLocked(agentID string) ([]*skill.Skill, []*eligibility.Prepared, *eligibility.Offers) {
	skills := s.snap.view(agentID)
	prepared := make([]*eligibility.Prepared, len(skills))
	base := make([]bool, len(skills))
	for i, sk := range skills {
		prepared[i] = s.prepared[sk].ForAgent(s.pol.cfg, agentID)
		base[i] = s.eligibleLocked(prepared[i])
	}
	// The graph is the view's until the next rebuild (rebuildLocked
	// clears the cache): resolving names costs more than the stage.
	key := viewKey(&viewState{s.snap, s.pol}, agentID)
	s.depsMu.Lock()
	deps, ok := s.deps[key]
	s.depsMu.Unlock()
	if !ok {
		deps = eligibility.NewDependencies(prepared)
		s.depsMu.Lock()
		if s.deps == nil {
			s.deps = map[string]*eligibility.Dependencies{}
		}
		s.deps[key] = deps
		s.depsMu.Unlock()
	}
	return skills, prepared, deps.Offer(prepared, base)
}
