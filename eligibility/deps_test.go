package eligibility

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

// viewResults evaluates an agent's view as report.Build does: every stage
// through the index, then the dependency stage over the whole view.
func viewResults(view []*skill.Skill, cfg *Config, agent string, facts []protocol.HostFacts) []Result {
	x := indexOf(facts)
	prepared := make([]*Prepared, len(view))
	base := make([]bool, len(view))
	for i, s := range view {
		prepared[i] = Prepare(s, nil, cfg).ForAgent(cfg, agent)
		base[i] = prepared[i].EligibleIndexed(x)
	}
	offers := Offer(prepared, base)
	out := make([]Result, len(view))
	for i, p := range prepared {
		out[i] = p.EvaluateIndexed(x)
		offers.Explain(i, &out[i])
	}
	return out
}

// verdictText is a result as the tables write it: "" when offered, else
// "stage: reason; reason".
func verdictText(r *Result) string {
	if r.Eligible {
		return ""
	}
	return r.Stage + ": " + strings.Join(r.Reasons, "; ")
}

// TestDependencyStage: requires.skills and requires.anySkills, checked
// last, within the agent's view.
func TestDependencyStage(t *testing.T) {
	type sk struct {
		name, dir, requires string
		always              bool
		version             string
	}
	gh := []protocol.HostFacts{host("h1", "linux", []string{"GITHUB_TOKEN"}, "gh")}
	tests := []struct {
		name   string
		skills []sk
		config string
		agent  string
		hosts  []protocol.HostFacts
		want   map[string]string // skill name → verdictText
	}{
		{name: "a chain, every link offered", hosts: gh,
			skills: []sk{{name: "a", requires: `{"bins":["gh"]}`}, {name: "b", requires: `{"skills":["a"]}`}, {name: "c", requires: `{"skills":["b"]}`}},
			want:   map[string]string{"a": "", "b": "", "c": ""}},
		{name: "a chain broken at its root", hosts: gh,
			skills: []sk{{name: "c", requires: `{"skills":["b"]}`}, {name: "b", requires: `{"skills":["a"]}`}, {name: "a", requires: `{"bins":["jq"]}`}},
			want: map[string]string{"a": "runtime: requires bins: jq", "b": "requirements: requires skills: a",
				"c": "requirements: requires skills: b"}},
		{name: "only the names not offered, in declaration order", hosts: gh,
			skills: []sk{{name: "a"}, {name: "b", requires: `{"bins":["jq"]}`}, {name: "d", requires: `{"skills":[" b","a","nope","b"]}`}},
			want:   map[string]string{"a": "", "b": "runtime: requires bins: jq", "d": "requirements: requires skills: b, nope"}},
		{name: "any-of: one is enough", hosts: gh,
			skills: []sk{{name: "a", requires: `{"bins":["jq"]}`}, {name: "b"}, {name: "d", requires: `{"anySkills":["nope","a","b"]}`}},
			want:   map[string]string{"a": "runtime: requires bins: jq", "b": "", "d": ""}},
		{name: "any-of: none offered names them all", hosts: gh,
			skills: []sk{{name: "a", requires: `{"bins":["jq"]}`}, {name: "d", requires: `{"anySkills":["nope","a"]}`}},
			want:   map[string]string{"a": "runtime: requires bins: jq", "d": "requirements: requires anySkills: nope, a"}},
		{name: "both fields fail: a line each", hosts: gh,
			skills: []sk{{name: "d", requires: `{"skills":["x"],"anySkills":["y","z"]}`}},
			want:   map[string]string{"d": "requirements: requires skills: x; requires anySkills: y, z"}},
		{name: "a cycle of two, and a skill depending on it",
			skills: []sk{{name: "c", requires: `{"skills":["b"]}`}, {name: "b", requires: `{"skills":["a"]}`}, {name: "a", requires: `{"skills":["b"]}`}},
			want: map[string]string{"a": "requirements: invalid requirement: dependency cycle a -> b -> a",
				"b": "requirements: invalid requirement: dependency cycle a -> b -> a", "c": "requirements: requires skills: b"}},
		{name: "a cycle of three starts at its smallest name",
			skills: []sk{{name: "z", requires: `{"skills":["m"]}`}, {name: "m", requires: `{"skills":["k"]}`}, {name: "k", requires: `{"skills":["z"]}`}},
			want: map[string]string{"k": "requirements: invalid requirement: dependency cycle k -> z -> m -> k",
				"m": "requirements: invalid requirement: dependency cycle k -> z -> m -> k", "z": "requirements: invalid requirement: dependency cycle k -> z -> m -> k"}},
		{name: "a skill that needs itself",
			skills: []sk{{name: "a", dir: "dir-a", requires: `{"skills":["dir-a"]}`}},
			want:   map[string]string{"a": "requirements: invalid requirement: dependency cycle a -> a"}},
		{name: "a cycle member failing on hosts keeps its reason", hosts: gh,
			skills: []sk{{name: "a", requires: `{"skills":["b"],"bins":["jq"]}`}, {name: "b", requires: `{"skills":["a"]}`}},
			want: map[string]string{"a": "runtime: requires bins: jq",
				"b": "requirements: invalid requirement: dependency cycle a -> b -> a"}},
		{name: "anySkills through a cycle: another way out",
			skills: []sk{{name: "a", requires: `{"anySkills":["b","c"]}`}, {name: "b", requires: `{"skills":["a"]}`}, {name: "c"}},
			want:   map[string]string{"a": "", "b": "", "c": ""}},
		{name: "anySkills holding each other up only",
			skills: []sk{{name: "a", requires: `{"anySkills":["b"]}`}, {name: "b", requires: `{"anySkills":["a"]}`}},
			want:   map[string]string{"a": "requirements: requires anySkills: b", "b": "requirements: requires anySkills: a"}},
		{name: "always skips the check",
			skills: []sk{{name: "a", requires: `{"skills":["nope"]}`, always: true}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "", "b": ""}},
		{name: "always breaks a cycle",
			skills: []sk{{name: "a", requires: `{"skills":["b"]}`, always: true}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "", "b": ""}},
		{name: "a dependency held by governance",
			config: `{"skills":{"entries":{"a":{"mode":"quarantine"}}}}`,
			skills: []sk{{name: "a"}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "governance: quarantined by governance: operator", "b": "requirements: requires skills: a"}},
		{name: "a dependency out of the agent's scope", agent: "main",
			config: `{"agents":{"main":{"skills":{"deny":["a"]}}}}`,
			skills: []sk{{name: "a"}, {name: "b", requires: `{"skills":["a"]}`}, {name: "c", requires: `{"anySkills":["a"]}`}},
			want: map[string]string{"a": "config: not in this agent's skill scope", "b": "requirements: requires skills: a",
				"c": "requirements: requires anySkills: a"}},
		{name: "a dependency disabled by config",
			config: `{"skills":{"entries":{"a":{"enabled":false}}}}`,
			skills: []sk{{name: "a"}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "config: disabled by skills.entries policy", "b": "requirements: requires skills: a"}},
		{name: "a dependency of the wrong version",
			config: `{"skills":{"entries":{"a":{"version":">=2"}}}}`,
			skills: []sk{{name: "a", version: "1.4.0"}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "config: version 1.4.0 does not satisfy >=2", "b": "requirements: requires skills: a"}},
		{name: "a dependency ineligible on hosts: no host",
			skills: []sk{{name: "a", requires: `{"bins":["gh"]}`}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "runtime: no connected hosts", "b": "requirements: requires skills: a"}},
		{name: "a dependant failing on hosts keeps its own reason",
			skills: []sk{{name: "a", requires: `{"bins":["gh"]}`}, {name: "b", requires: `{"skills":["a"],"bins":["gh"]}`}},
			want:   map[string]string{"a": "runtime: no connected hosts", "b": "runtime: no connected hosts"}},
		{name: "skills only: no connected host needed",
			skills: []sk{{name: "a"}, {name: "b", requires: `{"skills":["a"]}`}},
			want:   map[string]string{"a": "", "b": ""}},
		{name: "names match a name, then a directory", hosts: gh,
			skills: []sk{{name: "gh-tool", dir: "github"}, {name: "github", dir: "other", requires: `{"bins":["jq"]}`},
				{name: "by-dir", requires: `{"skills":["gh-tool","other"]}`}, {name: "by-name", requires: `{"skills":["github"]}`}},
			want: map[string]string{"gh-tool": "", "github": "runtime: requires bins: jq", "by-dir": "requirements: requires skills: other",
				"by-name": "requirements: requires skills: github"}},
		{name: "skills.entries requires adds a dependency",
			config: `{"skills":{"entries":{"b":{"requires":{"skills":["nope"]}}}}}`,
			skills: []sk{{name: "b", requires: `{"anySkills":["a"]}`}, {name: "a"}},
			want:   map[string]string{"a": "", "b": "requirements: requires skills: nope"}},
		{name: "skills.entries requires clears one",
			config: `{"skills":{"entries":{"b":{"requires":{"skills":[]}}}}}`,
			skills: []sk{{name: "b", requires: `{"skills":["nope"]}`}},
			want:   map[string]string{"b": ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var view []*skill.Skill
			for _, s := range tt.skills {
				dir := s.dir
				if dir == "" {
					dir = s.name
				}
				sk := mkSkill(dir, s.requires, t)
				sk.Name, sk.Always, sk.Version = s.name, s.always, s.version
				view = append(view, sk)
			}
			agent := tt.agent
			if agent == "" {
				agent = "main"
			}
			got := map[string]string{}
			for _, r := range viewResults(view, mkConfig(t, tt.config), agent, tt.hosts) {
				got[r.Skill.Name] = verdictText(&r)
			}
			for _, s := range tt.skills {
				if got[s.name] != tt.want[s.name] {
					t.Errorf("%s: got %q, want %q", s.name, got[s.name], tt.want[s.name])
				}
			}
		})
	}
}

// TestOfferWithoutDependencies: a view where no skill names another
// costs the stage nothing: Offered is the verdicts given.
func TestOfferWithoutDependencies(t *testing.T) {
	view := []*Prepared{Prepare(mkSkill("a", `{"bins":["x"]}`, t), nil, nil), Prepare(mkSkill("b", "", t), nil, nil)}
	base := []bool{false, true}
	o := Offer(view, base)
	if &o.Offered[0] != &base[0] {
		t.Error("Offered is a copy of the verdicts given")
	}
	r := Result{Eligible: true}
	o.Explain(1, &r)
	if !r.Eligible {
		t.Error("Explain changed a result")
	}
}

// naiveOffer is the property test's oracle: the dependency stage written
// straight from its definition, a fixed point iterated from nothing
// offered, each name resolved by a scan of the view. It shares nothing
// with the stage but Prepared.
func naiveOffer(view []*Prepared, base []bool) []bool {
	resolve := func(name string) int {
		for i, p := range view {
			if p.Skill.Name == name {
				return i
			}
		}
		for i, p := range view {
			if p.Skill.Dir == name {
				return i
			}
		}
		return -1
	}
	offered := make([]bool, len(view))
	for changed := true; changed; {
		changed = false
		for i, p := range view {
			if offered[i] || !base[i] {
				continue
			}
			ok := true
			if !p.Always && !p.Excluded {
				for _, n := range p.Req.Skills {
					if t := resolve(n); t < 0 || !offered[t] {
						ok = false
					}
				}
				if len(p.Req.AnySkills) > 0 {
					some := false
					for _, n := range p.Req.AnySkills {
						if t := resolve(n); t >= 0 && offered[t] {
							some = true
						}
					}
					ok = ok && some
				}
			}
			if ok {
				offered[i], changed = true, true
			}
		}
	}
	return offered
}

// TestOfferProperty: for random dependency graphs (chains, any-of lists,
// cycles, names of no skill, always and disabled skills, skills failing
// on hosts), the offered set is the naive fixed point's, every skill left
// out by the stage says why, and a skill is reported on a cycle exactly
// when it reaches itself through requires.skills.
func TestOfferProperty(t *testing.T) {
	r := rand.New(rand.NewPCG(24, 24))
	for round := range 3000 {
		n := 1 + r.IntN(10)
		name := func(i int) string { return fmt.Sprintf("s%d", i) }
		ref := func() string {
			switch k := r.IntN(12); {
			case k == 0:
				return "missing"
			case k < 4:
				return fmt.Sprintf("d%d", r.IntN(n)) // by directory
			default:
				return name(r.IntN(n))
			}
		}
		refs := func() []any {
			out := make([]any, r.IntN(3))
			for k := range out {
				out[k] = ref()
			}
			return out
		}
		var entries []string
		view := make([]*Prepared, n)
		skills := make([]*skill.Skill, n)
		for i := range n {
			req := map[string]any{}
			if r.IntN(3) > 0 {
				req["skills"] = refs()
			}
			if r.IntN(3) == 0 {
				req["anySkills"] = refs()
			}
			if r.IntN(4) == 0 {
				req["bins"] = []any{"gh"}
			}
			s := &skill.Skill{Ref: skill.Ref{Key: fmt.Sprintf("skills/d%d/SKILL.md", i), Dir: fmt.Sprintf("d%d", i), Scope: skill.ScopeGlobal},
				Name: name(i), Requires: req, Always: r.IntN(10) == 0}
			if r.IntN(10) == 0 {
				entries = append(entries, fmt.Sprintf(`%q: {"enabled": false}`, name(i)))
			}
			skills[i] = s
		}
		cfg := mkConfig(t, `{"skills": {"entries": {`+strings.Join(entries, ",")+`}}}`)
		var facts []protocol.HostFacts
		if r.IntN(2) == 0 {
			facts = append(facts, host("h", "linux", nil, "gh"))
		}
		x := indexOf(facts)
		base := make([]bool, n)
		for i, s := range skills {
			view[i] = Prepare(s, nil, cfg)
			base[i] = view[i].EligibleIndexed(x)
		}
		offers := Offer(view, base)
		want := naiveOffer(view, base)
		if !slices.Equal(offers.Offered, want) {
			t.Fatalf("round %d: offered %v, naive fixed point %v\n%s", round, offers.Offered, want, describeView(view, base))
		}

		// Reasons: a cycle exactly when the skill reaches itself through
		// requires.skills (among the skills the stage checks); else the
		// names not offered.
		reaches := func(from, to int) bool {
			seen := make([]bool, n)
			stack := []int{from}
			for len(stack) > 0 {
				v := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				if !view[v].dependsOn() {
					continue
				}
				for _, nm := range view[v].Req.Skills {
					w := slices.IndexFunc(view, func(p *Prepared) bool { return p.Skill.Name == nm })
					if w < 0 {
						w = slices.IndexFunc(view, func(p *Prepared) bool { return p.Skill.Dir == nm })
					}
					if w < 0 || seen[w] {
						continue
					}
					if w == to {
						return true
					}
					seen[w] = true
					stack = append(stack, w)
				}
			}
			return false
		}
		for i, p := range view {
			res := p.EvaluateIndexed(x)
			offers.Explain(i, &res)
			if res.Eligible != want[i] {
				t.Fatalf("round %d: %s: Explain says eligible %v, offered %v", round, p.Skill.Name, res.Eligible, want[i])
			}
			if !base[i] || want[i] {
				continue
			}
			if res.Stage != StageRequirements || len(res.Reasons) == 0 {
				t.Fatalf("round %d: %s: %q %q", round, p.Skill.Name, res.Stage, res.Reasons)
			}
			onCycle := p.dependsOn() && reaches(i, i)
			if got := strings.HasPrefix(res.Reasons[0], reasonCycle); got != onCycle {
				t.Fatalf("round %d: %s: reasons %q, on a cycle: %v\n%s", round, p.Skill.Name, res.Reasons, onCycle, describeView(view, base))
			}
			if onCycle {
				checkCycle(t, view, i, res.Reasons[0], reaches)
			}
		}
	}
}

// checkCycle checks a cycle reason of view[i]: it goes round through
// requires.skills, from the smallest name of the skills on a cycle with
// view[i] back to it, through view[i]'s cycle mates only.
func checkCycle(t *testing.T, view []*Prepared, i int, reason string, reaches func(from, to int) bool) {
	t.Helper()
	names := strings.Split(strings.TrimPrefix(reason, reasonCycle), " -> ")
	byName := func(nm string) int {
		return slices.IndexFunc(view, func(p *Prepared) bool { return p.Skill.Name == nm })
	}
	smallest := view[i].Skill.Name
	for j, p := range view {
		if j != i && reaches(i, j) && reaches(j, i) && p.Skill.Name < smallest {
			smallest = p.Skill.Name
		}
	}
	if names[0] != smallest || names[len(names)-1] != smallest || len(names) < 2 {
		t.Fatalf("%s: cycle %q does not go round from %s", view[i].Skill.Name, reason, smallest)
	}
	for k := 0; k+1 < len(names); k++ {
		a, b := byName(names[k]), byName(names[k+1])
		if a < 0 || b < 0 || !(reaches(i, a) && reaches(a, i)) {
			t.Fatalf("%s: cycle %q leaves the cycle at %s", view[i].Skill.Name, reason, names[k])
		}
		found := false
		for _, nm := range view[a].Req.Skills {
			if nm == view[b].Skill.Name || nm == view[b].Skill.Dir && byName(nm) < 0 {
				found = true
			}
		}
		if !found {
			t.Fatalf("%s: cycle %q: %s does not name %s", view[i].Skill.Name, reason, names[k], names[k+1])
		}
	}
}

func describeView(view []*Prepared, base []bool) string {
	var b strings.Builder
	for i, p := range view {
		fmt.Fprintf(&b, "  %s (%s) base=%v always=%v excluded=%v skills=%v anySkills=%v\n", p.Skill.Name, p.Skill.Dir, base[i], p.Always, p.Excluded, p.Req.Skills, p.Req.AnySkills)
	}
	return b.String()
}

// TestDependencyFindings: what validate reports, whatever the hosts.
func TestDependencyFindings(t *testing.T) {
	var view []*Prepared
	for _, s := range []struct{ name, requires string }{
		{"a", `{"skills":["b","nope"],"anySkills":["gone","c"]}`},
		{"b", `{"skills":["a"]}`},
		{"c", `{"bins":["x"]}`},
		{"d", `{"skills":["c"]}`},
	} {
		view = append(view, Prepare(mkSkill(s.name, s.requires, t), nil, nil))
	}
	got := DependencyFindings(view)
	want := []DependencyFinding{
		{Index: 0, Field: "skills", Name: "nope"},
		{Index: 0, Field: "anySkills", Name: "gone"},
		{Index: 0, Cycle: "a -> b -> a"},
		{Index: 1, Cycle: "a -> b -> a"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("findings %+v\nwant %+v", got, want)
	}
	if got := DependencyFindings(view[2:3]); got != nil {
		t.Errorf("no dependencies: %+v", got)
	}
}
