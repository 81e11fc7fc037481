package gateway

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
	"time"

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
