package eligibility

import (
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/governance"
	"github.com/skillgate/skillgate/skill"
)

// Stages, as reported in Result.Stage ("" when eligible).
const (
	StageConfig       = "config"
	StageGovernance   = "governance"
	StageRequirements = "requirements"
	StageRuntime      = "runtime"
)

// Reason strings. They are part of the operators' contract: exact.
const (
	ReasonDisabled    = "disabled by skills.entries policy"
	ReasonInvalid     = "invalid requirement identifiers"
	ReasonNoHosts     = "no connected hosts"
	reasonRequiresFmt = "requires "
)

// Prepared is a skill after the host-independent stages (prepareStages):
// the config filter, governance and requirement validation. It is computed once per
// skill and config, and evaluated against hosts as often as they change.
type Prepared struct {
	Skill    *skill.Skill
	Always   bool         // effective always (config override applied)
	Priority int          // skills.entries priority, for the prompt budget
	Req      Requirements // effective, validated requirements
	Problems []Problem    // why the requirements are invalid, if they are
	Unknown  []string     // unknown requirement fields (ignored)
	// Gov is the governance stage's outcome; nil when the skill was not
	// scanned (gateway.governance.mode off) or the config filter excluded it.
	Gov *Governance

	// Excluded is set when the skill is out before runtime evaluation:
	// Stage and Reason say why.
	Excluded bool
	Stage    string
	Reason   string

	// missingConfig is fixed for a given config, so it is computed here.
	missingConfig []string
}

// prepareStage is one host-independent stage of the pipeline. It reads the
// skill and the config and fills in p; a non-empty reason excludes the
// skill at this stage (Prepared.Stage is the stage's name) and ends the
// pipeline for it.
type prepareStage struct {
	name string
	run  func(p *Prepared, c *prepareState) (reason string)
}

// prepareState is what the stages of one Prepare pass on to each other.
type prepareState struct {
	cfg      *Config
	report   *governance.Report // the skill's scan; nil when not scanned
	entry    Entry              // the skill's skills.entries value
	hasEntry bool
}

// prepareStages are the host-independent stages, in pipeline order: the
// one place a stage before the host filter chain (hostStages) is added.
var prepareStages = []prepareStage{
	{StageConfig, configFilter},
	{StageGovernance, governanceStage},
	{StageRequirements, validateRequirements},
}

// Prepare runs the host-independent stages for one skill. report is the
// governance scan of the skill's directory (governance.Scan under
// cfg.Governance's options); nil when it was not scanned.
func Prepare(s *skill.Skill, report *governance.Report, cfg *Config) *Prepared {
	p := &Prepared{Skill: s, Always: s.Always}
	c := prepareState{cfg: cfg, report: report}
	for _, st := range prepareStages {
		if reason := st.run(p, &c); reason != "" {
			p.Excluded, p.Stage, p.Reason = true, st.name, reason
			return p
		}
	}
	var root map[string]any
	if cfg != nil {
		root = cfg.Root
	}
	p.missingConfig = MissingConfig(root, p.Req.Config)
	return p
}

// configFilter applies the skill's skills.entries value: enabled: false
// excludes it, and so does a version constraint the skill's version does
// not satisfy (always does not skip either); always overrides the
// frontmatter.
func configFilter(p *Prepared, c *prepareState) string {
	c.entry, c.hasEntry = c.cfg.Lookup(p.Skill)
	if c.hasEntry && c.entry.Enabled != nil && !*c.entry.Enabled {
		return ReasonDisabled
	}
	if c.hasEntry && c.entry.VersionConstraint != nil && !Satisfies(p.Skill.Version, c.entry.VersionConstraint) {
		v := p.Skill.Version
		if v == "" {
			v = "(none)"
		}
		return "version " + v + " does not satisfy " + c.entry.Version
	}
	if c.hasEntry && c.entry.Always != nil {
		p.Always = *c.entry.Always
	}
	p.Priority = c.entry.Priority
	return ""
}

// validateRequirements reads the effective requirements (the entry's
// requires overriding the frontmatter's field by field). Invalid ones
// exclude the skill unless it is always offered.
func validateRequirements(p *Prepared, c *prepareState) string {
	raw := p.Skill.Requires
	if c.hasEntry && c.entry.Requires != nil {
		raw = overlay(raw, c.entry.Requires)
	}
	p.Req, p.Problems, p.Unknown = ParseRequirements(raw)
	if len(p.Problems) == 0 {
		return ""
	}
	// Never half-trust a skill whose requirements we cannot read: an
	// offered skill whose binary is missing is worse than a hidden one.
	p.Req = Requirements{}
	if p.Always {
		return ""
	}
	return ReasonInvalid
}

// overlay applies a skills.entries requires override field by field.
func overlay(base, override any) any {
	om, ok := override.(map[string]any)
	if !ok {
		return override // invalid either way; ParseRequirements reports it
	}
	if base == nil {
		base = map[string]any{}
	}
	bm, ok := base.(map[string]any)
	if !ok {
		return base
	}
	out := maps.Clone(bm)
	for k, v := range om {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// ReachesRuntime reports whether the skill's eligibility depends on the
// connected hosts: enabled, valid requirements, not always. The gateway asks
// nodes about the bins and env names of exactly these skills.
func (p *Prepared) ReachesRuntime() bool { return !p.Excluded && !p.Always }

// FiltersHosts reports whether the host filter chain runs for the skill
// (when at least one host is connected): it reaches runtime and has host
// requirements. Only for these skills does the number of matching hosts
// count in Decide.
func (p *Prepared) FiltersHosts() bool { return p.ReachesRuntime() && p.Req.HasHost() }

// ConfigOK reports whether every requires.config path is truthy.
func (p *Prepared) ConfigOK() bool { return len(p.missingConfig) == 0 }

// Verdict is the pipeline's decision on one skill.
type Verdict uint8

// Verdicts.
const (
	VerdictOffered  Verdict = iota // eligible
	VerdictExcluded                // out before runtime: Prepared.Stage and Reason say why
	VerdictNoHosts                 // no connected hosts
	VerdictUnmet                   // no host meets every host requirement, or a config path is not truthy
)

// Decide is the pipeline's one verdict function of a skill on its own
// (every stage but the dependency stage, which Offer runs over a whole
// view on these verdicts). Given the number of
// connected hosts and how many of them pass the host filter chain (unused
// unless FiltersHosts), it decides, in the order of the runtime stage:
// excluded before runtime → out; always → offered; no requirements →
// offered; no connected hosts → out; no matching host or a falsy config
// path → out; else offered. The evaluation through the host index
// (EvaluateIndexed, ExplainIndexed, EligibleIndexed) and the gateway's
// live counts all decide here.
func (p *Prepared) Decide(hosts, matching int) Verdict {
	switch {
	case p.Excluded:
		return VerdictExcluded
	case p.Always, p.Req.Empty():
		return VerdictOffered
	case hosts == 0:
		return VerdictNoHosts
	case p.Req.HasHost() && matching == 0, len(p.missingConfig) > 0:
		return VerdictUnmet
	}
	return VerdictOffered
}

// Result is the pipeline's verdict on one skill, with its explanation.
type Result struct {
	Skill    *skill.Skill
	Always   bool
	Eligible bool
	Stage    string   // "" when eligible
	Reasons  []string // never nil
	Hosts    []string // ids of hosts satisfying every host requirement, sorted; never nil
	// Filtered lists, for each host requirement of the skill in the order
	// of the host filter chain, how many connected hosts it rules out.
	// Never nil; empty when the chain did not run (see FiltersHosts; also
	// with no connected host).
	Filtered []Filtered
}

// Filtered says how many connected hosts one host requirement rules out:
// the hosts that fail it among those that passed the requirements before
// it in the host filter chain (0 when it rules out none).
type Filtered struct {
	Requirement string   `json:"requirement"` // the field, e.g. "os"
	Values      []string `json:"values"`      // its normalized values, as the reason string joins them
	Hosts       int      `json:"hosts"`
}

// EvaluateIndexed runs the runtime stage against the hosts of an index:
// the verdict, its reasons, the ids of the hosts that satisfy every host
// requirement (sorted) and how many hosts each host requirement rules out.
func (p *Prepared) EvaluateIndexed(x *Index) Result { return p.evaluate(x, true) }

// ExplainIndexed is EvaluateIndexed without the host list: the verdict and
// its reasons, cheap enough for log lines at fleet scale.
func (p *Prepared) ExplainIndexed(x *Index) Result { return p.evaluate(x, false) }

// EligibleIndexed reports only whether the skill is eligible against the
// hosts of an index (before the dependency stage, see Offer): the prompt block needs no more, and skipping the host
// list and reasons makes it several times cheaper than EvaluateIndexed.
func (p *Prepared) EligibleIndexed(x *Index) bool {
	matching := 0
	if p.FiltersHosts() && x.Len() > 0 && p.ConfigOK() {
		matching = x.filter(&p.Req, nil).Len()
	}
	return p.Decide(x.Len(), matching) == VerdictOffered
}

// evaluate runs the host filter chain when it applies, decides, and
// explains the verdict.
func (p *Prepared) evaluate(x *Index, listHosts bool) Result {
	r := Result{Skill: p.Skill, Always: p.Always, Reasons: []string{}, Hosts: []string{}, Filtered: []Filtered{}}
	matching := 0
	if p.FiltersHosts() && x.Len() > 0 {
		cand := x.filter(&p.Req, &r)
		matching = cand.Len()
		if listHosts {
			// Sized once: at 10,000 hosts, growing the list was most of the cost.
			r.Hosts = make([]string, 0, matching)
			cand.Each(func(i int) { r.Hosts = append(r.Hosts, x.hosts[i].ID) })
			slices.Sort(r.Hosts) // slots are reused: their order is not the ids'
		}
	}
	switch p.Decide(x.Len(), matching) {
	case VerdictOffered:
		r.Eligible = true
	case VerdictExcluded:
		r.Stage, r.Reasons = p.Stage, []string{p.Reason}
	case VerdictNoHosts:
		r.Stage, r.Reasons = StageRuntime, []string{ReasonNoHosts}
	case VerdictUnmet:
		// The filter gave a reason for each host stage that failed.
		r.Stage = StageRuntime
		if len(p.missingConfig) > 0 {
			r.Reasons = append(r.Reasons, requiresReason(FieldConfig, p.missingConfig))
		}
	}
	return r
}

func requiresReason(field string, vals []string) string {
	return reasonRequiresFmt + field + ": " + strings.Join(vals, ", ")
}
