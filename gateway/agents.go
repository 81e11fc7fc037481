package gateway

import (
	"bytes"
	"compress/gzip"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/skill"
)

// agentView is an agent's prompt block as of one generation: what prompt
// builds serve until something it shows changes (see live.go).
type agentView struct {
	gen      uint64
	prompt   string
	eligible map[string]bool // skill key → offered, to log changes

	gzipOnce sync.Once
	gzipped  []byte // prompt gzip-compressed, made on first request that accepts it
}

// gzip returns the block compressed, compressing it once per block: at a
// thousand skills the block is a few hundred KiB and compresses ~10×.
func (v *agentView) gzip() []byte {
	v.gzipOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		zw.Write([]byte(v.prompt))
		zw.Close()
		v.gzipped = b.Bytes()
	})
	return v.gzipped
}

// promptFor returns the agent's prompt block, from the cache when nothing
// it shows changed since it was built.
func (s *Server) promptFor(agentID string) string { return s.promptView(agentID).prompt }

// promptView is promptFor returning the cached view itself.
func (s *Server) promptView(agentID string) *agentView {
	gen := s.gen.Load()
	s.cacheMu.RLock()
	v := s.cache[agentID]
	s.cacheMu.RUnlock()
	if v != nil && v.gen == gen {
		s.metrics.promptHit.Inc()
		return v
	}
	s.metrics.promptMiss.Inc()

	// Build under the read lock and store before releasing it, so that no
	// writer can invalidate between the build and the store.
	s.mu.RLock()
	defer s.mu.RUnlock()
	start := time.Now()
	gen = s.gen.Load()
	skills := s.snap.view(agentID)
	nv := &agentView{gen: gen, eligible: make(map[string]bool, len(skills))}
	frags := make([]string, 0, len(skills))
	for _, sk := range skills {
		ok := s.eligibleLocked(s.prepared[sk])
		nv.eligible[sk.Key] = ok
		if ok {
			frags = append(frags, s.fragments[sk])
		}
	}
	offered := len(frags)
	nv.prompt = promptbuild.Join(frags)
	s.metrics.evalSeconds.Observe(time.Since(start).Seconds())
	s.metrics.skills.WithLabelValues("eligible").Set(float64(offered))
	s.metrics.skills.WithLabelValues("ineligible").Set(float64(len(skills) - offered))
	if v == nil || v.prompt != nv.prompt {
		s.logChangesLocked(agentID, skills, nv.eligible)
	}

	s.cacheMu.Lock()
	if len(s.cache) >= MaxCachedAgents {
		clear(s.cache) // simplest bound; agents rebuild on next use
	}
	s.cache[agentID] = nv
	s.cacheMu.Unlock()
	return nv
}

// logChangesLocked logs a skill's verdict once per change, not per prompt
// build, in the style operators filter on: skill=… missing_bins=[…]
// missing_env=[…]. The last verdict logged is kept per skill key, so a new
// agent (or a client cycling agent ids) logs nothing the gateway already
// said.
func (s *Server) logChangesLocked(agentID string, skills []*skill.Skill, eligible map[string]bool) {
	s.loggedMu.Lock()
	defer s.loggedMu.Unlock()
	for _, sk := range skills {
		p := s.prepared[sk]
		verdict := "eligible"
		var r eligibility.Result
		if !eligible[sk.Key] {
			r = p.ExplainIndexed(s.index)
			verdict = r.Stage + ": " + strings.Join(r.Reasons, "; ")
		}
		last, seen := s.logged[sk.Key]
		if last == verdict {
			continue
		}
		s.logged[sk.Key] = verdict
		if eligible[sk.Key] {
			if seen {
				s.log.Info("skill enabled", "agent", agentID, "skill", sk.Name, "location", sk.Key)
			}
			continue
		}
		missingBins := missing(p.Req.Bins, s.index.AnyHostHasBin)
		if none := missing(p.Req.AnyBins, s.index.AnyHostHasBin); len(none) > 0 && len(none) == len(p.Req.AnyBins) {
			missingBins = append(missingBins, none...)
		}
		missingEnv := missing(p.Req.Env, s.index.AnyHostHasEnv)
		s.log.Warn("skill disabled: "+strings.Join(r.Reasons, "; "), "agent", agentID, "skill", sk.Name,
			"missing_bins", nonNil(missingBins), "missing_env", nonNil(missingEnv),
			"stage", r.Stage, "location", sk.Key)
	}
}

// missing returns the names for which has is false.
func missing(names []string, has func(string) bool) []string {
	var out []string
	for _, n := range names {
		if !has(n) {
			out = append(out, n)
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
// object as `skillgate eval --json`, evaluated against the hosts now.
func (s *Server) report(agentID string) eligibility.Report {
	s.mu.RLock()
	defer s.mu.RUnlock()
	skills := s.snap.view(agentID)
	results := make([]eligibility.Result, len(skills))
	diags := s.snap.diagsFor(agentID)
	for i, sk := range skills {
		p := s.prepared[sk]
		results[i] = p.EvaluateIndexed(s.index)
		diags = append(diags, sk.Diagnostics...)
		diags = append(diags, p.Diagnostics()...)
	}
	diags = append(diags, s.pol.diags...)
	if diags == nil {
		diags = []skill.Diagnostic{}
	}
	return eligibility.Report{
		Agent:       agentID,
		Skills:      eligibility.SkillReports(results),
		Prompt:      promptbuild.FromResults(results),
		Diagnostics: diags,
	}
}
