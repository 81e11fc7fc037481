package eligibility

import (
	"fmt"
	"strings"

	"github.com/skillgate/skillgate/skill"
)

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
