package eligibility

import (
	"slices"

	"github.com/skillgate/skillgate/protocol"
)

// Host is a connected host's facts in the form the pipeline evaluates:
// OS normalized, and each list sorted without repeats, with only the
// binaries that exist. Lists, not sets: a gateway keeps one Host per node,
// and a few sorted slices of shared strings cost a fraction of four maps.
// A Host is not changed once indexed.
type Host struct {
	ID           string
	OS           string
	Roles        []string
	Capabilities []string
	Env          []string
	Bins         []string
}

// NewHost converts reported host facts.
func NewHost(f *protocol.HostFacts) *Host {
	h := &Host{
		ID:           f.ID,
		OS:           protocol.NormalizeOS(f.OS),
		Roles:        sortedSet(f.Roles),
		Capabilities: sortedSet(f.Capabilities),
		Env:          sortedSet(f.Env),
	}
	n := 0
	for _, ok := range f.HostBinStatus {
		if ok {
			n++
		}
	}
	h.Bins = make([]string, 0, n)
	for name, ok := range f.HostBinStatus {
		if ok {
			h.Bins = append(h.Bins, name)
		}
	}
	slices.Sort(h.Bins)
	return h
}

// NewHosts converts a list of host facts.
func NewHosts(fs []protocol.HostFacts) []*Host {
	out := make([]*Host, len(fs))
	for i := range fs {
		out[i] = NewHost(&fs[i])
	}
	return out
}

// sortedSet returns the names sorted without repeats, in a new slice.
func sortedSet(names []string) []string {
	s := slices.Clone(names)
	slices.Sort(s)
	return slices.Clip(slices.Compact(s))
}
