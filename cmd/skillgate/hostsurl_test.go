package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skillgate/skillgate/gateway"
	"github.com/skillgate/skillgate/internal/testkit"
	"github.com/skillgate/skillgate/internal/testkit/gatewaytest"
	"github.com/skillgate/skillgate/protocol"
)

const wsWait = 10 * time.Second

// startGateway serves the fixture bucket and config on 127.0.0.1 with an
// agent token; it returns the base URL.
func startGateway(t *testing.T, agentToken string) string {
	t.Helper()
	return startGatewayOn(t, bucket, agentToken)
}

// startGatewayOn is startGateway on the store directory dir.
func startGatewayOn(t *testing.T, dir, agentToken string) string {
	t.Helper()
	return gatewaytest.Start(t, gatewaytest.Options{Dir: dir, NoWait: true, Config: gateway.Config{
		StoreName: bucket, ConfigPath: gwConfig, AgentToken: agentToken, Poll: time.Second}}).URL
}

// rawNode connects one node over a raw WebSocket and, unless facts is
// nil, answers the gateway's interest with what facts has of it: the
// node protocol, frame by frame.
func rawNode(t *testing.T, base string, facts protocol.HostFacts, report bool) protocol.HostFacts {
	t.Helper()
	r := testkit.DialNode(t, strings.Replace(base, "http://", "ws://", 1)+"/v1/nodes/connect")
	in := r.ConnectAs(facts)
	// What the gateway keeps: exactly the names it asked for.
	kept := protocol.HostFacts{ID: facts.ID, OS: facts.OS, Roles: facts.Roles, Capabilities: facts.Capabilities,
		Env: []string{}, HostBinStatus: map[string]bool{}}
	for _, b := range in.Bins {
		kept.HostBinStatus[b] = facts.HostBinStatus[b]
	}
	for _, e := range in.Env {
		if slices.Contains(facts.Env, e) {
			kept.Env = append(kept.Env, e)
		}
	}
	if report {
		r.Facts("2", kept.Env, kept.HostBinStatus)
	}
	return kept
}

// TestEvalHostsURL: eval --hosts on the URL of a live gateway's
// GET /v1/nodes, a page of two nodes at a time, gives exactly the answer
// of eval on a file holding the same hosts; the node that has not
// reported facts yet is left out, as the gateway leaves it out.
func TestEvalHostsURL(t *testing.T) {
	const token = "agent-token-for-the-test"
	base := startGateway(t, token)
	t.Setenv("SKILLGATE_AGENT_TOKEN", token)

	// A proxy in front of the gateway records the pages eval asks for.
	gw, _ := url.Parse(base)
	var mu sync.Mutex
	var seen []string
	proxy := httputil.NewSingleHostReverseProxy(gw)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/nodes" {
			mu.Lock()
			seen = append(seen, r.URL.RawQuery)
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()

	caps := protocol.BaselineCapabilities
	var hosts []protocol.HostFacts
	for _, f := range []protocol.HostFacts{
		{ID: "mac-1", OS: "darwin", Roles: []string{"execution"}, Capabilities: caps, HostBinStatus: map[string]bool{"gh": true, "tmux": true, "curl": true}},
		{ID: "linux-1", OS: "linux", Roles: []string{"execution"}, Capabilities: caps, Env: []string{"WEATHER_API_KEY"}, HostBinStatus: map[string]bool{"curl": true, "codex": true}},
		{ID: "linux-2", OS: "linux", Roles: []string{"execution"}, Capabilities: caps, HostBinStatus: map[string]bool{"gh": true}},
		{ID: "win-1", OS: "windows", Roles: []string{"specialized"}, Capabilities: []string{"filesystem.read"}},
		{ID: "gpu-1", OS: "linux", Roles: []string{"specialized"}, HostBinStatus: map[string]bool{"nvidia-smi": true}},
	} {
		hosts = append(hosts, rawNode(t, base, f, true))
	}
	rawNode(t, base, protocol.HostFacts{ID: "late-1", OS: "linux", Roles: []string{"specialized"}}, false)

	// Wait until every node is listed and the five have reported.
	testkit.Eventually(t, wsWait, func() (string, bool) {
		var answer struct {
			Nodes []statusNode `json:"nodes"`
		}
		if err := getJSON(t.Context(), http.DefaultClient, base+"/v1/nodes?limit=100", &answer); err != nil {
			t.Fatal(err)
		}
		reported := 0
		for _, n := range answer.Nodes {
			if n.FactsAt != nil {
				reported++
			}
		}
		return fmt.Sprintf("nodes: %+v", answer.Nodes), len(answer.Nodes) == 6 && reported == 5
	})

	file := filepath.Join(t.TempDir(), "hosts.json")
	b, _ := json.Marshal(hosts)
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
	fromFile, errOut, code := runCmd(t, "eval", "--store", bucket, "--config", gwConfig, "--hosts", file, "--agent", "main", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("eval on the file: exit %d: %s", code, errOut)
	}
	if !strings.Contains(fromFile, `"mac-1"`) || !strings.Contains(fromFile, `"linux-2"`) {
		t.Fatalf("the hosts do not show in the answer:\n%s", fromFile)
	}
	fromURL, errOut, code := runCmd(t, "eval", "--store", bucket, "--config", gwConfig, "--hosts", front.URL+"/v1/nodes?limit=2", "--agent", "main", "--json")
	if code != 0 {
		t.Fatalf("eval on the URL: exit %d: %s", code, errOut)
	}
	if fromURL != fromFile {
		t.Errorf("eval on the URL differs from eval on the file:\n--- URL ---\n%s\n--- file ---\n%s", fromURL, fromFile)
	}
	if want := "skillgate eval: node late-1 has not reported facts yet (factsAt is null); like the gateway, eval does not count it\n"; errOut != want {
		t.Errorf("stderr %q, want %q", errOut, want)
	}

	// Six nodes two at a time are three pages, each after the first with
	// the cursor of the one before and the query kept. A gateway without
	// paging answers all in one page (no "next"): one request.
	var first struct {
		Next string `json:"next"`
	}
	if err := getJSON(t.Context(), http.DefaultClient, base+"/v1/nodes?limit=2", &first); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	queries := slices.Clone(seen)
	mu.Unlock()
	if first.Next == "" {
		t.Logf("the gateway does not page GET /v1/nodes: one request %q", queries)
		if !slices.Equal(queries, []string{"limit=2"}) {
			t.Errorf("queries %q", queries)
		}
		return
	}
	t.Logf("pages read: %q", queries)
	if len(queries) != 3 || queries[0] != "limit=2" || queries[1] != "cursor="+first.Next+"&limit=2" {
		t.Errorf("queries %q, want 3 pages: limit=2, then cursor=%s&limit=2, …", queries, first.Next)
	}
	for _, q := range queries[1:] {
		v, _ := url.ParseQuery(q)
		if v.Get("limit") != "2" || v.Get("cursor") == "" {
			t.Errorf("page query %q lacks limit=2 or a cursor", q)
		}
	}

	// status reads every page too (here the gateway's default page).
	out, errOut, code := runCmd(t, "status", "--gateway", front.URL)
	if code != 0 || !strings.HasPrefix(out, fmt.Sprintf("6 nodes connected to %s\n", front.URL)) {
		t.Errorf("status: exit %d, %s\n%s", code, errOut, out)
	}
}

// TestEvalHostsURLNotAsked: a skill needing a binary no skill needed
// before is added to the store; the gateway asks its nodes, which have not
// answered yet. eval --hosts URL does not take the binary for absent
// without saying so: a diagnostic names the binary and the hosts not
// asked, and the skill is not offered on them (as by the gateway, until
// they answer).
func TestEvalHostsURLNotAsked(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS(bucket)); err != nil {
		t.Fatal(err)
	}
	base := startGatewayOn(t, dir, "")
	caps := protocol.BaselineCapabilities
	for _, id := range []string{"l1", "l2"} {
		rawNode(t, base, protocol.HostFacts{ID: id, OS: "linux", Roles: []string{"execution"}, Capabilities: caps,
			HostBinStatus: map[string]bool{"gh": true, "zz-new": true}}, true)
	}
	evalURL := func() string {
		out, errOut, code := runCmd(t, "eval", "--store", dir, "--config", gwConfig, "--hosts", base+"/v1/nodes", "--agent", "main", "--json")
		if code != 0 {
			t.Fatalf("eval: exit %d: %s", code, errOut)
		}
		return out
	}
	if out := evalURL(); strings.Contains(out, unknownBinsPrefix) {
		t.Fatalf("a diagnostic of binaries not asked, before any new skill:\n%s", out)
	}
	md := "---\nname: zz\ndescription: Uses zz-new.\nmetadata: '{\"gsv\": {\"requires\": {\"bins\": [\"zz-new\"]}}}'\n---\n\n# zz\n"
	if err := os.MkdirAll(filepath.Join(dir, "skills", "zz"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "skills", "zz", "SKILL.md"), []byte(md), 0o644); err != nil {
		t.Fatal(err)
	}
	// The gateway polls the store every second, and asks its nodes (which
	// do not answer: they are raw sockets that read nothing more).
	testkit.Eventually(t, wsWait, func() (string, bool) {
		var answer struct {
			Skills []struct{ Name string } `json:"skills"`
		}
		if err := getJSON(t.Context(), http.DefaultClient, base+"/v1/agents/main/skills", &answer); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("the gateway never listed the new skill: %+v", answer.Skills),
			slices.ContainsFunc(answer.Skills, func(s struct{ Name string }) bool { return s.Name == "zz" })
	})
	var rep struct {
		Skills []struct {
			Name     string   `json:"name"`
			Eligible bool     `json:"eligible"`
			Hosts    []string `json:"hosts"`
		} `json:"skills"`
		Diagnostics []struct{ Location, Level, Message string } `json:"diagnostics"`
	}
	if err := json.Unmarshal([]byte(evalURL()), &rep); err != nil {
		t.Fatal(err)
	}
	for _, s := range rep.Skills {
		if s.Name == "zz" && (s.Eligible || len(s.Hosts) != 0) {
			t.Errorf("zz offered on hosts not asked for zz-new: %+v", s)
		}
	}
	found := false
	for _, d := range rep.Diagnostics {
		if d.Location == "skills/zz/SKILL.md" {
			found = true
			if d.Level != "warn" || !strings.HasPrefix(d.Message, unknownBinsPrefix+"zz-new (2 of 2 hosts): ") {
				t.Errorf("diagnostic %+v", d)
			}
		}
	}
	if !found {
		t.Errorf("no diagnostic of zz-new, not asked of the hosts: %+v", rep.Diagnostics)
	}
}
