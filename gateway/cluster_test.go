package gateway_test

// Replicas sharing one fleet through a real NATS server (natstest) and one
// MinIO bucket: real gateways on loopback, real WebSocket nodes. The
// process-level checks (kill -9 of a replica) are in cmd/skillgate.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
)

// clusterTTL is the replicas' gateway.cluster.ttl in these tests.
const clusterTTL = 2 * time.Second

// clusterSecret is the replicas' cluster secret in these tests.
var clusterSecret = cluster.Secret("the gateway tests' cluster secret, 32 bytes or more")

// clusterFiles: github needs gh, jq-tools needs jq.
var clusterFiles = map[string]string{
	"skills/github/SKILL.md":   skillMD("github", "Uses gh.", `{"bins": ["gh"]}`),
	"skills/jq-tools/SKILL.md": skillMD("jq-tools", "Uses jq.", `{"bins": ["jq"]}`),
}

// startReplicas starts one gateway per name over one bucket holding files,
// all members of the cluster on ns.
func startReplicas(t *testing.T, ns *natstest.Server, files map[string]string, names ...string) []*gw {
	t.Helper()
	st := gatewaytest.NewStore(t, sharedMinio.Get(t))
	var gws []*gw
	for i, name := range names {
		o := gwOptions{store: st, replica: name, cluster: &cluster.Config{URL: ns.URL(), TTL: clusterTTL, Secret: clusterSecret}}
		if i == 0 {
			o.files = files
		}
		gws = append(gws, startGateway(t, o))
	}
	return gws
}

// connectBuilder connects the raw node builder, which has gh and not jq,
// to the first of gws (replica a), and waits until every replica offers
// github (the block it returns) and lists builder on a.
func connectBuilder(t *testing.T, gws []*gw) (*testkit.RawNode, string) {
	t.Helper()
	n := dialRaw(t, gws[0])
	n.Connect("builder", "")
	n.Facts("f1", []string{}, map[string]bool{"gh": true, "jq": false})
	github := block(global("github", "Uses gh."))
	for _, g := range gws {
		g.waitPrompt(t, "main", github)
	}
	waitNodeReplicas(t, "builder@a", gws...)
	return n, github
}

// nodeReplicas is "id@replica,…" of GET /v1/nodes, in id order.
func nodeReplicas(t *testing.T, g *gw) string {
	t.Helper()
	code, _, body := g.Get(t, "/v1/nodes?fields=id,replica", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /v1/nodes: %d %s", code, body)
	}
	var out struct {
		Nodes []struct{ ID, Replica string } `json:"nodes"`
	}
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		t.Fatal(err)
	}
	var parts []string
	for _, n := range out.Nodes {
		parts = append(parts, n.ID+"@"+n.Replica)
	}
	return strings.Join(parts, ",")
}

// waitNodeReplicas waits until every gateway lists exactly want.
func waitNodeReplicas(t *testing.T, want string, gws ...*gw) {
	t.Helper()
	for _, g := range gws {
		testkit.Eventually(t, waitFor, func() (string, bool) {
			got := nodeReplicas(t, g)
			return fmt.Sprintf("%s lists %q, want %q", g.URL, got, want), got == want
		})
	}
}

// TestClusterSharesTheFleet: a node on replica a makes its skill offered by
// every replica, is listed everywhere with its replica, and leaves every
// replica's answers when it disconnects (withdrawn, not expired).
func TestClusterSharesTheFleet(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "a", "b", "c")
	a, c := gws[0], gws[2]
	for _, g := range gws {
		code, _, body := g.Get(t, "/readyz", nil)
		if code != http.StatusOK || !strings.Contains(body, `"cluster":"ok"`) || !strings.Contains(body, `"remoteNodes":0`) {
			t.Errorf("%s /readyz: %d %s", g.URL, code, body)
		}
	}

	n, _ := connectBuilder(t, gws)
	ns1, _ := c.nodes(t)
	if len(ns1) != 1 || ns1[0].OS != "linux" || !ns1[0].HostBinStatus["gh"] || ns1[0].HostBinStatus["jq"] || ns1[0].FactsAt == nil {
		t.Errorf("replica c's view of builder: %+v", ns1)
	}
	if code, _, body := c.Get(t, "/readyz", nil); code != http.StatusOK || !strings.Contains(body, `"remoteNodes":1`) || !strings.Contains(body, `"nodes":0`) {
		t.Errorf("c /readyz: %d %s", code, body)
	}
	if r, up := c.metric(t, "skillgate_cluster_remote_nodes"), c.metric(t, "skillgate_cluster_connected"); r != 1 || up != 1 {
		t.Errorf("c's metrics: skillgate_cluster_remote_nodes %v, skillgate_cluster_connected %v; want 1 and 1", r, up)
	}
	testkit.Eventually(t, waitFor, func() (string, bool) {
		n := c.metric(t, "skillgate_cluster_replicas")
		return fmt.Sprint("skillgate_cluster_replicas ", n), n == 2
	})

	// Leaving: withdrawn at once, well before the TTL would drop it.
	left := time.Now()
	n.Conn.Close(websocket.StatusNormalClosure, "bye")
	for _, g := range gws {
		g.waitPrompt(t, "main", "")
	}
	waitNodeReplicas(t, "", gws...)
	if d := time.Since(left); d >= clusterTTL {
		t.Errorf("the node left every replica %v after it closed; a withdrawn record should go before the TTL (%v)", d, clusterTTL)
	}

	// A replica that stops cleanly withdraws its nodes as it closes them.
	n = dialRaw(t, a)
	n.Connect("builder", "")
	n.Facts("f1", []string{}, map[string]bool{"gh": true})
	waitNodeReplicas(t, "builder@a", c)
	stopped := time.Now()
	done := make(chan struct{})
	go func() { a.Stop(); close(done) }() // the raw node does not answer the close handshake: a takes its time
	waitNodeReplicas(t, "", c)
	c.waitPrompt(t, "main", "")
	if d := time.Since(stopped); d >= clusterTTL {
		t.Errorf("replica a's node left replica c %v after a began to stop; a clean stop should withdraw it before the TTL (%v)", d, clusterTTL)
	}
	<-done
}

// TestClusterNewestConnectionWins: the same id connected on two replicas:
// the older connection is closed with 1008 replaced, and every replica
// lists the newer one, with its facts.
func TestClusterNewestConnectionWins(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "a", "b", "c")
	a, b := gws[0], gws[1]

	old := dialRaw(t, a)
	old.Connect("x", "")
	old.Facts("f1", []string{}, map[string]bool{"gh": false, "jq": true})
	waitNodeReplicas(t, "x@a", gws...)
	for _, g := range gws {
		g.waitPrompt(t, "main", block(global("jq-tools", "Uses jq.")))
	}

	cur := dialRaw(t, b)
	cur.Connect("x", "")
	cur.Facts("f1", []string{}, map[string]bool{"gh": true, "jq": false})
	old.ExpectClose(websocket.StatusCode(protocol.ClosePolicyViolation), protocol.CloseReasonReplaced)
	waitNodeReplicas(t, "x@b", gws...)
	for _, g := range gws {
		g.waitPrompt(t, "main", block(global("github", "Uses gh.")))
	}
	// The newer connection is still served.
	cur.Facts("f2", []string{}, map[string]bool{"gh": true, "jq": true})
	for _, g := range gws {
		g.waitPrompt(t, "main", block(global("github", "Uses gh."), global("jq-tools", "Uses jq.")))
	}
}

// TestClusterNATSOutage: with NATS down each replica keeps its own nodes,
// drops the others' after the TTL and is not ready, saying why; when NATS
// is back every replica sees the whole fleet again.
func TestClusterNATSOutage(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "a", "c")
	a, c := gws[0], gws[1]
	na := dialRaw(t, a)
	na.Connect("na", "")
	na.Facts("f1", []string{}, map[string]bool{"gh": true, "jq": false})
	nc := dialRaw(t, c)
	nc.Connect("nc", "")
	nc.Facts("f1", []string{}, map[string]bool{"gh": false, "jq": true})
	both := block(global("github", "Uses gh."), global("jq-tools", "Uses jq."))
	for _, g := range gws {
		g.waitPrompt(t, "main", both)
	}
	waitNodeReplicas(t, "na@a,nc@c", gws...)

	ns.Stop()
	for _, g := range gws {
		testkit.Eventually(t, waitFor, func() (string, bool) {
			code, _, body := g.Get(t, "/readyz", nil)
			return fmt.Sprint(code, " ", body), code == http.StatusServiceUnavailable && strings.Contains(body, `"cluster":"nats: `)
		})
	}
	// Local nodes keep working; the other replica's go after the TTL.
	a.waitPrompt(t, "main", block(global("github", "Uses gh.")))
	c.waitPrompt(t, "main", block(global("jq-tools", "Uses jq.")))
	waitNodeReplicas(t, "na@a", a)
	waitNodeReplicas(t, "nc@c", c)

	ns.Restart(t)
	for _, g := range gws {
		testkit.Eventually(t, waitFor, func() (string, bool) {
			code, _, body := g.Get(t, "/readyz", nil)
			return fmt.Sprint(code, " ", body), code == http.StatusOK && strings.Contains(body, `"cluster":"ok"`)
		})
		g.waitPrompt(t, "main", both)
	}
	waitNodeReplicas(t, "na@a,nc@c", gws...)
}

// TestClusterConvergesRandomly: nodes connect, change facts, move between
// replicas (and connect to a second replica while still on the first)
// and disconnect, at random; after each quiet period every replica's
// /skills answer equals that of a single gateway (no cluster) to which the
// same fleet is connected.
func TestClusterConvergesRandomly(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 0))
	t.Logf("seed %d", seed)
	ns := natstest.Start(t)
	files := map[string]string{
		"skills/github/SKILL.md":   skillMD("github", "Uses gh.", `{"bins": ["gh"]}`),
		"skills/jq-tools/SKILL.md": skillMD("jq-tools", "Uses jq.", `{"bins": ["jq"]}`),
		"skills/both/SKILL.md":     skillMD("both", "Uses gh and jq on one host.", `{"bins": ["gh", "jq"]}`),
		"skills/token/SKILL.md":    skillMD("token", "Needs GH_TOKEN.", `{"env": ["GH_TOKEN"]}`),
		"skills/any/SKILL.md":      skillMD("any", "Uses rg or grep.", `{"anyBins": ["rg", "grep"]}`),
	}
	gws := startReplicas(t, ns, files, "a", "b", "c")
	ref := startGateway(t, gwOptions{files: files})

	type live struct {
		on, mirror *testkit.RawNode
		replica    int
	}
	fleet := map[string]*live{}
	randFacts := func() ([]string, map[string]bool) {
		var env []string
		if rng.IntN(2) == 0 {
			env = []string{"GH_TOKEN"}
		}
		bins := map[string]bool{}
		for _, b := range []string{"gh", "jq", "rg", "grep"} {
			if rng.IntN(3) > 0 {
				bins[b] = rng.IntN(2) == 0
			}
		}
		return env, bins
	}
	req := 0
	facts := func(n *testkit.RawNode, env []string, bins map[string]bool) {
		req++
		n.Facts(fmt.Sprint("f", req), env, bins)
	}
	connectOn := func(id string, r int) {
		env, bins := randFacts()
		n := dialRaw(t, gws[r])
		n.Connect(id, "")
		facts(n, env, bins)
		l := fleet[id]
		if l == nil {
			l = &live{mirror: dialRaw(t, ref)}
			l.mirror.Connect(id, "")
			fleet[id] = l
		} else if l.on != nil {
			l.on.Conn.CloseNow() // replaced by the gateway; not read here
		}
		l.on, l.replica = n, r
		facts(l.mirror, env, bins)
	}
	skills := func(g *gw) string {
		code, _, body := g.Get(t, "/v1/agents/main/skills", nil)
		if code != http.StatusOK {
			t.Fatalf("GET skills: %d %s", code, body)
		}
		return body
	}
	ids := []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"}
	for round := range 6 {
		for range 12 {
			id := ids[rng.IntN(len(ids))]
			l := fleet[id]
			switch op := rng.IntN(4); {
			case l == nil:
				connectOn(id, rng.IntN(3))
			case op == 0: // new facts
				env, bins := randFacts()
				facts(l.on, env, bins)
				facts(l.mirror, env, bins)
			case op == 1: // moves: leaves, then connects elsewhere
				l.on.Conn.Close(websocket.StatusNormalClosure, "moving")
				l.on = nil
				connectOn(id, (l.replica+1+rng.IntN(2))%3)
			case op == 2: // a second connection on another replica while the first is open
				connectOn(id, (l.replica+1+rng.IntN(2))%3)
			default: // leaves
				l.on.Conn.Close(websocket.StatusNormalClosure, "bye")
				l.mirror.Conn.Close(websocket.StatusNormalClosure, "bye")
				delete(fleet, id)
			}
		}
		// Quiet: every replica converges on the single gateway's answer.
		for i, g := range gws {
			testkit.Eventually(t, waitFor, func() (string, bool) {
				want, got := skills(ref), skills(g)
				return fmt.Sprintf("round %d, replica %s:\ngot  %s\nwant %s", round, []string{"a", "b", "c"}[i], got, want), got == want
			})
		}
		var want []string
		for _, id := range ids {
			if l := fleet[id]; l != nil {
				want = append(want, id+"@"+[]string{"a", "b", "c"}[l.replica])
			}
		}
		waitNodeReplicas(t, strings.Join(want, ","), gws...)
	}
}

// TestClusterReplicasShareAName: replicas started without --replica on
// one host share its name; they still tell their nodes apart (by
// connection), share the fleet, and the newest connection wins.
func TestClusterReplicasShareAName(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "host", "host")
	a, b := gws[0], gws[1]
	old := dialRaw(t, a)
	old.Connect("x", "")
	old.Facts("f1", []string{}, map[string]bool{"jq": true})
	for _, g := range gws {
		g.waitPrompt(t, "main", block(global("jq-tools", "Uses jq.")))
	}
	waitNodeReplicas(t, "x@host", gws...)

	cur := dialRaw(t, b)
	cur.Connect("x", "")
	cur.Facts("f1", []string{}, map[string]bool{"gh": true})
	old.ExpectClose(websocket.StatusCode(protocol.ClosePolicyViolation), protocol.CloseReasonReplaced)
	for _, g := range gws {
		g.waitPrompt(t, "main", block(global("github", "Uses gh.")))
	}
	waitNodeReplicas(t, "x@host", gws...)
	cur.Conn.Close(websocket.StatusNormalClosure, "bye")
	for _, g := range gws {
		g.waitPrompt(t, "main", "")
	}
	waitNodeReplicas(t, "", gws...)
}

// TestClusterReplicaLapses: another replica holding many nodes stops
// beating (killed): every one of its nodes leaves this replica's answers
// at once (one batch), within the TTL and a sweep.
func TestClusterReplicaLapses(t *testing.T) {
	ns := natstest.Start(t)
	gws := startReplicas(t, ns, clusterFiles, "b")
	b := gws[0]
	// "a" is a bare member writing records as a gateway would.
	a, err := cluster.Join(cluster.Config{URL: ns.URL(), Replica: "a", TTL: clusterTTL, Secret: clusterSecret, Logger: slog.New(slog.DiscardHandler)}, nopHandler{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 150
	now := time.Now().UTC()
	for i := range n {
		a.Publish(cluster.Record{HostFacts: protocol.HostFacts{ID: fmt.Sprintf("n%03d", i), OS: "linux", Roles: []string{protocol.RoleExecution},
			Capabilities: baseline, Env: []string{}, HostBinStatus: map[string]bool{"gh": true}}, ConnectedAt: now, FactsAt: &now})
	}
	b.waitPrompt(t, "main", block(global("github", "Uses gh.")))
	testkit.Eventually(t, waitFor, func() (string, bool) {
		n2 := b.metric(t, "skillgate_cluster_remote_nodes")
		return fmt.Sprint("remote nodes ", n2), n2 == n
	})
	// Closed without withdrawing: its heartbeat stops, its records stay.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	a.Close(ctx)
	stopped := time.Now()
	b.waitPrompt(t, "main", "")
	if d := time.Since(stopped); d > clusterTTL+time.Second {
		t.Errorf("a's nodes left b %v after a stopped, more than the TTL and a second", d)
	}
	waitNodeReplicas(t, "", b)
	if r := b.metric(t, "skillgate_cluster_remote_nodes"); r != 0 {
		t.Errorf("skillgate_cluster_remote_nodes %v after the lapse", r)
	}
}

// nopHandler ignores the other replicas' records.
type nopHandler struct{}

func (nopHandler) Put(*cluster.Record) {}
func (nopHandler) Delete(string)       {}
func (nopHandler) DeleteMany([]string) {}

// TestClusterNodesWaitForTheBucket: a replica that has not read the
// cluster's bucket yet answers node connects 503 with Retry-After, for at
// most half the TTL after it started; then nodes connect (here NATS is
// never reachable: the replica serves its own nodes, as documented).
func TestClusterNodesWaitForTheBucket(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadNATS := "nats://" + ln.Addr().String()
	ln.Close() // nothing listens there
	const ttl = 8 * time.Second
	start := time.Now()
	g := &gw{gatewaytest.Start(t, gatewaytest.Options{NoWait: true, Config: gateway.Config{Poll: 50 * time.Millisecond, Replica: "A",
		Cluster: &cluster.Config{URL: deadNATS, TTL: ttl, Secret: clusterSecret}}})}

	dial := func() (*websocket.Conn, *http.Response, error) {
		dctx, dcancel := context.WithTimeout(context.Background(), waitFor)
		defer dcancel()
		return websocket.Dial(dctx, g.WSURL, nil)
	}
	c, resp, err := dial()
	if since := time.Since(start); since >= ttl/2 {
		t.Fatalf("the first dial came %v after the start, past the wait of %v: the machine is too slow for this test's TTL", since, ttl/2)
	}
	if err == nil {
		c.CloseNow()
		t.Fatal("a node connected before the replica read the bucket")
	}
	if resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("dial before the bucket was read: %v, response %+v; want 503 with Retry-After: 1", err, resp)
	}
	if n := g.metric(t, "skillgate_node_frames_total", `kind="upgrade"`, `result="syncing"`); n < 1 {
		t.Errorf("skillgate_node_frames_total{kind=upgrade,result=syncing} = %v; want at least 1", n)
	}
	// Half the TTL after the start, nodes are let in.
	testkit.Eventually(t, waitFor, func() (string, bool) {
		c, resp, err := dial()
		if err != nil {
			return fmt.Sprint(err, resp), false
		}
		c.CloseNow()
		return "", true
	})
	if since := time.Since(start); since < ttl/2 {
		t.Errorf("a node connected %v after the start, before the wait of %v ended", since, ttl/2)
	}
}

// TestClusterMoveKeepsTheNodesAnswers: a node that connects to another
// replica counts, on every replica, with the answers of its previous
// connection until its new one reports (the node agent moves back that
// way: the old connection stays open until the new one's first
// facts.update), so a move never takes its skills out of any block; a new
// connection that never reports stops counting after 10 s.
func TestClusterMoveKeepsTheNodesAnswers(t *testing.T) {
	ns := natstest.Start(t)
	names := []string{"a", "b", "c"}
	gws := startReplicas(t, ns, clusterFiles, names...)
	b, c := gws[1], gws[2]
	first, github := connectBuilder(t, gws)
	_, before := nodeFacts(t, gws[0], "builder")

	// Every replica's block, read without a pause while the node moves.
	stop := make(chan struct{})
	gaps := make(chan string, 1)
	go func() {
		defer close(gaps)
		for {
			select {
			case <-stop:
				return
			default:
			}
			for i, g := range gws {
				got, err := promptOf(g)
				if err != nil || got != github {
					gaps <- fmt.Sprintf("replica %s served %q (%v) while the node moved", names[i], got, err)
					return
				}
			}
		}
	}()
	moved := dialRaw(t, b)
	moved.Connect("builder", "")
	first.ExpectClose(websocket.StatusCode(protocol.ClosePolicyViolation), protocol.CloseReasonReplaced)
	waitNodeReplicas(t, "builder@b", gws...)
	// Before its own facts.update, the new connection lists the old one's
	// answers, as of when they were reported.
	for i, g := range gws {
		if got, at := nodeFacts(t, g, "builder"); got != `{"gh":true,"jq":false}` || at != before {
			t.Errorf("replica %s lists builder with %s at %s before its first facts.update, want the old connection's {\"gh\":true,\"jq\":false} at %s", names[i], got, at, before)
		}
	}
	// factsAt is in seconds: the new report is told apart by its time.
	// The poller reads meanwhile.
	time.Sleep(1100 * time.Millisecond)
	moved.Facts("f1", []string{}, map[string]bool{"gh": true, "jq": false})
	testkit.Eventually(t, waitFor, func() (string, bool) {
		_, at := nodeFacts(t, c, "builder")
		return "c lists the moved node's own facts.update", at != before
	})
	close(stop)
	if gap := <-gaps; gap != "" {
		t.Error(gap)
	}

	// A move whose connection never reports: counted for 10 s, then not.
	silent := dialRaw(t, c)
	silent.Connect("builder", "")
	moved.ExpectClose(websocket.StatusCode(protocol.ClosePolicyViolation), protocol.CloseReasonReplaced)
	waitNodeReplicas(t, "builder@c", gws...)
	for i, g := range gws {
		if got := g.Prompt(t, "main"); got != github {
			t.Errorf("replica %s right after the second move: %q", names[i], got)
		}
	}
	for i, g := range gws {
		testkit.Eventually(t, 20*time.Second, func() (string, bool) {
			got := g.Prompt(t, "main")
			return fmt.Sprintf("replica %s still serves %q", names[i], got), got == ""
		})
		if got, at := nodeFacts(t, g, "builder"); got != "{}" || at != "null" {
			t.Errorf("replica %s lists the silent connection with %s at %s, want no answers and factsAt null", names[i], got, at)
		}
	}
}

// promptOf reads g's block for main without a testing.T (from a
// goroutine of its own).
func promptOf(g *gw) (string, error) {
	resp, err := g.Client.Get(g.URL + "/v1/agents/main/prompt")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(body), err
}

// nodeFacts returns one node's hostBinStatus (JSON) and factsAt
// in g's GET /v1/nodes ("null" when it has none).
func nodeFacts(t *testing.T, g *gw, id string) (bins, factsAt string) {
	t.Helper()
	ns, body := g.nodes(t)
	for _, n := range ns {
		if n.ID == id {
			b, _ := json.Marshal(n.HostBinStatus)
			at := "null"
			if n.FactsAt != nil {
				at = *n.FactsAt
			}
			return string(b), at
		}
	}
	t.Fatalf("GET /v1/nodes does not list %s: %s", id, body)
	return "", ""
}
