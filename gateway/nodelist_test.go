package gateway

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/api"
	"github.com/skillgate/skillgate/protocol"
)

// GET /v1/nodes pages in id order with an opaque cursor, filters by id
// and selects fields.
func TestNodesPaging(t *testing.T) {
	g := startHard(t, Config{}, map[string]string{"skills/alpha/SKILL.md": skillWithBin("alpha", "alpha-tool")})
	var n2 *websocket.Conn
	for i := range 5 {
		ws, err := g.connectNode(t, fmt.Sprintf("n%d", 4-i), "")
		if err != nil {
			t.Fatal(err)
		}
		wsWrite(ws, `{"type":"req","id":"2","method":"facts.update","params":{"env":[],"hostBinStatus":{"alpha-tool":true}}}`)
		wsReadRes(ws)
		if i == 2 {
			n2 = ws
		}
	}
	type page struct {
		Nodes []map[string]any `json:"nodes"`
		Next  *string          `json:"next"`
	}
	get := func(q string) (int, page, string) {
		code, body := g.get(t, "/v1/nodes"+q, "", nil)
		var p page
		if code == 200 {
			if err := json.Unmarshal([]byte(body), &p); err != nil {
				t.Fatalf("%s: %v: %s", q, err, body)
			}
		}
		return code, p, body
	}
	ids := func(p page) string {
		var out []string
		for _, n := range p.Nodes {
			out = append(out, n["id"].(string))
		}
		return strings.Join(out, ",")
	}

	// Every page, following next.
	var seen []string
	q := "?limit=2"
	for pages := 0; ; pages++ {
		code, p, body := get(q)
		if code != 200 || pages > 5 {
			t.Fatalf("%s: %d %s", q, code, body)
		}
		seen = append(seen, ids(p))
		if p.Next == nil {
			break
		}
		q = "?limit=2&cursor=" + url.QueryEscape(*p.Next)
	}
	if got := strings.Join(seen, "|"); got != "n0,n1|n2,n3|n4" {
		t.Errorf("pages = %s; want n0,n1|n2,n3|n4", got)
	}

	// Without a limit: one page, no next; every field.
	_, p, body := get("")
	if ids(p) != "n0,n1,n2,n3,n4" || p.Next != nil || strings.Contains(body, `"next"`) {
		t.Errorf("default page: %s", body)
	}
	// Without a cluster every node is this process's: its replica name
	// is the host name.
	if len(p.Nodes[0]) != 9 || p.Nodes[0]["replica"] != DefaultReplica() {
		t.Errorf("default fields: %v; want 9 with replica %q", p.Nodes[0], DefaultReplica())
	}

	// A node's new facts show in the next listing: only changed nodes are
	// encoded again, and this one changed.
	wsWrite(n2, `{"type":"req","id":"3","method":"facts.update","params":{"env":[],"hostBinStatus":{"alpha-tool":false}}}`)
	wsReadRes(n2)
	if _, p2, body := get("?id=n2&id=n3&fields=hostBinStatus"); len(p2.Nodes) != 2 ||
		fmt.Sprint(p2.Nodes[0]["hostBinStatus"]) != "map[alpha-tool:false]" || fmt.Sprint(p2.Nodes[1]["hostBinStatus"]) != "map[alpha-tool:true]" {
		t.Errorf("after n2's new facts: %s", body)
	}

	// Filters and fields.
	code, p, body := get("?id=n3&id=n1&id=nobody&fields=os,roles")
	if code != 200 || ids(p) != "n1,n3" {
		t.Errorf("id filter: %d %s", code, body)
	}
	if want := `{"nodes":[{"id":"n1","os":"linux","roles":["execution"]},{"id":"n3","os":"linux","roles":["execution"]}]}` + "\n"; body != want {
		t.Errorf("fields=os,roles:\n got %s\nwant %s", body, want)
	}
	if _, p, _ := get("?fields=hostBinStatus&limit=1"); fmt.Sprint(p.Nodes) != "[map[hostBinStatus:map[alpha-tool:true] id:n0]]" {
		t.Errorf("fields=hostBinStatus: %v", p.Nodes)
	}

	for _, bad := range []string{"?limit=0", "?limit=x", "?limit=10001", "?cursor=!!!", "?fields=os,secret", "?page=2"} {
		if code, _, body := get(bad); code != 400 || !strings.Contains(body, `"error"`) {
			t.Errorf("%s: %d %s; want 400 with an error", bad, code, body)
		}
	}
}

// TestNodesPageIsAPIShape: a page written from the entries' encoded fields
// is byte for byte what encoding/json writes of the api.NodesPage, fields
// in api.Node's order: the shape is declared once, in api.
func TestNodesPageIsAPIShape(t *testing.T) {
	if want := []string{"id", "os", "roles", "capabilities", "env", "hostBinStatus", "connectedAt", "factsAt", "replica"}; !slices.Equal(nodeFields, want) {
		t.Fatalf("nodeFields = %q, want DESIGN's %q", nodeFields, want)
	}
	at := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	nodes := []api.Node{
		{HostFacts: protocol.HostFacts{ID: "a<1", OS: "linux", Roles: []string{"execution"}, Capabilities: []string{}, Env: []string{"HOME"},
			HostBinStatus: map[string]bool{"gh": true, "b&c": false}}, ConnectedAt: at, FactsAt: &at, Replica: "r1"},
		{HostFacts: protocol.HostFacts{ID: "b-2", OS: "darwin"}, ConnectedAt: at.Add(time.Second), Replica: "r2"},
	}
	var entries []nodeEntry
	for _, n := range nodes {
		v := reflect.ValueOf(&n).Elem()
		e := nodeEntry{id: n.ID, fields: make([][]byte, len(nodeFields))}
		for j, name := range nodeFields {
			b, err := encodeField(name, v.FieldByIndex(nodeIndex[j]).Interface())
			if err != nil {
				t.Fatal(err)
			}
			e.fields[j] = b
		}
		entries = append(entries, e)
	}
	for _, c := range []struct {
		limit int
		want  api.NodesPage
	}{
		{10, api.NodesPage{Nodes: nodes}},
		{1, api.NodesPage{Nodes: nodes[:1], Next: base64.RawURLEncoding.EncodeToString([]byte("a<1"))}},
	} {
		q, err := parseNodesQuery(url.Values{"limit": {fmt.Sprint(c.limit)}})
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(c.want); err != nil {
			t.Fatal(err)
		}
		if got := nodesPage(entries, q); string(got) != want.String() {
			t.Errorf("limit %d: nodesPage =\n%s\nencoding/json of the api.NodesPage =\n%s", c.limit, got, want.String())
		}
	}
}
