package gateway

import (
	"maps"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
	"golang.org/x/sync/errgroup"
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
		digests[i] = governance.ScanKey(snap.inputs[sk]) // the digest, and the signature's bytes
		if r, ok := c.byDigest[digests[i]]; ok {
			out[sk], next[digests[i]] = r, r
		} else {
			todo = append(todo, i)
		}
	}
	reports := make([]*governance.Report, len(todo))
	var g errgroup.Group
	g.SetLimit(runtime.GOMAXPROCS(0))
	for j, i := range todo {
		g.Go(func() error { reports[j] = pol.Scan(snap.inputs[snap.all[i]]); return nil })
	}
	g.Wait() // a scan returns no error
	for j, i := range todo {
		out[snap.all[i]], next[digests[i]] = reports[j], reports[j]
	}
	c.scans.Add(float64(len(todo)))
	c.byDigest = next
	return out
}

// govState is a skill's effective governance mode at the last rebuild.
type govState struct{ mode string }

// noteGovernanceLocked records each change of a skill's effective
// governance mode since the last rebuild: an event in the feed, a log line
// (warn when it tightened, counted in skillgate_governance_tightened_total;
// a skill first seen held counts as tightened from allow), and sets the
// gauge of skills by mode. The first load after a start records the modes
// without events: a restart is not a change. s.mu must be held for
// writing.
func (s *Server) noteGovernanceLocked() {
	counts := map[string]int{governance.ModeAllow: 0, governance.ModeQuarantine: 0, governance.ModeBlock: 0}
	next := make(map[string]govState, len(s.snap.all))
	starting := s.notLoaded.Load() != nil
	now := time.Now()
	for _, sk := range s.snap.all {
		p := s.prepared[sk]
		g := p.Gov
		if g == nil {
			continue
		}
		counts[g.Mode]++
		next[sk.Key] = govState{mode: g.Mode}
		prev, known := s.govModes[sk.Key]
		if starting || (known && prev.mode == g.Mode) {
			continue
		}
		was := "none"
		if known {
			was = prev.mode
		}
		why := govWhy(g)
		ev := GovernanceEvent{Time: now, Skill: sk.Dir, Location: sk.Key, Digest: g.Digest, Mode: g.Mode, Was: was, Why: why}
		attrs := []any{"skill", sk.Dir, "location", sk.Key, "digest", g.Digest, "mode", g.Mode, "was", was, "why", why,
			"enforced", p.Stage == eligibility.StageGovernance}
		if governance.ModeRank(g.Mode) <= governance.ModeRank(prev.mode) {
			s.log.Info("governance: a skill's mode changed", attrs...)
		} else {
			s.metrics.govTightened.Inc()
			s.log.Warn("governance: a skill's mode tightened", append(attrs, "band", g.Band, "score", g.Score,
				"rules", strings.Join(findingRules(g.Findings), ","))...)
		}
		// After the log line: a reader of the feed finds it written.
		s.govFeed.add(ev)
	}
	s.govModes = next
	for mode, n := range counts {
		s.metrics.govSkills.WithLabelValues(mode).Set(float64(n))
	}
}

// noteSuppressionsLocked logs, once each, the suppressions of the config
// that have expired (their findings count again from this rebuild on), and
// sets nextExpiry to the next one to come, for the poller to rebuild then.
// s.mu must be held for writing.
func (s *Server) noteSuppressionsLocked(now time.Time) {
	s.nextExpiry = time.Time{}
	for _, key := range slices.Sorted(maps.Keys(s.pol.cfg.Entries)) {
		for _, sup := range s.pol.cfg.Entries[key].Suppress {
			switch {
			case sup.Expires.IsZero():
			case now.Before(sup.Expires):
				if s.nextExpiry.IsZero() || sup.Expires.Before(s.nextExpiry) {
					s.nextExpiry = sup.Expires
				}
			default:
				id := key + "\x00" + sup.Rule + "\x00" + sup.File + "\x00" + strconv.Itoa(sup.Line) + "\x00" + sup.Expires.String()
				if !s.expiredLogged[id] {
					s.expiredLogged[id] = true
					s.log.Warn("governance: a suppression expired; its findings count again", "skill", key, "rule", sup.Rule,
						"file", sup.File, "line", sup.Line, "expires", sup.Expires.UTC().Format(time.RFC3339), "reason", sup.Reason)
				}
			}
		}
	}
}

// expireSuppressions rebuilds once a suppression's expiry has come (the
// poller calls it every poll).
func (s *Server) expireSuppressions(now time.Time) {
	s.mu.RLock()
	due := !s.nextExpiry.IsZero() && !now.Before(s.nextExpiry)
	s.mu.RUnlock()
	if due {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.rebuildLocked()
	}
}

// govWhy says what decided a skill's effective governance mode.
func govWhy(g *eligibility.Governance) string {
	switch {
	case g.Reason != "":
		return g.Reason
	case g.Approved:
		return "approved by the operator: skills.entries approve lists " + g.Digest
	}
	return "allowed by governance: " + g.Band + " risk " + strconv.Itoa(g.Score)
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
