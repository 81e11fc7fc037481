package gateway

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/internal/ident"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/protocol"
)

// TestNodesListLeavesOutUnencodable: a node whose connectedAt no JSON
// encoder writes (year 10000 in UTC) is left out of GET /v1/nodes, and
// logged, instead of making the whole answer invalid JSON with a partial
// field ("connectedAt":,).
func TestNodesListLeavesOutUnencodable(t *testing.T) {
	logs := &syncbuf.Buffer{}
	s := &Server{log: slog.New(slog.NewTextHandler(logs, nil)), replica: "me"}
	s.reg = registry{nodes: map[string]*nodeConn{}, remote: map[string]*remoteNode{}}
	var odd time.Time
	if err := json.Unmarshal([]byte(`"9999-12-31T23:59:59-23:59"`), &odd); err != nil {
		t.Fatal(err)
	}
	for id, at := range map[string]time.Time{"a-good": time.Now(), "b-odd": odd, "c-good": time.Now()} {
		n := &remoteNode{replica: "r"}
		n.setInfo(protocol.NodeInfo{ID: id, OS: "linux", Roles: []string{protocol.RoleExecution}}, at)
		s.reg.remote[id] = n
	}
	q, err := parseNodesQuery(url.Values{})
	if err != nil {
		t.Fatal(err)
	}
	page := nodesPage(s.nodeEntries(), q)
	var got struct {
		Nodes []struct{ ID string } `json:"nodes"`
	}
	if err := json.Unmarshal(page, &got); err != nil {
		t.Fatalf("GET /v1/nodes is not JSON (%v): %s", err, page)
	}
	if len(got.Nodes) != 2 || got.Nodes[0].ID != "a-good" || got.Nodes[1].ID != "c-good" {
		t.Errorf("listed %+v, want a-good and c-good", got.Nodes)
	}
	if !strings.Contains(logs.String(), "b-odd") {
		t.Errorf("the node left out is not logged:\n%s", logs)
	}
}

// TestRecordBoundFitsTheInterest: cluster.MaxRecordBytes holds the record
// of a node that has every name of the largest interest the gateway asks
// (eligibility's limits), with the longest id and replica name.
func TestRecordBoundFitsTheInterest(t *testing.T) {
	// As many names as allowed, as long as the bytes allow: the most
	// JSON per byte of interest.
	n := eligibility.MaxInterestNames
	l := eligibility.MaxInterestBytes/n - 3
	names := func(prefix string) []string {
		out := make([]string, n)
		for i := range out {
			s := fmt.Sprintf("%s%d-", prefix, i)
			out[i] = s + strings.Repeat("x", l-len(s))
		}
		return out
	}
	env := names("E")
	bins := map[string]bool{}
	for _, b := range names("b") {
		bins[b] = true
	}
	now := time.Now()
	rec := cluster.Record{
		HostFacts: protocol.HostFacts{ID: strings.Repeat("i", ident.MaxLen), OS: strings.Repeat("o", protocol.MaxOSLen),
			Roles: slices.Clone(protocol.Roles), Capabilities: slices.Clone(protocol.Capabilities), Env: env, HostBinStatus: bins},
		BinsAsked: binsDigest(names("b")), Replica: strings.Repeat("r", 128), ConnectedAt: now, FactsAt: &now,
	}
	b, err := json.Marshal(&rec)
	if err != nil {
		t.Fatal(err)
	}
	// The signature line, and the incarnation the member adds
	// (`,"incarnation":"` and 16 hex digits), with room to spare.
	const signature = 100 + 40
	t.Logf("the largest record: %d bytes; the bound %d", len(b), cluster.MaxRecordBytes)
	if len(b)+signature > cluster.MaxRecordBytes {
		t.Errorf("the largest record takes %d bytes with its signature, more than cluster.MaxRecordBytes (%d)", len(b)+signature, cluster.MaxRecordBytes)
	}
	if len(b) < cluster.MaxRecordBytes*9/10 {
		t.Errorf("cluster.MaxRecordBytes (%d) is far above the largest record (%d bytes): lower it", cluster.MaxRecordBytes, len(b))
	}
}
