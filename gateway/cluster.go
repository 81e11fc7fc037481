package gateway

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/bitset"
	"github.com/skillgate/skillgate/protocol"
)

// Replicas share their nodes through the cluster package: each publishes
// a record per node it holds and receives the others' (remoteNode). A
// remote node counts for prompt builds, /skills, /v1/nodes and status
// like a local one; the newest connection of an id wins on every replica
// (cluster.Newer). Without a cluster the gateway holds no remote node and
// publishes nothing.

// member is the part of *cluster.Member the gateway calls; its methods
// never block, so they are called with s.mu held.
type member interface {
	Publish(rec cluster.Record)
	Withdraw(id string, connectedAt time.Time)
	State() cluster.State
	ReadingAtStart() bool
	Refused() map[string]uint64
	Close(ctx context.Context) error
}

// refuseWhileSyncing answers a node's upgrade 503 while the cluster member
// reads the bucket for the first time (at most TTL/2 after its start: see
// cluster.Member.ReadingAtStart): a restarted replica's fleet reconnecting
// all at once would starve the reading of the others' nodes, and /readyz
// stays 503 until it is done. The node retries after its backoff (a node
// agent tries another replica).
func (s *Server) refuseWhileSyncing(w http.ResponseWriter) bool {
	if s.member == nil || !s.member.ReadingAtStart() {
		return false
	}
	s.metrics.frames.WithLabelValues("upgrade", "syncing").Inc()
	w.Header().Set("Retry-After", "1")
	writeError(w, http.StatusServiceUnavailable, "this replica is reading the cluster's bucket; retry in a moment")
	return true
}

// remoteNode is a node another replica holds, as its record said.
type remoteNode struct {
	nodeRecord
	replica string
	// asked is the record's binsAsked: the digest of the binaries its node
	// was asked. With an interest this replica knows by that digest
	// (Server.interests), a binary asked and not listed as present is
	// absent; any other binary is not known yet: not present, and not
	// listed in /v1/nodes either, as for a local node that has not
	// answered yet.
	asked string
	// extra holds the record's names outside this replica's interest
	// (nil when none, the usual case): kept, so that they count as soon as
	// the interest asks for them (a replica may learn of a new skill after
	// the replica holding the node did, and its node answered).
	extra *remoteExtra
}

// remoteExtra is a remote node's names outside the interest.
type remoteExtra struct{ env, bins []string }

// clusterHandler applies the other replicas' records (cluster.Handler).
type clusterHandler struct{ s *Server }

// Put adds or updates another replica's node. When this replica holds the
// same id, the newer connection wins: an older local one is closed with
// 1008 replaced, as a second connect on one process would; an older remote
// record is ignored (the member publishes ours over it).
func (h clusterHandler) Put(rec *cluster.Record) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.reg.nodes[rec.ID]; c != nil {
		if !cluster.Newer(rec, &cluster.Record{Replica: s.replica, ConnectedAt: c.connectedAt}) {
			return
		}
		c.log.Info("node replaced by a newer connection on another replica", "replica", rec.Replica)
		s.unregisterLocked(c)
		s.life.goFunc(func() { c.close(protocol.ClosePolicyViolation, protocol.CloseReasonReplaced) })
	}
	if len(s.reg.remote) >= cluster.MaxRemoteLimit && s.reg.remote[rec.ID] == nil {
		return // the member refuses new ids past gateway.cluster.maxRemoteNodes first; this is the backstop
	}
	prev := s.reg.remote[rec.ID]
	var oldHost, cur *eligibility.Host
	if prev != nil {
		oldHost = prev.host
	}
	n := &remoteNode{replica: rec.Replica}
	n.setInfo(protocol.NodeInfo{ID: rec.ID, OS: rec.OS, Roles: rec.Roles, Capabilities: rec.Capabilities}, rec.ConnectedAt)
	if rec.FactsAt != nil {
		n.factsAt = rec.FactsAt.UTC()
		n.asked = rec.BinsAsked
		if in := s.knownInterestLocked(n.asked); in != nil {
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
		_, cur = s.applyRemoteLocked(n, s.interestAt, rec.Env, bins)
	}
	s.reg.remote[rec.ID] = n
	s.reg.changed()
	n.ver = s.reg.gen
	if cur != oldHost {
		s.hostChangedLocked(rec.ID, oldHost, cur)
	}
}

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
			reported.Add(i) // present: answered
		} else {
			extraBins = append(extraBins, b)
		}
	}
	switch asked := f.knownInterestLocked(n.asked); {
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

// Delete removes another replica's node: it left, expired, or this
// replica's newer connection replaced it.
func (h clusterHandler) Delete(id string) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dropRemoteLocked(id)
}

// DeleteMany removes many of the other replicas' nodes at once (a replica
// whose heartbeat lapsed): the index loses them one by one, and the
// skills are counted again once, instead of once a node.
func (h clusterHandler) DeleteMany(ids []string) {
	s := h.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(ids) < 64 {
		for _, id := range ids {
			s.dropRemoteLocked(id)
		}
		return
	}
	removed := false
	for _, id := range ids {
		n := s.reg.remote[id]
		if n == nil {
			continue
		}
		delete(s.reg.remote, id)
		removed = true
		if n.host != nil {
			s.moveHostLocked(id, n.host, nil)
		}
	}
	if !removed {
		return
	}
	s.reg.changed()
	s.countAllLocked()
	s.invalidateAllLocked()
}

// dropRemoteLocked removes the remote node id, if any. s.mu must be held
// for writing.
func (s *Server) dropRemoteLocked(id string) {
	n := s.reg.remote[id]
	if n == nil {
		return
	}
	delete(s.reg.remote, id)
	s.reg.changed()
	if n.host != nil {
		s.hostChangedLocked(id, n.host, nil)
	}
}

// recordLocked is the record this replica publishes for a node it holds:
// its facts with the binaries present only, and which binaries it was
// asked (BinsAsked: the digest of their list), so that a name of that list
// missing from the record is one the node lacks, and any other one not
// known yet; listing the absent ones too made a record of a typical node
// ten times larger. Roles and
// capabilities are the sorted sets the host index uses (what the other
// replicas keep of them), so that repeats a node sent cannot make the
// record too large for them. s.mu must be held.
func (s *Server) recordLocked(c *nodeConn) cluster.Record {
	rec := cluster.Record{HostFacts: c.factsLocked(), Replica: s.replica, ConnectedAt: c.connectedAt}
	rec.Roles, rec.Capabilities = c.roles, c.caps
	maps.DeleteFunc(rec.HostBinStatus, func(_ string, present bool) bool { return !present })
	if c.host != nil {
		t := c.factsAt
		rec.FactsAt = &t
		rec.BinsAsked = c.askedDigest()
	}
	return rec
}

// registerClusterMetrics adds the cluster's gauges, with a cluster only.
func (s *Server) registerClusterMetrics() {
	s.metrics.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillgate_cluster_remote_nodes", Help: "Nodes held by the other replicas, as this replica counts them."},
			func() float64 {
				s.mu.RLock()
				defer s.mu.RUnlock()
				return float64(len(s.reg.remote))
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillgate_cluster_connected", Help: "1 when connected to NATS and in sync with the bucket, else 0 (see /readyz for why)."},
			func() float64 {
				if s.member.State().Connected {
					return 1
				}
				return 0
			}),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "skillgate_cluster_replicas", Help: "Other replicas (incarnations) whose heartbeat this replica reads within their TTL."},
			func() float64 { return float64(s.member.State().Replicas) }),
		refusedCollector{m: s.member},
	)
}

// refusedDesc describes skillgate_cluster_records_refused_total.
var refusedDesc = prometheus.NewDesc("skillgate_cluster_records_refused_total",
	"Records and heartbeats of the cluster's bucket refused, by reason: unsigned, signature (not this cluster's secret, or changed), time, invalid, size, full (past gateway.cluster.maxRemoteNodes), format (a format this replica does not read: another version).",
	[]string{"reason"}, nil)

// refusedCollector reads the member's counts of refused records.
type refusedCollector struct{ m member }

func (c refusedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- refusedDesc }

func (c refusedCollector) Collect(ch chan<- prometheus.Metric) {
	counts := c.m.Refused()
	for _, reason := range cluster.RefusalReasons {
		ch <- prometheus.MustNewConstMetric(refusedDesc, prometheus.CounterValue, float64(counts[reason]), reason)
	}
}

// publishLocked publishes the record of a node this replica holds. s.mu
// must be held.
func (s *Server) publishLocked(c *nodeConn) {
	if s.member != nil {
		s.member.Publish(s.recordLocked(c))
	}
}
