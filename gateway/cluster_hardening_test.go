package gateway_test

// Issue 19's attacks on the replicas' bucket, through real gateways on a
// real NATS server: someone who may write the bucket but holds no cluster
// secret.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/protocol"
)

// bucketWriter is a NATS client of ns's with write access to the
// replicas' bucket, and no cluster secret.
func bucketWriter(t *testing.T, ns *natstest.Server) jetstream.KeyValue {
	t.Helper()
	kv, err := ns.JetStream(t).KeyValue(t.Context(), cluster.DefaultBucket)
	if err != nil {
		t.Fatal(err)
	}
	return kv
}

// forgedRecord is a record as a replica would write it, unsigned.
func forgedRecord(t *testing.T, id, replica string, connectedAt time.Time) []byte {
	t.Helper()
	b, err := json.Marshal(cluster.Record{
		HostFacts: protocol.HostFacts{
			ID: id, OS: "linux", Roles: []string{protocol.RoleExecution},
			Capabilities: protocol.BaselineCapabilities, Env: []string{}, HostBinStatus: map[string]bool{"gh": true, "jq": true},
		},
		Replica: replica, ConnectedAt: connectedAt, FactsAt: &connectedAt,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// validNodes fails t unless GET /v1/nodes of g is valid JSON, and returns
// it.
func validNodes(t *testing.T, g *gw) string {
	t.Helper()
	code, _, body := g.Get(t, "/v1/nodes", nil)
	if code != http.StatusOK || !json.Valid([]byte(body)) {
		t.Fatalf("GET %s/v1/nodes: %d, not valid JSON: %s", g.URL, code, body)
	}
	return body
}

// TestClusterForgedRecords: a node added to the bucket by someone without
// the cluster secret, and a forged newer connection (connectedAt in 2099)
// of a real node rewritten ten times a second: no replica lists the added
// node, and the real node stays on its replica, with its facts, its skill
// offered everywhere.
func TestClusterForgedRecords(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "a", "c")
	n, github := connectBuilder(t, gws)

	kv := bucketWriter(t, ns)
	ghost := forgedRecord(t, "ghost", "c", time.Now().UTC())
	kick := forgedRecord(t, "builder", "mallory", time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC))
	until := time.Now().Add(3 * clusterTTL)
	for time.Now().Before(until) {
		if _, err := kv.Put(t.Context(), "ghost", ghost); err != nil {
			t.Fatal(err)
		}
		if _, err := kv.Put(t.Context(), "builder", kick); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
		for _, g := range gws {
			if got := nodeReplicas(t, g); got != "builder@a" {
				t.Fatalf("%s lists %q while the bucket is forged, want builder@a only", g.URL, got)
			}
			if got := g.Prompt(t, "main"); got != github {
				t.Fatalf("%s's block while the bucket is forged:\n%s", g.URL, got)
			}
		}
	}
	// The node was never replaced: its connection still answers.
	n.Facts("f2", []string{}, map[string]bool{"gh": true, "jq": true})
	for _, g := range gws {
		g.waitPrompt(t, "main", block(global("github", "Uses gh."), global("jq-tools", "Uses jq.")))
		// Every forged record was refused, and counted.
		if got := g.metric(t, "skillgate_cluster_records_refused_total", `reason="unsigned"`); got < 20 {
			t.Errorf("%s: skillgate_cluster_records_refused_total{reason=\"unsigned\"} = %v, want every forged record counted", g.URL, got)
		}
		if code, _, body := g.Get(t, "/readyz", nil); code != http.StatusOK {
			t.Errorf("%s /readyz: %d %s", g.URL, code, body)
		}
	}
}

// TestClusterRecordTimeOutOfRange: a record whose connectedAt is year
// 10000 in UTC (9999-12-31T23:59:59-23:59) kept GET /v1/nodes of every
// replica from being JSON. It must stay JSON, without that node.
func TestClusterRecordTimeOutOfRange(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "a", "c")
	a := gws[0]
	var m map[string]any
	if err := json.Unmarshal(forgedRecord(t, "odd", "c", time.Now().UTC()), &m); err != nil {
		t.Fatal(err)
	}
	m["connectedAt"] = "9999-12-31T23:59:59-23:59"
	odd, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bucketWriter(t, ns).Put(t.Context(), "odd", odd); err != nil {
		t.Fatal(err)
	}
	// A node connecting after it: once listed everywhere, the record
	// before it was read.
	n := dialRaw(t, a)
	n.Connect("builder", "")
	n.Facts("f1", []string{}, map[string]bool{"gh": true})
	for _, g := range gws {
		testkit.Eventually(t, waitFor, func() (string, bool) {
			body := validNodes(t, g)
			return fmt.Sprintf("%s lists %s", g.URL, body), nodeReplicas(t, g) == "builder@a"
		})
		if got := g.metric(t, "skillgate_cluster_records_refused_total", `reason="unsigned"`); got != 1 {
			t.Errorf("%s: skillgate_cluster_records_refused_total{reason=\"unsigned\"} = %v, want 1", g.URL, got)
		}
	}
}
