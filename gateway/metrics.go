package gateway

import (
	"context"
	"errors"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/skillgate/skillgate/store"
)

// metrics are the gateway's Prometheus metrics, on a registry of its own
// (no globals: two servers in one process do not collide).
type metrics struct {
	reg            *prometheus.Registry
	nodesConnected prometheus.Gauge
	skills         *prometheus.GaugeVec
	promptBuilds   *prometheus.CounterVec
	promptHit      prometheus.Counter // promptBuilds{cache="hit"}, resolved once: it is on the hot path
	promptMiss     prometheus.Counter
	evalSeconds    prometheus.Histogram
	storeRequests  *prometheus.CounterVec
	frames         *prometheus.CounterVec
	govTightened   prometheus.Counter
	govScans       prometheus.Counter
	govSkills      *prometheus.GaugeVec
	overBudget     prometheus.Counter
}

func newMetrics(s *Server) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		nodesConnected: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "skillgate_nodes_connected", Help: "Nodes connected over WebSocket."}),
		skills: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "skillgate_skills", Help: "Skills by state in the most recent evaluation of an agent's view."}, []string{"state"}),
		promptBuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillgate_prompt_builds_total", Help: "Prompt builds and skills requests, by whether the cached evaluation served them."}, []string{"cache"}),
		evalSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "skillgate_evaluation_seconds", Help: "Time to evaluate one agent's view.",
			Buckets: prometheus.ExponentialBuckets(1e-5, 4, 10)}),
		storeRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillgate_store_requests_total", Help: "Storage requests by operation and result."}, []string{"op", "result"}),
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "skillgate_node_frames_total", Help: "Frames received from nodes by kind and result."}, []string{"kind", "result"}),
		govTightened: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillgate_governance_tightened_total", Help: "Times a skill's effective governance mode tightened (new content, new rules, or a skill first seen in quarantine or block)."}),
		overBudget: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillgate_prompt_over_budget_total", Help: "Times an agent's block became over its budget because its always skills alone exceed it."}),
		govScans: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "skillgate_governance_scans_total", Help: "Skill directories scanned by the governance scanner (only new content is scanned)."}),
		govSkills: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "skillgate_skills_governance", Help: "Skills of the bucket by effective governance mode (allow, quarantine, block)."}, []string{"mode"}),
	}
	snapshotAge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skillgate_snapshot_age_seconds", Help: "Seconds since the last successful storage snapshot."},
		func() float64 {
			s.mu.RLock()
			defer s.mu.RUnlock()
			return s.snapshotAgeLocked(time.Now()).Seconds()
		})
	longPolls := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skillgate_long_polls", Help: "Long polls of prompt blocks waiting now."},
		func() float64 { return float64(s.polls.waiting()) })
	conns := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "skillgate_connections_open", Help: "Connections open on the gateway's listener (nodes, API, long polls)."},
		func() float64 {
			if cl := s.conns.Load(); cl != nil {
				open, _ := cl.openConns()
				return float64(open)
			}
			return 0
		})
	m.promptHit = m.promptBuilds.WithLabelValues("hit")
	m.promptMiss = m.promptBuilds.WithLabelValues("miss")
	m.reg.MustRegister(m.nodesConnected, m.skills, m.promptBuilds, m.evalSeconds, m.storeRequests, m.frames, m.govTightened, m.govScans, m.govSkills, m.overBudget, snapshotAge, longPolls, conns,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// instrumentedStore counts storage requests.
type instrumentedStore struct {
	store.Store
	m *metrics
}

func instrumentStore(st store.Store, m *metrics) store.Store { return instrumentedStore{st, m} }

func (s instrumentedStore) List(ctx context.Context, prefix string) ([]store.Object, error) {
	objs, err := s.Store.List(ctx, prefix)
	s.m.storeRequests.WithLabelValues("list", result(err)).Inc()
	return objs, err
}

func (s instrumentedStore) Get(ctx context.Context, key, etag string) ([]byte, string, error) {
	b, e, err := s.Store.Get(ctx, key, etag)
	s.m.storeRequests.WithLabelValues("get", result(err)).Inc()
	return b, e, err
}

func result(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, store.ErrNotModified):
		return "not_modified"
	case errors.Is(err, store.ErrNotFound):
		return "not_found"
	case errors.Is(err, store.ErrTooLarge):
		return "too_large"
	}
	return "error"
}
