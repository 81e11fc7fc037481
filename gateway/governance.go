package gateway

import (
	"cmp"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
)

// The gateway scans a skill when its content changes, in the poller, before
// the snapshot that holds it is published: the prompt path never waits on a
// scan, and a skill is never offered unscanned. Reports are cached by
// content digest under one policy fingerprint, so an unchanged skill is
// never scanned again; a change of gateway.governance (allowedHosts,
// flagged, mode) rescans every skill once.

// scanCache is the poller's: only the poll goroutine (and New) use it.
type scanCache struct {
	policy   string                        // fingerprint the reports were made under
	byDigest map[string]*governance.Report // current contents' reports
	scans    prometheus.Counter            // skillgate_governance_scans_total
}

// scanSkills returns the report of each skill of snap under pol (nil
// reports when pol is Off), scanning only content it has no report of
// under the same policy, on every core. The cache then keeps exactly the
// current contents' reports, so its memory follows the bucket.
func (c *scanCache) scanSkills(snap *snapshot, pol governance.Policy) map[*skill.Skill]*governance.Report {
	out := make(map[*skill.Skill]*governance.Report, len(snap.all))
	if pol.Mode == governance.Off {
		c.policy, c.byDigest = pol.Fingerprint(), nil
		return out
	}
	if fp := pol.Fingerprint(); fp != c.policy {
		c.policy, c.byDigest = fp, nil
	}
	digests := make([]string, len(snap.all))
	var todo []int
	next := make(map[string]*governance.Report, len(snap.all))
	for i, sk := range snap.all {
		digests[i] = governance.Digest(snap.inputs[sk])
		if r, ok := c.byDigest[digests[i]]; ok {
			out[sk], next[digests[i]] = r, r
		} else {
			todo = append(todo, i)
		}
	}
	reports := make([]*governance.Report, len(todo))
	var wg sync.WaitGroup
	workers := min(runtime.GOMAXPROCS(0), len(todo))
	for w := range workers {
		wg.Go(func() {
			for j := w; j < len(todo); j += workers {
				reports[j] = pol.Scan(snap.inputs[snap.all[todo[j]]])
			}
		})
	}
	wg.Wait()
	for j, i := range todo {
		out[snap.all[i]], next[digests[i]] = reports[j], reports[j]
	}
	c.scans.Add(float64(len(todo)))
	c.byDigest = next
	return out
}

// noteGovernanceLocked logs and counts each skill whose effective
// governance mode tightened since the last rebuild (a skill seen for the
// first time counts as tightened from allow), and sets the gauge of skills
// by mode. s.mu must be held for writing.
func (s *Server) noteGovernanceLocked() {
	counts := map[string]int{governance.ModeAllow: 0, governance.ModeQuarantine: 0, governance.ModeBlock: 0}
	next := make(map[string]string, len(s.snap.all))
	for _, sk := range s.snap.all {
		g := s.prepared[sk].Gov
		if g == nil {
			continue
		}
		counts[g.Mode]++
		next[sk.Key] = g.Mode
		if governance.ModeRank(g.Mode) <= governance.ModeRank(s.govModes[sk.Key]) {
			continue
		}
		s.metrics.govTightened.Inc()
		p := s.prepared[sk]
		s.log.Warn("governance: a skill's mode tightened", "skill", sk.Key, "mode", g.Mode, "was", cmp.Or(s.govModes[sk.Key], governance.ModeAllow),
			"band", g.Band, "score", g.Score, "rules", strings.Join(findingRules(g.Findings), ","), "digest", g.Digest,
			"enforced", p.Stage == eligibility.StageGovernance, "reason", p.Reason)
	}
	s.govModes = next
	for mode, n := range counts {
		s.metrics.govSkills.WithLabelValues(mode).Set(float64(n))
	}
}

// findingRules returns the rule ids of the warn and error findings, each
// once, sorted.
func findingRules(fs []governance.Finding) []string {
	var rules []string
	for _, f := range fs {
		if f.Severity != governance.SeverityInfo && !slices.Contains(rules, f.Rule) {
			rules = append(rules, f.Rule)
		}
	}
	slices.Sort(rules)
	return rules
}

// GovernanceQueue is the answer of GET /v1/governance: the operator's
// review queue.
type GovernanceQueue struct {
	Mode   string           `json:"mode"` // gateway.governance.mode
	Skills []GovernanceItem `json:"skills"`
}

// GovernanceItem is one skill of the review queue: a skill of any agent's
// view whose effective governance mode is not allow, or that the
// operator's mode keeps out.
type GovernanceItem struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Location string `json:"location"`
	Scope    string `json:"scope"`
	Agent    string `json:"agent,omitempty"` // of an agent-local skill
	// Enforced says the governance stage keeps the skill out of every
	// prompt; Reason is then the stage's reason. Under observe only the
	// operator's mode is enforced.
	Enforced   bool                    `json:"enforced"`
	Reason     string                  `json:"reason"`
	Governance *eligibility.Governance `json:"governance"`
}

func (s *Server) handleGovernance(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.governanceQueue())
}

// governanceQueue lists the review queue, in key order.
func (s *Server) governanceQueue() GovernanceQueue {
	s.mu.RLock()
	defer s.mu.RUnlock()
	q := GovernanceQueue{Mode: s.pol.cfg.Governance.Mode, Skills: []GovernanceItem{}}
	for _, sk := range s.snap.all {
		p := s.prepared[sk]
		enforced := p.Stage == eligibility.StageGovernance
		if !enforced && (p.Gov == nil || p.Gov.Mode == governance.ModeAllow) {
			continue
		}
		it := GovernanceItem{Name: sk.Name, Dir: sk.Dir, Location: sk.Key, Scope: string(sk.Scope), Agent: sk.Agent,
			Enforced: enforced, Governance: p.Gov}
		if enforced {
			it.Reason = p.Reason
		}
		q.Skills = append(q.Skills, it)
	}
	return q
}
