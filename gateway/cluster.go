package gateway

import (
	"context"
	"maps"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/skillgate/skillgate/cluster"
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
	if c := s.nodeLocked(rec.ID); c != nil {
		if !cluster.Newer(rec, &cluster.Record{Replica: s.replica, ConnectedAt: c.connectedAt}) {
			return
		}
		c.log.Info("node replaced by a newer connection on another replica", "replica", rec.Replica)
		s.unregisterLocked(c)
		s.life.goFunc(func() { c.close(protocol.ClosePolicyViolation, protocol.CloseReasonReplaced) })
	}
	oldHost, cur, ok := s.putRemoteLocked(rec)
	if !ok {
		return
	}
	if cur != oldHost {
		s.hostChangedLocked(rec.ID, oldHost, cur)
	}
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
	if !s.removeRemotesLocked(ids) {
		return
	}
	s.countAllLocked()
	s.invalidateAllLocked()
}

// dropRemoteLocked removes the remote node id, if any. s.mu must be held
// for writing.
func (s *Server) dropRemoteLocked(id string) {
	n := s.removeRemoteLocked(id)
	if n == nil {
		return
	}
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
				return float64(s.remoteCountLocked())
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
