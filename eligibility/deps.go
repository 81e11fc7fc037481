package eligibility

import (
	"slices"
	"strings"
)

// reasonCycle starts the reason of a skill on a dependency cycle:
// "invalid requirement: dependency cycle a -> b -> a".
const reasonCycle = "invalid requirement: dependency cycle "

// Offers is the outcome of the dependency stage over one agent's view,
// the pipeline's last stage: it runs only on the skills that pass every
// other stage (config, governance, scope, requirements, hosts), and keeps
// one offered only when the skills it names in requires.skills (every
// one) and requires.anySkills (at least one) are offered to the same
// agent. Names are matched as skills.entries keys are: a skill's name,
// then its directory, within the agent's view. always skips the stage.
//
// Offered is the least fixed point: a skill is offered when it passes the
// other stages and its dependencies are offered, starting from the skills
// without dependencies, so skills that only hold each other up are never
// offered. A cycle of requires.skills is a mistake of the skills, not of
// the hosts: every skill on one is out with "invalid requirement:
// dependency cycle a -> b -> a", whatever the hosts; a skill depending on
// a skill on a cycle is out with "requires skills: …".
//
// The stage depends on the verdicts of the whole view, so it runs where a
// view is evaluated (a prompt block build, a /skills report), never per
// request.
type Offers struct {
	// Offered[i] reports whether view[i] is offered: it passed every
	// other stage, and the dependency stage.
	Offered []bool
	view    []*Prepared
	g       *depGraph // nil when no skill of the view names another
}

// depGraph is the dependency graph of a view: it depends on the skills
// and the config, not on the hosts.
type depGraph struct {
	// all[i] and any[i] are the skills the names of view[i]'s Req.Skills
	// and Req.AnySkills designate, one per name (-1: no such skill);
	// nil for a skill the stage skips.
	all, any [][]int32
	// rall[j] and rany[j] are the skills that name j (each once); nall[i]
	// is how many skills view[i]'s Req.Skills designate.
	rall, rany [][]int32
	nall       []int32
	cycle      []string // the cycle reason of skills on a cycle of requires.skills
}

// dependsOn reports whether the dependency stage checks p: it names other
// skills, is not always offered and was not excluded before.
func (p *Prepared) dependsOn() bool {
	return !p.Excluded && !p.Always && p.Req.HasDeps()
}

// Offer runs the dependency stage over an agent's view (each skill as
// ForAgent prepared it, in listing order); base[i] is the verdict of
// view[i] by every other stage. When no skill of the view names another,
// Offered is base itself.
func Offer(view []*Prepared, base []bool) *Offers {
	return NewDependencies(view).Offer(view, base)
}

// Dependencies is the dependency graph of an agent's view: the skills
// each name designates and the cycles. It depends on the skills, the
// config and the agent's scope, not on the hosts, so a caller may keep it
// until one of those changes and run the stage with it at every
// evaluation of the same view.
type Dependencies struct {
	g *depGraph // nil when no skill of the view names another
}

// NewDependencies resolves the dependencies of a view (see Offer).
func NewDependencies(view []*Prepared) *Dependencies {
	return &Dependencies{g: newDepGraph(view)}
}

// Offer runs the dependency stage over view, the view d was made of (or
// one prepared the same way), on the verdicts base.
func (d *Dependencies) Offer(view []*Prepared, base []bool) *Offers {
	o := &Offers{Offered: base, view: view, g: d.g}
	if o.g != nil {
		o.Offered = o.g.offer(view, base)
	}
	return o
}

// Explain completes r, view[i]'s result by every other stage, with the
// dependency stage: a skill that passed the others but is not offered is
// out at stage requirements, with "invalid requirement: dependency cycle
// …", or "requires skills: <the names not offered>" and "requires
// anySkills: <every name>" (each when it fails). Its hosts and filtered
// counts stay: they are what the hosts offer.
func (o *Offers) Explain(i int, r *Result) {
	if !r.Eligible || o.Offered[i] || o.g == nil {
		return
	}
	r.Eligible, r.Stage, r.Reasons = false, StageRequirements, o.reasons(i)
}

// reasons says why view[i] failed the dependency stage.
func (o *Offers) reasons(i int) []string {
	if c := o.g.cycle[i]; c != "" {
		return []string{c}
	}
	req := &o.view[i].Req
	var out, miss []string
	for k, t := range o.g.all[i] {
		if t < 0 || !o.Offered[t] {
			miss = append(miss, req.Skills[k])
		}
	}
	if len(miss) > 0 {
		out = append(out, requiresReason(FieldSkills, miss))
	}
	if len(req.AnySkills) > 0 && !slices.ContainsFunc(o.g.any[i], func(t int32) bool { return t >= 0 && o.Offered[t] }) {
		out = append(out, requiresReason(FieldAnySkills, req.AnySkills))
	}
	return out
}

// newDepGraph resolves the names of every skill the stage checks, and
// finds the cycles; nil when no skill of the view names another.
func newDepGraph(view []*Prepared) *depGraph {
	first := slices.IndexFunc(view, (*Prepared).dependsOn)
	if first < 0 {
		return nil
	}
	n := len(view)
	byName := make(map[string]int32, n)
	byDir := make(map[string]int32, n)
	for i, p := range view {
		if _, ok := byName[p.Skill.Name]; !ok {
			byName[p.Skill.Name] = int32(i)
		}
		if _, ok := byDir[p.Skill.Dir]; !ok {
			byDir[p.Skill.Dir] = int32(i)
		}
	}
	resolve := func(names []string) []int32 {
		out := make([]int32, len(names))
		for k, name := range names {
			t, ok := byName[name]
			if !ok {
				if t, ok = byDir[name]; !ok {
					t = -1
				}
			}
			out[k] = t
		}
		return out
	}
	g := &depGraph{all: make([][]int32, n), any: make([][]int32, n), rall: make([][]int32, n), rany: make([][]int32, n), nall: make([]int32, n), cycle: make([]string, n)}
	for i := first; i < n; i++ {
		p := view[i]
		if !p.dependsOn() {
			continue
		}
		g.all[i], g.any[i] = resolve(p.Req.Skills), resolve(p.Req.AnySkills)
		targets := unique(g.all[i])
		g.nall[i] = int32(len(targets))
		for _, t := range targets {
			g.rall[t] = append(g.rall[t], int32(i))
		}
		for _, t := range unique(g.any[i]) {
			g.rany[t] = append(g.rany[t], int32(i))
		}
	}
	g.findCycles(view)
	return g
}

// unique returns the targets that designate a skill, each once.
func unique(ts []int32) []int32 {
	out := make([]int32, 0, len(ts))
	for _, t := range ts {
		if t >= 0 && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// offer computes the least fixed point: the skills offered by base whose
// dependencies are offered, propagated from the skills without any.
func (g *depGraph) offer(view []*Prepared, base []bool) []bool {
	n := len(view)
	offered := make([]bool, n)
	need := make([]int32, n)   // requires.skills targets not offered yet
	anyOK := make([]bool, n)   // a requires.anySkills target is offered (or there are none)
	blocked := make([]bool, n) // never offered: base false, a cycle, a name of no skill
	queue := make([]int32, 0, n)
	for i := range n {
		switch {
		case !base[i]:
			blocked[i] = true
			continue
		case g.all[i] == nil && g.any[i] == nil:
			// Not checked by the stage.
		case g.cycle[i] != "", slices.Contains(g.all[i], -1):
			blocked[i] = true
			continue
		default:
			need[i] = g.nall[i]
			anyOK[i] = len(g.any[i]) == 0
			if need[i] > 0 || !anyOK[i] {
				continue
			}
		}
		offered[i] = true
		queue = append(queue, int32(i))
	}
	ready := func(i int32) bool { return !blocked[i] && !offered[i] && need[i] == 0 && anyOK[i] }
	for len(queue) > 0 {
		j := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		for _, i := range g.rall[j] {
			need[i]--
			if ready(i) {
				offered[i] = true
				queue = append(queue, i)
			}
		}
		for _, i := range g.rany[j] {
			anyOK[i] = true
			if ready(i) {
				offered[i] = true
				queue = append(queue, i)
			}
		}
	}
	return offered
}

// findCycles marks every skill on a cycle of requires.skills: the
// strongly connected components (Tarjan) with more than one skill, or one
// that names itself. Each is reported as one cycle through its
// lexicographically smallest skill name (then location): the shortest way
// back to it, names taken in declaration order.
func (g *depGraph) findCycles(view []*Prepared) {
	n := len(view)
	index := make([]int32, n) // 0: not visited; else visit order + 1
	low := make([]int32, n)
	onStack := make([]bool, n)
	var stack []int32
	next := int32(0)
	var visit func(v int32)
	visit = func(v int32) {
		next++
		index[v], low[v] = next, next
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g.all[v] {
			switch {
			case w < 0 || g.all[w] == nil && g.any[w] == nil:
				// No such skill, or one that names none: on no cycle.
			case index[w] == 0:
				visit(w)
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] != index[v] {
			return
		}
		k := len(stack) - 1
		for stack[k] != v {
			k--
		}
		comp := slices.Clone(stack[k:])
		stack = stack[:k]
		for _, w := range comp {
			onStack[w] = false
		}
		if len(comp) > 1 || slices.Contains(g.all[v], v) {
			g.markCycle(view, comp)
		}
	}
	for i := range n {
		if index[i] == 0 && g.all[i] != nil {
			visit(int32(i))
		}
	}
}

// markCycle gives every skill of a strongly connected component the
// reason naming its cycle through its smallest skill.
func (g *depGraph) markCycle(view []*Prepared, comp []int32) {
	in := make(map[int32]bool, len(comp))
	start := comp[0]
	for _, v := range comp {
		in[v] = true
		a, b := view[v].Skill, view[start].Skill
		if a.Name < b.Name || a.Name == b.Name && a.Key < b.Key {
			start = v
		}
	}
	// Breadth first from start, within the component, to the first skill
	// that names start.
	parent := map[int32]int32{start: -1}
	queue := []int32{start}
	end := int32(-1)
	for len(queue) > 0 && end < 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.all[v] {
			if w == start {
				end = v
				break
			}
			if _, seen := parent[w]; !seen && in[w] {
				parent[w] = v
				queue = append(queue, w)
			}
		}
	}
	var path []string
	for v := end; v >= 0; v = parent[v] {
		path = append(path, view[v].Skill.Name)
	}
	slices.Reverse(path)
	reason := reasonCycle + strings.Join(append(path, view[start].Skill.Name), " -> ")
	for _, v := range comp {
		g.cycle[v] = reason
	}
}

// DependencyFinding is a mistake in a view's dependencies that no host can
// fix: a name of view[Index]'s requires.skills or requires.anySkills
// (Field) that designates no skill of the view (Name), or the cycle of
// requires.skills the skill is on (Cycle: "a -> b -> a").
type DependencyFinding struct {
	Index       int
	Field, Name string
	Cycle       string
}

// DependencyFindings lists the dependency mistakes of a view (each skill
// as Prepare made it, in listing order), for `skillgate validate`: per
// skill the stage checks, its unknown names in declaration order, then
// its cycle.
func DependencyFindings(view []*Prepared) []DependencyFinding {
	g := newDepGraph(view)
	if g == nil {
		return nil
	}
	var out []DependencyFinding
	for i, p := range view {
		for _, f := range [...]struct {
			field   string
			names   []string
			targets []int32
		}{{FieldSkills, p.Req.Skills, g.all[i]}, {FieldAnySkills, p.Req.AnySkills, g.any[i]}} {
			for k, t := range f.targets {
				if t < 0 {
					out = append(out, DependencyFinding{Index: i, Field: f.field, Name: f.names[k]})
				}
			}
		}
		if c := g.cycle[i]; c != "" {
			out = append(out, DependencyFinding{Index: i, Cycle: strings.TrimPrefix(c, reasonCycle)})
		}
	}
	return out
}
