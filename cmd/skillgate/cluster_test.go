package main

// Gateway replicas as operators run them: real `skillgate serve --cluster`
// processes on one real NATS server (natstest), real `skillgate-node` and
// `skillgate-fleet nodes` processes, judged only through HTTP. A replica
// dies with SIGKILL: nothing of it withdraws its nodes.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/skillgate/skillgate/internal/natstest"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
)

// clusterTTL is gateway.cluster.ttl of the replicas here.
const clusterTTL = 2 * time.Second

// clusterWait bounds every wait of these tests but the TTL checks.
const clusterWait = 30 * time.Second

// testBins returns the directory of skillgate, skillgate-node and
// skillgate-fleet, built once for every package that runs them
// (testkit.Binaries).
func testBins(t *testing.T) string {
	t.Helper()
	return testkit.Binaries(t, "cmd/skillgate", "cmd/skillgate-node", "cmd/skillgate-fleet")
}

// startProc starts bin with args; it is killed when t ends, and its output
// logged if t failed.
func startProc(t *testing.T, name, bin string, args ...string) *testkit.Proc {
	t.Helper()
	return gatewaytest.StartCommand(t, name, nil, bin, args...)
}

// startProcEnv is startProc with env added to the process's environment
// (a variable given twice takes the value given last).
func startProcEnv(t *testing.T, name string, env []string, bin string, args ...string) *testkit.Proc {
	t.Helper()
	return gatewaytest.StartCommand(t, name, env, bin, args...)
}

// startReplica serves store on port as replica name of the cluster on ns,
// and waits until it is ready (through the bucket's first read). env is
// added to its environment.
func startReplica(t *testing.T, store, config string, ns *natstest.Server, name string, port int, env ...string) *gatewaytest.Process {
	t.Helper()
	return gatewaytest.StartProcess(t, gatewaytest.ProcessOptions{Name: "replica " + name, Store: store, Config: config,
		Port: port, Env: env, Args: []string{"--cluster", ns.URL(), "--replica", name}, Ready: `"cluster":"ok"`})
}

// httpGet fetches url; code 0 when it could not.
func httpGet(url string) (int, string) { return gatewaytest.HTTPGet(url) }

// waitHTTP polls f until it holds, for at most clusterWait; a watched
// process that exits fails the test at once.
func waitHTTP(t *testing.T, f func() (string, bool), watched ...*testkit.Proc) {
	t.Helper()
	testkit.Eventually(t, clusterWait, func() (string, bool) {
		last, ok := f()
		if !ok {
			testkit.CheckAlive(t, last, watched...)
		}
		return last, ok
	})
}

// clusterNodes is GET /v1/nodes?fields=id,replica,connectedAt of base
// (every page), or an error.
func clusterNodes(base string) ([]struct{ ID, Replica, ConnectedAt string }, error) {
	var all []struct{ ID, Replica, ConnectedAt string }
	cursor := ""
	for {
		code, body := httpGet(base + "/v1/nodes?limit=10000&fields=id,replica,connectedAt" + cursor)
		if code != http.StatusOK {
			return nil, fmt.Errorf("GET %s/v1/nodes: %d %s", base, code, body)
		}
		var page struct {
			Nodes []struct{ ID, Replica, ConnectedAt string } `json:"nodes"`
			Next  string                                      `json:"next"`
		}
		if err := json.Unmarshal([]byte(body), &page); err != nil {
			return nil, err
		}
		all = append(all, page.Nodes...)
		if page.Next == "" {
			return all, nil
		}
		cursor = "&cursor=" + page.Next
	}
}

// clusterSecret is the replicas' cluster secret.
const clusterSecret = "the cluster secret of cmd/skillgate's tests"

// clusterConfigFile writes a config file with gateway.cluster.ttl and
// gateway.cluster.secretFile (a file beside it holding clusterSecret).
func clusterConfigFile(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "cluster-secret"), []byte(clusterSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "gateway.hujson")
	if err := os.WriteFile(p, []byte(`{"gateway": {"cluster": {"ttl": "`+clusterTTL.String()+`", "secretFile": "cluster-secret"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// noSecretInOutput fails t if a process printed the cluster secret.
func noSecretInOutput(t *testing.T, ps ...*testkit.Proc) {
	t.Helper()
	for _, p := range ps {
		if strings.Contains(p.Output(), clusterSecret) {
			t.Errorf("%s printed the cluster secret", p.Name)
		}
	}
}

// TestClusterReplicaKilled: three replicas; the only host of skill github
// is held by replica a or b, and replica c offers the skill. The replica
// holding it is killed while the node is stopped (SIGSTOP, so that it
// cannot reconnect at once): the skill leaves c's block within TTL + 1 s.
// The node resumes, reconnects to the other replica of its --gateway
// list, and the skill is back on c.
func TestClusterReplicaKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bins := testBins(t)
	ns := natstest.Start(t)
	store, cfg := storeWithGhSkill(t), clusterConfigFile(t)
	r := map[string]*gatewaytest.Process{}
	for _, name := range []string{"a", "b", "c"} {
		r[name] = startReplica(t, store, cfg, ns, name, testkit.FreePort(t))
	}
	ghDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(ghDir, "gh"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	node := startProc(t, "node builder", filepath.Join(bins, "skillgate-node"), "--gateway", r["a"].URL+","+r["b"].URL,
		"--id", "builder", "--path", ghDir, "--recheck", "100ms")

	offered := func(base string) (string, bool) {
		code, body := httpGet(base + "/v1/agents/main/prompt")
		return fmt.Sprint(code, " ", body), code == http.StatusOK && strings.Contains(body, `<skill name="github">`)
	}
	waitHTTP(t, func() (string, bool) { return offered(r["c"].URL) }, node)
	holder := func() string {
		ns, err := clusterNodes(r["c"].URL)
		if err != nil || len(ns) != 1 || ns[0].ID != "builder" {
			return ""
		}
		return ns[0].Replica
	}
	first := holder()
	if first != "a" && first != "b" {
		t.Fatalf("replica c lists builder on %q, want a or b", first)
	}
	other := map[string]string{"a": "b", "b": "a"}[first]

	if err := node.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	r[first].Kill(t)
	for {
		_, on := offered(r["c"].URL)
		if !on {
			break
		}
		if time.Since(killed) > clusterTTL+time.Second {
			t.Fatalf("replica c still offers github %v after the only replica holding its host was killed (TTL %v)", time.Since(killed).Round(time.Millisecond), clusterTTL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("github left replica c %v after replica %s was killed (TTL %v)", time.Since(killed).Round(time.Millisecond), first, clusterTTL)
	if h := holder(); h != "" {
		t.Errorf("replica c still lists builder on %q", h)
	}

	if err := node.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	waitHTTP(t, func() (string, bool) { return offered(r["c"].URL) }, node)
	waitHTTP(t, func() (string, bool) { h := holder(); return "holder " + h, h == other }, node)
	waitHTTP(t, func() (string, bool) { return offered(r[other].URL) }, node)
	noSecretInOutput(t, r["a"].Proc, r["b"].Proc, r["c"].Proc)
}

// TestClusterReplicaRestarted: replica a holds 1,000 simulated nodes and
// is killed; restarted on the same port with the same name, it takes the
// nodes back as they reconnect, and every replica lists each node once, on
// a, with a connection from after the restart.
func TestClusterReplicaRestarted(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	const n = 1000
	bins := testBins(t)
	ns := natstest.Start(t)
	store, cfg := storeWithGhSkill(t), clusterConfigFile(t)
	portA := testkit.FreePort(t)
	a := startReplica(t, store, cfg, ns, "a", portA)
	// c reads the secret from the environment.
	cfgC := filepath.Join(t.TempDir(), "gateway.hujson")
	if err := os.WriteFile(cfgC, []byte(`{"gateway": {"cluster": {"ttl": "`+clusterTTL.String()+`"}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	c := startReplica(t, store, cfgC, ns, "c", testkit.FreePort(t), "SKILLGATE_CLUSTER_SECRET="+clusterSecret)
	fleet := startProc(t, "skillgate-fleet nodes", filepath.Join(bins, "skillgate-fleet"), "nodes", "--gateway", a.URL,
		"-n", strconv.Itoa(n), "--duration", "10m", "--connect-rate", "2000/s")

	allOn := func(base, want string, after time.Time) (string, bool) {
		list, err := clusterNodes(base)
		if err != nil {
			return err.Error(), false
		}
		seen := map[string]bool{}
		for _, x := range list {
			at, err := time.Parse(time.RFC3339, x.ConnectedAt)
			if seen[x.ID] || x.Replica != want || err != nil || at.Before(after.Truncate(time.Second)) {
				return fmt.Sprintf("%s: node %s on %q connected %s (seen before: %v)", base, x.ID, x.Replica, x.ConnectedAt, seen[x.ID]), false
			}
			seen[x.ID] = true
		}
		return fmt.Sprintf("%s lists %d nodes", base, len(list)), len(list) == n
	}
	waitHTTP(t, func() (string, bool) { return allOn(c.URL, "a", time.Time{}) }, fleet)

	// connectedAt is listed to the second: the restart begins in a later
	// second than every first connection, so that old records cannot
	// pass for new ones.
	time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 10*time.Millisecond)))
	// c keeps counting every node while a restarts within the TTL (issue
	// 23): the restarted a takes its records back; none is dropped.
	low := make(chan int, 1)
	stop := make(chan struct{})
	go func() {
		least := n
		for {
			select {
			case <-stop:
				low <- least
				return
			case <-time.After(50 * time.Millisecond):
			}
			code, body := httpGet(c.URL + "/readyz")
			var r struct {
				RemoteNodes *int `json:"remoteNodes"`
			}
			if code == http.StatusOK && json.Unmarshal([]byte(body), &r) == nil && r.RemoteNodes != nil {
				least = min(least, *r.RemoteNodes)
			}
		}
	}()
	a.Kill(t)
	restarted := time.Now()
	a = startReplica(t, store, cfg, ns, "a", portA)
	for _, g := range []*gatewaytest.Process{a, c} {
		waitHTTP(t, func() (string, bool) { return allOn(g.URL, "a", restarted) }, fleet, a.Proc)
	}
	close(stop)
	if least := <-low; least != n {
		t.Errorf("replica c counted %d of the %d nodes at the least while a restarted", least, n)
	}
}

// TestClusterNeedsSecret: a replica without a cluster secret refuses to
// start (exit 2), naming where the secret comes from, instead of
// trusting every record of the bucket.
func TestClusterNeedsSecret(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bins := testBins(t)
	ns := natstest.Start(t)
	p := startProc(t, "replica a", filepath.Join(bins, "skillgate"), "serve", "--store", storeWithGhSkill(t),
		"--listen", "127.0.0.1:"+strconv.Itoa(testkit.FreePort(t)), "--cluster", ns.URL(), "--replica", "a")
	select {
	case <-p.Exited():
	case <-time.After(10 * time.Second):
		t.Fatalf("a replica without a cluster secret is still running after 10s:\n%s", p.Output())
	}
	out := p.Output()
	if code, _ := p.ExitCode(); code != 2 || !strings.Contains(out, "gateway.cluster.secretFile") || !strings.Contains(out, "SKILLGATE_CLUSTER_SECRET") {
		t.Errorf("exit %d, output:\n%s\nwant exit 2 naming gateway.cluster.secretFile and SKILLGATE_CLUSTER_SECRET", code, out)
	}
}
