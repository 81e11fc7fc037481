package gateway

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/skill"
)

// agentView is one agent's evaluated skills for one world: what a prompt
// build serves until skills, config or node facts change.
type agentView struct {
	gen     uint64
	world   *world
	results []eligibility.Result
	prompt  string
}

// agentView returns the agent's evaluated view, from the cache when
// nothing changed since it was computed.
func (s *Server) agentView(agentID string) (*agentView, bool) {
	w := s.world.Load()
	s.cacheMu.Lock()
	prev := s.cache[agentID]
	s.cacheMu.Unlock()
	if prev != nil && prev.gen == w.gen {
		s.metrics.promptBuilds.WithLabelValues("hit").Inc()
		return prev, true
	}
	s.metrics.promptBuilds.WithLabelValues("miss").Inc()
	start := time.Now()
	skills := w.snap.view(agentID)
	v := &agentView{gen: w.gen, world: w, results: make([]eligibility.Result, len(skills))}
	for i, sk := range skills {
		p := w.prepared[sk]
		if p == nil { // cannot happen: prepared covers the snapshot
			p = eligibility.Prepare(sk, w.pol.cfg)
		}
		v.results[i] = p.Evaluate(w.hosts)
	}
	v.prompt = promptbuild.FromResults(v.results)
	s.metrics.evalSeconds.Observe(time.Since(start).Seconds())
	s.metrics.countSkills(v.results)
	s.logChanges(agentID, prev, v)

	s.cacheMu.Lock()
	if cur := s.cache[agentID]; cur == nil || cur.gen < v.gen {
		if cur == nil && len(s.cache) >= MaxCachedAgents {
			clear(s.cache) // simplest bound; agents re-evaluate on next use
		}
		s.cache[agentID] = v
	}
	s.cacheMu.Unlock()
	return v, false
}

// logChanges logs a skill's verdict once per change, not per prompt build,
// in the style operators filter on: skill=… missing_bins=[…] missing_env=[…].
func (s *Server) logChanges(agentID string, prev, cur *agentView) {
	before := map[string]*eligibility.Result{}
	if prev != nil {
		for i := range prev.results {
			before[prev.results[i].Skill.Key] = &prev.results[i]
		}
	}
	for i := range cur.results {
		r := &cur.results[i]
		old := before[r.Skill.Key]
		if old != nil && old.Eligible == r.Eligible && slices.Equal(old.Reasons, r.Reasons) {
			continue
		}
		if r.Eligible {
			if old != nil {
				s.log.Info("skill enabled", "agent", agentID, "skill", r.Skill.Name, "location", r.Skill.Key, "hosts", len(r.Hosts))
			}
			continue
		}
		p := cur.world.prepared[r.Skill]
		var missingBins, missingEnv []string
		if p != nil {
			missingBins = missingOnAllHosts(p.Req.Bins, cur.world.hosts, func(h *eligibility.Host) map[string]struct{} { return h.Bins })
			if len(p.Req.AnyBins) > 0 && len(missingOnAllHosts(p.Req.AnyBins, cur.world.hosts, func(h *eligibility.Host) map[string]struct{} { return h.Bins })) == len(p.Req.AnyBins) {
				missingBins = append(missingBins, p.Req.AnyBins...)
			}
			missingEnv = missingOnAllHosts(p.Req.Env, cur.world.hosts, func(h *eligibility.Host) map[string]struct{} { return h.Env })
		}
		s.log.Warn("skill disabled: "+strings.Join(r.Reasons, "; "), "agent", agentID, "skill", r.Skill.Name,
			"missing_bins", fmt.Sprint(nonNil(missingBins)), "missing_env", fmt.Sprint(nonNil(missingEnv)),
			"stage", r.Stage, "location", r.Skill.Key)
	}
}

// missingOnAllHosts returns the names no host has.
func missingOnAllHosts(names []string, hosts []*eligibility.Host, set func(*eligibility.Host) map[string]struct{}) []string {
	var out []string
	for _, name := range names {
		found := false
		for _, h := range hosts {
			if _, ok := set(h)[name]; ok {
				found = true
				break
			}
		}
		if !found {
			out = append(out, name)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// report builds the JSON answer of GET /v1/agents/{id}/skills: the same
// object as `skillgate eval --json`.
func (s *Server) report(agentID string, v *agentView) eligibility.Report {
	w := v.world
	diags := w.snap.diagsFor(agentID)
	for i := range v.results {
		sk := v.results[i].Skill
		diags = append(diags, sk.Diagnostics...)
		if p := w.prepared[sk]; p != nil {
			diags = append(diags, p.Diagnostics()...)
		}
	}
	diags = append(diags, w.pol.diags...)
	if diags == nil {
		diags = []skill.Diagnostic{}
	}
	return eligibility.Report{
		Agent:       agentID,
		Skills:      eligibility.SkillReports(v.results),
		Prompt:      v.prompt,
		Diagnostics: diags,
	}
}
