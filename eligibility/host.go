package eligibility

import (
	"hash/maphash"
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
//
// A builder made by NewHostBuilder shares lists: a host built with a list
// equal to one a host built before holds (and not released) gets that
// same slice, so that a fleet of look-alike hosts keeps one copy of each
// list (as Nomad's computed node class does for its attributes). Each
// list is shared on its own: hosts of one image that differ only by their
// binaries still share roles, capabilities and env names. A list is kept
// in the table while a host holds it: the owner releases each host it no
// longer holds (Release), and a list no host holds leaves the table. Only
// the table forgets; a released host keeps its lists, so readers of an
// older copy of the index are not affected. Empty lists are not shared.
//
// The zero value (and a nil builder) builds without sharing. A builder is not safe for
// concurrent use: the gateway's is guarded by its lock.
type HostBuilder struct {
	lists map[uint64]*sharedList // by the hash of the names; nil: no sharing
	seed  maphash.Seed
	hash  maphash.Hash
}

// sharedList is one list of the table and the number of hosts built with
// it that were not released; next chains lists whose hashes collide.
type sharedList struct {
	names []string
	refs  int
	next  *sharedList
}

// NewHostBuilder returns a builder that shares equal lists among the hosts
// it builds.
func NewHostBuilder() *HostBuilder {
	return &HostBuilder{lists: map[uint64]*sharedList{}, seed: maphash.MakeSeed()}
}

// Build returns the host id with these facts: OS normalized, each list a
// sorted set (the list itself when it is one already, else a sorted copy,
// or the equal list of the table).
func (b *HostBuilder) Build(id string, f *Facts) *Host {
	return &Host{
		ID:           id,
		OS:           protocol.NormalizeOS(f.OS),
		Roles:        b.share(SortedSet(f.Roles)),
		Capabilities: b.share(SortedSet(f.Capabilities)),
		Env:          b.share(SortedSet(f.Env)),
		Bins:         b.share(SortedSet(f.Bins)),
	}
}

// Release tells the builder that h, which it built, is no longer held: its
// lists leave the table when no other host holds them. A host it did not
// build (or built without sharing) is ignored, and so is a list of h that
// the table holds a different copy of.
func (b *HostBuilder) Release(h *Host) {
	if b == nil || b.lists == nil || h == nil {
		return
	}
	for _, l := range [...][]string{h.Roles, h.Capabilities, h.Env, h.Bins} {
		b.unshare(l)
	}
}

// Shared returns the number of lists in the table, for tests and metrics.
func (b *HostBuilder) Shared() int {
	if b == nil {
		return 0
	}
	n := 0
	for _, e := range b.lists {
		for ; e != nil; e = e.next {
			n++
		}
	}
	return n
}

// sum hashes a list of names.
func (b *HostBuilder) sum(l []string) uint64 {
	b.hash.SetSeed(b.seed)
	for _, n := range l {
		b.hash.WriteString(n)
		b.hash.WriteByte(0)
	}
	return b.hash.Sum64()
}

// share returns the table's list equal to l, or l, entered in the table.
func (b *HostBuilder) share(l []string) []string {
	if b == nil || b.lists == nil || len(l) == 0 {
		return l
	}
	return b.shareAt(b.sum(l), l)
}

// shareAt is share of a list whose hash is k.
func (b *HostBuilder) shareAt(k uint64, l []string) []string {
	first := b.lists[k]
	for e := first; e != nil; e = e.next {
		if slices.Equal(e.names, l) {
			e.refs++
			return e.names
		}
	}
	b.lists[k] = &sharedList{names: l, refs: 1, next: first}
	return l
}

// unshare drops one reference to l, if l is the table's list.
func (b *HostBuilder) unshare(l []string) {
	if len(l) == 0 {
		return
	}
	b.unshareAt(b.sum(l), l)
}

// unshareAt is unshare of a list whose hash is k.
func (b *HostBuilder) unshareAt(k uint64, l []string) {
	var prev *sharedList
	for e := b.lists[k]; e != nil; prev, e = e, e.next {
		// The same slice, not only equal names: l is this entry's.
		if len(e.names) != len(l) || &e.names[0] != &l[0] {
			continue
		}
		if e.refs--; e.refs > 0 {
			return
		}
		switch {
		case prev != nil:
			prev.next = e.next
		case e.next != nil:
			b.lists[k] = e.next
		default:
			delete(b.lists, k)
		}
		return
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
	var b *HostBuilder // eval keeps few hosts, each once: nothing to share
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
