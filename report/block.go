package report

import (
	"slices"

	"github.com/skillgate/skillgate/config"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/promptbuild"
)

// Host hints of the block (gateway.prompt.hosts).
const (
	HostsNone  = config.HostsNone
	HostsCount = config.HostsCount
	HostsNames = config.HostsNames
)

// Entry is the <skill> entry of an offered skill: its effective always
// and priority, whether it is agent-local, and under a host hint, for a
// skill with host requirements, its matching hosts (hosts is called only
// then: listing them costs a filter pass).
func Entry(p *eligibility.Prepared, hostsMode string, hosts func() []string) promptbuild.Entry {
	e := promptbuild.SkillEntry(p.Skill, p.Always)
	e.Priority = p.Priority
	if (hostsMode == HostsCount || hostsMode == HostsNames) && p.FiltersHosts() {
		ids := hosts()
		h := &promptbuild.Hosts{Count: len(ids)}
		if hostsMode == HostsNames {
			h.Names = ids[:min(len(ids), 6)] // Fragment writes 5, then "…" when there are more
		}
		e.Hosts = h
	}
	return e
}

// Block is the agent's block of the offered entries (in listing order):
// sorted in priority order (promptbuild.Compare) and fitted to the budget.
// vs are the entries' variants when the caller keeps them (nil: rendered
// here). The block's Fits are in the order of entries. The gateway and
// eval both build blocks here.
func Block(entries []promptbuild.Entry, vs []promptbuild.Variants, b promptbuild.Budget, note string) promptbuild.Block {
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return promptbuild.Compare(&entries[a], &entries[b]) })
	sorted := make([]promptbuild.Entry, len(entries))
	svs := make([]promptbuild.Variants, len(entries))
	for j, i := range order {
		sorted[j] = entries[i]
		if vs != nil {
			svs[j] = vs[i]
		} else {
			svs[j] = promptbuild.NewVariants(&entries[i])
		}
	}
	blk := promptbuild.Budgeted(sorted, svs, b, note)
	fits := make([]promptbuild.Fit, len(entries))
	for j, i := range order {
		fits[i] = blk.Fits[j]
	}
	blk.Fits = fits
	return blk
}

// Note is the sentence of the block's <note> when skills were left out or
// shortened: how the agent finds them. It names no agent, so that agents
// sharing a view share one block.
const Note = "More skills are available than this list shows in full: find one by topic with the skill search " +
	"(GET /v1/agents/{agentId}/skills?eligible=true&q=WORDS) and read it at its read_path."
