package gateway

import (
	"iter"
	"maps"
	"slices"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/bitset"
	"github.com/skillgate/skillgate/protocol"
)

// The other replicas' nodes, as the fleet holds them (cluster.go applies
// their records): what a record changes in the registry and the host
// index. What the change means for the caches stays the Server's
// (hostChangedLocked, invalidateAllLocked).

// putRemoteLocked files rec, another replica's node, in place of any
// record of its id, and returns the node's host before and after (the
// same pointer when the caches stay); the caller applies the change
// (hostChangedLocked). ok is false, and nothing changed, when the fleet
// holds cluster.MaxRemoteLimit remote nodes and none of rec's id. This
// replica must hold no node of rec's id (Put removes it first). Server.mu
// must be held for writing.
func (f *fleet) putRemoteLocked(rec *cluster.Record) (old, cur *eligibility.Host, ok bool) {
	if len(f.reg.remote) >= cluster.MaxRemoteLimit && f.reg.remote[rec.ID] == nil {
		return nil, nil, false // the member refuses new ids past gateway.cluster.maxRemoteNodes first; this is the backstop
	}
	prev := f.reg.remote[rec.ID]
	if prev != nil {
		old = prev.host
	}
	n := &remoteNode{replica: rec.Replica}
	n.setInfo(protocol.NodeInfo{ID: rec.ID, OS: rec.OS, Roles: rec.Roles, Capabilities: rec.Capabilities}, rec.ConnectedAt)
	if rec.FactsAt != nil {
		n.factsAt = rec.FactsAt.UTC()
		n.asked = rec.BinsAsked
		if in := f.knownInterestLocked(n.asked); in != nil {
			n.asked = in.asked // one string for every node that answered it
		}
		if prev != nil && prev.host != nil && prev.replica == rec.Replica && prev.connectedAt.Equal(n.connectedAt) {
			// The same connection: start from its host, so that unchanged
			// facts keep the host pointer and the caches stay.
			n.env, n.binIn, n.binReported, n.binTrue, n.host = prev.env, prev.binIn, prev.binReported, prev.binTrue, prev.host
		}
		// The record lists the binaries present only.
		bins := make([]string, 0, len(rec.HostBinStatus))
		for name, ok := range rec.HostBinStatus {
			if ok {
				bins = append(bins, name)
			}
		}
		_, cur = f.applyRemoteLocked(n, f.interestAt, rec.Env, bins)
	}
	f.reg.remote[rec.ID] = n
	f.reg.changed()
	n.ver = f.reg.gen
	return old, cur, true
}

// removeRemoteLocked removes the remote node id from the registry and
// returns it (nil if there is none). Its host, if any, is still in the
// index: the caller removes it (hostChangedLocked). Server.mu must be held
// for writing.
func (f *fleet) removeRemoteLocked(id string) *remoteNode {
	n := f.reg.remote[id]
	if n == nil {
		return nil
	}
	delete(f.reg.remote, id)
	f.reg.changed()
	return n
}

// removeRemotesLocked removes the remote nodes ids, and their hosts from
// the index one by one, and reports whether any was there. The live
// counts are not updated: the caller counts every skill again once
// (countAllLocked), instead of once a node. Server.mu must be held for
// writing.
func (f *fleet) removeRemotesLocked(ids []string) bool {
	removed := false
	for _, id := range ids {
		n := f.reg.remote[id]
		if n == nil {
			continue
		}
		delete(f.reg.remote, id)
		removed = true
		if n.host != nil {
			f.moveHostLocked(id, n.host, nil)
		}
	}
	if removed {
		f.reg.changed()
	}
	return removed
}

// remoteCountLocked is the number of the other replicas' nodes the fleet
// holds. Server.mu must be held (for reading at least).
func (f *fleet) remoteCountLocked() int { return len(f.reg.remote) }

// remotesLocked yields the other replicas' nodes, by id, in no order.
// Server.mu must be held (for reading at least) while it runs.
func (f *fleet) remotesLocked() iter.Seq2[string, *remoteNode] { return maps.All(f.reg.remote) }

// applyRemoteLocked sets a remote node's names as positions in the
// interest in (the one in force), from the names its record lists: env
// names set and binaries present. Names outside in are kept aside
// (extra). A binary of in that the record's node was asked
// (n.asked names an interest this replica knows) and does not have is
// absent; one it was not asked is not known: not present either, so that a
// host counts for a skill only on what its node said, but left out of
// /v1/nodes' hostBinStatus instead of listed as false. It returns the
// host before and after, as nodeRecord.apply does. Server.mu must be held for
// writing.
func (f *fleet) applyRemoteLocked(n *remoteNode, in *interestIndex, env, bins []string) (old, cur *eligibility.Host) {
	var envSet, reported, present bitset.Set
	var extraEnv, extraBins []string
	asked := f.knownInterestLocked(n.asked)
	for _, e := range env {
		if i, ok := in.env[e]; ok {
			envSet.Add(i)
		} else {
			extraEnv = append(extraEnv, e)
		}
	}
	for _, b := range bins {
		if i, ok := in.bins[b]; ok {
			present.Add(i)
			if asked != in {
				reported.Add(i) // present: answered (all of in is, below)
			}
		} else {
			extraBins = append(extraBins, b)
		}
	}
	switch {
	case asked == in:
		reported = in.all // shared: apply keeps it and nothing changes it
	case asked != nil:
		for _, b := range asked.Bins {
			if i, ok := in.bins[b]; ok {
				reported.Add(i)
			}
		}
	}
	n.extra = nil
	if len(extraEnv)+len(extraBins) > 0 {
		n.extra = &remoteExtra{env: slices.Clip(extraEnv), bins: slices.Clip(extraBins)}
	}
	return n.apply(f.reg.hosts, in, envSet, reported, present)
}

// knownInterestLocked returns the interest, among this replica's latest
// (fleet.interests), whose binaries have the digest asked; nil if none.
// Server.mu must be held.
func (f *fleet) knownInterestLocked(asked string) *interestIndex {
	if asked == "" {
		return nil
	}
	for _, in := range f.interests {
		if in.asked == asked {
			return in
		}
	}
	return nil
}

// reapplyRemoteLocked sets every remote node's names again after the
// interest changed: a name the new interest asks for may be in a record
// already (the node's replica learned of it first, and its node
// answered), or its node may have been asked it under an interest this
// replica now knows. The host index is updated in place; the caller
// recounts. Server.mu must be held for writing.
func (f *fleet) reapplyRemoteLocked() {
	in := f.interestAt
	for id, n := range f.reg.remote {
		if n.host == nil {
			continue
		}
		env, bins := n.host.Env, n.host.Bins
		if n.extra != nil {
			env = append(slices.Clip(env), n.extra.env...)
			bins = append(slices.Clip(bins), n.extra.bins...)
		}
		old, cur := f.applyRemoteLocked(n, in, env, bins)
		n.ver = f.reg.gen + 1 // listed again: the names asked changed
		if cur != old {
			f.moveHostLocked(id, old, cur) // a remote host before and after: the count of hosts stays
		}
	}
	f.reg.changed()
}
