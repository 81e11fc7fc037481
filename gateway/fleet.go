package gateway

import (
	"encoding/json"
	"iter"
	"maps"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/protocol"
)

// fleet is the gateway's nodes and what it derives from them, as one
// value: the registry (this replica's nodes and the other replicas'), the
// interest asked of them, the host index, the matcher and the live count
// of matching hosts of each skill with host requirements. One node event
// changes several of them at once, and a skills change changes the
// interest, the matcher and the counts: they are kept together, under one
// lock.
//
// The Server composes it (an embedded value) and guards it with
// Server.mu, the lock of the snapshot and policy the counts are derived
// from: a rebuild changes both under one write lock, and a reader that
// sees the counts sees the skills they count. Methods named …Locked must
// be called with Server.mu held (for writing unless they say otherwise).
// What a node event means for the caches (which prompt blocks are stale)
// is the Server's (hostChangedLocked, live.go).
type fleet struct {
	reg      registry // the connected nodes (registry.go)
	interest protocol.Interest
	// interestAt is interest with the position of each name (registry.go).
	interestAt *interestIndex
	// interests are the latest interests, interestAt first (at most
	// keptInterests): a remote record names the binaries its node was asked
	// by the digest of one of them (fleet_remote.go).
	interests []*interestIndex
	// interestJSON and interestEvt are interest encoded, for connect
	// answers and evt pushes.
	interestJSON json.RawMessage
	// connectPayload is the payload of the answer to connect (protocol
	// version and interest), encoded with the interest.
	connectPayload json.RawMessage
	// connectAnswer is the whole answer to a connect of request id
	// connectReqID (registry.go), encoded with the interest too.
	connectAnswer []byte
	interestEvt   []byte
	interestCut   int // names left out of the interest by its limits

	hostSkills []*eligibility.Prepared       // reach runtime, have host requirements
	matches    map[*eligibility.Prepared]int // hosts satisfying all host requirements
	// matcher finds the hostSkills a host satisfies (indexes into
	// hostSkills); wasBuf and isBuf are recountLocked's scratch.
	matcher       *eligibility.Matcher
	wasBuf, isBuf []int32
	index         *eligibility.Index // nodes that reported facts
}

// newFleet returns a fleet without nodes, skills or interest, that holds
// at most maxNodes nodes of its own and shows their number in gauge.
func newFleet(maxNodes int, gauge prometheus.Gauge) fleet {
	f := fleet{
		reg:      registry{nodes: map[string]*nodeConn{}, remote: map[string]*remoteNode{}, max: maxNodes, gauge: gauge, hosts: eligibility.NewHostBuilder()},
		interest: protocol.Interest{Bins: []string{}, Env: []string{}},
		index:    eligibility.NewIndex(),
	}
	f.interestAt = newInterestIndex(f.interest)
	f.interests = []*interestIndex{f.interestAt}
	return f
}

// setSkillsLocked makes hostSkills the skills whose hosts are counted, and
// files them in a new matcher; their counts start empty (countAllLocked).
func (f *fleet) setSkillsLocked(hostSkills []*eligibility.Prepared) {
	f.hostSkills = hostSkills
	f.matches = make(map[*eligibility.Prepared]int)
	reqs := make([]*eligibility.Requirements, len(hostSkills))
	for i, p := range hostSkills {
		reqs[i] = &p.Req
	}
	f.matcher = eligibility.NewMatcher(reqs)
}

// setInterestLocked makes bins and env the interest, when they differ from
// the one in force (or none was encoded yet), and reports whether they
// did: the other replicas' nodes are seen again through it, the answers
// that carry it are encoded once here, and every node of this replica is
// told (each answers when the push reaches it).
func (f *fleet) setInterestLocked(bins, env []string) bool {
	if f.interestJSON != nil && slices.Equal(bins, f.interest.Bins) && slices.Equal(env, f.interest.Env) {
		return false
	}
	f.interest = protocol.Interest{Bins: bins, Env: env}
	f.interestAt = newInterestIndex(f.interest)
	f.interests = append([]*interestIndex{f.interestAt}, f.interests[:min(len(f.interests), keptInterests-1)]...)
	// Other replicas' nodes are seen again through the new interest;
	// this replica's own answer it when the push reaches them.
	f.reapplyRemoteLocked()
	// Encoded once here, not once per connect or push.
	f.interestJSON, _ = json.Marshal(f.interest)
	f.interestEvt, _ = protocol.NewEvt(protocol.EventInterest, f.interestJSON)
	f.connectPayload, _ = json.Marshal(connectResult{Protocol: protocol.Version, Interest: f.interestJSON})
	f.connectAnswer = protocol.NewResRaw(connectReqID, f.connectPayload)
	for _, n := range f.reg.nodes {
		n.notifyInterest()
	}
	return true
}

// countAllLocked counts the matching hosts of every skill with host
// requirements through the index: after a rebuild, or after many hosts
// left at once.
func (f *fleet) countAllLocked() {
	for _, p := range f.hostSkills {
		f.matches[p] = f.index.Count(&p.Req)
	}
}

// moveHostLocked applies one node's change of host to the index: old is
// its host before (nil if it had none), cur after (nil if it has none
// now). It reports whether the index went from no host to some, or back.
func (f *fleet) moveHostLocked(id string, old, cur *eligibility.Host) (crossed bool) {
	before := f.index.Len()
	if old != nil {
		f.index.Remove(id)
		f.reg.hosts.Release(old) // its lists leave the builder's table when no host holds them
	}
	if cur != nil {
		f.index.Put(cur)
	}
	return (before == 0) != (f.index.Len() == 0)
}

// eligibleLocked is a skill's verdict by every stage but the dependency
// stage, from the live counts: the pipeline's one verdict function, fed
// the number of connected hosts and the skill's live count of matching
// hosts. Server.mu must be held (for reading at least).
func (f *fleet) eligibleLocked(p *eligibility.Prepared) bool {
	return p.Decide(f.index.Len(), f.matches[p]) == eligibility.VerdictOffered
}

// nodeLocked returns the connection of this replica's node id (nil if it
// holds none). Server.mu must be held (for reading at least).
func (f *fleet) nodeLocked(id string) *nodeConn { return f.reg.nodes[id] }

// nodesLocked yields this replica's nodes, by id, in no order; the loop's
// body may unregister the node it is given (unregisterLocked, with
// Server.mu held for writing). Server.mu must be held (for reading at
// least) while it runs.
func (f *fleet) nodesLocked() iter.Seq2[string, *nodeConn] { return maps.All(f.reg.nodes) }

// nodeCountLocked is the number of this replica's nodes. Server.mu must be
// held (for reading at least).
func (f *fleet) nodeCountLocked() int { return len(f.reg.nodes) }

// nodesGenLocked is the registry's generation, bumped on every change of
// a node (local or remote) and of its record: it keys the GET /v1/nodes
// cache. Server.mu must be held (for reading at least).
func (f *fleet) nodesGenLocked() uint64 { return f.reg.gen }

// maxNodesLocked is gateway.maxNodes in force. Server.mu must be held (for
// reading at least).
func (f *fleet) maxNodesLocked() int { return f.reg.max }

// setMaxNodesLocked puts a new gateway.maxNodes in force: connects past it
// are refused; connected nodes stay. Server.mu must be held for writing.
func (f *fleet) setMaxNodesLocked(n int) { f.reg.max = n }

// anyHostHasBinLocked reports whether some host in the index has the
// binary name. Server.mu must be held (for reading at least).
func (f *fleet) anyHostHasBinLocked(name string) bool { return f.index.AnyHostHasBin(name) }

// anyHostHasEnvLocked reports whether some host in the index has the env
// name set. Server.mu must be held (for reading at least).
func (f *fleet) anyHostHasEnvLocked(name string) bool { return f.index.AnyHostHasEnv(name) }

// matchingHostsLocked is the skill's evaluation against the hosts now:
// the ids of the hosts that satisfy it. Server.mu must be held (for
// reading at least).
func (f *fleet) matchingHostsLocked(p *eligibility.Prepared) []string {
	return p.EvaluateIndexed(f.index).Hosts
}

// explainLocked is the skill's verdict against the hosts now, with its
// reasons. Server.mu must be held (for reading at least).
func (f *fleet) explainLocked(p *eligibility.Prepared) eligibility.Result {
	return p.ExplainIndexed(f.index)
}

// cloneIndexLocked returns a copy of the host index, for an evaluation
// that runs after Server.mu is released (/skills, search): node events
// go on meanwhile. Server.mu must be held (for reading at least).
func (f *fleet) cloneIndexLocked() *eligibility.Index { return f.index.Clone() }
