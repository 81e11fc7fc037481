package eligibility

import (
	"slices"

	"github.com/skillgate/skillgate/protocol"
)

// Limits of the interest, below what a node may report in one
// facts.update (protocol.MaxNames names, frames under protocol.ReadLimit).
const (
	MaxInterestNames = protocol.MaxNames
	MaxInterestBytes = 256 << 10
)

// Interest returns the binary names and env-var names that nodes must
// report for these skills: the union of bins, anyBins, env and anyEnv over every
// skill whose eligibility depends on hosts. Both lists are sorted and never
// nil. When the union is over MaxInterestNames names or MaxInterestBytes
// bytes, the names past the limit are left out (sorted order decides) and
// cut is their count: those names count as absent on every host, so the
// skills that need them are not offered — never wrongly offered.
func Interest(prepared []*Prepared) (bins, env []string, cut int) {
	bins, env = []string{}, []string{}
	for _, p := range prepared {
		if !p.ReachesRuntime() {
			continue
		}
		bins = append(bins, p.Req.Bins...)
		bins = append(bins, p.Req.AnyBins...)
		env = append(env, p.Req.Env...)
		env = append(env, p.Req.AnyEnv...)
	}
	slices.Sort(bins)
	slices.Sort(env)
	bins, env = slices.Compact(bins), slices.Compact(env)
	bins, c1 := capNames(bins)
	env, c2 := capNames(env)
	return bins, env, c1 + c2
}

func capNames(names []string) ([]string, int) {
	size := 0
	for i, n := range names {
		size += len(n) + 3 // quotes and comma
		if i >= MaxInterestNames || size > MaxInterestBytes {
			return names[:i], len(names) - i
		}
	}
	return names, 0
}
