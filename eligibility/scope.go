package eligibility

import (
	"path"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/skill"
)

// ReasonOutOfScope is the config stage's reason for a skill outside an
// agent's skill scope (agents.<id>.skills).
const ReasonOutOfScope = "not in this agent's skill scope"

// Scope is an agent's skill scope: skillgate's globs (path.Match syntax:
// Allow and Deny, matched against a skill's name and its directory; deny
// wins, no Allow means all), or OpenClaw's allowlist of names (Listed:
// only the skills whose name or directory is one of Names; none when
// empty).
type Scope = config.Scope

// inScope reports whether the skill is in the scope.
func inScope(sc *Scope, s *skill.Skill) bool {
	if sc.Listed {
		for _, n := range sc.Names {
			if n == s.Name || n == s.Dir {
				return true
			}
		}
		return false
	}
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

// InScope reports whether the skill is in the agent's skill scope: its
// own, else agents.defaults.skills, else every skill.
func (c *Config) InScope(agent string, s *skill.Skill) bool {
	if c == nil {
		return true
	}
	if sc, ok := c.Scopes[agent]; ok {
		return inScope(&sc, s)
	}
	return c.DefaultScope == nil || inScope(c.DefaultScope, s)
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

// OutOfScope reports whether p is a skill outside the agent's scope (see
// ForAgent): for that agent it does not exist beyond its name, location
// and that reason.
func (p *Prepared) OutOfScope() bool {
	return p.Excluded && p.Stage == StageConfig && p.Reason == ReasonOutOfScope
}
