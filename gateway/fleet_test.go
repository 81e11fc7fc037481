package gateway

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/skillgate/skillgate/cluster"
	"github.com/skillgate/skillgate/eligibility"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
)

// hostsServer is a server with skills needing gh, jq and API_KEY (the
// interest), and no node.
func hostsServer(t *testing.T) *Server {
	t.Helper()
	s := quietServer(t)
	snap := &snapshot{agents: map[string][]*skill.Skill{}}
	for _, req := range []map[string]any{{"bins": []any{"gh"}}, {"bins": []any{"jq"}}, {"env": []any{"API_KEY"}}} {
		dir := "s" + string(rune('a'+len(snap.all)))
		sk := &skill.Skill{Ref: skill.Ref{Key: skill.GlobalKey(dir), Dir: dir, Scope: skill.ScopeGlobal}, Name: dir, Description: "d", Requires: req}
		snap.global = append(snap.global, sk)
		snap.all = append(snap.all, sk)
	}
	s.mu.Lock()
	s.snap = snap
	s.rebuildLocked()
	s.mu.Unlock()
	return s
}

// same reports whether two lists are one slice.
func same(a, b []string) bool { return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0] }

// TestLookalikeNodesShareLists: local and remote nodes with identical
// facts share their hosts' lists (and the records hold the shared lists);
// a node whose facts change gets a host of its own and leaves the others'
// as they were; the builder's table is empty once no node is left.
func TestLookalikeNodesShareLists(t *testing.T) {
	s := hostsServer(t)
	info := func(id string) protocol.NodeInfo {
		// Fresh slices per node, as each connect frame is decoded.
		return protocol.NodeInfo{ID: id, OS: "linux", Roles: []string{"execution"}, Capabilities: []string{"filesystem.read", "shell.exec"}}
	}
	facts := func(bins ...string) *protocol.FactsScan {
		u := &protocol.FactsScan{Env: [][]byte{[]byte("API_KEY")}}
		for _, b := range []string{"gh", "jq"} {
			u.Bins = append(u.Bins, []byte(b))
			u.Present = append(u.Present, slices.Contains(bins, b))
		}
		return u
	}
	var local []*nodeConn
	for _, id := range []string{"l1", "l2"} {
		c := &nodeConn{srv: s, log: s.log, id: id, done: make(chan struct{})}
		if _, err := s.register(c, info(id), connectReqID); err != nil {
			t.Fatal(err)
		}
		s.updateFacts(c, facts("gh", "jq"))
		local = append(local, c)
	}
	now := time.Now()
	for _, id := range []string{"r1", "r2"} {
		rec := cluster.Record{HostFacts: info(id).HostFacts(), Replica: "other", ConnectedAt: now, FactsAt: &now}
		rec.Env = []string{"API_KEY"}
		rec.HostBinStatus = map[string]bool{"gh": true, "jq": true}
		raw, _ := json.Marshal(&rec) // decoded, as the cluster hands records over
		var got cluster.Record
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Fatal(err)
		}
		clusterHandler{s}.Put(&got)
	}

	s.mu.RLock()
	hosts := map[string]*eligibility.Host{}
	for _, id := range []string{"l1", "l2", "r1", "r2"} {
		if hosts[id] = s.index.Get(id); hosts[id] == nil {
			t.Fatalf("node %s has no host", id)
		}
	}
	l1, r2 := hosts["l1"], hosts["r2"]
	want := eligibility.Host{ID: "l1", OS: "linux", Roles: []string{"execution"}, Capabilities: []string{"filesystem.read", "shell.exec"},
		Env: []string{"API_KEY"}, Bins: []string{"gh", "jq"}}
	if !reflect.DeepEqual(*l1, want) {
		t.Errorf("l1's host = %#v, want %#v", *l1, want)
	}
	for id, h := range hosts {
		if !same(h.Roles, l1.Roles) || !same(h.Capabilities, l1.Capabilities) || !same(h.Env, l1.Env) || !same(h.Bins, l1.Bins) {
			t.Errorf("%s's host does not share l1's lists", id)
		}
	}
	if c := local[1]; !same(c.roles, l1.Roles) || !same(c.info.Capabilities, l1.Capabilities) || !same(c.env, l1.Env) {
		t.Error("l2's record keeps lists of its own")
	}
	if n := s.reg.remote["r2"]; !same(n.info.Roles, l1.Roles) || !same(n.caps, l1.Capabilities) {
		t.Error("r2's record keeps lists of its own")
	}
	if got := s.reg.hosts.Shared(); got != 4 {
		t.Errorf("the builder holds %d lists for four look-alike nodes, want 4", got)
	}
	s.mu.RUnlock()

	// l2 loses jq: a host of its own; the others' stay what they were.
	s.updateFacts(local[1], facts("gh"))
	s.mu.RLock()
	if h := s.index.Get("l2"); !reflect.DeepEqual(h.Bins, []string{"gh"}) || !same(h.Env, l1.Env) {
		t.Errorf("l2's new host: Bins %v, Env shared %v", h.Bins, same(h.Env, l1.Env))
	}
	if !reflect.DeepEqual(*l1, want) || s.index.Get("l1") != l1 || s.index.Get("r2") != r2 || !reflect.DeepEqual(r2.Bins, []string{"gh", "jq"}) {
		t.Errorf("l1's or r2's host changed with l2's facts: %#v, %#v", *s.index.Get("l1"), *s.index.Get("r2"))
	}
	s.mu.RUnlock()

	// Every node leaves: nothing stays in the table.
	for _, c := range local {
		s.unregister(c)
	}
	clusterHandler{s}.Delete("r1")
	clusterHandler{s}.DeleteMany([]string{"r2"})
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.index.Len() != 0 || s.reg.hosts.Shared() != 0 {
		t.Errorf("no node left: %d hosts indexed, %d lists in the builder's table; want 0 and 0", s.index.Len(), s.reg.hosts.Shared())
	}
}

// TestHostTableFollowsTheFleet drives random node events (local connects,
// facts and leaves; remote records, one by one and in batches; interest
// changes) and checks that the builder's table never holds more lists
// than the indexed hosts can (4 each) and is empty once every node left.
func TestHostTableFollowsTheFleet(t *testing.T) {
	s := hostsServer(t)
	r := rand.New(rand.NewPCG(9, 10))
	names := []string{"gh", "jq", "tmux", "curl"}
	envs := []string{"API_KEY", "TOKEN"}
	pick := func(from []string) []string {
		var out []string
		for _, n := range from {
			if r.IntN(2) == 0 {
				out = append(out, n)
			}
		}
		return out
	}
	info := func(id string) protocol.NodeInfo {
		return protocol.NodeInfo{ID: id, OS: []string{"linux", "darwin"}[r.IntN(2)], Roles: []string{"execution"},
			Capabilities: [][]string{{"shell.exec"}, {"filesystem.read", "shell.exec"}}[r.IntN(2)]}
	}
	local := map[string]*nodeConn{}
	start := time.Now()
	for step := range 3000 {
		switch x := r.IntN(100); {
		case x < 20: // a local node connects, or leaves
			id := fmt.Sprintf("l%02d", r.IntN(30))
			if c := local[id]; c != nil {
				s.unregister(c)
				delete(local, id)
				break
			}
			c := &nodeConn{srv: s, log: s.log, id: id, done: make(chan struct{})}
			if _, err := s.register(c, info(id), connectReqID); err != nil {
				t.Fatal(err)
			}
			local[id] = c
		case x < 45: // a local node reports
			for _, c := range local {
				u := &protocol.FactsScan{}
				for _, e := range pick(envs) {
					u.Env = append(u.Env, []byte(e))
				}
				for _, b := range names {
					u.Bins, u.Present = append(u.Bins, []byte(b)), append(u.Present, r.IntN(2) == 0)
				}
				s.updateFacts(c, u)
				break
			}
		case x < 80: // a remote record, new or of the same connection
			id := fmt.Sprintf("r%03d", r.IntN(120))
			at := start.Add(time.Duration(r.IntN(2)) * time.Second)
			rec := cluster.Record{HostFacts: info(id).HostFacts(), Replica: "other", ConnectedAt: at}
			if r.IntN(4) > 0 {
				rec.FactsAt = &at
				rec.Env = pick(envs)
				for _, b := range pick(names) {
					rec.HostBinStatus[b] = true
				}
				rec.BinsAsked = s.interestAt.asked
			}
			clusterHandler{s}.Put(&rec)
		case x < 90: // remote nodes leave, one or in a batch
			var ids []string
			for i := range 120 {
				if r.IntN(3) == 0 {
					ids = append(ids, fmt.Sprintf("r%03d", i))
				}
			}
			if r.IntN(2) == 0 {
				clusterHandler{s}.Delete(ids[0])
			} else {
				clusterHandler{s}.DeleteMany(ids)
			}
		default: // the interest changes: a skill needs tmux, or not
			// Local nodes here have no socket to be told on: they leave.
			for id, c := range local {
				s.unregister(c)
				delete(local, id)
			}
			s.mu.Lock()
			sk := s.snap.all[0]
			if req := sk.Requires.(map[string]any); len(req["bins"].([]any)) == 1 {
				sk.Requires = map[string]any{"bins": []any{"gh", "tmux"}}
			} else {
				sk.Requires = map[string]any{"bins": []any{"gh"}}
			}
			s.rebuildLocked()
			s.mu.Unlock()
		}
		s.mu.RLock()
		if n, max := s.reg.hosts.Shared(), 4*s.index.Len(); n > max {
			t.Fatalf("step %d: the builder holds %d lists for %d hosts", step, n, s.index.Len())
		}
		s.mu.RUnlock()
	}
	for _, c := range local {
		s.unregister(c)
	}
	var ids []string
	for i := range 120 {
		ids = append(ids, fmt.Sprintf("r%03d", i))
	}
	clusterHandler{s}.DeleteMany(ids)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.index.Len() != 0 || s.reg.hosts.Shared() != 0 {
		t.Errorf("no node left: %d hosts indexed, %d lists in the builder's table; want 0 and 0", s.index.Len(), s.reg.hosts.Shared())
	}
}
