package main

// End-to-end tests: a real in-process gateway on a loopback listener, a
// directory store written by the `skills` subcommand, and the `nodes` and
// `load` subcommands speaking to it over real sockets. Every wait is bounded.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/catalog"
	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/syncbuf"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/internal/version"
	"github.com/skillgate/skillgate/protocol"
	"github.com/skillgate/skillgate/skill"
	"github.com/skillgate/skillgate/store"
)

// waitFor bounds every wait of these tests.
const waitFor = 20 * time.Second

// runCmd runs a command line in-process and returns its exit status and
// outputs.
func runCmd(ctx context.Context, args ...string) (int, string, string) {
	var out, errOut syncbuf.Buffer
	code := run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// makeStore writes n synthetic skills (and the probe skill) with `skills`.
func makeStore(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if code, _, stderr := runCmd(context.Background(), "skills", "--out", dir, "-n", itoa(n), "--probe"); code != 0 {
		t.Fatalf("skills: exit %d: %s", code, stderr)
	}
	return dir
}

func itoa(n int) string { return strconv.Itoa(n) }

// startGateway serves the directory store on 127.0.0.1:0 and returns the
// base URL. cfg may set tokens.
func startGateway(t *testing.T, storeDir string, cfg gateway.Config) string {
	t.Helper()
	cfg.StoreName, cfg.Poll = storeDir, time.Second
	return gatewaytest.Start(t, gatewaytest.Options{Dir: storeDir, Config: cfg, NoWait: true, StopWithin: waitFor}).URL
}

// nodeEntry is one node of GET /v1/nodes.
type nodeEntry struct {
	protocol.HostFacts
	FactsAt *time.Time `json:"factsAt"`
}

func getNodes(t *testing.T, base string) []nodeEntry {
	t.Helper()
	var body struct {
		Nodes []nodeEntry `json:"nodes"`
	}
	getJSON(t, base+"/v1/nodes", &body)
	return body.Nodes
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", u, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", u, err)
	}
}

func getPrompt(t *testing.T, base, agent string) string {
	t.Helper()
	resp, err := http.Get(base + "/v1/agents/" + agent + "/prompt")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("prompt: %s: %s", resp.Status, b)
	}
	return string(b)
}

var skillNameRE = regexp.MustCompile(`<skill name="([^"]+)"`)

func promptSkills(block string) []string {
	var out []string
	for _, m := range skillNameRE.FindAllStringSubmatch(block, -1) {
		out = append(out, m[1])
	}
	slices.Sort(out)
	return out
}

// expectedEligible computes, independently of the gateway, which synthetic
// skills n simulated nodes of the mix make eligible.
func expectedEligible(skills []synthSkill, m *mix, n int) []string {
	nodes := make([]simNodeFacts, n)
	for i := range nodes {
		nodes[i] = m.node(i)
	}
	var out []string
	for _, s := range skills {
		if s.Always || (len(s.OS)+len(s.HostRoles)+len(s.Caps)+len(s.Env)+len(s.Bins)+len(s.AnyBins) == 0) {
			out = append(out, s.Name)
			continue
		}
		for i := range nodes {
			if satisfies(&nodes[i], s) {
				out = append(out, s.Name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

func satisfies(f *simNodeFacts, s synthSkill) bool {
	p := f.prof
	if len(s.OS) > 0 && !slices.Contains(s.OS, p.OS) {
		return false
	}
	for _, r := range s.HostRoles {
		if !slices.Contains(p.Roles, r) {
			return false
		}
	}
	for _, c := range s.Caps {
		if !slices.Contains(p.Capabilities, c) {
			return false
		}
	}
	for _, e := range s.Env {
		if !f.hasEnv(e) {
			return false
		}
	}
	for _, b := range s.Bins {
		if !f.hasBin(b) {
			return false
		}
	}
	if len(s.AnyBins) > 0 && !slices.ContainsFunc(s.AnyBins, f.hasBin) {
		return false
	}
	return true
}

// waitFile waits until path exists or the command ended.
func waitFile(t *testing.T, path string, ended <-chan struct{}) {
	t.Helper()
	deadline := time.After(waitFor)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case <-ended:
			t.Fatal("the command ended before it was ready")
		case <-deadline:
			t.Fatalf("%s not written within %v", path, waitFor)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// startNodes runs `nodes` in the background until the returned stop is
// called; it waits until every node reported facts.
func startNodes(t *testing.T, args ...string) (stop func() (int, string, string)) {
	t.Helper()
	ready := filepath.Join(t.TempDir(), "ready")
	ctx, cancel := context.WithCancel(context.Background())
	type result struct {
		code           int
		stdout, stderr string
	}
	res := make(chan result, 1)
	ended := make(chan struct{})
	go func() {
		code, out, errOut := runCmd(ctx, append([]string{"nodes", "--json", "--ready-file", ready}, args...)...)
		res <- result{code, out, errOut}
		close(ended)
	}()
	var once sync.Once
	var r result
	stop = func() (int, string, string) {
		once.Do(func() {
			cancel()
			select {
			case r = <-res:
			case <-time.After(waitFor + stopTimeout):
				t.Fatal("nodes did not stop")
			}
		})
		return r.code, r.stdout, r.stderr
	}
	t.Cleanup(func() { stop() })
	select {
	case <-ended:
		code, out, errOut := stop()
		t.Fatalf("nodes ended early: exit %d\n%s\n%s", code, out, errOut)
	default:
	}
	waitFile(t, ready, ended)
	return stop
}

func decodeSummary(t *testing.T, stdout string) nodesSummary {
	t.Helper()
	var s nodesSummary
	if err := json.Unmarshal([]byte(stdout), &s); err != nil {
		t.Fatalf("summary is not JSON: %v\n%s", err, stdout)
	}
	return s
}

func TestNodesProbeAndLoad(t *testing.T) {
	const nSkills, nNodes = 300, 200
	store := makeStore(t, nSkills)
	// A budget over the whole block: the prompt lists every eligible skill.
	cfgPath := filepath.Join(t.TempDir(), "gw.hujson")
	if err := os.WriteFile(cfgPath, []byte(`{"gateway": {"prompt": {"maxChars": 100000000, "maxSkills": 100000}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := startGateway(t, store, gateway.Config{ConfigPath: cfgPath})

	stop := startNodes(t, "--gateway", base, "-n", itoa(nNodes), "--probe-agent", "main", "--probe-runs", "3")

	// Every node is listed with its facts.
	nodes := getNodes(t, base)
	if len(nodes) != nNodes {
		t.Fatalf("GET /v1/nodes lists %d nodes, want %d", len(nodes), nNodes)
	}
	m, err := loadMix("", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.FactsAt == nil {
			t.Fatalf("node %s has no factsAt: it never sent facts.update", n.ID)
		}
		if !strings.HasPrefix(n.ID, "sim-") {
			t.Fatalf("unexpected node %s (the probe node should be gone)", n.ID)
		}
	}
	// A node reports exactly what its profile has.
	var sample nodeEntry
	for _, n := range nodes {
		if n.ID == "sim-7" {
			sample = n
		}
	}
	f := m.node(7)
	if sample.OS != f.prof.OS {
		t.Errorf("sim-7 os %q, want %q", sample.OS, f.prof.OS)
	}
	for b, ok := range sample.HostBinStatus {
		if ok != f.hasBin(b) {
			t.Errorf("sim-7 hostBinStatus[%s] = %v, want %v", b, ok, f.hasBin(b))
		}
	}
	if len(sample.HostBinStatus) == 0 {
		t.Error("sim-7 reported no binaries")
	}

	// The prompt holds exactly the skills the mix satisfies.
	want := expectedEligible(genSkills(nSkills, 1, false), m, nNodes)
	got := promptSkills(getPrompt(t, base, "main"))
	if !slices.Equal(got, want) {
		t.Fatalf("prompt lists %d skills, want %d\nmissing: %v\nextra: %v", len(got), len(want), diff(want, got), diff(got, want))
	}
	t.Logf("%d of %d skills eligible with %d nodes", len(want), nSkills, nNodes)
	if len(want) == nSkills+1 || len(want) < nSkills/2 {
		t.Fatalf("the mix makes %d of %d skills eligible; the test needs some of each", len(want), nSkills)
	}

	// load: non-zero throughput, no errors.
	code, out, errOut := runCmd(context.Background(), "load", "--gateway", base, "--agents", "main,a2", "-c", "8", "--duration", "1s", "--json")
	if code != 0 {
		t.Fatalf("load: exit %d\n%s\n%s", code, out, errOut)
	}
	var lr loadResult
	if err := json.Unmarshal([]byte(out), &lr); err != nil {
		t.Fatalf("load output: %v\n%s", err, out)
	}
	if lr.Requests == 0 || lr.Throughput <= 0 || lr.Errors != 0 || lr.Latency.P99 <= 0 || lr.StatusCodes["200"] != int(lr.Requests) {
		t.Fatalf("load result: %+v", lr)
	}

	code, out, errOut = stop()
	if code != 0 {
		t.Fatalf("nodes: exit %d\n%s\n%s", code, out, errOut)
	}
	sum := decodeSummary(t, out)
	if sum.Errors != 0 || sum.AllConnectedSeconds == nil || sum.Connects != nNodes || sum.FactsAcked != nNodes || sum.Stuck != 0 {
		t.Fatalf("summary: %s", out)
	}
	if sum.Probe == nil || sum.Probe.Runs != 3 || sum.Probe.Appear.P50 <= 0 || sum.Probe.Gone.Max <= 0 {
		t.Fatalf("probe result: %s", out)
	}
	if !strings.Contains(errOut, "fleet: all 200 nodes connected") {
		t.Errorf("no progress announcement on stderr:\n%s", errOut)
	}
	// Closed with 1001: the gateway drops them all.
	testkit.Eventually(t, waitFor, func() (string, bool) {
		n := len(getNodes(t, base))
		return fmt.Sprintf("%d nodes still listed after the fleet stopped", n), n == 0
	})
}

func diff(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func TestNodesChurn(t *testing.T) {
	const nNodes, churn = 200, 40
	store := makeStore(t, 100)
	base := startGateway(t, store, gateway.Config{})
	stop := startNodes(t, "--gateway", base, "-n", itoa(nNodes), "--churn", itoa(churn)+"/s")

	minSeen, maxSeen := nNodes, 0
	end := time.Now().Add(2500 * time.Millisecond)
	for time.Now().Before(end) {
		n := len(getNodes(t, base))
		minSeen, maxSeen = min(minSeen, n), max(maxSeen, n)
		time.Sleep(50 * time.Millisecond)
	}
	if minSeen < nNodes-churn || maxSeen > nNodes {
		t.Errorf("connected nodes ranged over %d…%d under churn %d/s; want within %d…%d", minSeen, maxSeen, churn, nNodes-churn, nNodes)
	}
	code, out, errOut := stop()
	if code != 0 {
		t.Fatalf("nodes: exit %d\n%s\n%s", code, out, errOut)
	}
	sum := decodeSummary(t, out)
	if sum.Churned < churn || sum.ChurnReconnects < churn/2 || sum.Churned > 4*churn {
		t.Errorf("churned %d, reconnected %d in about 2.5 s at %d/s", sum.Churned, sum.ChurnReconnects, churn)
	}
	if sum.Errors != 0 {
		t.Errorf("errors under churn: %+v", sum.ErrorKinds)
	}
}

// TestNodesRetryWithBackoff: nodes started before their gateway retry
// with the node agent's backoff and all connect once it is up.
func TestNodesRetryWithBackoff(t *testing.T) {
	const nNodes = 20
	store := makeStore(t, 10)
	g := gatewaytest.Start(t, gatewaytest.Options{Dir: store, StopWithin: waitFor, ListenAfter: 300 * time.Millisecond,
		Config: gateway.Config{StoreName: store, Poll: time.Second}})
	addr := g.Addr // nothing listens there until the gateway starts
	stop := startNodes(t, "--gateway", "http://"+addr, "-n", itoa(nNodes))
	code, out, errOut := stop()
	if code != 0 {
		t.Fatalf("nodes: exit %d\n%s\n%s", code, out, errOut)
	}
	sum := decodeSummary(t, out)
	if sum.Connects != nNodes || sum.Dials <= nNodes || sum.AllConnectedSeconds == nil || *sum.AllConnectedSeconds < 0.3 {
		t.Fatalf("connects %d, dials %d, all connected after %v s; want %d connects after retried dials, after 0.3 s", sum.Connects, sum.Dials, sum.AllConnectedSeconds, nNodes)
	}
	t.Logf("all %d nodes connected after %.2f s, %d dials", nNodes, *sum.AllConnectedSeconds, sum.Dials)
	if len(sum.ErrorKinds) != 1 || sum.ErrorKinds[0].Kind != "dial" || !strings.Contains(sum.ErrorKinds[0].First, "connection refused") {
		t.Errorf("errors %+v; want only dial errors (connection refused)", sum.ErrorKinds)
	}
}

func TestNodesRefusedToken(t *testing.T) {
	store := makeStore(t, 10)
	base := startGateway(t, store, gateway.Config{NodeToken: "right-token"})
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("wrong-token\n"), 0o600)
	ctx, cancel := context.WithTimeout(context.Background(), waitFor)
	defer cancel()
	code, _, errOut := runCmd(ctx, "nodes", "--gateway", base, "-n", "20", "--token-file", tok)
	if code != 1 || !strings.Contains(errOut, "unauthorized") || !strings.Contains(errOut, "--token-file") {
		t.Fatalf("exit %d, stderr:\n%s", code, errOut)
	}
}

func TestSkillsStoreLoads(t *testing.T) {
	const n = 300
	dir := makeStore(t, n)
	ctx := context.Background()
	st, err := store.NewDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	objs, diags, err := catalog.ListAll(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	loaded, loadDiags, err := catalog.NewLoader(st).Load(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	var skills []*skill.Skill
	for _, l := range loaded {
		skills = append(skills, l.Skill)
	}
	if len(skills) != n+1 {
		t.Fatalf("loaded %d skills, want %d", len(skills), n+1)
	}
	all := append(diags, loadDiags...)
	for _, sk := range skills {
		all = append(all, sk.Diagnostics...)
	}
	for _, d := range all {
		if d.Level == skill.LevelError || d.Level == skill.LevelWarn {
			t.Errorf("%s: %s: %s", d.Location, d.Level, d.Message)
		}
	}
	gen := genSkills(n, 1, true)
	byName := map[string]*skill.Skill{}
	for _, sk := range skills {
		byName[sk.Name] = sk
	}
	for _, g := range gen {
		sk := byName[g.Name]
		if sk == nil {
			t.Fatalf("skill %s not loaded", g.Name)
		}
		if sk.Description != g.Description || sk.Always != g.Always {
			t.Errorf("%s: parsed description %q always %v, generated %q %v", g.Name, sk.Description, sk.Always, g.Description, g.Always)
		}
		if l := len(g.Description); g.Name != probeSkill && (l < 80 || l > 125) {
			t.Errorf("%s: description is %d characters, want about 100", g.Name, l)
		}
	}

	// The same seed writes the same files; --force is needed to rewrite.
	if code, _, errOut := runCmd(ctx, "skills", "--out", dir, "-n", itoa(n), "--probe"); code != 2 || !strings.Contains(errOut, "--force") {
		t.Fatalf("rewriting without --force: exit %d: %s", code, errOut)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "skills", "s0123", "SKILL.md"))
	if code, _, errOut := runCmd(ctx, "skills", "--out", dir, "-n", itoa(n), "--probe", "--force"); code != 0 {
		t.Fatalf("rewriting with --force: exit %d: %s", code, errOut)
	}
	after, _ := os.ReadFile(filepath.Join(dir, "skills", "s0123", "SKILL.md"))
	if len(before) == 0 || !bytes.Equal(before, after) {
		t.Fatal("the same seed wrote different files")
	}
}

func TestMixParse(t *testing.T) {
	m, err := parseMix("test", []byte(`[
		// a comment, and a trailing comma
		{"name": "a", "weight": 3, "os": "linux", "roles": ["execution"],
		 "capabilities": ["filesystem.list", "filesystem.read", "filesystem.write", "shell.exec"],
		 "bins": ["git"], "env": ["HOME_SET"], "randomBins": 5},
		{"name": "b", "weight": 1, "os": "darwin", "roles": ["specialized"], "capabilities": []},
	]`), 7)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i := range 4000 {
		f := m.node(i)
		counts[f.prof.Name]++
		if f.prof.Name == "a" {
			n := 0
			for j := range binPool {
				if f.hasBin(binName(j)) {
					n++
				}
			}
			if n != 5 || !f.hasBin("git") || !f.hasEnv("HOME_SET") || f.hasEnv("ENV_00") {
				t.Fatalf("node %d: %d random bins, git %v", i, n, f.hasBin("git"))
			}
		}
	}
	if counts["a"] < 2800 || counts["a"] > 3200 {
		t.Errorf("profile a got %d of 4000 nodes, want about 3000", counts["a"])
	}
	// Deterministic: the same index has the same facts.
	if a, b := m.node(42), m.node(42); a != b {
		t.Error("node facts differ between two draws")
	}

	for _, tc := range []struct{ src, want string }{
		{`{"profiles": []}`, "profiles: is empty"},
		{`{"profile": []}`, `"profile": unknown key`},
		{`[{"weight": 0, "os": "linux", "roles": ["specialized"]}]`, "profiles[0]: weight"},
		{`[{"weight": 1, "os": "linux", "roles": ["exec"]}]`, `profiles[0]: roles[0]: unknown role "exec"`},
		{`[{"weight": 1, "os": "linux", "roles": ["execution"], "capabilities": []}]`, "profiles[0]: capabilities: an execution host must have"},
		{`[{"weight": 1, "os": "linux", "roles": ["specialized"], "wieght": 2}]`, `unknown field "wieght"`},
		{`[{"weight": 1, "os": "", "roles": ["specialized"]}]`, "profiles[0]: os: is empty"},
		{`[{"weight": 1, "os": "linux", "roles": ["specialized"], "randomBins": 301}]`, "randomBins: must be between 0 and 300"},
	} {
		_, err := parseMix("mix.hujson", []byte(tc.src), 1)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "mix.hujson: ") {
			t.Errorf("%s: error %v, want one containing %q", tc.src, err, tc.want)
		}
	}
}

func TestFactsAnswer(t *testing.T) {
	m, _ := loadMix("", 1)
	f := m.node(3)
	in := protocol.Interest{Bins: []string{"bin000", "bin001", "gh", probeBin}, Env: []string{"ENV_01", "ENV_02", "HOME"}}
	u := f.answer(in)
	if len(u.HostBinStatus) != len(in.Bins) {
		t.Fatalf("answered %d bins for %d asked", len(u.HostBinStatus), len(in.Bins))
	}
	if u.HostBinStatus["gh"] || u.HostBinStatus[probeBin] {
		t.Error("a fleet node claims a binary outside its profile")
	}
	for _, e := range u.Env {
		if !slices.Contains(in.Env, e) {
			t.Errorf("unasked env %s reported", e)
		}
	}
	p := simNodeFacts{prof: probeProfile()}
	if u := p.answer(in); !u.HostBinStatus[probeBin] || u.HostBinStatus["bin000"] {
		t.Errorf("probe node answer: %+v", u)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	badMix := filepath.Join(dir, "mix.hujson")
	os.WriteFile(badMix, []byte(`[{"weight": 1, "os": "linux", "roles": ["exec"]}]`), 0o644)
	full := t.TempDir()
	os.MkdirAll(filepath.Join(full, "skills", "x"), 0o755)
	gw := "http://127.0.0.1:1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nodes"}, "--gateway is required"},
		{[]string{"nodes", "--gateway", "http://10.1.2.3:7780"}, `--gateway: host "10.1.2.3" is not a loopback address`},
		{[]string{"nodes", "--gateway", "http://gateway.example.com"}, "not a loopback address"},
		{[]string{"nodes", "--gateway", "127.0.0.1:7780"}, "--gateway: \"127.0.0.1:7780\" has no scheme"},
		{[]string{"nodes", "--gateway", gw, "-n", "0"}, "-n: 0 is out of range"},
		{[]string{"nodes", "--gateway", gw, "--churn", "fast"}, `--churn: "fast" is not a rate`},
		{[]string{"nodes", "--gateway", gw, "--churn", "5/h"}, "--churn: \"5/h\": the unit must be"},
		{[]string{"nodes", "--gateway", gw, "-n", "10", "--churn", "50/s"}, "--churn: 50/s is more than the 10 nodes"},
		{[]string{"nodes", "--gateway", gw, "--connect-rate", "0/s"}, "--connect-rate: must be positive"},
		{[]string{"nodes", "--gateway", gw, "--id-prefix", "a/b"}, "--id-prefix"},
		{[]string{"nodes", "--gateway", gw, "--mix", badMix}, `--mix: ` + badMix + `: profiles[0]: roles[0]: unknown role "exec"`},
		{[]string{"nodes", "--gateway", gw, "--mix", filepath.Join(dir, "none")}, "--mix: open"},
		{[]string{"nodes", "--gateway", gw, "--token-file", filepath.Join(dir, "none")}, "--token-file: open"},
		{[]string{"nodes", "--gateway", gw, "--probe-agent", "../x"}, "--probe-agent"},
		{[]string{"nodes", "--gateway", gw, "stray"}, `unexpected argument "stray"`},
		{[]string{"load", "--gateway", gw, "-c", "0"}, "-c: 0 is out of range"},
		{[]string{"load", "--gateway", gw, "--agents", ","}, "--agents: give at least one"},
		{[]string{"load", "--gateway", gw, "--duration", "0s"}, "--duration: must be positive"},
		{[]string{"load", "--gateway", "ftp://x"}, `--gateway: scheme "ftp"`},
		{[]string{"load", "--gateway", gw, "--rate", "0/s"}, "--rate: 0/s is out of range"},
		{[]string{"load", "--gateway", gw, "--rate", "fast"}, `--rate: "fast" is not a rate`},
		{[]string{"load", "--gateway", gw, "--rate", "2000000/s"}, "--rate: 2000000/s is out of range (more than 0, at most 1000000/s)"},
		{[]string{"skills"}, "--out is required"},
		{[]string{"skills", "--out", full}, "--force"},
		{[]string{"skills", "--out", dir, "-n", "-1"}, "-n: -1 is out of range"},
		{[]string{"bogus"}, "unknown command"},
	} {
		code, _, errOut := runCmd(context.Background(), tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	s := summarize(d)
	if s.Count != 100 || s.P50 != 50 || s.P90 != 90 || s.P99 != 99 || s.Max != 100 || s.Mean != 50.5 {
		t.Fatalf("%+v", s)
	}
	if summarize(nil).Count != 0 {
		t.Fatal("empty summary")
	}
}

// TestVersion: the fleet prints the one version of the build, and its
// simulated nodes send it as their client name.
func TestVersion(t *testing.T) {
	for _, arg := range []string{"version", "--version"} {
		code, out, errOut := runCmd(context.Background(), arg)
		if want := "skillgate-fleet " + version.String() + "\n"; code != 0 || out != want || errOut != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0, %q", arg, code, out, errOut, want)
		}
	}
	if want := "skillgate-fleet/" + version.String(); clientName != want {
		t.Errorf("clientName %q, want %q", clientName, want)
	}
}
