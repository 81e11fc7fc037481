// Package report owns the per-skill report of an agent's view: the one
// object that `skillgate eval --json` prints and GET
// /v1/agents/{id}/skills answers, and the one builder both use (Build).
//
// It sits after eligibility and promptbuild in the data flow and imports
// both, so that neither imports the other: eligibility decides each
// skill's verdict, promptbuild renders the <skill> entries of the offered
// ones, and this package puts verdicts, diagnostics and the prompt
// together, once. It never imports gateway, store, catalog or the
// commands, which
// call it; it does no I/O (encoding the report is the caller's).
package report

import (
	"runtime"
	"sync"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/promptbuild"
	"github.com/skillgate/skillgate/skill"
	"golang.org/x/sync/errgroup"
)

// Report is the answer of `skillgate eval --json` and of
// GET /v1/agents/{id}/skills.
type Report struct {
	Agent       string             `json:"agent"`
	Skills      []SkillReport      `json:"skills"`
	Prompt      string             `json:"prompt"`
	Diagnostics []skill.Diagnostic `json:"diagnostics"`
}

// SkillReport is one skill's verdict in a Report.
type SkillReport struct {
	Name     string `json:"name"`
	Dir      string `json:"dir"`
	Location string `json:"location"`
	ReadPath string `json:"read_path"`
	Scope    string `json:"scope"`
	// Version is the skill's version as written (skill.Skill.Version);
	// absent when it has none.
	Version string `json:"version,omitempty"`
	// Shadows is the global skill an agent-local one shadows (same
	// directory); absent for global skills and agent-local ones that
	// shadow none.
	Shadows  *Shadow  `json:"shadows,omitempty"`
	Homepage string   `json:"homepage,omitempty"`
	Always   bool     `json:"always"`
	Eligible bool     `json:"eligible"`
	Stage    string   `json:"stage"`
	Reasons  []string `json:"reasons"`
	Hosts    []string `json:"hosts"`
	// Filtered says why hosts are not in Hosts: for each non-empty host
	// requirement, in the order of the host filter chain, how many
	// connected hosts it rules out among those that passed the ones before
	// it (0 when it rules out none). It is always present: [] when the
	// host filter chain did not run — the skill was excluded by config or
	// by invalid requirements, is always offered, has no host
	// requirements, or no host is connected.
	Filtered []eligibility.Filtered `json:"filtered"`
	// Prompt says how an offered skill appears in the agent's block under
	// its budget: "full", "short" (description cut), "name" (no
	// description) or "omitted"; "" (left out of the JSON) when the skill
	// is not offered.
	Prompt string `json:"prompt,omitempty"`
	// Governance is the governance stage's outcome: digest, score, band,
	// verdict, effective mode, approval and findings; null when the skill
	// was not scanned (gateway.governance.mode off, or excluded by
	// config first).
	Governance *eligibility.Governance `json:"governance"`
}

// Shadow is the global skill an agent-local skill shadows: its location
// and its version (absent when it has none).
type Shadow struct {
	Location string `json:"location"`
	Version  string `json:"version,omitempty"`
}

// Emptied returns the host requirement that ruled out the last candidate
// hosts, and false when no requirement emptied the set (the skill has
// hosts, or the chain did not run). Once the set is empty the later
// requirements rule out none, so it is the last entry of Filtered that
// ruled out any.
func (s *SkillReport) Emptied() (eligibility.Filtered, bool) {
	if len(s.Hosts) > 0 {
		return eligibility.Filtered{}, false
	}
	for i := len(s.Filtered) - 1; i >= 0; i-- {
		if s.Filtered[i].Hosts > 0 {
			return s.Filtered[i], true
		}
	}
	return eligibility.Filtered{}, false
}

// newSkillReport converts a result; shadowed is the global skill the
// skill shadows, or nil.
func newSkillReport(p *eligibility.Prepared, r *eligibility.Result, shadowed *skill.Skill) SkillReport {
	homepage, version := r.Skill.Homepage, r.Skill.Version
	var shadows *Shadow
	if shadowed != nil {
		shadows = &Shadow{Location: shadowed.Key, Version: shadowed.Version}
	}
	if p.OutOfScope() {
		// What the skill says of itself is not the agent's to read.
		homepage, version, shadows = "", "", nil
	}
	return SkillReport{
		Version:    version,
		Shadows:    shadows,
		Governance: p.Gov,
		Name:       r.Skill.Name,
		Dir:        r.Skill.Dir,
		Location:   r.Skill.Key,
		ReadPath:   skill.ReadPath(r.Skill.Key),
		Scope:      string(r.Skill.Scope),
		Homepage:   homepage,
		Always:     r.Always,
		Eligible:   r.Eligible,
		Stage:      r.Stage,
		Reasons:    r.Reasons,
		Hosts:      r.Hosts,
		Filtered:   r.Filtered,
	}
}

// View is what a report is built from: an agent's view of the skills and
// the diagnostics found on the way.
type View struct {
	Agent  string
	Skills []*skill.Skill // in listing order
	// Prepare returns the prepared form of Skills[i] (eligibility.Prepare
	// against the config). It is called once per skill, from several
	// goroutines when Build runs on several.
	Prepare func(i int) *eligibility.Prepared
	// Diagnostics are those of listing and loading the view; they come
	// first. (The config file has none: package config refuses a file
	// with a problem.)
	Diagnostics []skill.Diagnostic
	// Budget and Hosts are the agent's prompt budget and host hint
	// (HostsNone when ""); the zero Budget is unlimited.
	Budget promptbuild.Budget
	Hosts  string
	// Shadowed, when not nil, returns the global skill Skills[i] shadows
	// (an agent-local skill of the same directory), or nil.
	Shadowed func(i int) *skill.Skill
	// Offers, when not nil, are the view's verdicts after the dependency
	// stage, computed by the caller (Reports needs them; Build computes
	// its own when nil).
	Offers *eligibility.Offers
}

// shadowed returns the global skill Skills[i] shadows, or nil.
func (v *View) shadowed(i int) *skill.Skill {
	if v.Shadowed == nil {
		return nil
	}
	return v.Shadowed(i)
}

// offers returns the view's verdicts after the dependency stage: the
// caller's, else computed from the base verdicts (every other stage) of
// every skill against x.
func (v *View) offers(prepared []*eligibility.Prepared, base func(i int) bool) *eligibility.Offers {
	if v.Offers != nil {
		return v.Offers
	}
	b := make([]bool, len(prepared))
	for i := range b {
		b[i] = base(i)
	}
	return eligibility.Offer(prepared, b)
}

// Build evaluates every skill of v against the hosts of x and returns the
// report: each skill's verdict in listing order, the prompt block of the
// offered ones, and the diagnostics (the view's, then each skill's and its
// requirements', then the config's; never nil). x is only read: up to
// workers skills are evaluated at once (at least one; GOMAXPROCS when
// workers is 0 or less than 0). each, when not nil, is called from the
// calling goroutine with every skill's report in listing order, as soon
// as it and those before it are done, so that a caller can write the
// answer while the rest is evaluated.
func Build(v *View, x *eligibility.Index, workers int, each func(*SkillReport)) Report {
	n := len(v.Skills)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, n))

	// The verdicts first (cheap: no host lists), for the block: how each
	// offered skill fits the budget is part of its report. The dependency
	// stage runs last, over the whole view.
	prepared := make([]*eligibility.Prepared, n)
	base := make([]bool, n)
	forEach(n, workers, func(i int) {
		prepared[i] = v.Prepare(i)
		base[i] = prepared[i].EligibleIndexed(x)
	})
	offers := v.offers(prepared, func(i int) bool { return base[i] })
	offered := offers.Offered
	var (
		entries []promptbuild.Entry
		at      []int // entries[j] is of v.Skills[at[j]]
	)
	for i := range n {
		if offered[i] {
			p := prepared[i]
			entries = append(entries, Entry(p, v.Hosts, func() []string { return p.EvaluateIndexed(x).Hosts }))
			at = append(at, i)
		}
	}
	blk := Block(entries, nil, v.Budget, Note)
	fit := make([]string, n)
	for j, i := range at {
		fit[i] = blk.Fits[j].String()
	}

	reports := make([]SkillReport, n)
	eval := func(i int) {
		r := prepared[i].EvaluateIndexed(x)
		offers.Explain(i, &r)
		reports[i] = newSkillReport(prepared[i], &r, v.shadowed(i))
		reports[i].Prompt = fit[i]
	}
	if workers <= 1 {
		for i := range n {
			eval(i)
			if each != nil {
				each(&reports[i])
			}
		}
	} else {
		done := make([]chan struct{}, n)
		for i := range done {
			done[i] = make(chan struct{})
		}
		var wg sync.WaitGroup
		wg.Go(func() { forEach(n, workers, func(i int) { eval(i); close(done[i]) }) })
		if each != nil {
			for i := range reports {
				<-done[i]
				each(&reports[i])
			}
		}
		wg.Wait()
	}

	diags := append([]skill.Diagnostic{}, v.Diagnostics...)
	for i, s := range v.Skills {
		diags = append(diags, s.Diagnostics...)
		diags = append(diags, prepared[i].Diagnostics()...)
	}
	return Report{
		Agent:       v.Agent,
		Skills:      reports,
		Prompt:      blk.Text,
		Diagnostics: diags,
	}
}

// forEach calls f(i) for every i in [0, n), started in index order, on up
// to workers goroutines.
func forEach(n, workers int, f func(i int)) {
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error { f(i); return nil })
	}
	g.Wait() // f returns nothing: no error to wait for
}

// Reports returns the reports of the skills v.Skills[i] for i in idx, in
// that order: what a search answers, without listing the hosts of the rest
// of the view (at 10,000 hosts, that is most of a Build). The dependency
// stage needs every skill's verdict: v.Offers, else each skill's verdict
// against x.
func Reports(v *View, x *eligibility.Index, idx []int) []SkillReport {
	prepared := make([]*eligibility.Prepared, len(v.Skills))
	for i := range prepared {
		prepared[i] = v.Prepare(i)
	}
	offers := v.offers(prepared, func(i int) bool { return prepared[i].EligibleIndexed(x) })
	out := make([]SkillReport, len(idx))
	for j, i := range idx {
		r := prepared[i].EvaluateIndexed(x)
		offers.Explain(i, &r)
		out[j] = newSkillReport(prepared[i], &r, v.shadowed(i))
	}
	return out
}
