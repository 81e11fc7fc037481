package eligibility

import (
	"path"

	"github.com/skillgate/skillgate/skill"
)

// ReasonOutOfScope is the config stage's reason for a skill outside an
// agent's skill scope (agents.<id>.skills).
const ReasonOutOfScope = "not in this agent's skill scope"

// Scope is an agent's skill scope: globs (path.Match syntax) matched
// against a skill's name and its directory. Deny wins; no Allow means all.
type Scope struct {
	Allow []string `json:"allow,omitempty"`
	Deny  []string `json:"deny,omitempty"`
}

// CheckGlob reports whether a scope glob compiles.
func CheckGlob(g string) error {
	_, err := path.Match(g, "")
	return err
}

// Has reports whether the skill is in the scope.
func (sc *Scope) Has(s *skill.Skill) bool {
	matches := func(globs []string) bool {
		for _, g := range globs {
			if ok, _ := path.Match(g, s.Name); ok {
				return true
			}
			if ok, _ := path.Match(g, s.Dir); ok {
				return true
			}
		}
		return false
	}
	if matches(sc.Deny) {
		return false
	}
	return len(sc.Allow) == 0 || matches(sc.Allow)
}

// InScope reports whether the skill is in the agent's skill scope (every
// skill is, for an agent without one).
func (c *Config) InScope(agent string, s *skill.Skill) bool {
	if c == nil {
		return true
	}
	sc, ok := c.Scopes[agent]
	return !ok || sc.Has(s)
}

// ForAgent returns p as agent sees it: p itself when the skill is in the
// agent's skill scope, else a copy excluded at stage config with
// ReasonOutOfScope. Prepared is shared by every agent; the scope is the one
// agent-dependent part of the host-independent stages, applied here so
// that the gateway and eval apply it the same way.
func (p *Prepared) ForAgent(cfg *Config, agent string) *Prepared {
	if cfg.InScope(agent, p.Skill) {
		return p
	}
	return &Prepared{Skill: p.Skill, Always: p.Always, Excluded: true, Stage: StageConfig, Reason: ReasonOutOfScope}
}
