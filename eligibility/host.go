package eligibility

import (
	"slices"

	"github.com/skillgate/skillgate/protocol"
)

// Host is a connected host's facts in the form the pipeline evaluates:
// OS normalized, and each list sorted without repeats, with only the
// binaries that exist. Lists, not sets: a gateway keeps one Host per node,
// and a few sorted slices of shared strings cost a fraction of four maps.
// A Host is not changed once indexed. Hosts are made by a HostBuilder
// (NewHost for reported facts).
type Host struct {
	ID           string
	OS           string
	Roles        []string
	Capabilities []string
	Env          []string
	Bins         []string
}

// Facts are what a Host is built from: a node's OS as reported, and its
// roles, capabilities, env names set and binaries present, each in any
// order and possibly with repeats. The lists are never changed after a
// build: a Host may keep them.
type Facts struct {
	OS           string
	Roles        []string
	Capabilities []string
	Env          []string
	Bins         []string
}

// HostBuilder is the one facts→host builder: the gateway's nodes (its own
// and other replicas') and the offline eval's hosts are all made by it.
// The zero value is ready.
type HostBuilder struct{}

// Build returns the host id with these facts: OS normalized, each list a
// sorted set (the list itself when it is one already, else a sorted copy).
func (b *HostBuilder) Build(id string, f *Facts) *Host {
	return &Host{
		ID:           id,
		OS:           protocol.NormalizeOS(f.OS),
		Roles:        SortedSet(f.Roles),
		Capabilities: SortedSet(f.Capabilities),
		Env:          SortedSet(f.Env),
		Bins:         SortedSet(f.Bins),
	}
}

// NewHost converts reported host facts.
func NewHost(f *protocol.HostFacts) *Host {
	n := 0
	for _, ok := range f.HostBinStatus {
		if ok {
			n++
		}
	}
	bins := make([]string, 0, n)
	for name, ok := range f.HostBinStatus {
		if ok {
			bins = append(bins, name)
		}
	}
	slices.Sort(bins)
	var b HostBuilder
	return b.Build(f.ID, &Facts{OS: f.OS, Roles: f.Roles, Capabilities: f.Capabilities, Env: f.Env, Bins: bins})
}

// NewHosts converts a list of host facts.
func NewHosts(fs []protocol.HostFacts) []*Host {
	out := make([]*Host, len(fs))
	for i := range fs {
		out[i] = NewHost(&fs[i])
	}
	return out
}

// SortedSet returns l sorted without repeats: l itself when it is already
// (lists are never changed once received), else a sorted copy.
func SortedSet(l []string) []string {
	for i := 1; i < len(l); i++ {
		if l[i-1] >= l[i] {
			c := slices.Clone(l)
			slices.Sort(c)
			return slices.Clip(slices.Compact(c))
		}
	}
	return l
}
