package gateway_test

// Issue 23, item 0: a replica's view of another replica's node after the
// interest changes (a skill needing a binary or an env name no skill
// needed before): unknown is not absent, and every replica converges on
// the single gateway's answer within the poll interval and a round trip to
// the node.

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
)

// simNode is a node as skillgate-node behaves: it answers the interest of
// connect and of every interest event with facts for exactly the names
// asked, from what it has (bins, env). Its reads run in a goroutine of
// their own until the connection ends.
type simNode struct {
	t  *testing.T
	c  *websocket.Conn
	id string

	mu       sync.Mutex
	bins     map[string]bool // binaries it has; any other is absent
	env      map[string]bool // env names set
	interest protocol.Interest
	req      int
	closed   chan struct{}
}

// dialSim connects a simNode with id to g, with what it has.
func dialSim(t *testing.T, g *gw, id string, bins, env []string) *simNode {
	t.Helper()
	r := dialRaw(t, g)
	n := &simNode{t: t, c: r.Conn, id: id, closed: make(chan struct{})}
	n.set(bins, env)
	in := r.Connect(id, "")
	n.mu.Lock()
	n.interest = in
	n.mu.Unlock()
	n.answer()
	go n.read()
	return n
}

// set replaces what the node has (not sent: see change).
func (n *simNode) set(bins, env []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.bins, n.env = map[string]bool{}, map[string]bool{}
	for _, b := range bins {
		n.bins[b] = true
	}
	for _, e := range env {
		n.env[e] = true
	}
}

// change replaces what the node has and reports it, as a node does when
// its PATH or environment changes.
func (n *simNode) change(bins, env []string) {
	n.set(bins, env)
	n.answer()
}

// answer sends facts.update for the interest in force on the connection.
func (n *simNode) answer() {
	n.mu.Lock()
	n.req++
	env := []string{}
	for _, e := range n.interest.Env {
		if n.env[e] {
			env = append(env, e)
		}
	}
	bins := map[string]bool{}
	for _, b := range n.interest.Bins {
		bins[b] = n.bins[b]
	}
	frame := testkit.FactsFrame(fmt.Sprint("f", n.req), env, bins)
	n.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	n.c.Write(ctx, websocket.MessageText, []byte(frame)) // an error: the connection ended (replaced, or closed)
}

// read answers interest events until the connection ends.
func (n *simNode) read() {
	defer close(n.closed)
	for {
		_, data, err := n.c.Read(context.Background())
		if err != nil {
			return
		}
		f, err := protocol.DecodeFrame(data)
		if err != nil {
			n.t.Errorf("node %s: a frame that does not decode: %v", n.id, err)
			return
		}
		switch {
		case f.Type == protocol.TypeEvt && f.Event == protocol.EventInterest:
			var in protocol.Interest
			if err := json.Unmarshal(f.Payload, &in); err != nil {
				n.t.Errorf("node %s: interest event: %v", n.id, err)
				return
			}
			n.mu.Lock()
			n.interest = in
			n.mu.Unlock()
			n.answer()
		case f.Type == protocol.TypeRes && (f.OK == nil || !*f.OK):
			n.t.Errorf("node %s: a facts.update refused: %+v", n.id, f.Error)
		}
	}
}

// leave closes the connection and waits for the reader.
func (n *simNode) leave() {
	n.c.Close(websocket.StatusNormalClosure, "bye")
	<-n.closed
}

// skillsOf is GET /v1/agents/main/skills of g.
func skillsOf(t *testing.T, g *gw) string {
	t.Helper()
	code, _, body := g.Get(t, "/v1/agents/main/skills", nil)
	if code != http.StatusOK {
		t.Fatalf("GET skills: %d %s", code, body)
	}
	return body
}

// TestClusterUnknownIsNotAbsent: a skill needing a binary no skill needed
// before is uploaded; replica b learns of it long before replica a, which
// holds the node that has the binary. b must not keep the binary for
// absent once the node answered a, nor list it as absent before (it was
// not asked yet).
func TestClusterUnknownIsNotAbsent(t *testing.T) {
	ns := natstest.Start(t)
	st := gatewaytest.NewStore(t, sharedMinio.Get(t))
	cc := func() *cluster.Config { return &cluster.Config{URL: ns.URL(), TTL: clusterTTL, Secret: clusterSecret} }
	files := map[string]string{"skills/github/SKILL.md": skillMD("github", "Uses gh.", `{"bins": ["gh"]}`)}
	a := startGateway(t, gwOptions{store: st, files: files, replica: "a", cluster: cc(), poll: 5 * time.Second})
	b := startGateway(t, gwOptions{store: st, replica: "b", cluster: cc(), poll: 100 * time.Millisecond})

	n := dialSim(t, a, "builder", []string{"gh", "jq"}, nil)
	for _, g := range []*gw{a, b} {
		g.waitPrompt(t, "main", block(global("github", "Uses gh.")))
	}
	// b lists what a asked: gh, present.
	bins := func(g *gw) map[string]bool {
		ns, _ := g.nodes(t)
		if len(ns) != 1 {
			t.Fatalf("%s lists %d nodes", g.URL, len(ns))
		}
		return ns[0].HostBinStatus
	}
	if got := bins(b); !sameBins(got, map[string]bool{"gh": true}) {
		t.Errorf("b's hostBinStatus of builder: %v", got)
	}

	// jq-tools needs jq: b knows at once, a within its 5 s poll.
	b.Put(t, "skills/jq-tools/SKILL.md", skillMD("jq-tools", "Uses jq.", `{"bins": ["jq"]}`))
	testkit.Eventually(t, waitFor, func() (string, bool) {
		body := skillsOf(t, b)
		return body, strings.Contains(body, `"jq-tools"`)
	})
	// b has not the answer yet: jq is not listed (not known), nor offered.
	got := bins(b)
	if !strings.Contains(skillsOf(t, a), `"jq-tools"`) { // a had not asked the node yet when b answered
		if !sameBins(got, map[string]bool{"gh": true}) {
			t.Errorf("b's hostBinStatus of builder before a asked for jq: %v; want jq left out (not asked yet)", got)
		}
		if p := b.Prompt(t, "main"); p != block(global("github", "Uses gh.")) {
			t.Errorf("b's block before the node was asked for jq:\n%s", p)
		}
	} else {
		t.Log("a polled the store before b's answer was read: not checked")
	}

	// a asks, the node answers, and b offers jq-tools too.
	for _, g := range []*gw{a, b} {
		g.waitPrompt(t, "main", block(global("github", "Uses gh."), global("jq-tools", "Uses jq.")))
	}
	if got := bins(b); !sameBins(got, map[string]bool{"gh": true, "jq": true}) {
		t.Errorf("b's hostBinStatus of builder: %v", got)
	}
	// The node loses jq: asked, it is absent now, on both replicas.
	n.change([]string{"gh"}, nil)
	for _, g := range []*gw{a, b} {
		g.waitPrompt(t, "main", block(global("github", "Uses gh.")))
		if got := bins(g); !sameBins(got, map[string]bool{"gh": true, "jq": false}) {
			t.Errorf("%s's hostBinStatus of builder: %v", g.URL, got)
		}
	}
}

// TestClusterLearnsAnswerBeforeInterest: the replica holding the node
// learns of a new skill first, and its node answers, before another
// replica learns of the skill: that replica received the answer for a name
// it did not ask for, and must count it once it does (before, it kept the
// binary for absent until the node reconnected).
func TestClusterLearnsAnswerBeforeInterest(t *testing.T) {
	ns := natstest.Start(t)
	st := gatewaytest.NewStore(t, sharedMinio.Get(t))
	cc := func() *cluster.Config { return &cluster.Config{URL: ns.URL(), TTL: clusterTTL, Secret: clusterSecret} }
	files := map[string]string{"skills/github/SKILL.md": skillMD("github", "Uses gh.", `{"bins": ["gh"], "env": ["GH_TOKEN"]}`)}
	a := startGateway(t, gwOptions{store: st, files: files, replica: "a", cluster: cc(), poll: 100 * time.Millisecond})
	b := startGateway(t, gwOptions{store: st, replica: "b", cluster: cc(), poll: 4 * time.Second})
	dialSim(t, a, "builder", []string{"gh", "jq"}, []string{"GH_TOKEN", "JQ_COLORS"})
	github := block(global("github", "Uses gh."))
	for _, g := range []*gw{a, b} {
		g.waitPrompt(t, "main", github)
	}
	b.Put(t, "skills/jq-tools/SKILL.md", skillMD("jq-tools", "Uses jq.", `{"bins": ["jq"], "env": ["JQ_COLORS"]}`))
	both := block(global("github", "Uses gh."), global("jq-tools", "Uses jq."))
	a.waitPrompt(t, "main", both)
	start := time.Now()
	b.waitPrompt(t, "main", both)
	t.Logf("b offered jq-tools %v after a did", time.Since(start).Round(time.Millisecond))
}

// sameBins reports whether two maps of booleans are equal.
func sameBins(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TestClusterConvergesWithInterestChanges: as TestClusterConvergesRandomly,
// with skills needing new binaries and env names added and removed at
// random, replicas polling the store at different intervals, and nodes
// that answer every interest as skillgate-node does: after each change
// every replica's /skills answer equals the single gateway's within the
// longest poll interval and a round trip to the node (plus slack for a
// loaded machine).
func TestClusterConvergesWithInterestChanges(t *testing.T) {
	seed := time.Now().UnixNano()
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	t.Logf("seed %d", seed)
	ns := natstest.Start(t)
	st := gatewaytest.NewStore(t, sharedMinio.Get(t))
	polls := []time.Duration{100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond}
	names := []string{"a", "b", "c"}
	base := map[string]string{"skills/github/SKILL.md": skillMD("github", "Uses gh.", `{"bins": ["gh"]}`)}
	var gws []*gw
	for i, name := range names {
		o := gwOptions{store: st, replica: name, poll: polls[i], cluster: &cluster.Config{URL: ns.URL(), TTL: clusterTTL, Secret: clusterSecret}}
		if i == 0 {
			o.files = base
		}
		gws = append(gws, startGateway(t, o))
	}
	ref := startGateway(t, gwOptions{files: base, poll: 100 * time.Millisecond})
	maxPoll := slices.Max(polls)

	binPool := []string{"gh", "jq", "rg", "grep", "tmux", "fd", "bat", "uv"}
	envPool := []string{"GH_TOKEN", "AWS_PROFILE", "OPENAI_API_KEY"}
	randHas := func() (bins, env []string) {
		for _, b := range binPool {
			if rng.IntN(2) == 0 {
				bins = append(bins, b)
			}
		}
		for _, e := range envPool {
			if rng.IntN(2) == 0 {
				env = append(env, e)
			}
		}
		return bins, env
	}
	type live struct {
		on, mirror *simNode
		replica    int
		bins, env  []string
	}
	fleet := map[string]*live{}
	connectOn := func(id string, r int) {
		l := fleet[id]
		if l == nil {
			bins, env := randHas()
			l = &live{bins: bins, env: env}
			l.mirror = dialSim(t, ref, id, bins, env)
			fleet[id] = l
		}
		// A second connection replaces the first (closed by the gateway).
		l.on, l.replica = dialSim(t, gws[r], id, l.bins, l.env), r
	}
	// Skills that come and go, each needing names of the pools.
	var extra []string // keys of skills added, still in the store
	addSkill := func(k int) {
		key := fmt.Sprintf("skills/s%d/SKILL.md", k)
		var req string
		switch rng.IntN(3) {
		case 0:
			req = fmt.Sprintf(`{"bins": [%q]}`, binPool[rng.IntN(len(binPool))])
		case 1:
			req = fmt.Sprintf(`{"anyBins": [%q, %q]}`, binPool[rng.IntN(len(binPool))], binPool[rng.IntN(len(binPool))])
		default:
			req = fmt.Sprintf(`{"bins": [%q], "env": [%q]}`, binPool[rng.IntN(len(binPool))], envPool[rng.IntN(len(envPool))])
		}
		md := skillMD(fmt.Sprintf("s%d", k), fmt.Sprintf("Skill %d.", k), req)
		gws[0].Put(t, key, md)
		ref.Put(t, key, md)
		extra = append(extra, key)
	}
	converged := func(round int, what string) {
		start := time.Now()
		for i, g := range gws {
			testkit.Eventually(t, waitFor, func() (string, bool) {
				want, got := skillsOf(t, ref), skillsOf(t, g)
				return fmt.Sprintf("round %d (%s), replica %s:\ngot  %s\nwant %s", round, what, names[i], got, want), got == want
			})
		}
		// The poll interval, a round trip to the node, and slack for a
		// loaded machine running this under -race.
		d := time.Since(start)
		t.Logf("round %d (%s): converged after %v", round, what, d.Round(time.Millisecond))
		if d > maxPoll+3*time.Second {
			t.Errorf("round %d (%s): the replicas converged after %v, more than the longest poll (%v) and a round trip", round, what, d.Round(time.Millisecond), maxPoll)
		}
	}

	ids := []string{"n1", "n2", "n3", "n4", "n5", "n6"}
	for _, id := range ids[:4] {
		connectOn(id, rng.IntN(3))
	}
	converged(-1, "start")
	k := 0
	for round := range 8 {
		// Node events, as in TestClusterConvergesRandomly.
		for range 4 {
			id := ids[rng.IntN(len(ids))]
			l := fleet[id]
			switch op := rng.IntN(4); {
			case l == nil:
				connectOn(id, rng.IntN(3))
			case op == 0:
				l.bins, l.env = randHas()
				l.on.change(l.bins, l.env)
				l.mirror.change(l.bins, l.env)
			case op == 1:
				l.on.leave()
				connectOn(id, (l.replica+1+rng.IntN(2))%3)
			case op == 2:
				connectOn(id, (l.replica+1+rng.IntN(2))%3)
			default:
				l.on.leave()
				l.mirror.leave()
				delete(fleet, id)
			}
		}
		converged(round, "nodes")
		// The interest changes: a skill added, sometimes one removed.
		k++
		addSkill(k)
		if len(extra) > 1 && rng.IntN(2) == 0 {
			i := rng.IntN(len(extra) - 1) // not the one just added
			gws[0].Delete(t, extra[i])
			ref.Delete(t, extra[i])
			extra = slices.Delete(extra, i, i+1)
		}
		testkit.Eventually(t, waitFor, func() (string, bool) {
			body := skillsOf(t, ref)
			return body, strings.Contains(body, fmt.Sprintf(`"s%d"`, k))
		})
		converged(round, "interest")
	}
}
