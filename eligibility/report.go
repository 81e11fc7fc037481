package eligibility

import (
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/skill"
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
	Name     string   `json:"name"`
	Dir      string   `json:"dir"`
	Location string   `json:"location"`
	ReadPath string   `json:"read_path"`
	Scope    string   `json:"scope"`
	Homepage string   `json:"homepage,omitempty"`
	Always   bool     `json:"always"`
	Eligible bool     `json:"eligible"`
	Stage    string   `json:"stage"`
	Reasons  []string `json:"reasons"`
	Hosts    []string `json:"hosts"`
}

// NewSkillReport converts a Result.
func NewSkillReport(r *Result) SkillReport {
	return SkillReport{
		Name:     r.Skill.Name,
		Dir:      r.Skill.Dir,
		Location: r.Skill.Key,
		ReadPath: skill.ReadPath(r.Skill.Key),
		Scope:    string(r.Skill.Scope),
		Homepage: r.Skill.Homepage,
		Always:   r.Always,
		Eligible: r.Eligible,
		Stage:    r.Stage,
		Reasons:  r.Reasons,
		Hosts:    r.Hosts,
	}
}

// SkillReports converts results, keeping their order.
func SkillReports(results []Result) []SkillReport {
	out := make([]SkillReport, len(results))
	for i := range results {
		out[i] = NewSkillReport(&results[i])
	}
	return out
}

// Diagnostics explains, for people, what Prepare found: each invalid
// requirement value (the reason string only says "invalid requirement
// identifiers") and each unknown requirement field.
func (p *Prepared) Diagnostics() []skill.Diagnostic {
	var out []skill.Diagnostic
	for _, pr := range p.Problems {
		where := "requires"
		if pr.Field != "" {
			where += "." + pr.Field
		}
		msg := fmt.Sprintf("%s: %s", where, pr.Message)
		if p.Always {
			msg += "; ignored because the skill is always offered"
		} else {
			msg += "; the skill is not offered until this is fixed"
		}
		out = append(out, skill.Diagnostic{Location: p.Skill.Key, Level: skill.LevelError, Message: msg})
	}
	if len(p.Unknown) > 0 {
		out = append(out, skill.Diagnostic{Location: p.Skill.Key, Level: skill.LevelWarn,
			Message: fmt.Sprintf("requires: unknown field(s) %s are ignored (known: %s)", strings.Join(p.Unknown, ", "), strings.Join(Fields, ", "))})
	}
	return out
}
