package eligibility

import "slices"

// Interest returns the binary names and env-var names that nodes must
// report for these skills: the union of bins, anyBins and env over every
// skill whose eligibility depends on hosts. Both lists are sorted and never
// nil.
func Interest(prepared []*Prepared) (bins, env []string) {
	bins, env = []string{}, []string{}
	for _, p := range prepared {
		if !p.ReachesRuntime() {
			continue
		}
		bins = append(bins, p.Req.Bins...)
		bins = append(bins, p.Req.AnyBins...)
		env = append(env, p.Req.Env...)
	}
	slices.Sort(bins)
	slices.Sort(env)
	return slices.Compact(bins), slices.Compact(env)
}
