package report

import (
	"reflect"
	"testing"

	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

func mk(name string, requires any) *skill.Skill {
	return &skill.Skill{Ref: skill.Ref{Key: "skills/" + name + "/SKILL.md", Dir: name, Scope: skill.ScopeGlobal}, Name: name,
		Description: "about " + name, Requires: requires}
}

// TestBuild: verdicts in listing order, the prompt of the offered skills
// in that order, diagnostics in their order (view, each skill's, its
// requirements', config), the same on one goroutine or several, with each
// called in order.
func TestBuild(t *testing.T) {
	bad := mk("bad", map[string]any{"hostRoles": []any{"gpu"}})
	bad.Diagnostics = []skill.Diagnostic{{Location: bad.Key, Level: skill.LevelWarn, Message: "parse warning"}}
	skills := []*skill.Skill{
		mk("z", nil),
		mk("needs-gh", map[string]any{"bins": []any{"gh"}}),
		bad,
		mk("needs-jq", map[string]any{"bins": []any{"jq"}}),
		mk("a", nil),
	}
	cfg := eligibility.NewConfig(nil)
	x := eligibility.NewIndex()
	x.Put(eligibility.NewHost(&protocol.HostFacts{ID: "h1", OS: "linux", Roles: []string{"execution"},
		Capabilities: protocol.BaselineCapabilities, HostBinStatus: map[string]bool{"gh": true}}))
	v := &View{
		Agent:       "main",
		Skills:      skills,
		Prepare:     func(i int) *eligibility.Prepared { return eligibility.Prepare(skills[i], nil, cfg) },
		Diagnostics: []skill.Diagnostic{{Location: "skills/x/y/SKILL.md", Level: skill.LevelWarn, Message: "not a skill"}},
	}
	var names []string
	var eligible []bool
	for i := range skills {
		names = append(names, skills[i].Name)
	}
	wantEligible := []bool{true, true, false, false, true}
	// In priority order: by name, none being always, local or prioritized.
	wantPrompt := "<available_skills>" +
		"\n  <skill name=\"a\">\n    <description>about a</description>\n    <location>skills/a/SKILL.md</location>\n    <read_path>skills/a/SKILL.md</read_path>\n  </skill>" +
		"\n  <skill name=\"needs-gh\">\n    <description>about needs-gh</description>\n    <location>skills/needs-gh/SKILL.md</location>\n    <read_path>skills/needs-gh/SKILL.md</read_path>\n  </skill>" +
		"\n  <skill name=\"z\">\n    <description>about z</description>\n    <location>skills/z/SKILL.md</location>\n    <read_path>skills/z/SKILL.md</read_path>\n  </skill>" +
		"\n</available_skills>"
	wantDiags := []string{"not a skill", "parse warning",
		`requires.hostRoles: unknown host role "gpu" (valid: execution, specialized); the skill is not offered until this is fixed`}
	var first Report
	for _, workers := range []int{1, 2, 8, 0} {
		var seen []string
		eligible = nil
		rep := Build(v, x, workers, func(s *SkillReport) {
			seen = append(seen, s.Name)
			eligible = append(eligible, s.Eligible)
		})
		if !reflect.DeepEqual(seen, names) || !reflect.DeepEqual(eligible, wantEligible) {
			t.Errorf("workers %d: each saw %v %v, want %v %v", workers, seen, eligible, names, wantEligible)
		}
		if rep.Agent != "main" || rep.Prompt != wantPrompt {
			t.Errorf("workers %d: agent %q prompt:\n%s", workers, rep.Agent, rep.Prompt)
		}
		var msgs []string
		for _, d := range rep.Diagnostics {
			msgs = append(msgs, d.Message)
		}
		if !reflect.DeepEqual(msgs, wantDiags) {
			t.Errorf("workers %d: diagnostics %q", workers, msgs)
		}
		if gh := rep.Skills[1]; !reflect.DeepEqual(gh.Hosts, []string{"h1"}) || gh.ReadPath != "skills/needs-gh/SKILL.md" || gh.Scope != "global" {
			t.Errorf("workers %d: needs-gh %+v", workers, gh)
		}
		if jq := rep.Skills[3]; jq.Stage != "runtime" || !reflect.DeepEqual(jq.Reasons, []string{"requires bins: jq"}) {
			t.Errorf("workers %d: needs-jq %+v", workers, jq)
		}
		if workers == 1 {
			first = rep
		} else if !reflect.DeepEqual(rep, first) {
			t.Errorf("workers %d: report differs from the one on one goroutine", workers)
		}
	}
	if len(v.Diagnostics) != 1 {
		t.Errorf("Build changed the view's diagnostics: %v", v.Diagnostics)
	}
}

// TestBuildEmpty: no skills, no diagnostics: lists are empty, not null.
func TestBuildEmpty(t *testing.T) {
	rep := Build(&View{Agent: "a"}, eligibility.NewIndex(), 4, func(*SkillReport) { t.Error("each called") })
	if rep.Skills == nil || len(rep.Skills) != 0 || rep.Diagnostics == nil || len(rep.Diagnostics) != 0 || rep.Prompt != "" {
		t.Errorf("got %+v", rep)
	}
}
