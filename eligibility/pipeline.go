package eligibility

import (
	"maps"
	"slices"
	"strings"

	"github.com/skillgate/skillgate/skill"
)

// Stages, as reported in Result.Stage ("" when eligible).
const (
	StageConfig       = "config"
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

// Prepared is a skill after the host-independent stages: the config
// filter and requirement validation. It is computed once per skill and
// config, and evaluated against hosts as often as they change.
type Prepared struct {
	Skill    *skill.Skill
	Always   bool         // effective always (config override applied)
	Req      Requirements // effective, validated requirements
	Problems []Problem    // why the requirements are invalid, if they are
	Unknown  []string     // unknown requirement fields (ignored)

	// Excluded is set when the skill is out before runtime evaluation:
	// Stage and Reason say why.
	Excluded bool
	Stage    string
	Reason   string

	// missingConfig is fixed for a given config, so it is computed here.
	missingConfig []string
}

// Prepare runs the config filter and requirement validation for one skill.
func Prepare(s *skill.Skill, cfg *Config) *Prepared {
	p := &Prepared{Skill: s, Always: s.Always}
	entry, hasEntry := cfg.Lookup(s)
	if hasEntry && entry.Enabled != nil && !*entry.Enabled {
		p.Excluded, p.Stage, p.Reason = true, StageConfig, ReasonDisabled
		return p
	}
	if hasEntry && entry.Always != nil {
		p.Always = *entry.Always
	}
	raw := s.Requires
	if hasEntry && entry.Requires != nil {
		raw = overlay(raw, entry.Requires)
	}
	p.Req, p.Problems, p.Unknown = ParseRequirements(raw)
	if len(p.Problems) > 0 {
		// Never half-trust a skill whose requirements we cannot read: an
		// offered skill whose binary is missing is worse than a hidden one.
		p.Req = Requirements{}
		if !p.Always {
			p.Excluded, p.Stage, p.Reason = true, StageRequirements, ReasonInvalid
		}
		return p
	}
	var root map[string]any
	if cfg != nil {
		root = cfg.Root
	}
	p.missingConfig = MissingConfig(root, p.Req.Config)
	return p
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

// Result is the pipeline's verdict on one skill.
type Result struct {
	Skill    *skill.Skill
	Always   bool
	Eligible bool
	Stage    string   // "" when eligible
	Reasons  []string // never nil
	Hosts    []string // ids of hosts satisfying every host requirement, sorted; never nil
}

// Evaluate runs the whole pipeline for skills (in listing order) against
// the connected hosts. The results are in the order of skills.
func Evaluate(skills []*skill.Skill, cfg *Config, hosts []*Host) []Result {
	out := make([]Result, len(skills))
	for i, s := range skills {
		out[i] = Prepare(s, cfg).Evaluate(hosts)
	}
	return out
}

// Evaluate runs runtime evaluation against the connected hosts: always →
// eligible; no requirements → eligible; no hosts → ineligible; then the
// host filter chain on one shared candidate set, then config truthiness.
func (p *Prepared) Evaluate(hosts []*Host) Result {
	return p.evaluate(len(hosts), func(r *Result) {
		candidates := slices.Clone(hosts)
		for _, st := range hostStages {
			vals := *p.Req.field(st.field)
			if len(vals) == 0 {
				continue
			}
			candidates = slices.DeleteFunc(candidates, func(h *Host) bool { return !st.match(h, vals) })
			if len(candidates) == 0 {
				r.Reasons = append(r.Reasons, requiresReason(st.field, vals))
			}
		}
		for _, h := range candidates {
			r.Hosts = append(r.Hosts, h.ID)
		}
	})
}

// evaluate is the frame both evaluators share; filter runs the host filter
// chain, adding a reason per failing stage and the surviving host ids.
func (p *Prepared) evaluate(nHosts int, filter func(r *Result)) Result {
	r := Result{Skill: p.Skill, Always: p.Always, Reasons: []string{}, Hosts: []string{}}
	switch {
	case p.Excluded:
		r.Stage = p.Stage
		r.Reasons = []string{p.Reason}
		return r
	case p.Always, p.Req.Empty():
		r.Eligible = true
		return r
	case nHosts == 0:
		r.Stage = StageRuntime
		r.Reasons = []string{ReasonNoHosts}
		return r
	}
	if p.Req.HasHost() {
		filter(&r)
		slices.Sort(r.Hosts)
	}
	if len(p.missingConfig) > 0 {
		r.Reasons = append(r.Reasons, requiresReason(FieldConfig, p.missingConfig))
	}
	if len(r.Reasons) > 0 {
		r.Stage = StageRuntime
		return r
	}
	r.Eligible = true
	return r
}

func requiresReason(field string, vals []string) string {
	return reasonRequiresFmt + field + ": " + strings.Join(vals, ", ")
}

// hostStages is the host filter chain, in order.
var hostStages = []struct {
	field string
	match func(h *Host, vals []string) bool
}{
	{FieldHostRoles, func(h *Host, vals []string) bool { return anyIn(h.Roles, vals) }},
	{FieldCapabilities, func(h *Host, vals []string) bool { return allIn(h.Capabilities, vals) }},
	{FieldAnyCapabilities, func(h *Host, vals []string) bool { return anyIn(h.Capabilities, vals) }},
	{FieldOS, func(h *Host, vals []string) bool { return slices.Contains(vals, h.OS) }},
	{FieldEnv, func(h *Host, vals []string) bool { return allIn(h.Env, vals) }},
	{FieldBins, func(h *Host, vals []string) bool { return allIn(h.Bins, vals) }},
	{FieldAnyBins, func(h *Host, vals []string) bool { return anyIn(h.Bins, vals) }},
}

func allIn(set map[string]struct{}, vals []string) bool {
	for _, v := range vals {
		if _, ok := set[v]; !ok {
			return false
		}
	}
	return true
}

func anyIn(set map[string]struct{}, vals []string) bool {
	for _, v := range vals {
		if _, ok := set[v]; ok {
			return true
		}
	}
	return false
}

// ConfigOK reports whether every requires.config path is truthy.
func (p *Prepared) ConfigOK() bool { return len(p.missingConfig) == 0 }
