package gateway

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/report"
	"github.com/skillgate/skillgate/skill"
)

// agentView is an agent's prompt block as of one generation (the cache
// entry holds which): what prompt builds serve until something it shows
// changes (see live.go).
type agentView struct {
	agentBlock                     // under the agent's configured budget
	eligible   map[string]bool     // skill key → offered, to log changes
	budget     promptbuild.Budget  // the configured budget
	entries    []promptbuild.Entry // the offered skills' entries, for lower budgets
	vs         []promptbuild.Variants

	mu      sync.Mutex
	lowered map[promptbuild.Budget]*agentBlock // blocks under budgets requests lowered
}

// maxLowered bounds the blocks of lowered budgets kept per view: a client
// cycling through budgets gets answers, not memory.
const maxLowered = 8

// agentBlock is one block with its validator and compressed form.
type agentBlock struct {
	prompt string
	etag   string // etagOf(prompt)

	gzipOnce sync.Once
	gzipped  []byte // prompt gzip-compressed, made on first request that accepts it
}

// gzip returns the block compressed, compressing it once per block: at a
// thousand skills the block is a few hundred KiB and compresses ~10×.
func (v *agentBlock) gzip() []byte {
	v.gzipOnce.Do(func() {
		var b bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
		zw.Write([]byte(v.prompt))
		zw.Close()
		v.gzipped = b.Bytes()
	})
	return v.gzipped
}

// block returns the block under b, a budget a request lowered (clamped to
// the configured one: a request may only lower it).
func (v *agentView) block(b promptbuild.Budget) *agentBlock {
	b.MaxChars = lower(v.budget.MaxChars, b.MaxChars)
	b.MaxSkills = lower(v.budget.MaxSkills, b.MaxSkills)
	if b == v.budget {
		return &v.agentBlock
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if blk, ok := v.lowered[b]; ok {
		return blk
	}
	text := report.Block(v.entries, v.vs, b, report.Note).Text
	blk := &agentBlock{prompt: text, etag: etagOf(text)}
	if len(v.lowered) < maxLowered {
		if v.lowered == nil {
			v.lowered = map[promptbuild.Budget]*agentBlock{}
		}
		v.lowered[b] = blk
	}
	return blk
}

// lower returns req when it is set and lowers limit (≤ 0 is no limit).
func lower(limit, req int) int {
	if req <= 0 || (limit > 0 && req >= limit) {
		return limit
	}
	return req
}

// promptFor returns the agent's prompt block, from the cache when nothing
// it shows changed since it was built.
func (s *Server) promptFor(agentID string) string { return s.promptView(agentID).prompt }

// viewState is the snapshot and policy that cache keys derive from.
type viewState struct {
	snap *snapshot
	pol  *policy
}

// viewKey is the cache key of an agent's view: agents without skills,
// findings or settings (agents.<id>) of their own see exactly the global
// view and share one entry (""), so made-up agent ids cost no memory.
func viewKey(st *viewState, agentID string) string {
	if st.snap.ownsAgent(agentID) || st.pol.ownsAgent(agentID) {
		return agentID
	}
	return ""
}

// promptView is promptFor returning the cached view itself.
func (s *Server) promptView(agentID string) *agentView {
	gen := s.gen.Load() // before the snapshot: see rebuildLocked
	if v, ok := s.prompts.get(viewKey(s.now.Load(), agentID), gen); ok {
		s.metrics.promptHit.Inc()
		return v
	}
	s.metrics.promptMiss.Inc()

	// One build per view and generation: when many callers miss together
	// (a change wakes every long poll), the first builds and the others
	// wait for it and wake together.
	key := viewKey(s.now.Load(), agentID)
	s.buildsMu.Lock()
	if c := s.builds[key]; c != nil && c.gen == gen {
		s.buildsMu.Unlock()
		<-c.done
		return c.v
	}
	c := &buildCall{gen: gen, done: make(chan struct{})}
	s.builds[key] = c
	s.buildsMu.Unlock()
	defer close(c.done)
	c.v = s.buildPromptView(agentID, key, c)
	return c.v
}

// buildCall is one block build that callers missing the same view at the
// same generation share.
type buildCall struct {
	gen  uint64
	done chan struct{} // closed when v is set
	v    *agentView
}

// buildPromptView builds an agent's block and caches it; c is the shared
// call of view key callKey, which it retires before releasing the read lock:
// a caller after the next change must not join a build from before it.
func (s *Server) buildPromptView(agentID, callKey string, c *buildCall) *agentView {
	// Build under the read lock and store before releasing it, so that no
	// writer can invalidate between the build and the store.
	s.mu.RLock()
	defer s.mu.RUnlock()
	defer func() { // runs before the RUnlock above
		s.buildsMu.Lock()
		if s.builds[callKey] == c {
			delete(s.builds, callKey)
		}
		s.buildsMu.Unlock()
	}()
	gen := s.gen.Load()
	start := time.Now()
	key := viewKey(&viewState{s.snap, s.pol}, agentID)
	limits := s.pol.file.Limits(agentID)
	skills, prepared, offers := s.offersLocked(agentID)
	nv := &agentView{eligible: make(map[string]bool, len(skills)), budget: budget(limits)}
	n := 0
	for _, ok := range offers.Offered {
		if ok {
			n++
		}
	}
	nv.entries, nv.vs = make([]promptbuild.Entry, 0, n), make([]promptbuild.Variants, 0, n)
	for i, sk := range skills {
		p, ok := prepared[i], offers.Offered[i]
		nv.eligible[sk.Key] = ok
		if !ok {
			continue
		}
		if limits.Hosts == HostsNone || !p.FiltersHosts() {
			nv.entries = append(nv.entries, report.Entry(p, HostsNone, nil))
			nv.vs = append(nv.vs, s.variants[sk])
			continue
		}
		e := report.Entry(p, limits.Hosts, func() []string { return s.matchingHostsLocked(p) })
		nv.entries = append(nv.entries, e)
		nv.vs = append(nv.vs, promptbuild.NewVariants(&e))
	}
	offered := len(nv.entries)
	blk := report.Block(nv.entries, nv.vs, nv.budget, report.Note)
	nv.prompt, nv.etag = blk.Text, etagOf(blk.Text)
	s.noteOverBudget(key, agentID, blk.OverBudget, nv.budget)
	s.metrics.evalSeconds.Observe(time.Since(start).Seconds())
	s.metrics.skills.WithLabelValues("eligible").Set(float64(offered))
	s.metrics.skills.WithLabelValues("ineligible").Set(float64(len(skills) - offered))
	if old, ok := s.prompts.peek(key); !ok || old.prompt != nv.prompt {
		s.logChangesLocked(agentID, skills, prepared, offers)
	}
	// Counted as the block plus its gzip form, which is never larger than
	// the block and a few bytes.
	s.prompts.put(key, gen, gen, int64(2*len(nv.prompt)+64), nv)
	return nv
}

// logChangesLocked logs a skill's verdict once per change, not per prompt
// build, in the style operators filter on: skill=… missing_bins=[…]
// missing_env=[…]. The last verdict logged is kept per skill key, so a new
// agent (or a client cycling agent ids) logs nothing the gateway already
// said (per view for a skill that names others). skills, prepared and
// offers are the agent's view as offersLocked returns it.
func (s *Server) logChangesLocked(agentID string, skills []*skill.Skill, prepared []*eligibility.Prepared, offers *eligibility.Offers) {
	s.loggedMu.Lock()
	defer s.loggedMu.Unlock()
	for i, sk := range skills {
		p := prepared[i]
		if p.OutOfScope() {
			continue // an agent's scope is its config, not news of the skill
		}
		eligible := offers.Offered[i]
		verdict := "eligible"
		var r eligibility.Result
		if !eligible {
			r = s.explainLocked(p)
			offers.Explain(i, &r)
			verdict = r.Stage + ": " + strings.Join(r.Reasons, "; ")
		}
		// A skill that names others may be offered to one agent and not
		// another (the names resolve in each view): its verdict is kept
		// per view, so that agents' builds do not log it back and forth.
		logKey := sk.Key
		if p.Req.HasDeps() {
			logKey += "\x00" + viewKey(&viewState{s.snap, s.pol}, agentID)
		}
		last, seen := s.logged[logKey]
		if last == verdict {
			continue
		}
		s.logged[logKey] = verdict
		if eligible {
			if seen {
				s.log.Info("skill enabled", "agent", agentID, "skill", sk.Name, "location", sk.Key)
			}
			continue
		}
		missingBins := missing(p.Req.Bins, s.anyHostHasBinLocked)
		if none := missing(p.Req.AnyBins, s.anyHostHasBinLocked); len(none) > 0 && len(none) == len(p.Req.AnyBins) {
			missingBins = append(missingBins, none...)
		}
		missingEnv := missing(p.Req.Env, s.anyHostHasEnvLocked)
		// Info, not warn: most skills of a bucket are disabled on most
		// fleets (a binary or an OS no host has), and each start says so
		// again for every one of them; it is routine, not a fault.
		s.log.Info("skill disabled: "+strings.Join(r.Reasons, "; "), "agent", agentID, "skill", sk.Name,
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

// skillsAnswer returns the JSON answer of GET /v1/agents/{id}/skills
// without its leading {"agent":ID member (see writeSkillsAnswer): the same
// object as `skillgate eval --json`, evaluated against the hosts now.
// Answers are cached per view like prompt blocks, and dropped on any
// host change (they list hosts, not only verdicts). Builds run one at a
// time and outside s.mu, on a copy of the host index, so that callers of
// this endpoint cannot stall prompt builds or node events.
func (s *Server) skillsAnswer(agentID string) []byte {
	if body, ok := s.reports.get(viewKey(s.now.Load(), agentID), s.reportGen.Load()); ok {
		return body
	}
	s.reportMu.Lock()
	defer s.reportMu.Unlock()
	gen := s.reportGen.Load()
	key := viewKey(s.now.Load(), agentID)
	if body, ok := s.reports.get(key, gen); ok {
		return body // built while this caller waited
	}
	s.mu.RLock()
	gen = s.reportGen.Load()
	snap, prepared, pol := s.snap, s.prepared, s.pol
	key = viewKey(&viewState{snap, pol}, agentID)
	limits := pol.file.Limits(agentID)
	index := s.cloneIndexLocked()
	s.mu.RUnlock()

	skills := snap.view(agentID)
	// On one goroutine: a /skills build must not take every core from
	// prompt builds and node events.
	rep := report.Build(&report.View{
		Skills:      skills,
		Prepare:     func(i int) *eligibility.Prepared { return prepared[skills[i]].ForAgent(pol.cfg, agentID) },
		Diagnostics: snap.diagsFor(agentID),
		Budget:      budget(limits),
		Hosts:       limits.Hosts,
		Shadowed:    func(i int) *skill.Skill { return snap.shadowed(skills[i]) },
	}, index, 1, nil)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(&rep)
	body := bytes.TrimPrefix(b.Bytes(), []byte(`{"agent":""`))
	s.reports.put(key, gen, s.reportGen.Load(), int64(len(body)), body)
	return body
}

// writeSkillsAnswer writes a /skills answer for one agent id: the cached rest is
// shared by every agent of the view, so it is written, not copied.
func writeSkillsAnswer(w io.Writer, agentID string, rest []byte) {
	id, _ := json.Marshal(agentID)
	io.WriteString(w, `{"agent":`)
	w.Write(id)
	w.Write(rest)
}

// noteOverBudget logs at warn, once each time it starts, that a view's
// always skills alone exceed its budget (they are all emitted anyway), and
// counts it.
func (s *Server) noteOverBudget(key, agentID string, over bool, b promptbuild.Budget) {
	s.loggedMu.Lock()
	defer s.loggedMu.Unlock()
	if over == s.overBudget[key] {
		return
	}
	if !over {
		delete(s.overBudget, key)
		return
	}
	s.overBudget[key] = true
	s.metrics.overBudget.Inc()
	s.log.Warn("prompt budget: the always skills alone exceed it; they are all in the block anyway, the others are left out — raise gateway.prompt.maxChars (or agents.<id>.prompt) or make fewer skills always",
		"agent", agentID, "max_chars", b.MaxChars)
}
