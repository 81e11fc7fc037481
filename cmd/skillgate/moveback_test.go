package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/node"
)

// TestClusterNodeMovesBack: replicas a, b and c on one NATS server; a
// `skillgate-node` process lists a and b, and prefers a (its id hashes to
// a first). a is killed with SIGKILL: the node fails over to b. a is
// restarted on its port under its name: once its /readyz has answered 200
// for --move-back (1 s), and a random part of --move-back-window (1 s)
// more, the node moves back to a, and every replica lists it there. The
// node's skill stays offered on c while it moves (the move connects to a
// before leaving b).
func TestClusterNodeMovesBack(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	const hold, window = time.Second, time.Second
	bins := testBins(t)
	ns := natstest.Start(t)
	store, cfg := storeWithGhSkill(t), clusterConfigFile(t)
	ports := map[string]int{}
	r := map[string]*gatewaytest.Process{}
	for _, name := range []string{"a", "b", "c"} {
		ports[name] = testkit.FreePort(t)
		r[name] = startReplica(t, store, cfg, ns, name, ports[name])
	}
	list := r["a"].URL + "," + r["b"].URL
	urls, err := node.Config{Gateway: list}.Gateways()
	if err != nil {
		t.Fatal(err)
	}
	id := "builder"
	for i := 0; node.ReplicaOrder(id, urls)[0] != urls[0]; i++ {
		id = fmt.Sprintf("builder-%d", i)
	}
	ghDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(ghDir, "gh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := startProc(t, "node "+id, filepath.Join(bins, "skillgate-node"), "--gateway", list, "--id", id,
		"--path", ghDir, "--recheck", "100ms", "--move-back", hold.String(), "--move-back-window", window.String())

	offered := func(base string) (string, bool) {
		code, body := httpGet(base + "/v1/agents/main/prompt")
		return fmt.Sprint(code, " ", body), code == http.StatusOK && strings.Contains(body, `<skill name="github">`)
	}
	// holderOn: every replica alive lists the node once, on want.
	holderOn := func(want string, on ...string) func() (string, bool) {
		return func() (string, bool) {
			for _, name := range on {
				list, err := clusterNodes(r[name].URL)
				if err != nil {
					return err.Error(), false
				}
				if len(list) != 1 || list[0].ID != id || list[0].Replica != want {
					return fmt.Sprintf("%s lists %+v, want %s on %s", name, list, id, want), false
				}
			}
			return "", true
		}
	}
	waitHTTP(t, holderOn("a", "a", "b", "c"), n)
	waitHTTP(t, func() (string, bool) { return offered(r["c"].URL) }, n)

	r["a"].Kill(t)
	waitHTTP(t, holderOn("b", "b", "c"), n)
	waitHTTP(t, func() (string, bool) { return offered(r["c"].URL) }, n)

	// Sample c's block from a's restart until the node is back on a:
	// the skill must never leave it.
	var (
		mu      sync.Mutex
		missing []string
		stop    = make(chan struct{})
		done    = make(chan struct{})
	)
	cBase := r["c"].URL // r is written below, while this samples
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if last, ok := offered(cBase); !ok {
				mu.Lock()
				missing = append(missing, time.Now().Format("15:04:05.000")+" "+last)
				mu.Unlock()
			}
		}
	}()
	restarted := time.Now()
	r["a"] = startReplica(t, store, cfg, ns, "a", ports["a"])
	ready := time.Now()
	waitHTTP(t, holderOn("a", "a", "b", "c"), n, r["a"].Proc)
	moved := time.Since(ready)
	close(stop)
	<-done
	t.Logf("a ready %v after its restart; the node moved back %v after that (hold-down %v, window %v)",
		ready.Sub(restarted).Round(time.Millisecond), moved.Round(time.Millisecond), hold, window)
	if moved < hold {
		t.Errorf("the node moved back %v after a was ready, before the hold-down of %v", moved, hold)
	}
	if len(missing) > 0 {
		t.Errorf("github left c's block %d times while the node moved back, e.g. %s", len(missing), missing[0])
	}
	waitHTTP(t, func() (string, bool) { return offered(r["a"].URL) }, n)
	out := n.Output()
	for _, want := range []string{`"msg":"moving back to a preferred gateway"`, `"next_gateway"`} {
		if !strings.Contains(out, want) {
			t.Errorf("the node's log lacks %s:\n%s", want, out)
		}
	}
	// b saw the node leave, not drop: with 1001 from the node, or closed
	// by b itself as replaced, when a's record of the newer connection
	// reached b before the node's close did (newest connection wins).
	if out := r["b"].Output(); !strings.Contains(out, "node moved to a preferred replica") &&
		!strings.Contains(out, `"msg":"node replaced by a newer connection on another replica","node":"`+id+`","replica":"a"`) {
		t.Errorf("b's log does not show the node leaving for its preferred replica:\n%s", out)
	}
}
