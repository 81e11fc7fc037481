package eligibility

import "github.com/skillgate/skillgate/protocol"

// Host is a connected host's facts in the form the pipeline evaluates:
// OS normalized, names in sets, and only binaries reported as present.
type Host struct {
	ID           string
	OS           string
	Roles        map[string]struct{}
	Capabilities map[string]struct{}
	Env          map[string]struct{}
	Bins         map[string]struct{}
}

// NewHost converts reported host facts.
func NewHost(f *protocol.HostFacts) *Host {
	h := &Host{
		ID:           f.ID,
		OS:           protocol.NormalizeOS(f.OS),
		Roles:        set(f.Roles),
		Capabilities: set(f.Capabilities),
		Env:          set(f.Env),
	}
	n := 0
	for _, ok := range f.HostBinStatus {
		if ok {
			n++
		}
	}
	// Sized to the binaries present, not to all asked: a gateway holds one
	// Host per node.
	h.Bins = make(map[string]struct{}, n)
	for name, ok := range f.HostBinStatus {
		if ok {
			h.Bins[name] = struct{}{}
		}
	}
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

func set(names []string) map[string]struct{} {
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}
